//! ModelOpt's NVFP4 MoE experts: the runner they are built with off Blackwell, and the per-rank
//! width the CUTLASS weight path must pad.

use super::*;
use crate::facts::Gpu;
use crate::sglang::opt;

/// QUANT040: from 0.5.13 ModelOpt's NVFP4 MoE method runs off Blackwell (compute capability 10
/// to 12) only through its Marlin fallback, which `auto` picks on 8.0 to 9.x; any other runner
/// in effect, the user's or SGLang's own pick, stops the build there. Below 8.0 the loader
/// refuses the method first (QUANT010).
pub(crate) fn nvfp4_moe_runner_off_blackwell(ctx: &Context) -> Vec<Fired> {
    // DeepSeek-V4's FP8+NVFP4 exports build their experts with the same method.
    let hybrid = ctx.model.is_some_and(|m| m.nvfp4_moe_hybrid);
    if !(ctx.quant().as_deref() == Some("modelopt_fp4") || hybrid) || !ctx.model_is_moe() {
        return vec![];
    }
    let runner = super::ep::moe_runner(ctx);
    // `lora` asks for `lora_marlin` first, in its own words.
    if matches!(runner.as_str(), "auto" | "marlin" | "lora" | "lora_marlin") {
        return vec![];
    }
    let off: Vec<&Gpu> = ctx.gpus_where(|cc| cc >= (8, 0) && cc.0 < 10);
    if off.is_empty() {
        return vec![];
    }
    let flag = opt::MOE_RUNNER_BACKEND;
    let whose = if ctx.user().sval(flag).as_deref() == Some(runner.as_str()) {
        format!("{flag} {runner}")
    } else {
        format!("the MoE runner SGLang picks for this model, {runner}")
    };
    vec![Fired::new(format!(
        "{}; ModelOpt NVFP4 experts with {whose}: SGLang {}'s NVFP4 MoE method runs \
         them below Blackwell only through Marlin, so building the model stops before a weight is \
         read ('Current platform does not support NVFP4 quantization with the selected MoE \
         backend'); set {flag} marlin, or use Blackwell GPUs",
        Context::describe(&off),
        ctx.version
    ))]
}

/// Runners whose NVFP4 expert weights go through the CUTLASS swizzle (every release from 0.5.6
/// to 0.5.23): not the TensorRT-LLM runners, which align the weights themselves, Marlin or
/// FlashInfer's Mega MoE, which return early, nor `auto`, which some releases turn into one of
/// those as the layer is built.
const SWIZZLED: &[&str] = &[
    "triton",
    "flashinfer_cutlass",
    "flashinfer_cutedsl",
    "cutlass",
];

/// Nemotron-H's experts are ungated (squared ReLU): SGLang pads those.
fn gated(arch: &str) -> bool {
    !arch.starts_with("NemotronH")
}

/// QUANT043: SGLang's NVFP4 MoE method pads the w13 block scales to 128 rows; when a rank's
/// gate and up halves (2 × intermediate / MoE TP) are not a multiple of 128, it would pad the
/// weights too, and asserts that the activation is not gated ('The intermediate size required
/// padding, but padding is also implemented for gated activations') after the weights load.
pub(crate) fn nvfp4_gated_padding(ctx: &Context) -> Vec<Fired> {
    let runner = super::ep::moe_runner(ctx);
    let on_path = SWIZZLED.contains(&runner.as_str());
    let mega = ctx.moe_a2a().as_deref() == Some("megamoe");
    if ctx.quant().as_deref() != Some("modelopt_fp4") || !on_path || mega {
        return vec![];
    }
    let Some(m) = ctx.model.filter(|m| m.num_experts.is_some_and(|n| n > 1)) else {
        return vec![];
    };
    let (Some(width), Some(arch)) = (m.moe_intermediate_size, ctx.model_arch()) else {
        return vec![];
    };
    let (tp, ep) = (ctx.tp(), ctx.ep().max(1));
    let moe_tp = u64::try_from(tp / ep).unwrap_or(0);
    if !gated(arch) || moe_tp == 0 || tp % ep != 0 || !width.is_multiple_of(moe_tp) {
        return vec![];
    }
    let part = width / moe_tp;
    if (2 * part).is_multiple_of(128) {
        return vec![];
    }
    let hint = if width.is_multiple_of(64) && tp > 1 {
        format!("set {} {tp} so each rank holds whole experts", opt::EP_SIZE)
    } else {
        "change the TP size".to_owned()
    };
    vec![Fired::new(format!(
        "{} {} on ModelOpt NVFP4 experts of {arch}: moe_intermediate_size {width} over MoE TP {moe_tp} leaves {part} rows per rank for each of the gate and up halves, which SGLang {} must pad to a multiple of 64, and its NVFP4 MoE method asserts it pads no gated activation ('The intermediate size required padding, but padding is also implemented for gated activations') once the weights have loaded; {hint}, or use a runner that aligns the weights itself (flashinfer_trtllm, where the GPU runs it)",
        opt::MOE_RUNNER_BACKEND,
        runner,
        ctx.version
    ))]
}
