#!/usr/bin/env python3
"""Find start-up refusals the launcher lets through: run a grid of realistic lines (models x GPUs x
pairs of common options) through one release's own argument handling (the team's defaults
oracle: SGLang's real parsing, ServerArgs resolution and check_server_args on a fake GPU) and
through `sglang-launch check --json`, and compare.

    scripts/sweep-refusals.py --oracle ../shared/oracle --venv /work/oracle/venv-0.5.23 \
        --release 0.5.23 [--bin target/release/sglang-launch] [--limit N] [--offset F] [--out FILE] [--more]

Prints, per distinct refusal (SGLang's exception, numbers folded), how many lines SGLang refused
and how many of them the launcher blocks (an `error` finding, fixed or not); and the lines the
launcher blocks that SGLang's argument handling accepts, by code (those rules must stand on a
failure later in start-up, with their own evidence). `--out` writes every line's result as JSON
lines; `--replay FILE` runs the launcher again on such a file's lines and SGLang's recorded
answers, without the oracle (with `--venv`, the launcher is told the venv's packages, as it reads
a real install's). `--verify-fixes` then runs every line the launcher fixes and would start (the
fixed arguments and variables of its plan) through the oracle again, and lists those SGLang still
refuses, by whether the line as written was refused or taken: a fix must leave a line SGLang takes. `--more` adds options of recent releases (block-scaled KV caches, split backends, context
parallelism); `--models` picks the model kinds (the three above, or further real configs: GPT-OSS,
a hybrid linear-attention model, Llama 4, DSA, a vision-language model, an FP8 checkpoint); lines a
release's parser rejects are left out of the comparison. `--field-models` runs, instead of the grid,
every real config of the field corpus (tests/field/models) on three GPUs, alone and with one of a
few common options: the release's model-config checks on real checkpoints. `--loader` runs, instead, every
real config of the field corpus and the test fixtures on four GPUs (T4 alone, eight A100s, H100s,
B200s), quantised ones also with `--dtype bfloat16`, through the release's model config and the
loader's quantisation checks (scripts/evidence_probe.py on `_get_quantization_config`), which
argument handling never reaches; `--overlay DIR` puts the release's compressed-tensors overlay
(gen-evidence.py's `overlay-<release>-compressed-tensors`) on the probe's PYTHONPATH, so those
checkpoints' layers are built too. `--mamba` runs, instead,
the Mamba hybrids (Qwen3-Next, Qwen3.5, Nemotron-H, LFM2) with pairs of the options their cache
handling reads (strategies, page sizes, the overlap scheduler, attention backends, drafts); `--linear`
the GDN hybrids (Qwen3-Next, Qwen3.5) with pairs of the linear-attention backend options and what
their checks read; `--hicache` the three grid models with HiCache on and pairs of its host-tier and
storage options; `--moe` the MoE models with every all-to-all backend, MoE runner and quantisation
together and one more option (DeepEP's mode, DP attention, PD roles, EPLB, a draft); `--spec` the grid models
with the speculative algorithms they take (drafts given), step / top-k / draft-token settings and pairs of the
options speculative decoding's checks read; `--feature F` one feature (LoRA, PD disaggregation, parallel
layouts, EPLB, the encoder split, scheduling and weight offload, serving options; `pdpolicy`:
PD's decode allocation policy and host-receive threshold; `spec2`: speculative decoding's newer settings;
`radix`: the radix cache's eviction, sessions and host-pool sizing; `host`: the unified cache's
external linker, the per-layer embedding offload and the load publisher; `moeopt`: FlashInfer's
dispatch type, the all-to-all LM head and Elastic EP's scale-up) turned on one of a few ways, with one
of its settings and one more option.
With `--oracle` and `--venv` the launcher is also told torch as the oracle's
stand-in reports it (the release's pin, with the CUDA the oracle gives that release). A discovery
tool: what it finds becomes rules with goldens in tests/evidence/.
"""
import argparse
import importlib.util
import itertools
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORACLE_MODELS = ROOT / "tests" / "fixtures" / "models" / "oracle"

MODELS = {
    "dense": ORACLE_MODELS / "Llama-3.1-8B-Instruct",
    "moe": ORACLE_MODELS / "Qwen3-30B-A3B",
    "mla": ORACLE_MODELS / "DeepSeek-V3",
}
FIELD_MODELS = ROOT / "tests" / "field" / "models"
# Further model kinds (`--models`), real configs from the field corpus: each has checks of its own.
MORE_MODELS = {
    "gpt-oss": FIELD_MODELS / "openai__gpt-oss-20b",
    "hybrid": FIELD_MODELS / "Qwen__Qwen3-Next-80B-A3B-Instruct",
    "llama4": FIELD_MODELS / "meta-llama__Llama-4-Scout-17B-16E-Instruct",
    "dsa": FIELD_MODELS / "deepseek-ai__DeepSeek-V3.2",
    "vlm": FIELD_MODELS / "Qwen__Qwen3-VL-4B-Instruct",
    "fp8": FIELD_MODELS / "Qwen__Qwen3-32B-FP8",
}
BATCH = 100
GPUS = [("H100", 8), ("A100-80G", 8), ("L40S", 4), ("RTX-PRO-6000", 4), ("B200", 8)]

# Options operators combine, each with the values seen in real lines.
OPTIONS = [
    ["--enable-dp-attention"],
    ["--dp", "2"],
    ["--ep-size", "4"],
    ["--pp-size", "2"],
    ["--speculative-algorithm", "EAGLE"],
    ["--speculative-algorithm", "NEXTN"],
    ["--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
     "--speculative-num-draft-tokens", "4"],
    ["--speculative-eagle-topk", "4"],
    ["--kv-cache-dtype", "fp8_e4m3"],
    ["--kv-cache-dtype", "fp8_e5m2"],
    ["--attention-backend", "fa3"],
    ["--attention-backend", "flashinfer"],
    ["--attention-backend", "triton"],
    ["--attention-backend", "trtllm_mha"],
    ["--attention-backend", "trtllm_mla"],
    ["--attention-backend", "flashmla"],
    ["--attention-backend", "cutlass_mla"],
    ["--prefill-attention-backend", "fa3"],
    ["--decode-attention-backend", "triton"],
    ["--moe-a2a-backend", "deepep"],
    ["--moe-runner-backend", "flashinfer_cutlass"],
    ["--moe-runner-backend", "triton"],
    ["--quantization", "fp8"],
    ["--page-size", "64"],
    ["--chunked-prefill-size", "-1"],
    ["--disable-radix-cache"],
    ["--enable-torch-compile"],
    ["--disable-cuda-graph"],
    ["--cuda-graph-max-bs", "512"],
    ["--enable-mixed-chunk"],
    ["--enable-hierarchical-cache"],
    ["--context-length", "65536"],
    ["--max-running-requests", "64"],
    ["--enable-two-batch-overlap"],
    ["--disaggregation-mode", "prefill"],
    ["--disaggregation-mode", "decode"],
    ["--enable-dp-lm-head"],
    ["--tokenizer-worker-num", "4"],
    ["--schedule-policy", "lpm"],
    ["--enable-lora"],
    ["--load-format", "dummy"],
    ["--enable-eplb"],
    ["--nnodes", "2", "--node-rank", "0", "--dist-init-addr", "10.0.0.1:5000"],
    ["--speculative-algorithm", "EAGLE3"],
    ["--speculative-algorithm", "NGRAM"],
    ["--attention-backend", "fa4"],
    ["--attention-backend", "torch_native"],
    ["--attention-backend", "flex_attention"],
    ["--kv-cache-dtype", "fp4_e2m1"],
    ["--quantization", "w8a8_fp8"],
    ["--quantization", "awq"],
    ["--moe-runner-backend", "flashinfer_trtllm"],
    ["--moe-runner-backend", "deep_gemm"],
    ["--deepep-mode", "normal"],
    ["--enable-deterministic-inference"],
    ["--enable-pdmux"],
    ["--sampling-backend", "pytorch"],
    ["--disable-overlap-schedule"],
    ["--dp", "3"],
    ["--moe-dense-tp-size", "1"],
    ["--enable-flashinfer-allreduce-fusion"],
    ["--max-lora-rank", "16", "--lora-target-modules", "all"],
    ["--served-model-name", "org/model:v1"],
    ["--enable-multimodal"],
    ["--stream-interval", "4"],
    ["--max-total-tokens", "4096"],
]

