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
