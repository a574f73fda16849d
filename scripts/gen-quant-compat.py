#!/usr/bin/env python3
"""Build data/quant-compat.json: per release, when SGLang's ModelConfig refuses a `--quantization`
that is not the checkpoint's `quantization_config.quant_method` ("Quantization method specified in
the model config (…) does not match …").

    scripts/gen-quant-compat.py        # every release in sglang_releases.RELEASES (unpacked wheels)

Read statically from each unpacked release (nothing imported). The refusal is skipped when:

  * the pair is in `_verify_quantization`'s `compatible_quantization_methods` table
    (`--quantization` -> checkpoint methods it accepts);
  * the given method is one of `REQUANTIZATION_METHODS` (an online requantisation of any
    checkpoint), where the release has them;
  * a registered method's `override_quantization_method` returns a method for the pair: it then
    replaces both sides. Each distinct override (with the class helpers it calls) is summarised by
    hand below, keyed by its shape, as the given methods and checkpoint methods it can fire for
    (`None`: any); the summaries only widen what the code does (a condition on the GPU, the
    checkpoint format or the bit width is left out), so a pair they cover is unknown, never a
    refusal. A new shape stops the generator until it is summarised. A method registered from
    vLLM has an override this package cannot read: it may fire for any pair where vLLM is
    installed (`vllm: true`). An override that returns a method only in a ROCm build
    (`_is_hip`) says so (`rocm: true`): on an NVIDIA host it never fires.

Facts only: method names, compatibility pairs, override reach and release ranges.

Some releases replace a config.json `quant_method` by one parsed from the rest of the config
before comparing (`_parse_quant_hf_config`; from 0.5.10 a `modelopt` checkpoint's `quant_algo`
makes it `modelopt_fp4`, `modelopt_fp8`, ...): those methods are recorded as `reparsed`, and a pair
with one of them is unknown, never a refusal.

It also records `_verify_quantization`'s `rocm_supported_quantization`: the methods a ROCm
build takes (any other raises "... quantization is currently not supported in ROCm").

Output: {"format", "releases": [...], "tables": [{"compatible", "requantize", "overrides", "rocm",
"reparsed"}],
"by_release": [table index per release]}; an override is {"given": [..]|null,
"checkpoint": [..]|null, "vllm": bool, "rocm": bool}.
"""
import ast
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402

OUT = rel.ROOT / "data" / "quant-compat.json"

# Override shapes (hash of the normalised function and the `cls.` helpers it calls) and what they
# can return a method for: (given --quantization values or None for any, checkpoint
# quant_method values or None for any). An empty list: never returns one.
SHAPES = {
    # QuantizationConfig's default and DummyConfig (vLLM absent): always None.
    "none": [],
    # GPTQMarlinConfig: a gptq checkpoint (is_gptq_marlin_compatible checks quant_method ==
    # "gptq", bits, group size, the GPU) with `marlin` or `gptq_marlin` given.
    "gptq_marlin": [(["marlin", "gptq_marlin"], ["gptq"])],
    # MarlinConfig: checkpoint_format "marlin" (any quant_method) with `gptq` or `marlin` given.
    "marlin": [(["gptq", "marlin"], None)],
    # MoeWNA16Config: a gptq or awq checkpoint with `moe_wna16` given.
    "moe_wna16": [(["moe_wna16"], ["gptq", "awq"])],
    # AWQMarlinConfig: an awq checkpoint with `marlin` or `awq_marlin` given.
    "awq_marlin": [(["marlin", "awq_marlin"], ["awq"])],
    # PetitNvFp4Config: a modelopt checkpoint, whatever is given, in a ROCm build only.
    "petit": [(None, ["modelopt"])],
    # ModelOpt (0.5.4): `modelopt` given, by quant_algo.
    "modelopt_algo": [(["modelopt"], None)],
    # ModelOpt (0.5.4.post1 on): also a parsed hf_quant_config.json's modelopt_fp8/_fp4.
    "modelopt_parsed": [(["modelopt"], None), (None, ["modelopt_fp8", "modelopt_fp4"])],
    # ModelOptMixedPrecisionConfig: a modelopt_mixed checkpoint, whatever is given.
    "modelopt_mixed": [(None, ["modelopt_mixed"])],
    # MlxQuantizationConfig: only without --quantization.
    "mlx": [],
    # HummingConfig: `humming` given, any checkpoint but mxfp4.
    "humming": [(["humming"], None)],
}

# Shapes whose override returns a method only in a ROCm build.
ROCM_ONLY = {"petit"}

# Shape hashes seen in the releases, and their summary (checked by reading each).
KNOWN = {
    "5977940759090b34": "none",  # Fp8Config, 0.4.0.post1 on: the default, copied
    "475ce19ae49e6059": "gptq_marlin",
    "7b3f93169cd60948": "gptq_marlin",
    "f65c66987f8eaf94": "gptq_marlin",
    "0ddc3de442e0dc38": "gptq_marlin",  # from here also not a checkpoint_format "marlin" one
    "dd358ad05e9fc93a": "gptq_marlin",
    "d107f4fb7743bd61": "gptq_marlin",
    "dfe0fe2c4c158f89": "moe_wna16",
    "da52fb504dc4e181": "moe_wna16",
    "b1f602a3a2e07223": "moe_wna16",
    "63cd69a76bccb807": "petit",
    "84e84977cb4c372b": "awq_marlin",
    "e29f88e39ef7eed9": "modelopt_algo",
    "7fe9fbb1484d4326": "modelopt_parsed",
    "92daf4eee78f8f81": "modelopt_parsed",  # 0.5.18: not for nvfp4_online or a requantisation
    "c75ba58cba5f890a": "modelopt_parsed",
    "b4b821a166ff1f3e": "modelopt_mixed",
    "146fd0c591862d99": "mlx",
    "3680dc9f485a2743": "humming",
}