# Options of recent releases (`--more`).
MORE = [
    ["--kv-cache-dtype", "nvfp4"],
    ["--kv-cache-dtype", "fp4_mx_block16"],
    ["--kv-cache-dtype", "mxfp8"],
    ["--kv-cache-dtype", "bf16"],
    ["--prefill-attention-backend", "fa4"],
    ["--prefill-attention-backend", "trtllm_mha"],
    ["--decode-attention-backend", "trtllm_mha"],
    ["--speculative-draft-attention-backend", "triton"],
    ["--speculative-attention-mode", "decode"],
    ["--enable-unified-memory"],
    ["--enable-lmcache"],
    ["--enable-single-batch-overlap"],
    ["--dcp-size", "2"],
    ["--attn-cp-size", "2"],
    ["--enable-prefill-cp"],
    ["--enable-return-hidden-states"],
]


# `--field-models`: every real config of the field corpus, alone and with one of these.
FIELD_OPTIONS = [
    [],
    ["--context-length", "65536"],
    ["--kv-cache-dtype", "fp8_e4m3"],
    ["--enable-dp-attention", "--dp", "8"],
    ["--speculative-algorithm", "EAGLE"],
    ["--quantization", "fp8"],
    ["--disable-cuda-graph"],
]
FIELD_GPUS = [("H100", 8), ("B200", 8), ("A100-80G", 8)]

FIXTURE_MODELS = ROOT / "tests" / "fixtures" / "models"
# `--mamba`: hybrids on SGLang's Mamba radix-cache path, and the options that path reads.
MAMBA_MODELS = {
    "qwen3-next": FIELD_MODELS / "Qwen__Qwen3-Next-80B-A3B-Instruct",
    "qwen3.5": FIXTURE_MODELS / "Qwen__Qwen3.5-35B-A3B",
    "nemotron-h": FIXTURE_MODELS / "nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4",
    "lfm2": FIXTURE_MODELS / "synthetic__Lfm2-defaults",
}
MAMBA_OPTIONS = [
    ["--mamba-scheduler-strategy", "no_buffer"],
    ["--mamba-scheduler-strategy", "extra_buffer"],
    ["--mamba-radix-cache-strategy", "no_buffer"],
    ["--mamba-radix-cache-strategy", "extra_buffer"],
    ["--page-size", "64"],
    ["--disable-overlap-schedule"],
    ["--disable-radix-cache"],
    ["--attention-backend", "triton"],
    ["--attention-backend", "trtllm_mha"],
    ["--attention-backend", "flashinfer"],
    ["--attention-backend", "fa3"],
    ["--speculative-algorithm", "NEXTN"],
    ["--disaggregation-mode", "decode"],
    ["--enable-hierarchical-cache"],
    ["--kv-cache-dtype", "fp8_e4m3"],
    ["--enable-deterministic-inference"],
]
MAMBA_GPUS = [("H100", 4), ("B200", 4), ("RTX-PRO-6000", 4)]
# `--linear`: the GDN hybrids with pairs of the linear-attention backend options and what their
# checks read (the Mamba state's dtype, the strategy, a draft); on the Mamba GPUs.
LINEAR_MODELS = {k: MAMBA_MODELS[k] for k in ("qwen3-next", "qwen3.5")}
LINEAR_OPTIONS = [
    ["--linear-attn-backend", "flashinfer"],
    ["--linear-attn-backend", "cutedsl"],
    ["--linear-attn-decode-backend", "flashinfer"],
    ["--linear-attn-decode-backend", "cutedsl"],
    ["--linear-attn-decode-backend", "flashkda"],
    ["--linear-attn-prefill-backend", "flashinfer"],
    ["--linear-attn-prefill-backend", "flashkda"],
    ["--linear-attn-verify-backend", "flashinfer"],
    ["--mamba-ssm-dtype", "bfloat16"],
    ["--mamba-ssm-dtype", "float32"],
    ["--mamba-scheduler-strategy", "extra_buffer"],
    ["--disable-radix-cache"],
    ["--speculative-algorithm", "NEXTN"],
    ["--page-size", "64"],
]


# `--hicache`: the three grid models with HiCache on and pairs of the options its host tier and
# storage read (I/O backend, memory layout, write policy, storage backend, size), on H100 and B200.
HICACHE_OPTIONS = [
    ["--hicache-io-backend", "direct"],
    ["--hicache-io-backend", "kernel"],
    ["--hicache-mem-layout", "layer_first"],
    ["--hicache-mem-layout", "page_first"],
    ["--hicache-mem-layout", "page_first_direct"],
    ["--hicache-write-policy", "write_back"],
    ["--hicache-storage-backend", "file"],
    ["--hicache-storage-backend", "mooncake"],
    ["--hicache-storage-prefetch-policy", "wait_complete"],
    ["--hicache-size", "64"],
    ["--page-size", "64"],
    ["--attention-backend", "fa3"],
    ["--attention-backend", "flashinfer"],
    ["--attention-backend", "triton"],
    ["--disaggregation-mode", "decode"],
    ["--enable-dp-attention", "--dp", "2"],
    ["--kv-cache-dtype", "fp8_e4m3"],
    ["--speculative-algorithm", "EAGLE"],
]
HICACHE_GPUS = [("H100", 4), ("B200", 4)]


# `--moe`: the MoE models at TP 8 and EP 8 with every all-to-all backend, MoE runner and
# quantisation together, and one more option their checks read (DeepEP's mode, DP attention,
# PD roles, EPLB, a draft), on H100 and B200; thinned by `--limit`.
MOE_MODELS = {k: {**MODELS, **MORE_MODELS}[k] for k in ("moe", "mla", "gpt-oss")}
MOE_A2A = [[], ["--moe-a2a-backend", "deepep"], ["--moe-a2a-backend", "mooncake"],
           ["--moe-a2a-backend", "flashinfer"], ["--moe-a2a-backend", "megamoe"],
           ["--enable-waterfill"]]
MOE_RUNNERS = [[]] + [["--moe-runner-backend", r] for r in (
    "triton", "deep_gemm", "flashinfer_cutlass", "flashinfer_cutedsl", "flashinfer_trtllm",
    "marlin", "cutlass", "flashinfer_mxfp4", "triton_kernel")]
MOE_QUANT = [[], ["--quantization", "fp8"], ["--quantization", "modelopt_fp4"]]
MOE_EXTRA = [[], ["--deepep-mode", "normal"], ["--deepep-mode", "low_latency"],
             ["--enable-dp-attention", "--dp", "8"], ["--disaggregation-mode", "prefill"],
             ["--disaggregation-mode", "decode"], ["--enable-eplb"],
             ["--speculative-algorithm", "NEXTN"]]
MOE_GPUS = [("H100", 8), ("B200", 8)]


