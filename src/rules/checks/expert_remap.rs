//! Expert remapping (EPLB, redundant experts, a non-trivial initial placement) on models whose
//! own SGLang hook checks it against the MoE runner.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

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

/// MoE classes whose SGLang model publishes an expert-location config, with the first release
/// whose wheel has it (read in the wheels; a class whose first release is not known exactly
/// starts at the first one read to have it).
const EXPERT_LOCATION: &[(&str, &str)] = &[
    ("DeepseekV2ForCausalLM", "0.4.6.post5"),
    ("DeepseekV3ForCausalLM", "0.4.6.post5"),
    ("Qwen2MoeForCausalLM", "0.4.6.post5"),
    ("Qwen3MoeForCausalLM", "0.4.6.post5"),
    ("GptOssForCausalLM", "0.5.0rc2"),
    ("Qwen3NextForCausalLM", "0.5.2"),
    ("DeepseekV32ForCausalLM", "0.5.3"),
    ("Glm4MoeForCausalLM", "0.5.4.post1"),
    ("MiniMaxM2ForCausalLM", "0.5.4.post1"),
    ("Qwen3VLMoeForConditionalGeneration", "0.5.6"),
    ("GlmMoeDsaForCausalLM", "0.5.9"),
    ("Qwen3_5MoeForConditionalGeneration", "0.5.9"),
    ("KimiK25ForConditionalGeneration", "0.5.10"),
    ("DeepseekV4ForCausalLM", "0.5.12"),
    ("Glm4MoeLiteForCausalLM", "0.5.13"),
    ("Qwen3_5MoeForCausalLM", "0.5.17"),
];

/// EP032: the model runner places `experts + --ep-num-redundant-experts` physical experts evenly
/// over the EP ranks before loading, and asserts they divide (elastic EP lays them out itself).
pub(crate) fn physical_experts_per_rank(ctx: &Context) -> Vec<Fired> {
    let ep = ctx.ep();
    let published = ctx.model_arch().is_some_and(|a| {
        EXPERT_LOCATION
            .iter()
            .any(|(name, from)| *name == a && at_least(ctx.version, from))
    });
    let (Some(experts), true) = (ctx.model.and_then(|m| m.num_experts), published) else {
        return vec![];
    };
    let u = ctx.user();
    let redundant = u.int(opt::EP_NUM_REDUNDANT_EXPERTS).unwrap_or(0).max(0);
    let physical = experts + u64::try_from(redundant).unwrap_or(0);
    let elastic = u.given(opt::ELASTIC_EP_INITIAL_SIZE);
    let Ok(ranks) = u64::try_from(ep) else {
        return vec![];
    };
    if ranks < 2 || elastic || physical.is_multiple_of(ranks) {
        return vec![];
    }
    let count = if redundant > 0 {
        format!(
            "{experts} routed experts plus {} {redundant} make {physical} physical experts",
            opt::EP_NUM_REDUNDANT_EXPERTS
        )
    } else {
        format!("{experts} routed experts")
    };
    vec![Fired::new(format!(
        "{count}, which {ranks} EP ranks cannot hold evenly: SGLang {} asserts 'num_physical_experts % ep_size == 0' before loading the weights; make {experts} + {} a multiple of {ranks} (e.g. {} {}), or change --ep-size",
        ctx.version,
        opt::EP_NUM_REDUNDANT_EXPERTS,
        opt::EP_NUM_REDUNDANT_EXPERTS,
        next_fit(experts, redundant, ranks)
    ))]
}

/// The smallest redundant-expert count at or above `given` that the EP ranks divide.
fn next_fit(experts: u64, given: i64, ranks: u64) -> u64 {
    let start = u64::try_from(given).unwrap_or(0);
    (start..start + ranks)
        .find(|r| (experts + r).is_multiple_of(ranks))
        .unwrap_or(start)
}
