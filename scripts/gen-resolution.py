#!/usr/bin/env python3
"""Record what SGLang's own start-up resolution picks, for the launcher's resolution goldens.

Drives the team's startup-defaults oracle (shared/oracle/defaults_oracle.py: SGLang's real
`ServerArgs` resolution on a fake GPU, with a model's config.json) over a grid of models x GPUs x
argument variations, for the SGLang release installed in the running interpreter's venv, and
keeps only the fields the launcher models (facts: backend names, sizes, switches).

    /tmp/res-venv-0.5.23/bin/python scripts/gen-resolution.py --oracle ../shared/oracle \
        > tests/resolution/0.5.23.jsonl

Venv: `shared/oracle/setup_defaults.sh VERSION DIR`. `--jobs 1` keeps CPU use low. `--only a,b`
runs the variations whose labels hold one of those parts (a new batch appended to a release's
file). The evidence venvs of `scripts/setup-evidence-venv.sh` (transformers 5.19 for 0.5.11–0.5.21)
serve too, except for Gemma 4, whose config that transformers refuses
(`AmbiguousGlobalPerLayerAttributeError`), and DeepSeek-V3.2 on 0.5.11: its pinned transformers
5.6.0 has no `deepseek_v32`, so 0.5.11 rewrites the config to `DeepseekV3ForCausalLM`, the name its
DSA defaults look for; transformers 5.19 reads the type itself and keeps `DeepseekV32ForCausalLM`,
which 0.5.11's defaults do not list (0.5.12 lists it). Such lines are not SGLang's answer: the grid
leaves them out when the venv's transformers knows `deepseek_v32`.

Besides the oracle's own fields it asks SGLang, in the same forked case, which vision-tower
attention backend it picks when the model's code passes none (`VisionAttention.
_determine_attention_backend`, with the resolved arguments published as a server would), and
records SGLang's rejection as an error text when that choice is refused.
"""
import argparse
import importlib
import importlib.util
import inspect
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# The fields the launcher models (src/resolve): names as ServerArgs holds them.
EXTRA_FIELDS = [r"sampling_backend", r"mm_attention_backend", r"grammar_backend",
                r"mm_attention_backend_auto"]

# (label, argv model path, kind) — `@models/` is the oracle's models dir, `@shared/` the
# repo's model configs (tests/fixtures/models, which the replay reads), else the team's
# collection next to the oracle.
MODELS = [
    ("dense", "@models/Llama-3.1-8B-Instruct"),
    ("moe", "@models/Qwen3-30B-A3B"),
    ("mla", "@models/DeepSeek-V3"),
    ("mistral", "@shared/mistralai__Mistral-7B-Instruct-v0.3"),
    ("gptoss", "@shared/openai__gpt-oss-20b"),
    ("vlm", "@shared/google__gemma-3-27b-it"),
    ("llama4", "@shared/meta-llama__Llama-4-Maverick-17B-128E-Instruct"),
    ("qwen3vl", "@shared/Qwen__Qwen3-VL-4B-Instruct"),
    ("dsa", "@shared/deepseek-ai__DeepSeek-V3.2"),
    ("hybrid", "@shared/Qwen__Qwen3-Next-80B-A3B-Instruct"),
    ("dsv4", "@shared/deepseek-ai__DeepSeek-V4-Pro"),
    # NVIDIA's export: NVFP4 experts in a block-FP8 config.
    ("dsv4nvfp4", "@shared/nvidia__DeepSeek-V4-Pro-NVFP4"),
    ("gemma4", "@shared/google__gemma-4-26B-A4B"),
    ("nemotronh", "@shared/nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4"),
    # transformers' defaults for the type (no public config in the stored copies).
    ("lfm2", "@shared/synthetic__Lfm2-defaults"),
    ("falconh1", "@shared/synthetic__FalconH1-defaults"),
]
# Kinds a release's grid holds only from the release that first serves them.
FIRST_RELEASE = {"dsv4": (0, 5, 12), "dsv4nvfp4": (0, 5, 12), "gemma4": (0, 5, 11), "nemotronh": (0, 5, 6), "lfm2": (0, 5, 9),
                 "falconh1": (0, 5, 6)}
# Memory (MiB) picks the oracle's GPU_TABLE entry: name and compute capability.
GPUS = {"sm80": 81920, "sm89": 46068, "sm90": 81559, "sm90-141g": 143771, "sm100": 183359,
        "sm120": 97887}
