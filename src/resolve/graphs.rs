//! Prefill CUDA graphs SGLang turns off once its backends are chosen. Its memory heuristic ran
//! before, so the fraction keeps the graphs' share of the reserve; only the capture goes.

use super::server::Backends;
use crate::sglang::SglangArgs;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// Why SGLang drops the prefill graph it listed, for these backends (`None`: it keeps it).
pub(crate) fn prefill_dropped(
    version: &str,
    args: &SglangArgs,
    arch: Option<&str>,
    b: &Backends,
) -> Option<&'static str> {
    let name = |c: Option<&super::Chosen>| c.map(|c| c.value.clone()).unwrap_or_default();
    let (main, prefill) = (name(b.attention.as_ref()), name(b.prefill()));
    let runner = name(b.moe_runner.as_ref());
    // 0.5.10–0.5.12: the torch.compile piecewise graph and FlashInfer's TRT-LLM MoE kernels.
    let piecewise = at_least(version, "0.5.10rc0") && !at_least(version, "0.5.13");
    if piecewise
        && !args.flag(opt::ENFORCE_PIECEWISE_CUDA_GRAPH)
        && matches!(runner.as_str(), "flashinfer_trtllm" | "flashinfer_mxfp4")
        && arch != Some("GptOssForCausalLM")
    {
        return Some("the FlashInfer TRT-LLM MoE runner");
    }
    if super::switches::mis_on(version, args) {
        return Some("multi-item scoring");
    }
    if !at_least(version, "0.5.14") || args.is_set(opt::CUDA_GRAPH_BACKEND_PREFILL) {
        return None;
    }
    if matches!(main.as_str(), "torch_native" | "flex_attention") {
        return Some("an eager attention backend");
    }
    // 0.5.15+: DeepSeek-V3 prefill on trtllm_mla falls back to FlashAttention under a graph.
    if at_least(version, "0.5.15")
        && arch == Some("DeepseekV3ForCausalLM")
        && prefill == "trtllm_mla"
    {
        return Some("DeepSeek-V3 prefill on trtllm_mla");
    }
    None
}
