//! Offloading weights to host memory.

use serde_json::Value;

use super::*;
use crate::sglang::opt;

/// SRV020: the per-layer embedding offload (0.5.20+) with the generic layer offload, whose
/// staging would bring the pinned table back to the GPU, and its file backend with the offload
/// turned off. SGLang refuses both while it resolves the arguments. Qwen4-Exp turns the offload
/// on by itself; only the value the line gives is judged.
pub(crate) fn ple_offload(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let embedding = u.get_or_default(opt::PLE_OFFLOAD_EMBEDDING);
    let on = embedding == Some(&Value::Bool(true));
    let off = embedding == Some(&Value::Bool(false));
    let layer_offload = [opt::CPU_OFFLOAD_GB, opt::OFFLOAD_GROUP_SIZE]
        .into_iter()
        .find(|o| u.int(o).is_some_and(|n| n > 0));
    let why = holding([
        (
            on && layer_offload.is_some(),
            format!(
                "{} with {}",
                opt::PLE_OFFLOAD_EMBEDDING,
                layer_offload.unwrap_or_default()
            ),
        ),
        (
            off && u.str(opt::PLE_OFFLOAD_BACKEND) == Some("file"),
            format!(
                "{} file with {}",
                opt::PLE_OFFLOAD_BACKEND,
                opt::NO_PLE_OFFLOAD_EMBEDDING
            ),
        ),
    ])
    .next();
    refused_at_start(ctx, why.into_iter().collect())
}

/// Architectures whose linear-attention layers register `A_log` and `dt_bias` twice (their own
/// and their attention kernel's, from 0.5.9); the first decoder layer is a linear one in each.
const TIED_LINEAR_ATTENTION: &[&str] = &[
    "Qwen3NextForCausalLM",
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration",
    "KimiLinearForCausalLM",
];

/// MEM019: `--cpu-offload-gb` on a hybrid linear-attention model, on releases whose layer
/// offload copies each parameter name apart, so torch's `functional_call` sees two values for
/// one tied parameter and refuses the first forward pass.
pub(crate) fn tied_linear_attention_offload(ctx: &Context) -> Vec<Fired> {
    let Some(gb) = ctx.user().int(opt::CPU_OFFLOAD_GB).filter(|&g| g > 0) else {
        return vec![];
    };
    let Some(m) = ctx.model else {
        return vec![];
    };
    let Some(arch) = m
        .architecture
        .as_deref()
        .filter(|a| TIED_LINEAR_ATTENTION.contains(a))
    else {
        return vec![];
    };
    // The offload takes layers from the first, a parameter at a time, until the budget is
    // spent: a budget that holds one average layer is sure to take the first one's tied pair.
    let weights = m
        .weight_bytes
        .or_else(|| crate::facts::model::estimate_weight_bytes(m));
    let layer = weights
        .zip(m.num_hidden_layers.filter(|&n| n > 0))
        .map(|(w, n)| w as f64 / (ctx.tp() * ctx.pp()).max(1) as f64 / n as f64);
    if layer.is_none_or(|l| (gb as f64) * 1024f64.powi(3) < l) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} {gb} on {arch}: SGLang {}'s layer offload hands each offloaded layer to torch's \
         functional_call with a copy per parameter name, and the linear-attention layers \
         register A_log and dt_bias under two names ('functional_call got multiple values for \
         keys [...], which are tied'), so the first forward pass (graph capture or the warm-up \
         request) fails; run SGLang 0.5.21 or later, or leave out {}",
        opt::CPU_OFFLOAD_GB,
        ctx.version,
        opt::CPU_OFFLOAD_GB,
    ))]
}
