//! The token format of FlashInfer's MoE all-to-all dispatch (`--flashinfer-a2a-dispatch-type`,
//! 0.5.20+).

use super::*;
use crate::sglang::opt;

/// The switch that chose NVFP4 dispatch before the option existed; SGLang refuses both at once.
const NVFP4_DISPATCH_ENV: &str = "SGLANG_MOE_NVFP4_DISPATCH";

/// EP023: a dispatch type SGLang refuses while it resolves the MoE arguments: any but `auto` off
/// the FlashInfer all-to-all, and on it, the old environment switch alongside, or MXFP8 dispatch
/// without MXFP8 quantisation or the routed TensorRT-LLM runner.
pub(crate) fn flashinfer_dispatch_type(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let Some(kind) = u.str(opt::FLASHINFER_A2A_DISPATCH_TYPE) else {
        return vec![];
    };
    let name = opt::FLASHINFER_A2A_DISPATCH_TYPE;
    let why = if ctx.moe_a2a().as_deref() != Some("flashinfer") {
        (kind != "auto").then(|| format!("{name} {kind} without --moe-a2a-backend flashinfer"))
    } else if ctx.env.get(NVFP4_DISPATCH_ENV).is_some() {
        Some(format!("{name} with {NVFP4_DISPATCH_ENV} set"))
    } else if kind == "mxfp8" {
        mxfp8_lacks(ctx).map(|what| format!("{name} mxfp8 without {what}"))
    } else {
        None
    };
    refused_at_start(ctx, why.into_iter().collect())
}

/// What MXFP8 dispatch lacks: MXFP8 quantisation (judged where the checkpoint's own is known or
/// the line names one) and the routed TensorRT-LLM runner. Under MXFP8, SGLang moves a runner
/// outside its MXFP8 list to TensorRT-LLM, which this all-to-all turns into the routed one; the
/// other runners on that list stay and are refused.
fn mxfp8_lacks(ctx: &Context) -> Option<String> {
    let quant = ctx.quant();
    let quant_known = ctx.model.is_some() || quant.is_some();
    if quant_known && quant.as_deref() != Some("mxfp8") {
        return Some("--quantization mxfp8".to_owned());
    }
    let runner = ctx.user().str(opt::MOE_RUNNER_BACKEND)?;
    matches!(runner, "cutlass" | "deep_gemm" | "flashinfer_megamoe")
        .then(|| format!("--moe-runner-backend flashinfer_trtllm_routed (given {runner})"))
}
