//! Expert remapping (EPLB, redundant experts, a non-trivial initial placement) on models whose
//! own SGLang hook checks it against the MoE runner.

use super::*;
use crate::sglang::opt;

/// The architectures SGLang's Nemotron-H hook serves (0.5.23).
const NEMOTRON_H: &[&str] = &[
    "NemotronHForCausalLM",
    "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3",
];

/// EP025: on Nemotron-H, expert remapping with the TensorRT-LLM runner that routes inside its
/// kernel, or EPLB on the CuTe DSL runner without an all-to-all, which does not move its expert
/// scales on a rebalance (0.5.23). Judged on the runner the line names: SGLang's own pick under a
/// remap is the routed runner.
pub(crate) fn nemotron_h_remap(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let Some(arch) = ctx.model_arch().filter(|a| NEMOTRON_H.contains(a)) else {
        return vec![];
    };
    let eplb = u.flag(opt::ENABLE_EPLB);
    let remap = eplb
        || u.int(opt::EP_NUM_REDUNDANT_EXPERTS).is_some_and(|n| n > 0)
        || u.str(opt::INIT_EXPERT_LOCATION)
            .is_some_and(|l| l != "trivial");
    let runner = u.str(opt::MOE_RUNNER_BACKEND).unwrap_or("auto");
    let why = match runner {
        _ if !remap => None,
        "flashinfer_trtllm" => Some(format!(
            "{} flashinfer_trtllm on {arch} with EPLB, redundant experts or a non-trivial expert placement: the runner routes inside its kernel (flashinfer_trtllm_routed takes the remap)",
            opt::MOE_RUNNER_BACKEND
        )),
        "flashinfer_cutedsl" if eplb && ctx.moe_a2a().is_none() => Some(format!(
            "{} flashinfer_cutedsl on {arch} with EPLB and no all-to-all: its expert scales do not move on a rebalance",
            opt::MOE_RUNNER_BACKEND
        )),
        _ => None,
    };
    refused_at_start(ctx, why.into_iter().collect())
}
