//! ATTN028: the Triton attention backend under pipeline parallelism before 0.5.18.

use super::model::class_lacking;
use super::*;
use crate::sglang::architectures::Lack;
use crate::sglang::release::at_least;

/// The layers of each pipeline stage: `SGLANG_PP_LAYER_PARTITION` when it is a valid list,
/// else the release's even split (the remainder to the last stage up to 0.5.5, one extra layer
/// to each of the last `remainder` stages from 0.5.6).
fn stage_layers(ctx: &Context, layers: u64, pp: u64) -> Option<Vec<u64>> {
    if let Some(list) = ctx.env.get("SGLANG_PP_LAYER_PARTITION") {
        let parts: Vec<u64> = list
            .split(',')
            .map(|p| p.trim().parse().ok())
            .collect::<Option<_>>()?;
        let valid = parts.len() as u64 == pp && parts.iter().sum::<u64>() == layers;
        return valid.then_some(parts);
    }
    let (base, rem) = (layers / pp, layers % pp);
    Some(if at_least(ctx.version, "0.5.6") {
        (0..pp).map(|r| base + u64::from(r >= pp - rem)).collect()
    } else {
        (0..pp)
            .map(|r| base + if r == pp - 1 { rem } else { 0 })
            .collect()
    })
}

/// The first stage whose first layer lies further from 0 than the stage holds layers: there
/// the KV pool's index for layer 0 (`0 - start_layer`) falls outside its buffers.
fn stage_without_layer0(stages: &[u64]) -> Option<(usize, u64, u64)> {
    let mut start = 0;
    for (rank, &count) in stages.iter().enumerate() {
        if start > count {
            return Some((rank, start, count));
        }
        start += count;
    }
    None
}

/// ATTN028: up to 0.5.17 the Triton backend takes the value head size from layer 0's value
/// buffer when it starts; a pipeline stage's pool indexes its buffers from the stage's first
/// layer, so a stage starting further out than it holds layers raises an IndexError.
pub(crate) fn triton_pp(ctx: &Context) -> Vec<Fired> {
    let pp = u64::try_from(ctx.pp()).unwrap_or(0);
    // Sliding-window and hybrid linear-attention models take the head size another way in some
    // releases; a class without a pipeline forward stops earlier (PAR018).
    let Some(layers) = ctx
        .model
        .filter(|m| m.sliding_window.is_none() && m.linear_state.is_none())
        .and_then(|m| m.num_hidden_layers)
    else {
        return vec![];
    };
    let triton = ctx.effective_backends_where(|b| b == "triton");
    if pp < 2 || triton.is_empty() || class_lacking(ctx, Lack::PipelineForward).is_some() {
        return vec![];
    }
    let Some((rank, start, count)) =
        stage_layers(ctx, layers, pp).and_then(|s| stage_without_layer0(&s))
    else {
        return vec![];
    };
    vec![Fired::new(format!(
        "--pp-size {pp} with the Triton attention backend ({}): SGLang {}'s Triton backend reads layer 0's value buffer when it starts, and stage {rank} (layers {start}–{}) holds only {count} buffers indexed from its first layer, so start-up stops with 'IndexError: list index out of range'; use another attention backend (fa3 or flashinfer), or SGLang 0.5.18, which takes the head size from the model config",
        triton.join(", "),
        ctx.version,
        start + count - 1
    ))]
}
