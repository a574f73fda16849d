//! LoRA's MoE runners (`--moe-runner-backend lora_*`, 0.5.23) and the V2 LoRA backend they run on.

use super::*;
use crate::sglang::opt;

/// The switch that sends LoRA through kernels the V2 backend's batch metadata does not reach.
const LORA_OPTI_ENV: &str = "SGLANG_EXPERIMENTAL_LORA_OPTI";

/// EP024: what SGLang's LoRA checks refuse about LoRA's MoE runners and the V2 LoRA backend,
/// one line each (every one is a refusal, whichever SGLang meets first).
pub(crate) fn lora_moe_runner(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let mut why = vec![];
    if let Some(r) = u
        .str(opt::SPECULATIVE_MOE_RUNNER_BACKEND)
        .filter(|r| r.starts_with("lora") && ctx.spec_algo().is_some())
    {
        why.push(format!(
            "{} {r}: a draft has no adapters",
            opt::SPECULATIVE_MOE_RUNNER_BACKEND
        ));
    }
    let runner = u.str(opt::MOE_RUNNER_BACKEND).unwrap_or("auto");
    if runner.starts_with("lora") {
        let name = format!("{} {runner}", opt::MOE_RUNNER_BACKEND);
        why.extend(runner_lacks(ctx, runner).map(|w| format!("{name} {w}")));
        why.extend(v2_modes(ctx).map(|m| format!("{name} with {m}")));
    } else if ctx.lora() && u.str(opt::LORA_BACKEND) == Some("triton_v2") {
        let name = format!("{} triton_v2", opt::LORA_BACKEND);
        why.extend(v2_modes(ctx).map(|m| format!("{name} with {m}")));
    }
    refused_at_start(ctx, why)
}

/// What a LoRA MoE runner needs that the line lacks.
fn runner_lacks(ctx: &Context, runner: &str) -> impl Iterator<Item = String> {
    let u = ctx.user();
    let quant = ctx.quant();
    let quant_known = quant.is_some() || ctx.model.is_some();
    let q = quant.clone().unwrap_or_default();
    let a2a = ctx.moe_a2a();
    holding([
        (
            !ctx.lora(),
            format!("without {} (or {})", opt::ENABLE_LORA, opt::LORA_PATHS),
        ),
        (
            u.str(opt::LORA_BACKEND) != Some("triton_v2"),
            format!("without {} triton_v2", opt::LORA_BACKEND),
        ),
        (
            quant_known && !matches!(q.as_str(), "" | "fp8" | "modelopt_fp4"),
            format!("on {q} quantisation (it takes BF16, block FP8 and ModelOpt NVFP4)"),
        ),
        (
            q == "modelopt_fp4" && runner != "lora_marlin",
            "on ModelOpt NVFP4, which only lora_marlin runs".to_owned(),
        ),
        (
            a2a.is_some(),
            format!(
                "with {} {}",
                opt::MOE_A2A_BACKEND,
                a2a.clone().unwrap_or_default()
            ),
        ),
        (
            u.str(opt::ELASTIC_EP_JOIN_MODE).is_some(),
            "with Elastic EP".to_owned(),
        ),
        (
            u.flag(opt::ENABLE_EPLB)
                || u.str(opt::INIT_EXPERT_LOCATION)
                    .is_some_and(|l| l != "trivial")
                || u.int(opt::EP_NUM_REDUNDANT_EXPERTS).is_some_and(|n| n > 0),
            "with EPLB, a non-trivial expert placement or redundant experts".to_owned(),
        ),
    ])
}

/// The modes the V2 LoRA backend's batch metadata does not cover yet.
fn v2_modes(ctx: &Context) -> impl Iterator<Item = String> {
    let u = ctx.user();
    holding([
        (
            ctx.dp_attention() && ctx.attn_dp() > 1,
            "attention DP".to_owned(),
        ),
        (u.flag(opt::ENABLE_PDMUX), "PD multiplexing".to_owned()),
        (
            u.flag(opt::ENABLE_TWO_BATCH_OVERLAP),
            "two-batch overlap".to_owned(),
        ),
        (ctx.env.truthy(LORA_OPTI_ENV), LORA_OPTI_ENV.to_owned()),
    ])
}
