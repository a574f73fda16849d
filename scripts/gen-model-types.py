#!/usr/bin/env python3
"""Build data/model-types.json: which config.json `model_type`s SGLang's configuration loading
can read, per release, and per transformers version.

    scripts/gen-model-types.py            # needs PyPI; unpacked releases as in sglang_releases.py

SGLang reads a checkpoint's config.json with transformers' AutoConfig (after registering its own
configuration classes). AutoConfig resolves `model_type` through its mapping; a type it does not
map stops start-up ("… has model type `X` but Transformers does not recognize this
architecture"), unless config.json's `auto_map` names an `AutoConfig` and the code is trusted.

  * "transformers": every transformers version on PyPI from 4.40.0 on, in release order (the
    keys of CONFIG_MAPPING_NAMES in transformers/models/auto/configuration_auto.py, read from
    each wheel through HTTP range requests; nothing installed or imported).
  * "pins": the transformers version each SGLang release pins exactly (`transformers==X` in its
    wheel's METADATA, any extra); a release without an exact pin is absent.
  * per type: "t", the transformers versions whose mapping has it, and "s", the SGLang releases
    whose own code may make it readable, as inclusive [first, last] ranges in release order.
    "s" is read statically and errs towards "readable": the `model_type` of every class under
    sglang/srt/configs/ and SGLang's hf_transformers utilities that those utilities (their
    registry) or a `register(...)` call names (a class that is only a part of another, such as
    DeepSeek-VL2's language config, is not registered), every string literal registered
    with `AutoConfig.register` anywhere under sglang/srt/, and every string those utilities
    compare against (e.g. a type whose AutoConfig error SGLang catches and rewrites) or store
    into their registry by name, plus the two
    classes 0.4.0 - 0.4.1.post4 import from vLLM (VLLM_CONFIGS).

Facts only: names and version ranges. One type per line (the launcher decodes only the line it
looks up).
"""
import ast
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "model-types.json"
FIRST_TRANSFORMERS = (4, 40)
CONFIG_AUTO = "transformers/models/auto/configuration_auto.py"
AUTO_MAPPINGS = "transformers/models/auto/auto_mappings.py"


def vkey(v):
    """PEP 440 order for the versions transformers publishes (N.N.N, rcN, .devN, .postN)."""
    m = re.match(r"^(\d+(?:\.\d+)*)(?:\.?(a|b|rc)(\d+))?(?:\.post(\d+))?(?:\.dev(\d+))?$", v)
    if not m:
        return None
    nums = tuple(int(x) for x in m.group(1).split("."))
    nums = nums + (0,) * (4 - len(nums))
    pre = ({"a": 0, "b": 1, "rc": 2}[m.group(2)], int(m.group(3))) if m.group(2) else (3, 0)
    dev = int(m.group(5)) if m.group(5) else 1 << 30
    if m.group(5) and not m.group(2) and not m.group(4):
        pre = (-1, 0)
    return nums, pre, int(m.group(4) or -1), dev


def mapping_names(source):
    """The keys CONFIG_MAPPING_NAMES gets in one module: its assignments (an OrderedDict of pairs,
    or a dict literal) and its `.update({...})` calls."""
    keys = set()
    for node in ast.walk(ast.parse(source)):
        value = None
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "CONFIG_MAPPING_NAMES" for t in node.targets):
            value = node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update"
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "CONFIG_MAPPING_NAMES"):
            value = node
        for sub in ast.walk(value) if value else ():
            if isinstance(sub, ast.Tuple) and len(sub.elts) == 2 and isinstance(sub.elts[0], ast.Constant):
                keys.add(sub.elts[0].value)
            elif isinstance(sub, ast.Dict):
                keys.update(k.value for k in sub.keys if isinstance(k, ast.Constant))
    return {k for k in keys if isinstance(k, str)}


def transformers_types():
    files = [f for f in rel.index_files("transformers") if f["filename"].endswith(".whl")]
    versions = sorted({f["filename"].split("-")[1] for f in files}, key=lambda v: vkey(v) or ((),))
    versions = [v for v in versions if vkey(v) and vkey(v)[0][:2] >= FIRST_TRANSFORMERS]
    out = {}
    for v in versions:
        w = rel.pick_wheel(files, "transformers", v)
        with rel.remote_wheel(w["url"], w["size"]) as z:
            # From 5.6.0 the mapping itself lives in auto_mappings.py; configuration_auto.py adds to it.
            out[v] = set().union(*(mapping_names(z.read(m).decode())
                                   for m in (CONFIG_AUTO, AUTO_MAPPINGS) if m in z.namelist()))
        if len(out[v]) < 200:
            raise SystemExit(f"transformers {v}: only {len(out[v])} model types read")
        print(f"transformers {v}: {len(out[v])} model types", file=sys.stderr)
    return versions, out


