//! AWQ and GPTQ MoE checkpoints: the method that builds the experts, and what it refuses while
//! FusedMoE sets them up (before a weight is read).

use super::*;
use crate::facts::model::ModelFacts;
use crate::facts::model::quant::WeightFormat;
use crate::sglang::opt;

/// A MoE model whose checkpoint is AWQ or GPTQ: the method's name.
fn int_moe<'a>(ctx: &Context<'a>) -> Option<(&'a ModelFacts, &'a str)> {
    let m = ctx.model.filter(|m| m.num_experts.is_some_and(|e| e > 0))?;
    let method = m.checkpoint_quant_method.as_deref()?;
    matches!(method, "awq" | "gptq").then_some((m, method))
}

/// QUANT033: SGLang's plain GPTQ method (below 8.0, named, or a config Marlin does not read) has
/// no MoE method and raises when FusedMoE asks it for one.
pub(crate) fn plain_gptq_moe(ctx: &Context) -> Vec<Fired> {
    if int_moe(ctx).is_none_or(|(_, m)| m != "gptq") {
        return vec![];
    }
    let Some((_, why)) = super::quant_plain::plain_method(ctx).filter(|(m, _)| m == "gptq") else {
        return vec![];
    };
    let wna16 = format!(
        "{} moe_wna16 builds the experts of a checkpoint without desc_act",
        opt::QUANTIZATION
    );
    let marlin_runs = super::quant_plain::marlin_runs(ctx);
    let remedy = if marlin_runs && ctx.quant_given().is_some() {
        format!(
            "drop {} so SGLang picks gptq_marlin, or {wna16}",
            opt::QUANTIZATION
        )
    } else if marlin_runs && super::quant_plain::sglang_names_method(ctx).is_some() {
        format!(
            "pass {} gptq_marlin, which SGLang keeps, or {wna16}",
            opt::QUANTIZATION
        )
    } else {
        wna16
    };
    vec![Fired::new(format!(
        "{why}; SGLang {}'s plain GPTQ method has no MoE layers, so building the first experts stops start-up before a weight loads ('GPTQ Method does not support MoE, please use gptq_marlin'); {remedy}",
        ctx.version
    ))]
}

/// The Marlin MoE method SGLang builds the experts with: `awq_marlin` or `gptq_marlin`, picked
/// by the checkpoint on GPUs of 8.0 and newer (or named) when the config is one Marlin takes
/// and SGLang does not name the plain method itself (SM100); AWQ's hands experts whose shape
/// Marlin cannot take to the WNA16 method instead.
fn marlin_moe(ctx: &Context) -> Option<String> {
    let (m, method) = int_moe(ctx)?;
    let marlin = format!("{method}_marlin");
    let named = ctx.quant_given();
    let plain = named.is_none() && super::quant_plain::sglang_names_method(ctx).is_some();
    if named.is_some_and(|q| q != marlin) || plain || !super::quant_plain::marlin_runs(ctx) {
        return None;
    }
    let config_ok = match method {
        "awq" => m.awq_marlin_config == Some(true) && awq_experts_fit(ctx, m)?,
        _ => m.gptq_marlin_config == Some(true),
    };
    config_ok.then_some(marlin)
}

/// AWQ's Marlin MoE shape test: the hidden size a multiple of 128 and each GPU's expert width a
/// multiple of the larger of 64 and the group size.
fn awq_experts_fit(ctx: &Context, m: &ModelFacts) -> Option<bool> {
    let group = match m.weight_format? {
        WeightFormat::Int { group, .. } => group.unwrap_or(0),
        _ => return None,
    };
    let width = m.moe_intermediate_size.or(m.intermediate_size)?;
    let moe_tp = super::quant_block::Layout::of(ctx)?.moe_tp;
    let per_gpu = (width.is_multiple_of(moe_tp)).then(|| width / moe_tp)?;
    Some(m.hidden_size?.is_multiple_of(128) && per_gpu.is_multiple_of(group.max(64)))
}

/// QUANT034: from 0.5.7 the AWQ and GPTQ Marlin MoE methods assert, when FusedMoE builds the
/// experts' runner, that the MoE runner is `auto` (they always run Marlin's).
pub(crate) fn marlin_moe_runner(ctx: &Context) -> Vec<Fired> {
    let Some(method) = marlin_moe(ctx) else {
        return vec![];
    };
    let runner = super::ep::moe_runner(ctx);
    if runner == "auto" {
        return vec![];
    }
    let wna16 = format!(
        "{} moe_wna16, whose MoE method makes no such assertion",
        opt::QUANTIZATION
    );
    let (whose, remedy) = if ctx.named_moe_runner().as_deref() == Some(runner.as_str()) {
        let leave = format!("leave {} at auto, or pass {wna16}", opt::MOE_RUNNER_BACKEND);
        (opt::MOE_RUNNER_BACKEND, leave)
    } else {
        ("SGLang's own pick of MoE runner", format!("pass {wna16}"))
    };
    vec![Fired::new(format!(
        "the checkpoint's experts run on SGLang's {method} MoE method, which only runs Marlin's kernels and asserts that the MoE runner is auto while building them; {whose} is {runner}, so SGLang {} stops start-up before a weight loads (a bare AssertionError); {remedy}",
        ctx.version
    ))]
}