def normalised(fn):
    """The function's AST without its docstring and log calls (wording changes only)."""
    fn = ast.parse(ast.unparse(fn)).body[0]
    if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant):
        fn.body = fn.body[1:] or [ast.Pass()]
    for n in ast.walk(fn):
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and "log" in ast.unparse(n.value.func):
            n.value = ast.Constant(None)
    return ast.dump(fn)


def classes_of(version):
    """Every class of sglang/srt/layers/quantization by name (the first one seen)."""
    base = rel.source(version) / "sglang" / "srt" / "layers" / "quantization"
    out = {}
    for p in sorted(base.rglob("*.py")):
        for node in ast.parse(p.read_text()).body:
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, node)
    return out


def method_of(classes, name, fn_name, depth=0):
    """`fn_name` as class `name` has it (its own, else its bases'), or None."""
    cls = classes.get(name)
    if cls is None or depth > 8:
        return None
    for f in cls.body:
        if isinstance(f, ast.FunctionDef) and f.name == fn_name:
            return f
    for b in cls.bases:
        if isinstance(b, ast.Name):
            found = method_of(classes, b.id, fn_name, depth + 1)
            if found is not None:
                return found
    return None


def shape(classes, name):
    """The hash of a class's override and the `cls.` helpers it calls."""
    fn = method_of(classes, name, "override_quantization_method")
    if fn is None:
        return None, ""
    parts = [normalised(fn)]
    for n in ast.walk(fn):
        if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in ("cls", "self")
                and n.attr != "get_name"):
            helper = method_of(classes, name, n.attr)
            if helper is not None:
                parts.append(normalised(helper))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16], ast.unparse(fn)


def registry(version):
    """QUANTIZATION_METHODS' classes: name -> (class name, imported from vLLM)."""
    init = rel.source(version) / "sglang" / "srt" / "layers" / "quantization" / "__init__.py"
    tree = ast.parse(init.read_text())
    vllm = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("vllm"):
            vllm |= {a.asname or a.name for a in n.names}
    out = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Name) \
                        and v.id.endswith("Config"):
                    out.setdefault(k.value, set()).add((v.id, v.id in vllm))
    return out


def verify_facts(version):
    """The compatibility table, the requantisation methods and the ROCm list of
    `_verify_quantization`."""
    path = rel.source(version) / "sglang" / "srt" / "configs" / "model_config.py"
    tree = ast.parse(path.read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_verify_quantization")
    compatible, rocm = {}, []
    for n in ast.walk(fn):
        names = [t.id for t in getattr(n, "targets", []) if isinstance(t, ast.Name)]
        if isinstance(n, ast.Assign) and "compatible_quantization_methods" in names:
            compatible = ast.literal_eval(n.value)
        if isinstance(n, ast.Assign) and "rocm_supported_quantization" in names:
            rocm = sorted(ast.literal_eval(n.value))
    requant = []
    if "REQUANTIZATION_METHODS" in ast.unparse(fn):
        for n in tree.body:
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "REQUANTIZATION_METHODS"
                                                 for t in n.targets):
                requant = list(ast.literal_eval(n.value))
    return {k: sorted(v) for k, v in sorted(compatible.items())}, sorted(requant), rocm


def reparsed(version):
    """The config.json `quant_method` values `_parse_quant_hf_config` compares to replace them."""
    path = rel.source(version) / "sglang" / "srt" / "configs" / "model_config.py"
    out = set()
    for fn in ast.walk(ast.parse(path.read_text())):
        if isinstance(fn, ast.FunctionDef) and fn.name == "_parse_quant_hf_config":
            for n in ast.walk(fn):
                if isinstance(n, ast.Compare) and "quant_method" in ast.unparse(n.left):
                    out |= {c.value for c in n.comparators if isinstance(c, ast.Constant)}
    return sorted(out)


def table(version, unknown):
    compatible, requant, rocm = verify_facts(version)
    classes = classes_of(version)
    overrides = set()
    for name, entries in registry(version).items():
        for cls, from_vllm in entries:
            if from_vllm:
                overrides.add((None, None, True, False))
                continue
            h, src = shape(classes, cls)
            if h is None:
                continue
            if h not in KNOWN:
                unknown.setdefault(h, (version, cls, src))
                continue
            hip_only = KNOWN[h] in ROCM_ONLY
            for given, ckpt in SHAPES[KNOWN[h]]:
                overrides.add((tuple(given) if given else None, tuple(ckpt) if ckpt else None, False, hip_only))
    ov = [{"given": list(g) if g else None, "checkpoint": list(c) if c else None, "vllm": v, "rocm": r}
          for g, c, v, r in sorted(overrides, key=repr)]
    return {"compatible": compatible, "requantize": requant, "overrides": ov, "rocm": rocm,
            "reparsed": reparsed(version)}


def main():
    versions = rel.RELEASES
    tables, by_release, unknown = [], [], {}
    for v in versions:
        t = table(v, unknown)
        if t not in tables:
            tables.append(t)
        by_release.append(tables.index(t))
    if unknown:
        for h, (v, cls, src) in unknown.items():
            print(f"unsummarised override {h} ({cls}, first in {v}):\n{src}\n", file=sys.stderr)
        sys.exit("summarise the overrides above in SHAPES/KNOWN")
    out = {"format": 1, "releases": versions, "tables": tables, "by_release": by_release}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{OUT}: {len(tables)} tables over {len(versions)} releases", file=sys.stderr)


if __name__ == "__main__":
    main()