def pin(files, version):
    """The transformers version a release's wheel METADATA pins exactly (any extra), if one."""
    w = rel.pick_wheel(files, "sglang", version)
    with rel.remote_wheel(w["url"], w["size"]) as z:
        text = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    pins = set(re.findall(r"^Requires-Dist: transformers\s*\(?==\s*([0-9][^;,\s)]*)", text, re.M))
    return pins.pop() if len(pins) == 1 else None


UTILS = re.compile(r"hf_transformers")
# 0.4.0 - 0.4.1.post4 register two configuration classes imported from vLLM (their model types, as
# vLLM's classes set them).
VLLM_CONFIGS = {"ChatGLMConfig": "chatglm", "DbrxConfig": "dbrx"}
TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def sglang_types(root):
    """Model types a release's own configuration code may make readable (see the docstring)."""
    srt = root / "sglang" / "srt"
    found, classes, used = set(), {}, set()
    for path in srt.rglob("*.py"):
        rel_path = path.relative_to(srt).as_posix()
        text = path.read_text(errors="replace")
        configs = rel_path.startswith("configs/")
        utils = bool(UTILS.search(rel_path))
        if not (configs or utils) and ".register(" not in text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (configs or utils) and isinstance(node, ast.ClassDef):
                t = class_model_type(node)
                if t:
                    classes.setdefault(node.name, set()).add(t)
            elif is_register(node):
                if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    found.add(node.args[0].value)
                if registers_config(node):
                    # A file that registers configuration classes (perhaps in a loop): every
                    # class it names may be one of them.
                    used.update(names_in(tree))
            elif (utils and isinstance(node, ast.ImportFrom)
                  and (node.module or "").startswith("vllm.transformers_utils.configs")):
                found.update(VLLM_CONFIGS[a.name] for a in node.names if a.name in VLLM_CONFIGS)
            elif utils and isinstance(node, ast.Compare):
                for sub in [node.left, *node.comparators]:
                    for c in ast.walk(sub):
                        if isinstance(c, ast.Constant) and isinstance(c.value, str):
                            found.add(c.value)
            elif (utils and isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and "REGISTRY" in node.value.id):
                # `_CONFIG_REGISTRY["x"] = cls`: a type the utilities register by name.
                if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                    found.add(node.slice.value)
        if utils:
            used.update(names_in(tree))
    # A configuration class makes its type readable only where SGLang registers it: its name is
    # used by the hf_transformers utilities (their registry) or in a `register(...)` call. A class
    # that is only another one's part (DeepSeek-VL2's language `deepseek_v2` config) is not.
    for name, types in classes.items():
        if name in used:
            found.update(types)
    return {t for t in found if TYPE.match(t)}


def class_model_type(node):
    """The string a class body assigns to `model_type`, if any."""
    for st in node.body:
        targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) else []
        if (isinstance(getattr(st, "value", None), ast.Constant) and isinstance(st.value.value, str)
                and any(isinstance(t, ast.Name) and t.id == "model_type" for t in targets)):
            return st.value.value
    return None


def is_register(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "register" and bool(node.args))


def registers_config(node):
    """`AutoConfig.register(...)` (or the config mapping's): a configuration class registration,
    not a processor's, a tokenizer's or a model's."""
    owner = node.func.value
    name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
    return name in ("AutoConfig", "CONFIG_MAPPING")


def names_in(tree):
    """Every name a tree reads (bare names and attribute bases)."""
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def ranges(members, order):
    out, start, prev = [], None, None
    for v in order:
        if v in members:
            start = start or v
            prev = v
        elif start:
            out.append([start, prev])
            start = None
    if start:
        out.append([start, prev])
    return out


def main():
    tversions, ttypes = transformers_types()
    stypes, pins = {}, {}
    files = rel.index_files("sglang")
    for v in rel.RELEASES:
        stypes[v] = sglang_types(rel.source(v))
        p = pin(files, v)
        if p:
            pins[v] = p
        print(f"sglang {v}: {len(stypes[v])} own types, pin {p}", file=sys.stderr)
    every = set().union(*ttypes.values(), *stypes.values())
    lines = [f'{{"format":1,"transformers":{json.dumps(tversions)},', f'"pins":{json.dumps(pins)},', '"types":{']
    entries = []
    for t in sorted(every):
        e = {}
        tr = ranges({v for v in tversions if t in ttypes[v]}, tversions)
        sr = ranges({v for v in rel.RELEASES if t in stypes[v]}, rel.RELEASES)
        if tr:
            e["t"] = tr
        if sr:
            e["s"] = sr
        entries.append(f"{json.dumps(t)}:{json.dumps(e, separators=(',', ':'))}")
    lines.append(",\n".join(entries))
    lines.append("}}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{OUT}: {len(every)} model types, {len(tversions)} transformers versions, {len(pins)} pins",
          file=sys.stderr)


if __name__ == "__main__":
    main()
