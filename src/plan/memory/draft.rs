//! Speculative drafts as SGLang loads them.
//!
//! * MTP / NextN (DeepSeek, GLM, Qwen3-Next, …): a separate model class with only the NextN
//!   layers, read from the target's checkpoint. In every release read (0.4.10.post2, 0.5.5,
//!   0.5.10.post1, 0.5.23) the EAGLE worker then replaces the draft's embedding and LM head with
//!   the target's (`set_embed_and_head`), so the copies the checkpoint ships with each NextN
//!   layer do not stay resident.
//! * EAGLE / EAGLE3 heads and STANDALONE drafts: a separate checkpoint, loaded whole and split
//!   over the same TP ranks; its KV layers share the target's token budget.

use crate::facts::model::{ModelFacts, weight_breakdown};
use crate::resolve::Speculative;
use crate::resolve::server::DraftSource;
use crate::sglang::Parallel;

/// Bytes of the embedding and LM-head copies shipped with the NextN layers, which the draft
/// shares with the target instead.
pub(crate) fn mtp_shared_bytes(m: &ModelFacts) -> f64 {
    weight_breakdown(m)
        .map(|b| b.mtp_shared)
        .filter(|b| b.is_finite())
        .unwrap_or(0.0)
}

/// The draft's own weights per GPU, bytes: the NextN layers it keeps (MTP) or the separate
/// checkpoint split over TP; 0 without a draft model.
pub(crate) fn draft_weights_per_gpu(
    p: &Parallel,
    spec: Option<&Speculative>,
    m: &ModelFacts,
    draft: Option<&ModelFacts>,
) -> f64 {
    let Some(s) = spec.filter(|s| s.uses_draft_model()) else {
        return 0.0;
    };
    let split = p.tp.max(1) as f64 * p.pp.max(1) as f64;
    match s.draft {
        DraftSource::Mtp => weight_breakdown(m)
            .map(|b| (b.mtp - mtp_shared_bytes(m)).max(0.0) / split)
            .filter(|b| b.is_finite())
            .unwrap_or(0.0),
        DraftSource::Model if s.separate_draft().is_some() => draft
            .and_then(|d| d.weight_bytes)
            .map_or(0.0, |w| w as f64 / p.tp.max(1) as f64),
        _ => 0.0,
    }
}
