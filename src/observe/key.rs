//! The key an observation is kept under: the same line on the same machine. The machine is its
//! host name and the GPUs the server uses (model, memory, UUID); the line is the release and the
//! final SGLang arguments that shape memory. Anything else (ports, API keys, log levels) does
//! not change what a start allocates.

use crate::facts::Topology;
use crate::sglang::SglangArgs;
use crate::sglang::opt;

/// The options whose values shape what a start allocates.
const MEMORY_SHAPING: &[&str] = &[
    opt::MODEL_PATH,
    opt::REVISION,
    opt::DTYPE,
    opt::QUANTIZATION,
    opt::KV_CACHE_DTYPE,
    opt::LOAD_FORMAT,
    opt::TP_SIZE,
    opt::PP_SIZE,
    opt::DP_SIZE,
    opt::EP_SIZE,
    opt::ENABLE_DP_ATTENTION,
    opt::ATTN_DP_SIZE,
    opt::MOE_A2A_BACKEND,
    opt::MEM_FRACTION_STATIC,
    opt::CONTEXT_LENGTH,
    opt::CHUNKED_PREFILL_SIZE,
    opt::MAX_RUNNING_REQUESTS,
    opt::MAX_TOTAL_TOKENS,
    opt::MAX_PREFILL_TOKENS,
    opt::CUDA_GRAPH_MAX_BS,
    opt::CUDA_GRAPH_MAX_BS_DECODE,
    opt::DISABLE_CUDA_GRAPH,
    opt::PAGE_SIZE,
    opt::ATTENTION_BACKEND,
    opt::SPECULATIVE_ALGORITHM,
    opt::SPECULATIVE_DRAFT_MODEL_PATH,
    opt::ENABLE_MULTIMODAL,
    opt::JSON_MODEL_OVERRIDE_ARGS,
];

/// The key for this release, these final arguments and the GPUs `gpus` of `topology`.
pub(crate) fn of(version: &str, args: &SglangArgs, topology: &Topology, gpus: &[u32]) -> String {
    let mut parts = vec![
        format!("host={}", topology.hostname.as_deref().unwrap_or("?")),
        format!("sglang={version}"),
    ];
    for &i in gpus {
        if let Some(g) = topology.gpu(i) {
            parts.push(format!("gpu={}:{}:{}", g.name, g.memory_total_mib, g.uuid));
        }
    }
    for opt in MEMORY_SHAPING {
        if let Some(v) = args.get(opt) {
            parts.push(format!("{opt}={v}"));
        }
    }
    format!(
        "{:016x}",
        crate::install::extract::fnv1a(parts.join("\n").as_bytes())
    )
}
