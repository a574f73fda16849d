//! AWQ and GPTQ checkpoints against tensor parallelism: a row-parallel layer's input is split
//! across the GPUs, and SGLang's AWQ and plain GPTQ weight set-up refuses a shard that is not a
//! whole number of the checkpoint's quantisation groups; GPTQ's Marlin method builds it.

use super::*;
use crate::facts::model::ModelFacts;
use crate::facts::model::quant::WeightFormat;
use crate::rules::Code;

/// A dense AWQ or GPTQ model whose row-parallel input TP cuts into partial groups: the method,
/// the group size, the TP, (weight, size, shards), and the TPs below this one that cut whole
/// groups.
struct Shard {
    method: String,
    group: u64,
    tp: u64,
    what: &'static str,
    total: u64,
    shards: u64,
    fits: Vec<u64>,
}

impl Shard {
    fn of(ctx: &Context) -> Option<Self> {
        let m = ctx.model.filter(|m| m.num_experts.is_none_or(|e| e == 0))?;
        let group = grouped_int(ctx, m)?;
        let layout = super::quant_block::Layout::of(ctx)?;
        let tp = layout.tp;
        let (what, total, shards) = misaligned(m, group, tp, layout.attn_tp)?;
        let fits = [1u64, 2, 4, 8, 16]
            .into_iter()
            .filter(|&t| t < tp && misaligned(m, group, t, t).is_none())
            .collect();
        let method = m.checkpoint_quant_method.clone()?;
        Some(Shard {
            method,
            group,
            tp,
            what,
            total,
            shards,
            fits,
        })
    }

    /// The layer's cut, as the messages say it.
    fn cut(&self, ctx: &Context) -> String {
        let arch = ctx.model.and_then(|m| m.architecture.as_deref());
        format!(
            "{} is {}-quantised with groups of {}, but {} {} / TP {} gives {}-wide shards, not whole groups",
            arch.unwrap_or("the model"),
            self.method,
            self.group,
            self.what,
            self.total,
            self.shards,
            self.total / self.shards,
        )
    }

    fn advice(&self) -> String {
        if self.fits.is_empty() {
            return "use a checkpoint quantised for this TP (padded) or an unquantised one".into();
        }
        let fits: Vec<String> = self.fits.iter().map(u64::to_string).collect();
        format!(
            "TP {} loads it (with replicas for more GPUs), or use a checkpoint padded for TP {}",
            fits.join(" or "),
            self.tp
        )
    }
}

/// The method that builds the layer refuses the cut: AWQ's (its Marlin method hands a layer it
/// cannot take back to it), or GPTQ's plain one (below 8.0, named, or a config Marlin does not
/// read). GPTQ's Marlin method builds it.
fn refused(ctx: &Context, s: &Shard) -> bool {
    s.method == "awq" || super::quant_plain::plain_method(ctx).is_some_and(|(m, _)| m == "gptq")
}

/// QUANT032: the refusal, where SGLang's own AWQ and GPTQ methods make it (the goldens run
/// them layer by layer).
pub(crate) fn group_shard_refused(ctx: &Context) -> Vec<Fired> {
    let Some(s) = Shard::of(ctx).filter(|s| refused(ctx, s)) else {
        return vec![];
    };
    let method = s.method.to_ascii_uppercase();
    vec![Fired::new(format!(
        "{}: SGLang {}'s {method} weight set-up refuses the layer while building the model, before a weight is read ('The input size is not aligned with the quantized weight shape'); {}",
        s.cut(ctx),
        ctx.version,
        s.advice(),
    ))]
}

/// QUANT022: the same cut where no refusal is on record: releases that build AWQ and GPTQ
/// layers with vLLM's code, and GPTQ's Marlin method, which builds the layer without acting on
/// its own shape check.
pub(crate) fn group_shard(ctx: &Context) -> Vec<Fired> {
    let Some(s) = Shard::of(ctx) else {
        return vec![];
    };
    let proven = crate::rules::rule(Code::QUANT032).applies_to(ctx.version);
    if proven && refused(ctx, &s) {
        return vec![];
    }
    let outcome = if proven {
        "SGLang's GPTQ Marlin method builds the layer without acting on its own shape check, so each GPU gets its share of the scales cut at whole groups while its weights are not: they do not line up (a failure at the first forward, or wrong output)".to_owned()
    } else {
        format!(
            "SGLang {} builds {} layers with vLLM's code, whose weight set-up checks the same ('The input size is not aligned with the quantized weight shape' / '… is not divisible by group_size')",
            ctx.version,
            s.method.to_ascii_uppercase()
        )
    };
    vec![Fired::new(format!(
        "{}: {outcome}; {}",
        s.cut(ctx),
        s.advice()
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
