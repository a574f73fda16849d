//! The CUTLASS MoE runner (`--moe-runner-backend cutlass`): what the experts' method asserts, or
//! the runner lacks, as FusedMoE builds the experts (before a weight is read).

use super::*;
use crate::sglang::opt;
use crate::sglang::release::{at_least, within};

const RUNNER: &str = opt::MOE_RUNNER_BACKEND;

/// The first release whose FP8 CUTLASS MoE assert takes SM120 GPUs too.
const SM120_FROM: &str = "0.5.10rc0";

/// Why the FP8 MoE method refuses the CUTLASS runner on these facts, if it does (it asserts
/// from 0.5.4.post3, the rule's first version).
fn fp8_refusal(ctx: &Context) -> Option<String> {
    let v = ctx.version;
    if ctx.quant().as_deref() != Some("fp8") {
        return None;
    }
    if ctx.model.is_some_and(|m| m.weight_block_size.is_none()) {
        return Some(format!(
            "{RUNNER} cutlass with FP8 experts not quantised in blocks (per-tensor, or quantised \
             as they load): SGLang {v}'s FP8 MoE method asserts block quantisation for it \
             ('cutlass_fp8 MoE requires block quantization')"
        ));
    }
    let sm120 = at_least(v, SM120_FROM);
    let bad = ctx.gpus_where(|(major, _)| !(major == 9 || major == 10 || (major == 12 && sm120)));
    if bad.is_empty() {
        return None;
    }
    let gpus = if sm120 {
        "SM90, SM100 or SM120"
    } else {
        "SM90 or SM100"
    };
    Some(format!(
        "{}; {RUNNER} cutlass with FP8 experts: SGLang {v}'s FP8 MoE method asserts an {gpus} \
         GPU for it as the model is built ('cutlass_fp8 MoE requires …')",
        Context::describe(&bad)
    ))
}

/// ModelOpt's NVFP4 MoE method hands the CUTLASS runner, from 0.5.11 to 0.5.14, to a MoE runner
/// that has no core for it (0.5.15 runs it through its own fused path).
fn nvfp4_refusal(ctx: &Context) -> Option<String> {
    let v = ctx.version;
    let nvfp4 = ctx.quant().as_deref() == Some("modelopt_fp4");
    (nvfp4 && within(v, "0.5.11", Some("0.5.15"))).then(|| {
        format!(
            "{RUNNER} cutlass with a ModelOpt NVFP4 MoE checkpoint: SGLang {v}'s NVFP4 MoE method builds a MoE runner \
             for it, which has no CUTLASS core and stops as the model is built ('Unsupported \
             runner backend: MoeRunnerBackend.CUTLASS'; 0.5.15 runs it)"
        )
    })
}

/// QUANT037: `--moe-runner-backend cutlass` on MoE experts whose method cannot build it.
pub(crate) fn cutlass_moe_runner(ctx: &Context) -> Vec<Fired> {
    let runner = ctx.user().sval(RUNNER);
    if runner.as_deref() != Some("cutlass") || !ctx.model_is_moe() {
        return vec![];
    }
    let Some(why) = fp8_refusal(ctx).or_else(|| nvfp4_refusal(ctx)) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{why}; drop {RUNNER} (SGLang picks a runner for the checkpoint) or name another runner"
    ))]
}