# The oracle's torch stand-in reports the pinned torch (2.9.1 for some releases) with no real
# cuDNN; SGLang's cuDNN check for multimodal models is the PKG004 rule's (it reads the installed
# packages), not this grid's.
CASE_ENV = {"SGLANG_DISABLE_CUDNN_CHECK": "1"}
DRAFT = {"dense": "@models/sglang-EAGLE-LLaMA3-Instruct-8B", "moe": "@models/Qwen3-30B-A3B-EAGLE3"}


def _transformers_knows(model_type):
    try:
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    except ImportError:
        return False
    return model_type in CONFIG_MAPPING_NAMES


def variations(kind, version_tuple):
    # 0.5.11 renames a DeepSeek-V3.2 config its pinned transformers cannot read; a newer one
    # reads the type itself, and the name it keeps is not one 0.5.11's DSA defaults list.
    if kind == "dsa" and version_tuple == (0, 5, 11) and _transformers_knows("deepseek_v32"):
        return []
    if version_tuple < FIRST_RELEASE.get(kind, (0,)):
        return []
    tp = "8" if kind in ("mla", "llama4", "dsa", "dsv4", "dsv4nvfp4") else "1"
    out = [("plain", ["--tp-size", tp])]
    if kind in ("dense", "mla"):
        algo = "EAGLE"
        draft = DRAFT.get(kind)
        extra = ["--speculative-draft-model-path", draft] if draft else []
        out.append(("spec-algo-only", ["--tp-size", tp, "--speculative-algorithm", algo] + extra))
        out.append(("spec-topk4", ["--tp-size", tp, "--speculative-algorithm", algo] + extra
                    + ["--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                       "--speculative-num-draft-tokens", "8"]))
    if kind == "dense" and version_tuple >= (0, 5, 5):
        # The overlap scheduler under speculative decoding: SGLang's "spec v2" switch
        # (SGLANG_ENABLE_SPEC_V2, on by default from 0.5.12) against the user's
        # --disable-overlap-schedule and a tree draft.
        eagle = ["--tp-size", tp, "--speculative-algorithm", "EAGLE",
                 "--speculative-draft-model-path", DRAFT["dense"]]
        tree = ["--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                "--speculative-num-draft-tokens", "8"]
        on, off = ({"SGLANG_ENABLE_SPEC_V2": "1"}, {"SGLANG_ENABLE_SPEC_V2": "0"})
        out.append(("spec-v2", eagle, on))
        out.append(("spec-v2-no-overlap", eagle + ["--disable-overlap-schedule"], on))
        out.append(("spec-v2-topk4", eagle + tree, on))
        out.append(("spec-v1", eagle, off))
        out.append(("ngram", ["--tp-size", tp, "--speculative-algorithm", "NGRAM"]))
    if kind in ("dense", "mla") and version_tuple >= (0, 5, 5):
        # Features that change the switches, page size or backends SGLang picks.
        out.append(("kv-fp8", ["--tp-size", tp, "--kv-cache-dtype", "fp8_e4m3"]))
        out.append(("page64", ["--tp-size", tp, "--page-size", "64"]))
        out.append(("hicache", ["--tp-size", tp, "--enable-hierarchical-cache"]))
        out.append(("torch-compile", ["--tp-size", tp, "--enable-torch-compile"]))
    if kind == "dense" and version_tuple >= (0, 5, 5):
        out.append(("lora", ["--tp-size", tp, "--enable-lora", "--max-lora-rank", "16",
                             "--lora-target-modules", "all"]))
        out.append(("mixed-chunk", ["--tp-size", tp, "--enable-mixed-chunk"]))
        out.append(("fp8-online", ["--tp-size", tp, "--quantization", "fp8"]))
        out.append(("no-cuda-graph", ["--tp-size", tp, "--disable-cuda-graph"]))
    if kind == "dense" and version_tuple >= (0, 5, 5):
        # Disaggregated serving over the mock transfer backend, and DP attention on a dense model.
        out.append(("pd-decode", ["--tp-size", tp, "--disaggregation-mode", "decode",
                                  "--disaggregation-transfer-backend", "fake"]))
        out.append(("pd-prefill", ["--tp-size", tp, "--disaggregation-mode", "prefill",
                                   "--disaggregation-transfer-backend", "mooncake"]))
        out.append(("hicache-fa3", ["--tp-size", tp, "--attention-backend", "fa3",
                                    "--enable-hierarchical-cache"]))
        out.append(("dense-dpa", ["--tp-size", "2", "--enable-dp-attention", "--dp-size", "2"]))
    if kind in ("moe", "mla") and version_tuple >= (0, 5, 5):
        out.append(("deepep-ll", ["--tp-size", "8", "--moe-a2a-backend", "deepep",
                                  "--deepep-mode", "low_latency"]))
        out.append(("dpa-deepep", ["--tp-size", "8", "--enable-dp-attention", "--dp-size", "8",
                                   "--moe-a2a-backend", "deepep"]))
    if kind == "mla" and version_tuple >= (0, 5, 5):
        out.append(("mtp-dpa", ["--tp-size", "8", "--enable-dp-attention", "--dp-size", "8",
                                "--speculative-algorithm", "EAGLE"]))
    if kind in ("gptoss", "vlm", "llama4", "qwen3vl", "dsa", "hybrid", "gemma4", "mistral",
                "nemotronh", "lfm2", "falconh1") \
            and version_tuple >= (0, 5, 6):
        # The models' own backend picks against the features that move them.
        out.append(("kv-fp8", ["--tp-size", tp, "--kv-cache-dtype", "fp8_e4m3"]))
        out.append(("hicache", ["--tp-size", tp, "--enable-hierarchical-cache"]))
        out.append(("pd-decode", ["--tp-size", tp, "--disaggregation-mode", "decode",
                                  "--disaggregation-transfer-backend", "fake"]))
        out.append(("page64", ["--tp-size", tp, "--page-size", "64"]))
    if kind == "moe" and version_tuple >= (0, 5, 5):
        out.append(("fp8-online", ["--tp-size", tp, "--quantization", "fp8"]))
        out.append(("ep8", ["--tp-size", "8", "--ep-size", "8"]))
    if kind == "moe" and version_tuple >= (0, 5, 5):
        eagle3 = ["--tp-size", tp, "--speculative-algorithm", "EAGLE3",
                  "--speculative-draft-model-path", DRAFT["moe"]]
        on = {"SGLANG_ENABLE_SPEC_V2": "1"}
        out.append(("eagle3-v2", eagle3, on))
        out.append(("eagle3-v2-no-overlap", eagle3 + ["--disable-overlap-schedule"], on))
    if kind == "dense" and version_tuple >= (0, 5, 11):
        # Multi-item scoring: SGLang turns the radix cache, chunked prefill and the CUDA graphs
        # off itself, and takes FlashInfer only.
        out.append(("mis", ["--tp-size", tp, "--enable-mis", "--attention-backend", "flashinfer"]))
    if kind == "dense":
        out.append(("torch-native", ["--tp-size", tp, "--attention-backend", "torch_native"]))
        out.append(("pp2", ["--tp-size", tp, "--pp-size", "2"]))
        out.append(("fp8-e5m2", ["--tp-size", tp, "--kv-cache-dtype", "fp8_e5m2"]))
        out.append(("deterministic", ["--tp-size", tp, "--enable-deterministic-inference"]))
    if kind in ("dense", "gptoss", "llama4", "gemma4") and version_tuple >= (0, 5, 5):
        # An RL on-policy target turns deterministic inference on.
        out.append(("rl-target", ["--tp-size", tp, "--rl-on-policy-target", "fsdp"]))
    if kind in ("moe", "mla"):
        out.append(("deepep", ["--tp-size", "8", "--moe-a2a-backend", "deepep"]))
        out.append(("dp-attn", ["--tp-size", "8", "--enable-dp-attention", "--dp-size", "8"]))
    if kind == "dense":
        out.append(("standalone", ["--tp-size", tp, "--speculative-algorithm", "STANDALONE",
                                   "--speculative-draft-model-path",
                                   "@models/Llama-3.1-8B-Instruct"]))
    if kind == "vlm":
        out.append(("mm-fa3", ["--tp-size", tp, "--mm-attention-backend", "fa3"]))
    if kind in ("vlm", "llama4"):
        # SGLang serves both text-only unless asked.
        out.append(("mm-on", ["--tp-size", tp, "--enable-multimodal"]))
    if kind == "llama4":
        out.append(("fa3", ["--tp-size", tp, "--attention-backend", "fa3"]))
    if kind in ("gptoss", "llama4", "dsa", "gemma4"):
        # The model's own backend pick against deterministic inference's.
        out.append(("deterministic", ["--tp-size", tp, "--enable-deterministic-inference"]))
    if kind == "dsa":
        # SGLang's own DSA backend and page size 64, whatever page size is given.
        out.append(("page16", ["--tp-size", tp, "--page-size", "16"]))
        out.append(("triton", ["--tp-size", tp, "--attention-backend", "triton"]))
        # The cache dtype and fraction given, which some releases override for DSA.
        out.append(("kv-bf16", ["--tp-size", tp, "--kv-cache-dtype", "bf16"]))
        out.append(("mfs085", ["--tp-size", tp, "--mem-fraction-static", "0.85"]))
    if kind in ("hybrid", "nemotronh", "lfm2", "falconh1"):
        # On SM100 SGLang serves hybrid linear-attention models on triton unless its default would
        # be trtllm_mha and the Mamba cache, the radix cache or a draft says otherwise.
        out.append(("no-radix", ["--tp-size", tp, "--disable-radix-cache"]))
        out.append(("no-overlap", ["--tp-size", tp, "--disable-overlap-schedule"]))
        out.append(("nextn", ["--tp-size", tp, "--speculative-algorithm", "NEXTN"]))
        if version_tuple >= (0, 5, 7):
            strategy = ("--mamba-radix-cache-strategy" if version_tuple >= (0, 5, 14)
                        else "--mamba-scheduler-strategy")
            out.append(("extra-buffer", ["--tp-size", tp, strategy, "extra_buffer"]))
        if version_tuple >= (0, 5, 13):
            # From 0.5.14 the extra buffer runs on the triton linear-attention kernels only:
            # another backend makes `auto` no_buffer (the overlap scheduler off).
            cutedsl = ["--tp-size", tp, "--linear-attn-backend", "cutedsl"]
            out.append(("linear-cutedsl", cutedsl))
            out.append(("linear-cutedsl-page64", cutedsl + ["--page-size", "64"]))
            out.append(("linear-cutedsl-extra-buffer", cutedsl + [strategy, "extra_buffer"]))
    if kind == "dsv4":
        # Its MXFP4 experts' runner by GPU and release, with Marlin or a draft asked for.
        out.append(("marlin", ["--tp-size", tp, "--moe-runner-backend", "marlin"]))
        out.append(("mtp", ["--tp-size", tp, "--speculative-algorithm", "EAGLE"]))
        out.append(("mtp-chain", ["--tp-size", tp, "--speculative-algorithm", "EAGLE",
                                  "--speculative-eagle-topk", "1", "--speculative-num-steps", "3",
                                  "--speculative-num-draft-tokens", "4"]))
        out.append(("deepep", ["--tp-size", tp, "--moe-a2a-backend", "deepep"]))
    if kind in ("moe", "mla", "dsv4") and version_tuple >= (0, 5, 12):
        # Waterfill forces DeepEP (0.5.16+ keeps Mega MoE too), and 0.5.12 to 0.5.17 read
        # SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE as Mega MoE, over any backend named.
        waterfill = ("--enable-waterfill" if version_tuple >= (0, 5, 16)
                     else "--enable-deepep-waterfill")
        mega = {"SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE": "1"}
        out.append(("waterfill", ["--tp-size", "8", waterfill]))
        out.append(("waterfill-mooncake", ["--tp-size", "8", waterfill,
                                           "--moe-a2a-backend", "mooncake"]))
        out.append(("megamoe-env", ["--tp-size", "8"], mega))
        out.append(("megamoe-env-waterfill", ["--tp-size", "8", waterfill], mega))
    if kind == "dsv4nvfp4":
        # Its runner pick against an all-to-all backend.
        out.append(("deepep", ["--tp-size", tp, "--moe-a2a-backend", "deepep"]))
    if kind == "gemma4":
        # Its own pick fills the main backend when only a split one is named (from 0.5.13).
        out.append(("prefill-fi", ["--tp-size", tp, "--prefill-attention-backend", "flashinfer"]))
    if kind == "qwen3vl":
        # From 0.5.20 large Hopper GPUs decode it on flashinfer unless a backend is named.
        out.append(("triton", ["--tp-size", tp, "--attention-backend", "triton"]))
    return out


def grid(version_tuple):
    cases = []
    for gpu, mem in GPUS.items():
        for kind, path in MODELS:
            for label, extra, *env in variations(kind, version_tuple):
                cases.append({"gpu_mem_mib": mem, "num_gpus": 8,
                              "argv": ["--model-path", path] + extra,
                              "label": f"{kind}/{label}/{gpu}",
                              "env": {**CASE_ENV, **(env[0] if env else {})}})
    return cases


def _publish(sa, server_args):
    """Make the resolved arguments visible to model-construction code, as a server does."""
    srv = sys.modules.get("sglang.srt.server_args")
    if hasattr(srv, "set_global_server_args_for_scheduler"):
        srv.set_global_server_args_for_scheduler(server_args)
        return
    try:
        rc = importlib.import_module("sglang.srt.runtime_context")
        rc.publish(server_args, role="scheduler")
        return
    except (ImportError, AttributeError):
        pass
    sb = importlib.import_module("sglang.srt.managers.schedule_batch")
    if hasattr(sb, "global_server_args_dict"):
        sb.global_server_args_dict["mm_attention_backend"] = getattr(
            server_args, "mm_attention_backend", None)


def _has_vision_module():
    """Whether the release has `layers/attention/vision.py` (0.4.2 on), read without importing."""
    spec = importlib.util.find_spec("sglang")
    roots = (spec.submodule_search_locations or []) if spec else []
    return any(os.path.exists(os.path.join(r, "srt", "layers", "attention", "vision.py"))
               for r in roots)


def _vision_choice(d, server_args):
    """SGLang's vision-tower backend for a tower that passes none, or its refusal."""
    if not _has_vision_module():
        return {}
    try:
        # SGLang's own start-up imports the quantisation package before the layers: 0.4.6.post5
        # to 0.4.8.post1 cannot import linear.py first (a circular import).
        importlib.import_module("sglang.srt.layers.quantization")
        vis = importlib.import_module("sglang.srt.layers.attention.vision")
    except ModuleNotFoundError as e:
        root = d._check_mnfe(e)
        if root:
            raise d.NeedStub(root)
        return {"mm_attention_backend_auto": "import: " + d._fmt_exc(e)}
    pick = getattr(vis.VisionAttention, "_determine_attention_backend", None)
    if not inspect.isfunction(pick):
        # Before 0.5.1 the choice sits inside __init__ (sdpa unless the model passes one), or
        # the module only imported as a stub: nothing SGLang-made to record.
        return {}
    _publish(d, server_args)
    try:
        return {"mm_attention_backend_auto": pick(None, None)}
    except ValueError as e:
        return {"mm_attention_backend_auto": "error: " + str(e)}


def _stub_dtypes_are_dtypes():
    """0.5.20's nixl dispatcher asserts `isinstance(torch.int64, torch.dtype)` at import: the
    stand-in's dtype class answers yes for any stub value."""
    import oracle

    class DtypeMeta(oracle._StubMeta):
        def __instancecheck__(cls, obj):
            return isinstance(obj, oracle._StubMeta) or type.__instancecheck__(cls, obj)

    dtype = DtypeMeta("torch.dtype", (), {"__module__": "oracle_stub"})
    oracle.OVERRIDES.setdefault("torch", {})["dtype"] = dtype


def patch_oracle(d):
    _stub_dtypes_are_dtypes()
    d.FIELD_PATTERNS.extend(EXTRA_FIELDS)
    d._FIELD_RE = d.re.compile("^(?:" + "|".join(d.FIELD_PATTERNS) + ")$")
    team_models = os.path.join(os.path.dirname(d.HERE), "models")
    repo_models = os.path.join(REPO, "tests", "fixtures", "models")
    orig_expand, orig_fields = d._expand_argv, d._all_fields

    def shared(a):
        if not isinstance(a, str) or not a.startswith("@shared/"):
            return a
        name = a[len("@shared/"):]
        repo = os.path.join(repo_models, name)
        return repo if os.path.isdir(repo) else os.path.join(team_models, name)

    def expand(argv):
        return orig_expand([shared(a) for a in argv])

    def fields(server_args, pipeline):
        out = orig_fields(server_args, pipeline)
        out.update(_vision_choice(d, server_args))
        return out

    d._expand_argv, d._all_fields = expand, fields


# The fields kept in the goldens, and how the launcher names them.
KEEP = {
    "attention_backend": "attention",
    "prefill_attention_backend": "prefill_attention",
    "decode_attention_backend": "decode_attention",
    "mm_attention_backend": "mm_attention",
    "mm_attention_backend_auto": "mm_attention_auto",
    "sampling_backend": "sampling",
    "moe_runner_backend": "moe_runner",
    "moe_a2a_backend": "moe_a2a",
    "page_size": "page_size",
    "speculative_num_steps": "spec_steps",
    "speculative_eagle_topk": "spec_topk",
    "speculative_num_draft_tokens": "spec_draft_tokens",
    "disable_radix_cache": "disable_radix_cache",
    "disable_overlap_schedule": "disable_overlap_schedule",
    "kv_cache_dtype": "kv_cache_dtype",
    "enable_dp_attention": "dp_attention",
    "dp_size": "dp",
    "chunked_prefill_size": "chunk",
    "cuda_graph_max_bs": "graph_max_bs",
    "max_running_requests": "max_running",
}


def compact(r, env=None):
    o = {"label": r["label"], "version": r["version"], "cc": r["compute_capability"],
         "gpu_mem_mib": r["gpu_mem_mib"], "cuda": r["cuda_version"], "argv": r["argv"]}
    # The case's own variables (beyond the grid's CASE_ENV), which the replay sets too.
    extra = {k: v for k, v in (env or {}).items() if CASE_ENV.get(k) != v}
    if extra:
        o["env"] = extra
    if "error" in r:
        o["error"] = r["error"].splitlines()[0][:300]
        return o
    res = r["result"]
    got = {KEEP[k]: res[k] for k in KEEP if k in res}
    s = r["summary"]
    got["cuda_graph"] = bool(s.get("decode_cuda_graph"))
    got["ep"] = s.get("ep_size")
    got["mem_fraction"] = s.get("mem_fraction_static")
    if s.get("prefill_cuda_graph_backend") is not None:
        got["prefill_graph"] = s["prefill_cuda_graph_backend"] != "disabled"
        got["prefill_graph_sizes"] = s.get("prefill_cuda_graph_num_bs")
        got["prefill_graph_max"] = s.get("prefill_cuda_graph_max_bs")
    o["resolved"] = got
    return o


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--oracle", default=os.path.join(REPO, "..", "shared", "oracle"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--limit", type=int, help="first N cases only (smoke test)")
    ap.add_argument("--raw", action="store_true", help="print the oracle's full records")
    ap.add_argument("--kind", help="one model kind only (a smoke test)")
    ap.add_argument("--only", help="comma-separated label parts: only cases whose label has one")
    opts = ap.parse_args()
    sys.path.insert(0, os.path.abspath(opts.oracle))
    import defaults_oracle as d
    d.__file__ = os.path.abspath(__file__)  # its workers re-run this script (`_worker`)
    os.environ["RES_ORACLE_DIR"] = os.path.abspath(opts.oracle)
    patch_oracle(d)
    version = d.sglang_version()
    cases = [c for c in grid(d._vtuple(version))
             if not opts.kind or c["label"].startswith(opts.kind + "/")][: opts.limit]
    if opts.only:
        cases = [c for c in cases if any(o in c["label"] for o in opts.only.split(","))]
    env_of = {c["label"]: c["env"] for c in cases}
    results, _ = d.run_cases(cases, jobs=opts.jobs)
    for r in results:
        if "AmbiguousGlobalPerLayerAttributeError" in str(r.get("error")):
            continue  # the evidence venvs' transformers 5.19 on Gemma 4, not SGLang's answer
        if "could not convert string to float: '<cl'" in str(r.get("error")):
            continue  # 0.5.6's cuDNN check on the stand-in torch, which has no cuDNN version
        print(json.dumps(r if opts.raw else compact(r, env_of.get(r["label"])), sort_keys=True))


def worker():
    sys.path.insert(0, os.environ["RES_ORACLE_DIR"])
    import defaults_oracle as d
    patch_oracle(d)
    d.worker_main()


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") is None:
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        worker()
    else:
        main()
