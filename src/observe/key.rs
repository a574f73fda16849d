//! The key an observation is kept under: the same line on the same machine. The machine is its
//! host name and the GPUs the server uses (model, memory, UUID); the line is the release and the
//! final SGLang arguments that shape memory. Anything else (ports, API keys, log levels) does
//! not change what a start allocates.

use crate::facts::Topology;
use crate::sglang::SglangArgs;

/// The options whose values shape what a start allocates.
const MEMORY_SHAPING: &[&str] = &[
    "--model-path",
    "--revision",
    "--dtype",
    "--quantization",
    "--kv-cache-dtype",
    "--load-format",
    "--tp-size",
    "--pp-size",
    "--dp-size",
    "--ep-size",
    "--enable-dp-attention",
    "--attn-dp-size",
    "--moe-a2a-backend",
    "--mem-fraction-static",
    "--context-length",
    "--chunked-prefill-size",
    "--max-running-requests",
    "--max-total-tokens",
    "--max-prefill-tokens",
    "--cuda-graph-max-bs",
    "--cuda-graph-max-bs-decode",
    "--disable-cuda-graph",
    "--page-size",
    "--attention-backend",
    "--speculative-algorithm",
    "--speculative-draft-model-path",
    "--enable-multimodal",
    "--json-model-override-args",
];

/// The key for this release, these final arguments and the GPUs `gpus` of `topology`.
pub fn of(version: &str, args: &SglangArgs, topology: &Topology, gpus: &[u32]) -> String {
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
        crate::sglang::extract::fnv1a(parts.join("\n").as_bytes())
    )
}