def moe_grid(limit, offset=0.0):
    cases = []
    for kind, model in MOE_MODELS.items():
        for gpu, count in MOE_GPUS:
            base = ["--model-path", str(model), "--tp", str(count), "--ep-size", str(count)]
            for parts in itertools.product(MOE_A2A, MOE_RUNNERS, MOE_QUANT, MOE_EXTRA):
                argv = base + [t for part in parts for t in part]
                cases.append({"kind": kind, "gpu": gpu, "count": count, "argv": argv})
    return thinned(cases, limit, offset)


# `--spec`: the three grid models with the speculative algorithms they take (the drafts SGLang's
# checks read are given), each with step / top-k / draft-token settings and pairs of the options
# speculative decoding's checks read, on H100 and B200; thinned by `--limit`.
SPEC_ALGOS = {
    "dense": [["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path",
               str(ORACLE_MODELS / "sglang-EAGLE-LLaMA3-Instruct-8B")],
              ["--speculative-algorithm", "NGRAM"],
              ["--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path",
               str(ORACLE_MODELS / "Llama-3.1-8B-Instruct")]],
    "moe": [["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path",
             str(ORACLE_MODELS / "Qwen3-30B-A3B-EAGLE3")],
            ["--speculative-algorithm", "NGRAM"]],
    "mla": [["--speculative-algorithm", "NEXTN"], ["--speculative-algorithm", "EAGLE"]],
}
SPEC_PARAMS = [[], ["--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                    "--speculative-num-draft-tokens", "4"],
               ["--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                "--speculative-num-draft-tokens", "8"],
               ["--speculative-eagle-topk", "2"]]
SPEC_OPTIONS = [
    ["--page-size", "64"],
    ["--attention-backend", "fa3"],
    ["--attention-backend", "flashinfer"],
    ["--attention-backend", "triton"],
    ["--attention-backend", "trtllm_mha"],
    ["--attention-backend", "trtllm_mla"],
    ["--enable-dp-attention", "--dp", "2"],
    ["--disable-overlap-schedule"],
    ["--enable-mixed-chunk"],
    ["--disaggregation-mode", "decode"],
    ["--kv-cache-dtype", "fp8_e4m3"],
    ["--disable-cuda-graph"],
    ["--disable-radix-cache"],
    ["--enable-two-batch-overlap"],
    ["--max-running-requests", "8"],
]
SPEC_GPUS = [("H100", 4), ("B200", 4)]


def spec_grid(limit, offset=0.0):
    cases = []
    for kind, algos in SPEC_ALGOS.items():
        for gpu, count in SPEC_GPUS:
            base = ["--model-path", str(MODELS[kind]), "--tp", str(count)]
            pairs = [[]] + [[o] for o in SPEC_OPTIONS] + [
                [a, b] for a, b in itertools.combinations(SPEC_OPTIONS, 2) if a[0] != b[0]]
            for algo, params, extra in itertools.product(algos, SPEC_PARAMS, pairs):
                argv = base + algo + params + [t for o in extra for t in o]
                cases.append({"kind": kind, "gpu": gpu, "count": count, "argv": argv})
    return thinned(cases, limit, offset)


# `--feature lora|pd|pdpolicy|parallel|eplb|epd|sched|serve|spec2|radix`: models with one way of turning a feature on, one of its
# settings and one more option its checks read (each list starts with none), on H100 and B200;
# thinned by `--limit`.
LORA_SETUPS = [["--enable-lora"],
               ["--enable-lora", "--max-lora-rank", "16", "--lora-target-modules", "all"],
               ["--max-lora-rank", "64", "--lora-target-modules", "q_proj", "v_proj"],
               ["--lora-paths", "adapter=/srv/lora/adapter"],
               ["--enable-lora", "--lora-paths", "adapter=/srv/lora/adapter", "--max-loaded-loras", "1"]]
LORA_KNOBS = [[], ["--max-loras-per-batch", "4"], ["--max-loaded-loras", "2"],
              ["--lora-backend", "triton"], ["--lora-backend", "torch_native"],
              ["--lora-backend", "ascend"], ["--max-lora-chunk-size", "64"],
              ["--lora-eviction-policy", "fifo"], ["--enable-lora-overlap-loading"]]
LORA_OTHERS = [[], ["--disable-radix-cache"], ["--enable-dp-attention", "--dp", "2"],
               ["--speculative-algorithm", "NGRAM"], ["--pp-size", "2"], ["--disable-cuda-graph"],
               ["--enable-mixed-chunk"], ["--attention-backend", "triton"],
               ["--chunked-prefill-size", "-1"], ["--disaggregation-mode", "decode"],
               ["--enable-deterministic-inference"], ["--enable-torch-compile"]]
PD_SETUPS = [["--disaggregation-mode", "prefill"], ["--disaggregation-mode", "decode"]]
PD_KNOBS = [[], ["--disaggregation-transfer-backend", "nixl"],
            ["--disaggregation-transfer-backend", "fake"],
            ["--disaggregation-transfer-backend", "mori"],
            ["--disaggregation-transfer-backend", "ascend"],
            ["--disaggregation-transfer-backend", "mooncake_tcp"],
            ["--disaggregation-ib-device", "mlx5_0"],
            ["--disaggregation-decode-enable-radix-cache"],
            ["--disaggregation-decode-enable-offload-kvcache"],
            ["--disaggregation-decode-retraction-backup", "host_pool"],
            ["--load-balance-method", "follow_bootstrap_room"]]
PD_OTHERS = [[], ["--enable-dp-attention", "--dp", "2"], ["--speculative-algorithm", "NGRAM"],
             ["--enable-hierarchical-cache"], ["--disable-radix-cache"], ["--page-size", "64"],
             ["--pp-size", "2"], ["--enable-mixed-chunk"], ["--disable-overlap-schedule"],
             ["--attention-backend", "triton"], ["--kv-cache-dtype", "fp8_e4m3"],
             ["--enable-two-batch-overlap"], ["--max-running-requests", "64"],
             ["--chunked-prefill-size", "-1"], ["--enable-lora"]]
PARALLEL_SETUPS = [["--pp-size", "2"], ["--dp", "2"], ["--enable-dp-attention", "--dp", "2"],
                   ["--enable-dp-attention", "--dp", "4"], ["--ep-size", "4"],
                   ["--moe-dp-size", "2"], ["--nnodes", "2", "--node-rank", "0",
                                           "--dist-init-addr", "10.0.0.1:5000"]]
PARALLEL_KNOBS = [[], ["--pp-max-micro-batch-size", "8"], ["--pp-async-batch-depth", "1"],
                  ["--enable-dp-lm-head"], ["--moe-dense-tp-size", "1"],
                  ["--enable-two-batch-overlap"], ["--enable-single-batch-overlap"],
                  ["--load-balance-method", "total_tokens"], ["--pp-size", "4"]]
PARALLEL_OTHERS = [[], ["--speculative-algorithm", "NGRAM"], ["--enable-mixed-chunk"],
                   ["--disable-overlap-schedule"], ["--disable-radix-cache"],
                   ["--chunked-prefill-size", "-1"], ["--enable-torch-compile"],
                   ["--disable-cuda-graph"], ["--enable-hierarchical-cache"],
                   ["--max-running-requests", "8"], ["--moe-a2a-backend", "deepep"],
                   ["--enable-deterministic-inference"]]
EPLB_SETUPS = [["--enable-eplb"], ["--ep-num-redundant-experts", "32"],
               ["--enable-eplb", "--ep-num-redundant-experts", "32"],
               ["--enable-eplb", "--eplb-algorithm", "deepseek"],
               ["--expert-distribution-recorder-mode", "stat"],
               ["--elastic-ep-backend", "mooncake"], ["--init-expert-location", "/srv/eplb/expert.json"]]
EPLB_KNOBS = [[], ["--ep-size", "4"], ["--moe-a2a-backend", "deepep"],
              ["--moe-a2a-backend", "deepep", "--deepep-mode", "low_latency"],
              ["--ep-dispatch-algorithm", "static"], ["--ep-dispatch-algorithm", "dynamic"],
              ["--eplb-algorithm", "elasticity_aware"], ["--eplb-rebalance-layers-per-chunk", "4"],
              ["--expert-distribution-recorder-buffer-size", "100"]]
EPLB_OTHERS = [[], ["--enable-dp-attention", "--dp", "4"], ["--pp-size", "2"],
               ["--disaggregation-mode", "decode"], ["--speculative-algorithm", "NEXTN"],
               ["--moe-runner-backend", "deep_gemm"], ["--enable-two-batch-overlap"],
               ["--disable-cuda-graph"], ["--elastic-ep-join-mode", "scale"]]
EPD_SETUPS = [["--encoder-only"], ["--language-only"],
              ["--language-only", "--encoder-urls", "http://10.0.0.2:30000"],
              ["--encoder-only", "--encoder-transfer-backend", "mooncake"],
              ["--enable-prefix-mm-cache"]]
EPD_KNOBS = [[], ["--encoder-transfer-backend", "zmq_to_tokenizer"],
             ["--encoder-transfer-backend", "mooncake"], ["--mm-enable-dp-encoder"],
             ["--enable-prefix-mm-cache"], ["--mm-attention-backend", "fa3"],
             ["--encoder-register-urls", "http://10.0.0.3:30000"]]
EPD_OTHERS = [[], ["--disaggregation-mode", "prefill"], ["--disaggregation-mode", "decode"],
              ["--enable-dp-attention", "--dp", "2"], ["--speculative-algorithm", "NGRAM"],
              ["--disable-radix-cache"], ["--chunked-prefill-size", "-1"], ["--pp-size", "2"],
              ["--encoder-only"]]
SCHED_SETUPS = [["--enable-priority-scheduling"], ["--schedule-policy", "priority"],
                ["--schedule-policy", "lpm"], ["--enable-dynamic-chunking"],
                ["--num-continuous-decode-steps", "4"], ["--cpu-offload-gb", "16"],
                ["--offload-group-size", "4", "--offload-num-in-group", "1"]]
SCHED_KNOBS = [[], ["--disable-priority-preemption"], ["--default-priority-value", "0"],
               ["--abort-on-priority-when-disabled"], ["--schedule-low-priority-values-first"],
               ["--chunked-prefill-size", "-1"], ["--max-prefill-tokens", "4096"],
               ["--offload-mode", "meta"], ["--startup-weight-load-mode", "overlap"],
               ["--enable-weights-cpu-backup"], ["--weight-loader-prefetch-checkpoints"]]
SCHED_OTHERS = [[], ["--disable-radix-cache"], ["--enable-dp-attention", "--dp", "2"],
                ["--pp-size", "2"], ["--disaggregation-mode", "decode"],
                ["--speculative-algorithm", "NGRAM"], ["--enable-mixed-chunk"],
                ["--disable-overlap-schedule"], ["--enable-torch-compile"],
                ["--enable-deterministic-inference"], ["--enable-hierarchical-cache"]]
PDPOLICY_KNOBS = [[], ["--disaggregation-decode-allocation-policy", "prefill_complete"],
                  ["--disaggregation-decode-host-receive-threshold", "0.5"],
                  ["--disaggregation-decode-host-receive-threshold", "0"],
                  ["--disaggregation-decode-host-receive-threshold", "1.5"],
                  ["--disaggregation-decode-allocation-policy", "prefill_complete",
                   "--disaggregation-decode-host-receive-threshold", "0.5"]]
PDPOLICY_OTHERS = [[], ["--enable-dp-attention", "--dp", "4"], ["--enable-hisparse"],
                   ["--enable-pd-role-switch"], ["--disaggregation-transfer-backend", "nixl"],
                   ["--disaggregation-transfer-backend", "mooncake_tcp"],
                   ["--disaggregation-decode-retraction-backup", "cpu_tensor"],
                   ["--disaggregation-decode-retraction-backup", "host_pool"],
                   ["--enable-hierarchical-cache"],
                   ["--enable-hierarchical-cache", "--hicache-write-policy", "write_back"],
                   ["--disaggregation-decode-enable-radix-cache"], ["--pp-size", "2"],
                   ["--dcp-size", "2"], ["--enable-pdmux"]]
SPEC2_SETUPS = [["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path",
                 str(ORACLE_MODELS / "sglang-EAGLE-LLaMA3-Instruct-8B")],
                ["--speculative-algorithm", "NGRAM"],
                ["--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path",
                 str(ORACLE_MODELS / "Llama-3.1-8B-Instruct")],
                ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path",
                 str(ORACLE_MODELS / "sglang-EAGLE-LLaMA3-Instruct-8B")],
                ["--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                 "--speculative-num-draft-tokens", "4"]]
SPEC2_KNOBS = [[], ["--speculative-adaptive"], ["--speculative-use-block-verification"],
               ["--speculative-use-rejection-sampling"],
               ["--speculative-accept-threshold-single", "0.9"],
               ["--speculative-draft-window-size", "2"], ["--speculative-draft-window-size", "64"],
               ["--speculative-draft-sink-size", "4"], ["--speculative-dflash-block-size", "8"],
               ["--speculative-dflash-block-size", "0"],
               ["--speculative-token-map", "/srv/spec/token_map.pt"],
               ["--speculative-moe-a2a-backend", "deepep"], ["--enable-strict-thinking"]]
SPEC2_OTHERS = [[], ["--speculative-eagle-topk", "4"], ["--speculative-num-draft-tokens", "16"],
                ["--enable-dp-attention", "--dp", "2"], ["--pp-size", "2"],
                ["--disaggregation-mode", "decode"], ["--enable-mixed-chunk"],
                ["--disable-overlap-schedule"], ["--attention-backend", "triton"],
                ["--enable-deterministic-inference"]]
RADIX_SETUPS = [[], ["--enable-hierarchical-cache"], ["--enable-streaming-session"],
                ["--enable-session-radix-cache"], ["--disable-radix-cache"], ["--enable-lmcache"]]
RADIX_KNOBS = [[], ["--radix-eviction-policy", "lfu"], ["--radix-eviction-policy", "slru"],
               ["--radix-eviction-policy", "priority"], ["--radix-eviction-policy", "tlru"],
               ["--radix-eviction-policy-config", '{"ttl": 60}'], ["--hicache-ratio", "0.5"],
               ["--hicache-host-memory-fraction", "1.5"], ["--hicache-host-memory-mode", "buffer_only"],
               ["--swa-full-tokens-ratio", "1.5"], ["--swa-prefix-tails", "-1"]]
RADIX_OTHERS = [[], ["--disaggregation-mode", "decode"], ["--page-size", "64"],
                ["--speculative-algorithm", "NGRAM"], ["--enable-priority-scheduling"],
                ["--enable-dp-attention", "--dp", "2"], ["--enable-mixed-chunk"]]
SERVE_SETUPS = [["--enable-watermark"], ["--watermark-config", '{"key": "1f"}'],
                ["--grpc-port", "30000"], ["--grpc-port", "31000"], ["--grpc-mode"],
                ["--sidecar", "smg"], ["--sidecar-args", '["--verbose"]'],
                ["--enable-http2", "--http2-max-concurrent-streams", "0"],
                ["--enable-http-worker-reuseport"], ["--tokenizer-worker-num", "4"],
                ["--tokenizer-worker-num", "0"], ["--detokenizer-worker-num", "0"],
                ["--gc-threshold", "700", "10", "10", "5"], ["--gc-threshold", "50000"],
                ["--kv-canary-sweep-interval", "100"], ["--kv-canary", "log"],
                ["--prompt-tokens-buckets", "tse", "1000"],
                ["--generation-tokens-buckets", "custom", "10", "100"],
                ["--tokenizer-metrics-allowed-custom-labels", "tenant"],
                ["--export-metrics-to-file"], ["--enable-response-store"],
                ["--limit-mm-data-per-request", '{"images": 2}'],
                ["--preferred-sampling-params", '{"watermark": true}'],
                ["--default-chat-template-kwargs", "[1]"],
                ["--mm-feature-transport", "cuda_ipc"], ["--mm-preprocess-cache-size-mb", "-1"],
                ["--asr-max-buffer-seconds", "0"], ["--schedule-conservativeness", "-0.5"],
                ["--min-free-slots-delay", "4"], ["--return-hidden-states-mode", "last"],
                ["--enable-custom-logit-processor"], ["--sampling-backend", "pytorch"]]
SERVE_KNOBS = [[], ["--api-key", "sk-test"], ["--tokenizer-worker-num", "2"],
               ["--grpc-port", "31000"], ["--enable-watermark"], ["--kv-canary", "log"],
               ["--skip-tokenizer-init"], ["--tokenizer-metrics-custom-labels-header", ""],
               ["--export-metrics-to-file-dir", "/srv/metrics"]]
SERVE_OTHERS = [[], ["--disaggregation-mode", "prefill"], ["--pp-size", "2"],
                ["--speculative-algorithm", "NGRAM"], ["--enable-metrics"],
                ["--nnodes", "2", "--node-rank", "0", "--dist-init-addr", "10.0.0.1:5000"]]
SHARD_SETUPS = [["--enable-kv-cache-sharding"],
                ["--enable-kv-cache-sharding", "--disaggregation-mode", "prefill"],
                ["--dwdp-size", "2"], ["--dwdp-size", "4"], ["--dcp-size", "2"],
                ["--dcp-comm-backend", "a2a"], ["--dcp-size", "2", "--dcp-comm-backend", "a2a"],
                ["--dcp-size", "2", "--dcp-comm-backend", "fi_a2a"], ["--dcp-replicate-q-proj"],
                ["--dcp-size", "2", "--dcp-replicate-q-proj"], ["--enable-layernorm-sp"],
                ["--elastic-ep-initial-size", "4"],
                ["--elastic-ep-backend", "mooncake", "--max-ep-size", "8"],
                ["--prefill-decode-interval", "4"], ["--enable-return-aux-hidden-states"]]
SHARD_KNOBS = [[], ["--disaggregation-mode", "prefill"], ["--disaggregation-mode", "decode"],
               ["--speculative-algorithm", "NGRAM"], ["--enable-eplb"],
               ["--enable-dp-attention", "--dp", "2"], ["--attention-backend", "trtllm_mla"],
               ["--attention-backend", "fa3"], ["--disable-chunked-prefix-cache"],
               ["--enable-hierarchical-cache"], ["--enable-prefill-cp"],
               ["--moe-a2a-backend", "deepep"]]
SHARD_OTHERS = [[], ["--pp-size", "2"], ["--enable-streaming-session"], ["--disable-radix-cache"],
                ["--enable-lmcache"], ["--page-size", "64"]]
MAMBA2_SETUPS = [["--mamba-track-interval", "128"], ["--mamba-track-interval", "100"],
                 ["--enable-int8-mamba-checkpoint"], ["--mamba-cache-philox-rounds", "-1"],
                 ["--mamba-max-states-per-path", "0"], ["--mamba-max-states-per-path", "4"],
                 ["--enable-mamba-cache-stochastic-rounding"],
                 ["--enable-mamba-cache-stochastic-rounding", "--mamba-ssm-dtype", "float16"],
                 ["--enable-mamba-cache-stochastic-rounding", "--mamba-ssm-dtype", "float16",
                  "--mamba-backend", "flashinfer"],
                 ["--mamba-full-memory-ratio", "0.5"], ["--max-mamba-cache-size", "64"]]
MAMBA2_KNOBS = [[], ["--mamba-radix-cache-strategy", "extra_buffer"],
                ["--mamba-scheduler-strategy", "extra_buffer"], ["--page-size", "64"],
                ["--speculative-algorithm", "NEXTN"], ["--enable-hierarchical-cache"],
                ["--enable-lmcache"], ["--disable-radix-cache"]]
MAMBA2_OTHERS = [[], ["--disaggregation-mode", "decode"], ["--chunked-prefill-size", "64"],
                 ["--mamba-ssm-dtype", "bfloat16"]]
TRACK_SETUPS = [[], ["--mamba-track-interval", "100"], ["--mamba-track-interval", "96"],
                ["--mamba-track-interval", "32"], ["--mamba-track-interval", "2"]]
TRACK_KNOBS = [[], ["--page-size", "64"], ["--page-size", "16"], ["--page-size", "48"],
               ["--page-size", "128"], ["--attention-backend", "trtllm_mha"],
               ["--attention-backend", "flashinfer"],
               ["--mamba-radix-cache-strategy", "extra_buffer"],
               ["--mamba-scheduler-strategy", "extra_buffer"],
               ["--mamba-radix-cache-strategy", "extra_buffer", "--page-size", "32"],
               ["--mamba-scheduler-strategy", "extra_buffer", "--page-size", "32"]]
TRACK_OTHERS = [[], ["--speculative-algorithm", "NEXTN"],
                ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
                 "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"],
                ["--disable-overlap-schedule"], ["--disaggregation-mode", "decode"],
                ["--disable-radix-cache"]]
REPLAY_SETUPS = [["--enable-linear-replayssm"],
                 ["--enable-linear-replayssm", "--linear-replayssm-cache-len", "0"]]
REPLAY_KNOBS = [[], ["--mamba-radix-cache-strategy", "no_buffer"],
                ["--mamba-radix-cache-strategy", "extra_buffer"],
                ["--mamba-scheduler-strategy", "no_buffer"], ["--disable-radix-cache"],
                ["--linear-attn-backend", "cutedsl"], ["--linear-attn-backend", "flashkda"],
                ["--linear-attn-decode-backend", "flashinfer"],
                ["--linear-attn-decode-backend", "triton"], ["--mamba-ssm-dtype", "bfloat16"],
                ["--disaggregation-mode", "decode"], ["--disaggregation-mode", "prefill"],
                ["--page-size", "64"], ["--disable-overlap-schedule"]]
REPLAY_OTHERS = [[], ["--speculative-algorithm", "NEXTN"], ["--mamba-ssm-dtype", "bfloat16"],
                 ["--mamba-radix-cache-strategy", "no_buffer", "--disable-overlap-schedule"]]
HOST_SETUPS = [["--enable-unified-cache-external-linker"],
               ["--enable-unified-cache-external-linker", "--unified-cache-external-linker-backend",
                "dynamic"],
               ["--enable-linker-mla-dedup"],
               ["--enable-unified-cache-external-linker", "--enable-linker-mla-dedup"],
               ["--ple-offload-embedding"], ["--no-ple-offload-embedding"],
               ["--load-publish-endpoint", "auto"], ["--load-publish-endpoint", "tcp://*:6000"],
               ["--load-publish-endpoint", "tcp://10.0.0.1:6000"]]
HOST_KNOBS = [[], ["--enable-hierarchical-cache"], ["--hicache-storage-backend", "mooncake"],
              ["--disable-radix-cache"], ["--unified-cache-external-linker-backend", "mori"],
              ["--cpu-offload-gb", "4"], ["--offload-group-size", "2"],
              ["--ple-offload-backend", "file"], ["--kv-events-config", '{"publisher": "zmq"}'],
              ["--kv-events-config", '{"publisher": "zmq", "endpoint": "tcp://*:6000"}'],
              ["--kv-events-config", "{}"]]
HOST_OTHERS = [[], ["--dp-size", "2"], ["--disaggregation-mode", "decode"], ["--enable-lmcache"],
               ["--unified-cache-external-linker-config",
                '{"linker": "L", "linker_module_path": "m"}']]
MOEOPT_SETUPS = [["--flashinfer-a2a-dispatch-type", "bf16"],
                 ["--flashinfer-a2a-dispatch-type", "mxfp8"],
                 ["--flashinfer-a2a-dispatch-type", "auto"], ["--enable-tp-lm-head-all-to-all"],
                 ["--elastic-ep-backend", "mooncake", "--max-ep-size", "16"],
                 ["--elastic-ep-backend", "mooncake", "--max-ep-size", "16",
                  "--moe-a2a-backend", "nixl", "--enable-dp-lm-head"]]
MOEOPT_KNOBS = [[], ["--moe-a2a-backend", "flashinfer"], ["--enable-dp-attention", "--dp", "4"],
                ["--enable-dp-attention", "--dp", "2"], ["--enable-dp-lm-head"],
                ["--quantization", "mxfp8"], ["--moe-runner-backend", "deep_gemm"],
                ["--moe-runner-backend", "flashinfer_trtllm"], ["--disable-cuda-graph"],
                ["--load-balance-method", "total_requests"],
                ["--disaggregation-mode", "prefill"], ["--disaggregation-mode", "decode"]]
MOEOPT_OTHERS = [[], ["--enable-dp-attention", "--dp", "4", "--moe-a2a-backend", "flashinfer"],
                 ["--pp-size", "2"], ["--moe-dense-tp-size", "1"],
                 ["--moe-runner-backend", "flashinfer_cutlass"]]
# Each feature: its setups, settings and other options, and the models it runs (the grid's
# three unless named: the encoder split needs a vision-language model).
FEATURES = {"lora": (LORA_SETUPS, LORA_KNOBS, LORA_OTHERS, MODELS),
            "pd": (PD_SETUPS, PD_KNOBS, PD_OTHERS, MODELS),
            "parallel": (PARALLEL_SETUPS, PARALLEL_KNOBS, PARALLEL_OTHERS, MODELS),
            "eplb": (EPLB_SETUPS, EPLB_KNOBS, EPLB_OTHERS, {k: MODELS[k] for k in ("moe", "mla")}),
            "sched": (SCHED_SETUPS, SCHED_KNOBS, SCHED_OTHERS, MODELS),
            "pdpolicy": (PD_SETUPS + [[]], PDPOLICY_KNOBS, PDPOLICY_OTHERS, MODELS),
            "spec2": (SPEC2_SETUPS, SPEC2_KNOBS, SPEC2_OTHERS, {"dense": MODELS["dense"]}),
            "radix": (RADIX_SETUPS, RADIX_KNOBS, RADIX_OTHERS,
                      {"dense": MODELS["dense"], "mla": MODELS["mla"], "gpt-oss": MORE_MODELS["gpt-oss"]}),
            "serve": (SERVE_SETUPS, SERVE_KNOBS, SERVE_OTHERS, {"dense": MODELS["dense"]}),
            "shard": (SHARD_SETUPS, SHARD_KNOBS, SHARD_OTHERS, MODELS),
            "mamba2": (MAMBA2_SETUPS, MAMBA2_KNOBS, MAMBA2_OTHERS,
                       {k: MAMBA_MODELS[k] for k in ("qwen3-next", "nemotron-h")}),
            "track": (TRACK_SETUPS, TRACK_KNOBS, TRACK_OTHERS,
                      {k: MAMBA_MODELS[k] for k in ("qwen3-next", "qwen3.5", "nemotron-h")}),
            "replay": (REPLAY_SETUPS, REPLAY_KNOBS, REPLAY_OTHERS,
                       {"qwen3-next": MAMBA_MODELS["qwen3-next"],
                        "nemotron-h": MAMBA_MODELS["nemotron-h"], "dense": MODELS["dense"]}),
            "host": (HOST_SETUPS, HOST_KNOBS, HOST_OTHERS,
                     {"dense": MODELS["dense"], "mla": MODELS["mla"]}),
            "moeopt": (MOEOPT_SETUPS, MOEOPT_KNOBS, MOEOPT_OTHERS,
                       {"moe": MODELS["moe"], "mla": MODELS["mla"]}),
            "epd": (EPD_SETUPS, EPD_KNOBS, EPD_OTHERS,
                    {"vlm": MORE_MODELS["vlm"], "dense": MODELS["dense"]})}


def feature_grid(feature, limit, offset=0.0):
    setups, knobs, others, models = FEATURES[feature]
    cases = []
    for kind, model in models.items():
        for gpu, count in SPEC_GPUS:
            base = ["--model-path", str(model), "--tp", str(count)]
            for parts in itertools.product(setups, knobs, others):
                argv = base + [t for part in parts for t in part]
                cases.append({"kind": kind, "gpu": gpu, "count": count, "argv": argv})
    return thinned(cases, limit, offset)


def thinned(cases, limit, offset):
    """Every k-th line when a limit is asked, from `offset` of a step on (another offset samples
    other lines of the same grid)."""
    if limit and len(cases) > limit:
        step = len(cases) / limit
        cases = [cases[int((i + offset) * step)] for i in range(limit)]
    return cases


def hicache_grid():
    cases = []
    for kind, model in MODELS.items():
        for gpu, count in HICACHE_GPUS:
            base = ["--model-path", str(model), "--tp", str(count), "--enable-hierarchical-cache"]
            for a, b in itertools.combinations(HICACHE_OPTIONS, 2):
                if a[0] != b[0]:
                    cases.append({"kind": kind, "gpu": gpu, "count": count, "argv": base + a + b})
    return cases


def mamba_grid(models=MAMBA_MODELS, options=MAMBA_OPTIONS):
    cases = []
    for kind, model in models.items():
        for gpu, count in MAMBA_GPUS:
            base = ["--model-path", str(model), "--tp", str(count)]
            for a, b in itertools.combinations(options, 2):
                if a[0] != b[0]:
                    cases.append({"kind": kind, "gpu": gpu, "count": count, "argv": base + a + b})
    return cases


def field_grid():
    """Each field corpus config on three GPUs, alone and with one common option: the model-config
    checks of a release on real checkpoints (quantisation configs, model types, context limits)."""
    cases = []
    for model in sorted(p for p in FIELD_MODELS.iterdir() if (p / "config.json").is_file()):
        for gpu, count in FIELD_GPUS:
            base = ["--model-path", str(model), "--tp", str(count)]
            for extra in FIELD_OPTIONS:
                cases.append({"kind": model.name, "gpu": gpu, "count": count, "argv": base + extra})
    return cases


LOADER_GPUS = [("T4", 1), ("A100-80G", 8), ("H100", 8), ("B200", 8)]
FIXTURE_MODELS = ROOT / "tests" / "fixtures" / "models"


def loader_grid():
    """Real configs (the field corpus's and the fixtures') on four GPUs, with --dtype bfloat16 too
    where the checkpoint is quantised: the model config's and the loader's checks, and the first
    decoder layer's linear layers built from the loader's quantisation config."""
    dirs = [p for root in (FIELD_MODELS, FIXTURE_MODELS) for p in sorted(root.iterdir())
            if (p / "config.json").is_file()]
    cases = []
    for model in dirs:
        quantised = "quantization_config" in (model / "config.json").read_text()
        for gpu, count in LOADER_GPUS:
            base = ["--model-path", str(model), "--tp", str(count)]
            for extra in ([], ["--dtype", "bfloat16"]) if quantised else ([],):
                cases.append({"kind": model.name, "gpu": gpu, "count": count, "argv": base + extra})
    return cases


# Refusals raised as other types while the layers build: plain GPTQ's experts (TypeError), a
# compressed-tensors scheme that needs vLLM (ImportError) or that no method takes
# (NotImplementedError).
REFUSE_TYPES = "TypeError,ImportError,NotImplementedError"


def loader_probe(python, oracle, gpus, case, overlay=None):
    """One line through the loader probe: SGLang's answer in the oracle's shape, or a stop short
    of the checks (`error_stage` "stopped", left out of the comparison). `overlay`: a folder of
    distributions put on PYTHONPATH (gen-evidence.py's compressed-tensors overlay), with
    `accelerate` stubbed as the evidence cases do."""
    gpu = gpus[case["gpu"]]
    env = {**__import__("os").environ, "PYTHONHASHSEED": "0"}
    stubs = []
    if overlay:
        env["PYTHONPATH"] = str(overlay)
        stubs = ["--stubs", "accelerate"]
    fn = "sglang.srt.model_loader.loader:_get_quantization_config"
    for args in ("[null]", "[null, {}]"):  # releases before 0.5.10 take the packed modules too
        cmd = [python, str(ROOT / "scripts" / "evidence_probe.py"), "--oracle", str(oracle),
               "--function", fn, "--gpu-mem", str(gpu["memory_mib"]), "--gpu-name", gpu["name"],
               "--cc", gpu["cc"], "--num-gpus", str(case["count"]), "--model-config",
               "--model-config-first", "--args", args, "--dtype-instances", "--linear-weights",
               "--moe-runner", "--refuse-types", REFUSE_TYPES, *stubs, "--"] + case["argv"]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
        lines = [json.loads(l) for l in res.stdout.splitlines() if l.startswith("{")]
        r = lines[-1] if lines else {"stopped": res.stderr[-200:], "at": []}
        # A release before 0.5.10 wants the packed modules too (a TypeError, refused or not).
        if "packed_modules_mapping" not in r.get("stopped", "") + r.get("refused", ""):
            break
    if "refused" in r:
        return {"error": r["refused"], "error_stage": "probe"}
    if "stopped" in r:
        return {"error": None, "error_stage": "stopped"}
    return {}


def loader_run(python, oracle, gpus, cases, overlay=None):
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:
        out = list(pool.map(lambda c: loader_probe(python, oracle, gpus, c, overlay), cases))
    print(f"loader: {len(out)} lines, {sum(r.get('error_stage') == 'stopped' for r in out)} "
          "stopped short of the checks", file=sys.stderr)
    return out


def grid(limit, more=False, kinds=None, offset=0.0):
    options = OPTIONS + MORE if more else OPTIONS
    models = {k: {**MODELS, **MORE_MODELS}[k] for k in kinds} if kinds else MODELS
    cases = []
    for kind, model in models.items():
        for gpu, count in GPUS:
            base = ["--model-path", str(model), "--tp", str(count)]
            for a, b in itertools.combinations(options, 2):
                if a[0] == b[0]:
                    continue
                cases.append({"kind": kind, "gpu": gpu, "count": count, "argv": base + a + b})
    return thinned(cases, limit, offset)


def oracle_run(oracle, python, gpus, cases):
    # In batches: one large batch stalls the oracle's worker pipes.
    out = []
    for i in range(0, len(cases), BATCH):
        out += oracle_batch(oracle, python, gpus, cases[i:i + BATCH])
        print(f"oracle: {len(out)}/{len(cases)}", file=sys.stderr)
    return out


def oracle_batch(oracle, python, gpus, cases):
    specs = [{
        "gpu_mem_mib": gpus[c["gpu"]]["memory_mib"], "gpu_name": gpus[c["gpu"]]["name"],
        "compute_capability": gpus[c["gpu"]]["cc"], "num_gpus": c["count"], "argv": c["argv"],
        "env": {"SGLANG_DISABLE_CUDNN_CHECK": "1", **c.get("env", {})},
    } for c in cases]
    res = subprocess.run(
        [python, str(Path(oracle) / "defaults_oracle.py"), "run", "--jsonl", "--jobs", "2"],
        input=json.dumps(specs), capture_output=True, text=True, timeout=7200)
    lines = [json.loads(l) for l in res.stdout.splitlines() if l.startswith("{")]
    if len(lines) != len(cases):
        sys.exit(f"{len(lines)} oracle results for {len(cases)} cases\n{res.stderr[-3000:]}")
    return lines


def venv_packages(venv, overlay=None):
    """The venv's installed distributions (and the overlay's), as `detect --json` records an
    install's packages: the launcher reads the install it plans for, so the sweep tells it what
    the release's venv has (its transformers, and that it has no vLLM, for example)."""
    if not venv:
        return {}
    code = ("import importlib.metadata as m, json, re; print(json.dumps({re.sub(r'[-_.]+', '-', "
            "d.metadata['Name']).lower(): d.version for d in m.distributions()}))")
    env = {**__import__("os").environ, **({"PYTHONPATH": str(overlay)} if overlay else {})}
    res = subprocess.run([f"{venv}/bin/python", "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    return json.loads(res.stdout)


def stub_torch(oracle, venv, release):
    """torch as the oracle's stand-in reports it (the venvs hold none), as gen-evidence.py records
    it: the version the release pins, labelled with the CUDA the oracle gives the release by
    default. A rule reading torch's CUDA (ATTN024) reads it from the install on a real machine."""
    if not oracle or not venv:
        return {}
    sys.path.insert(0, str(oracle))
    from defaults_oracle import default_cuda_version
    spec = importlib.util.spec_from_file_location("gen_evidence", ROOT / "scripts" / "gen-evidence.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen.venv_versions(f"{venv}/bin/python", ["torch"], default_cuda_version(release))


def topology(gpu, count, packages):
    gpus = [{"index": i, "uuid": f"GPU-{i:08}-0000-4000-8000-000000000000", "name": gpu["name"],
             "pci_bus_id": f"00000000:{0x18 + i:02x}:00.0", "compute_capability": gpu["cc"],
             "memory_total_mib": gpu["memory_mib"], "memory_used_mib": 0} for i in range(count)]
    links = [{"gpus": [a, b], "path": "NV18", "nvlink": True, "p2p": "ok"}
             for a in range(count) for b in range(a + 1, count)]
    topo = {"schema": "sglang-launch/topology/v1", "source": "sweep", "gpus": gpus, "links": links}
    # The RDMA devices of this machine, which the oracle's SGLang checks a line's devices against.
    cls = Path("/sys/class/infiniband")
    topo["host"] = {"rdma_devices": sorted(p.name for p in cls.iterdir()) if cls.is_dir() else []}
    if packages:
        topo["host"]["packages"] = packages
    return topo


def launcher(binary, release, gpus, case, tmp, packages):
    topo = Path(tmp) / f"{case['gpu']}-{case['count']}.json"
    if not topo.exists():
        topo.write_text(json.dumps(topology(gpus[case["gpu"]], case["count"], packages)))
    res = subprocess.run(
        [binary, "check", "--json", "--sglang-version", release, "--topology", str(topo),
         "--python", "/usr/bin/python3", "--"] + case["argv"],
        capture_output=True, text=True, env={"PATH": "/usr/bin:/bin",
                                             "SGLANG_DISABLE_CUDNN_CHECK": "1"})
    try:
        plan = json.loads(res.stdout)
    except json.JSONDecodeError:
        return {"rc": res.returncode, "errors": [f"usage: {res.stderr.strip()[:120]}"]}
    # The memory planner's verdicts are not argument handling: left out of the comparison.
    findings = plan.get("findings", [])
    errors = [f["code"] for f in findings
              if f.get("severity") == "error" and not f["code"].startswith("MEM")]
    fixes = sorted({f["code"] for f in findings if f.get("fixed")})
    # What the launcher would start: the fixed line, where it fixed something and blocks nothing.
    launched = None
    if fixes and not any(f.get("severity") == "error" and not f.get("fixed") for f in findings):
        launched = {"argv": plan["sglang_args"], "env": plan.get("env", {}).get("set", {}),
                    "fixes": fixes}
    return {"rc": res.returncode, "errors": errors, "launched": launched}


def replayed(path):
    """The lines and SGLang's answers of an earlier `--out` file: the launcher runs again on
    them without the oracle (after a fix, in seconds)."""
    cases, results = [], []
    for line in Path(path).read_text().splitlines():
        o = json.loads(line)
        cases.append({k: o[k] for k in ("kind", "gpu", "count", "argv")})
        results.append({"error": o["sglang"], "error_stage": o["stage"]})
    return cases, results


def fold(error):
    """A refusal's identity: exception and message, numbers and paths folded."""
    text = re.sub(r"/[\w./-]+", "<path>", error.split("\n")[0])
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return text[:150]


def verify_fixes(opts, gpus, launched):
    """The fixed lines through the oracle: a fix must leave a line SGLang takes, whether the line
    as written was refused (the fix is the launcher's answer to it) or taken (it must not break
    it). Prints the fixed lines SGLang still refuses, by refusal and the fixes made."""
    cases = [{**case, "argv": fix["argv"], "env": fix["env"]} for case, _, fix in launched]
    results = oracle_run(opts.oracle, f"{opts.venv}/bin/python", gpus, cases) if cases else []
    still = Counter()
    for (case, was_refused, fix), r in zip(launched, results):
        if r.get("error") and r.get("error_stage") != "stopped":
            before = "refused" if was_refused else "taken"
            still[(before, " ".join(fix["fixes"]), fold(r["error"]))] += 1
    args_changed = sum(fix["argv"] != case["argv"] for case, _, fix in launched)
    print(f"fixes verified: {len(launched)} lines the launcher fixes and starts ({args_changed} with "
          f"changed arguments, the rest only variables); SGLang refuses {sum(still.values())} of "
          f"the fixed lines")
    for (before, fixes, text), n in still.most_common():
        print(f"  {n:4} (as written: {before}; fixed by {fixes}) {text}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle")
    ap.add_argument("--venv")
    ap.add_argument("--replay", help="an earlier --out file: rerun the launcher on its lines only")
    ap.add_argument("--release", required=True)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "sglang-launch"))
    ap.add_argument("--limit", type=int)
    ap.add_argument("--out")
    ap.add_argument("--more", action="store_true")
    ap.add_argument("--offset", type=float, default=0.0,
                    help="where in each step of a thinned grid to sample, 0 to 1")
    ap.add_argument("--models", help="comma-separated kinds: " + ", ".join([*MODELS, *MORE_MODELS]))
    ap.add_argument("--field-models", action="store_true",
                    help="instead of the grid: every field corpus config, alone and with one common option")
    ap.add_argument("--overlay", help="with --loader: a distributions folder for PYTHONPATH "
                    "(gen-evidence.py's overlay-<release>-compressed-tensors)")
    ap.add_argument("--loader", action="store_true",
                    help="real configs through the model config, the loader's quantisation checks "
                         "and the first decoder layer's linear layers")
    ap.add_argument("--mamba", action="store_true",
                    help="instead of the grid: Mamba hybrids with pairs of the options their cache reads")
    ap.add_argument("--hicache", action="store_true",
                    help="instead of the grid: HiCache with pairs of its host-tier and storage options")
    ap.add_argument("--linear", action="store_true",
                    help="instead of the grid: GDN hybrids with pairs of the linear-attention backend options")
    ap.add_argument("--spec", action="store_true",
                    help="instead of the grid: speculative decoding with its settings and pairs of the "
                         "options its checks read (thinned by --limit)")
    ap.add_argument("--feature", choices=sorted(FEATURES),
                    help="instead of the grid: one feature (LoRA, PD disaggregation, parallel layouts, EPLB, "
                         "the encoder split, scheduling and weight offload) "
                         "turned on, one of its settings and one more option (thinned by --limit)")
    ap.add_argument("--verify-fixes", action="store_true",
                    help="also run every line the launcher fixes and would start through the "
                         "release's own argument handling again, and list those SGLang still refuses")
    ap.add_argument("--moe", action="store_true",
                    help="instead of the grid: MoE models with every all-to-all x runner x quantisation "
                         "and one more option (thinned by --limit)")
    opts = ap.parse_args()
    gpus = tomllib.loads((ROOT / "tests" / "field" / "gpus.toml").read_text())
    if opts.replay:
        cases, results = replayed(opts.replay)
    else:
        kinds = opts.models.split(",") if opts.models else None
        offset = min(max(opts.offset, 0.0), 0.999)
        if opts.mamba:
            cases = mamba_grid()
        elif opts.hicache:
            cases = hicache_grid()
        elif opts.linear:
            cases = mamba_grid(LINEAR_MODELS, LINEAR_OPTIONS)
        elif opts.spec:
            cases = spec_grid(opts.limit, offset)
        elif opts.moe:
            cases = moe_grid(opts.limit, offset)
        elif opts.feature:
            cases = feature_grid(opts.feature, opts.limit, offset)
        elif opts.field_models:
            cases = field_grid()
        elif opts.loader:
            cases = loader_grid()
        else:
            cases = grid(opts.limit, opts.more, kinds, offset)
        if opts.loader:
            results = loader_run(f"{opts.venv}/bin/python", opts.oracle, gpus, cases, opts.overlay)
        else:
            results = oracle_run(opts.oracle, f"{opts.venv}/bin/python", gpus, cases)
    packages = {**venv_packages(opts.venv, opts.overlay),
                **stub_torch(opts.oracle, opts.venv, opts.release)}
    refusals = defaultdict(lambda: [0, 0, Counter()])
    overblocks = Counter()
    out = []
    launched = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, r in zip(cases, results):
            if r.get("error_stage") == "stopped":
                continue
            ours = launcher(opts.bin, opts.release, gpus, case, tmp, packages)
            error = r.get("error") if r.get("error_stage") != "parse" else None
            parse_error = r.get("error") if r.get("error_stage") == "parse" else None
            if error:
                k = refusals[fold(error)]
                k[0] += 1
                k[1] += bool(ours["errors"])
                if not ours["errors"]:
                    k[2][" ".join(case["argv"][4:])] += 1
            elif not parse_error and ours["errors"]:
                overblocks[" ".join(sorted(set(ours["errors"])))] += 1
            out.append({**case, "sglang": error or parse_error, "stage": r.get("error_stage"),
                        "launcher": ours["errors"]})
            if ours["launched"] and not parse_error:
                launched.append((case, bool(error), ours["launched"]))
    if opts.verify_fixes:
        verify_fixes(opts, gpus, launched)
    if opts.out:
        Path(opts.out).write_text("".join(json.dumps(o) + "\n" for o in out))
    refused = sum(v[0] for v in refusals.values())
    caught = sum(v[1] for v in refusals.values())
    print(f"{opts.release}: {len(cases)} lines; SGLang refused {refused}, the launcher blocks "
          f"{caught}; blocks {sum(overblocks.values())} lines SGLang's argument handling takes")
    for text, (n, c, missed) in sorted(refusals.items(), key=lambda kv: kv[1][1] - kv[1][0]):
        print(f"  {c:4}/{n:<4} {text}")
        for line, _ in missed.most_common(2):
            print(f"             missed: {line}")
    for codes, n in overblocks.most_common():
        print(f"  blocks-accepted {n:4} {codes}")


if __name__ == "__main__":
    main()
