//! AWQ and GPTQ checkpoints against tensor parallelism: a row-parallel layer's input is split
//! across the GPUs, and SGLang's AWQ and GPTQ weight set-up (Marlin or not) refuses a shard that
//! is not a whole number of the checkpoint's quantisation groups.

use super::*;
use crate::facts::model::ModelFacts;
use crate::facts::model::quant::WeightFormat;

/// QUANT022: a dense model's row-parallel input (the MLP's down projection, attention's output
/// projection) is cut into shards that are not whole groups.
pub(crate) fn group_shard(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx.model.filter(|m| m.num_experts.is_none_or(|e| e == 0)) else {
        return vec![];
    };
    let Some(group) = grouped_int(ctx, m) else {
        return vec![];
    };
    let Some(layout) = super::quant_block::Layout::of(ctx) else {
        return vec![];
    };
    let tp = layout.tp;
    let Some((what, total, shards)) = misaligned(m, group, tp, layout.attn_tp) else {
        return vec![];
    };
    let fits: Vec<String> = [1u64, 2, 4, 8, 16]
        .into_iter()
        .filter(|&t| t < tp && misaligned(m, group, t, t).is_none())
        .map(|t| t.to_string())
        .collect();
    let advice = match fits.as_slice() {
        [] => "use a checkpoint quantised for this TP (padded) or an unquantised one".to_owned(),
        f => format!(
            "TP {} loads it (with replicas for more GPUs), or use a checkpoint padded for TP {tp}",
            f.join(" or ")
        ),
    };
    vec![Fired::new(format!(
        "{} is {}-quantised with groups of {group}, but {what} {total} / TP {shards} gives {}-wide shards, not whole groups: SGLang's {} weight set-up refuses the layer while building the model ('The input size is not aligned with the quantized weight shape' / '… is not divisible by group_size'); {advice}",
        m.architecture.as_deref().unwrap_or("the model"),
        m.checkpoint_quant_method.as_deref().unwrap_or("integer"),
        total / shards,
        m.checkpoint_quant_method
            .as_deref()
            .unwrap_or("AWQ/GPTQ")
            .to_ascii_uppercase(),
    ))]
}

/// The group size of an AWQ or GPTQ checkpoint's integer weights.
fn grouped_int(ctx: &Context, m: &ModelFacts) -> Option<u64> {
    let method = m.checkpoint_quant_method.as_deref()?;
    if !matches!(method, "awq" | "gptq") || ctx.quant_given().is_some_and(|q| !q.contains(method)) {
        return None;
    }
    match m.weight_format? {
        WeightFormat::Int { group: Some(g), .. } if g > 0 => Some(g),
        _ => None,
    }
}

/// The first row-parallel input whose shards under `tp` (MLP) and `attn_tp` (attention) are not
/// whole groups: (weight, size, shards). Uneven splits are other rules' findings.
fn misaligned(
    m: &ModelFacts,
    group: u64,
    tp: u64,
    attn_tp: u64,
) -> Option<(&'static str, u64, u64)> {
    let skipped = |f: &str| m.quant_ignored.iter().any(|l| l.contains(f));
    let heads = m.num_attention_heads.zip(m.head_dim).map(|(h, d)| h * d);
    [
        ("intermediate_size", m.intermediate_size, tp, "down_proj"),
        ("heads × head_dim", heads, attn_tp, "o_proj"),
    ]
    .into_iter()
    .filter(|(_, _, _, module)| !skipped(module))
    .find_map(|(what, total, shards, _)| {
        let total = total?;
        let shard = (shards > 1 && total.is_multiple_of(shards)).then(|| total / shards)?;
        (!shard.is_multiple_of(group)).then_some((what, total, shards))
    })
}
