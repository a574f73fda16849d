#!/usr/bin/env python3
"""Record, per transformers `model_type`, the configuration defaults of the keys the memory
planner reads, and write data/model-defaults.json.

    scripts/gen-model-defaults.py                  # transformers 5.19.0, the pin of SGLang 0.5.23
    scripts/gen-model-defaults.py --transformers 5.19.0 --out data/model-defaults.json

Setup is automatic (PyPI needed): a throwaway venv under GEN_MODEL_DEFAULTS_WORK (default
/tmp/sglang-model-defaults) with only `transformers` installed; configuration classes
instantiate without torch.

Each model type (every entry of transformers' config mapping, plus the sub-config types its
composite configs instantiate) is instantiated with no arguments, and these facts are kept:

* `d`: defaults of the planner's keys, under their canonical names (read through the class's
  attribute map); keys whose default is None are left out, and `rope_scaling` when it only
  repeats `rope_parameters`.
* `a`: the attribute map's planner keys (canonical name -> the key config.json spells), e.g. gpt2's
  `num_hidden_layers` -> `n_layer`.
* `s`: sub-configs the class builds when config.json has none (`text_config` -> its type).
* `x`: keys the class derives from others (found by instantiating again with other layers,
  hidden size and heads): their default is not a constant and must not be used as one.
* `p`: the repeating unit of `layer_types` when the class builds it by repetition.
* `n`: true when `rope_parameters` is kept per layer type.

Layout: one model type per line (`"llama":{...},`), so that the reader can find and decode
one entry without parsing the whole file. Facts only: names, numbers, strings.
"""
import argparse
import json
import os
import subprocess
import sys
import venv

KEYS = [
    # depth, width, attention
    "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
    "head_dim", "intermediate_size", "vocab_size", "max_position_embeddings",
    "tie_word_embeddings", "torch_dtype", "dtype",
    # context length (SGLang's keys) and RoPE
    "max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
    "rope_scaling", "rope_parameters", "original_max_position_embeddings",
    # sliding window and layer kinds
    "sliding_window", "sliding_window_pattern", "use_sliding_window", "max_window_layers",
    "attention_chunk_size", "layer_types", "full_attention_interval",
    # MoE
    "num_experts", "n_routed_experts", "num_local_experts", "num_experts_per_tok",
    "experts_per_token", "n_shared_experts", "moe_intermediate_size",
    "shared_expert_intermediate_size", "first_k_dense_replace",
    "interleave_moe_layer_step", "intermediate_size_mlp",
    # MLA, DSA, MTP
    "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
    "index_head_dim", "num_nextn_predict_layers",
    # linear attention and mamba
    "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
    "linear_value_head_dim", "linear_conv_kernel_dim", "mamba_d_state", "mamba_d_conv",
    "mamba_expand", "mamba_n_heads", "mamba_head_dim", "mamba_n_groups", "mamba_chunk_size",
    "ssm_state_size", "conv_kernel", "n_groups", "expand", "time_step_rank",
    "hybrid_override_pattern", "attn_layer_period", "attn_layer_offset",
    # vision / audio encoders
    "depth", "embed_dim", "num_heads", "patch_size", "image_size", "spatial_merge_size",
    "out_hidden_size", "num_mel_bins", "encoder_layers", "d_model",
]
PROBED = ["num_hidden_layers", "hidden_size", "num_attention_heads"]
SUBCONFIGS = [
    "text_config", "llm_config", "language_config", "thinker_config", "vision_config",
    "audio_config",
]


def ensure_venv(work, version):
    path = os.path.join(work, f"transformers-{version}")
    py = os.path.join(path, "bin", "python")
    if not os.path.exists(py):
        venv.create(path, with_pip=True)
        subprocess.run([py, "-m", "pip", "install", "-q", f"transformers=={version}"], check=True)
    return py


def plain(v):
    """A JSON fact, or None when the value is not plain data."""
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        items = [plain(x) for x in v]
        return None if any(x is None for x in items) and v else items
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items() if plain(x) is not None}
    name = getattr(v, "__module__", "")
    return str(v).removeprefix("torch.") if name.startswith("torch") else None


