//! The MoE runner ModelOpt's NVFP4 experts are built with, off Blackwell.

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