def read(cfg):
    out = {}
    for k in KEYS:
        try:
            v = getattr(cfg, k)
        except Exception:
            continue
        v = plain(v)
        if v is not None and k != "layer_types":
            out[k] = v
    # transformers 5 reads rope_scaling as rope_parameters: one copy is enough.
    if out.get("rope_scaling") == out.get("rope_parameters"):
        out.pop("rope_scaling", None)
    return out


def period(types):
    for p in range(1, len(types) + 1):
        if all(t == types[i % p] for i, t in enumerate(types)):
            return types[:p]
    return types


def probe(cls, amap, d):
    """Keys that change when depth, width and heads change (not constants), and the
    layer_types unit when the class builds that list by repetition."""
    whole = lambda k, dflt: d[k] if isinstance(d.get(k), int) and d[k] > 0 else dflt
    heads, layers = whole("num_attention_heads", 8), whole("num_hidden_layers", 4)
    kwargs = {"num_hidden_layers": layers * 2 + 3, "num_attention_heads": heads * 2,
              "hidden_size": heads * 2 * 48}
    kwargs = {amap.get(k, k): v for k, v in kwargs.items() if k in d}
    try:
        other = read(cls(**kwargs))
    except Exception:
        return sorted(k for k in d if k not in PROBED), None
    derived = sorted(k for k in d if k not in PROBED and other.get(k) != d[k])
    return derived, kwargs


def layer_unit(cls, cfg, kwargs):
    types = getattr(cfg, "layer_types", None)
    if not isinstance(types, list) or not types or kwargs is None:
        return None
    unit = period([str(t) for t in types])
    try:
        again = getattr(cls(**kwargs), "layer_types", None)
    except Exception:
        return None
    n = len(again or [])
    return unit if again and [unit[i % len(unit)] for i in range(n)] == list(again) else None


def entry(cls, cfg, found):
    amap = {k: v for k, v in (getattr(cls, "attribute_map", {}) or {}).items() if k in KEYS}
    d = read(cfg)
    derived, kwargs = probe(cls, amap, d)
    e = {"d": d}
    if amap:
        e["a"] = amap
    subs = {}
    for name in SUBCONFIGS:
        sub = getattr(cfg, name, None)
        mt = getattr(sub, "model_type", None)
        if mt:
            subs[name] = mt
            found.setdefault(mt, (type(sub), sub))
    if subs:
        e["s"] = subs
    if derived:
        e["x"] = derived
    unit = layer_unit(cls, cfg, kwargs)
    if unit:
        e["p"] = unit
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict) and rp and all(isinstance(v, dict) for v in rp.values()):
        e["n"] = True
    return e


def collect():
    """Runs inside the venv: every model type's entry, as JSON on stdout."""
    import logging
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    logging.disable(logging.WARNING)
    found, entries = {}, {}
    for mt in CONFIG_MAPPING.keys():
        try:
            cls = CONFIG_MAPPING[mt]
            found.setdefault(mt, (cls, cls()))
        except Exception as e:  # a class that cannot be built without arguments
            print(f"skip {mt}: {type(e).__name__}", file=sys.stderr)
    while len(entries) < len(found):
        for mt, (cls, cfg) in list(found.items()):
            if mt not in entries:
                entries[mt] = entry(cls, cfg, found)
    json.dump({"transformers": transformers.__version__, "types": entries}, sys.stdout)


def write(data, out):
    lines = [f'{{"transformers":{json.dumps(data["transformers"])},"types":{{']
    types = data["types"]
    for i, mt in enumerate(sorted(types)):
        comma = "," if i + 1 < len(types) else ""
        body = json.dumps(types[mt], separators=(",", ":"), sort_keys=True)
        lines.append(f"{json.dumps(mt)}:{body}{comma}")
    lines.append("}}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    json.load(open(out))  # still one valid JSON document
    print(f"{out}: {len(types)} model types, transformers {data['transformers']}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--collect":
        return collect()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--transformers", default="5.19.0")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "data",
                                                   "model-defaults.json"))
    a = ap.parse_args()
    work = os.environ.get("GEN_MODEL_DEFAULTS_WORK", "/tmp/sglang-model-defaults")
    py = ensure_venv(work, a.transformers)
    res = subprocess.run([py, __file__, "--collect"], check=True, stdout=subprocess.PIPE)
    write(json.loads(res.stdout), os.path.normpath(a.out))


if __name__ == "__main__":
    main()
