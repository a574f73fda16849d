//! Sliding-window models: whether SGLang gives their window layers a pool of their own, and how
//! many tokens that pool holds per full-layer token.
//!
//! SGLang sizes one token count over all layers, then splits it so that
//! `swa_tokens = ratio · full_tokens` (0.5.5 `set_num_token_hybrid`, 0.5.23's SWA configurator):
//! the cell is `per_layer · (full + ratio · swa)`. Per release (0.4.10.post2, 0.5.5,
//! 0.5.10.post1 and 0.5.23 read):
//! * Gemma-2/3/3n: the separate pool is turned off (`disable_hybrid_swa_memory`): all full.
//! * GPT-OSS: off in 0.5.5, on in 0.5.10.post1 and 0.5.23.
//! * Llama-4: only with `--hybrid-kvcache-ratio r > 0` and a context beyond the attention chunk;
//!   the ratio is then `(1 − r) + r · chunk / context` (not `--swa-full-tokens-ratio`).
//! * Other models with sliding layers: on, at `--swa-full-tokens-ratio` (default 0.8).
//!   `--disable-hybrid-swa-memory` turns it off for all.

use crate::facts::model::ModelFacts;
use crate::resolve::Family;
use crate::sglang::SglangArgs;
use crate::sglang::opt;

/// The window layers' own pool: SWA-pool tokens per full-pool token and the window layers;
/// `None` when every layer keeps full-length KV.
pub(crate) fn pool(args: &SglangArgs, m: &ModelFacts) -> Option<(f64, u64)> {
    let arch = m.architecture.as_deref().unwrap_or("");
    let layers = m.num_hidden_layers?;
    if arch.starts_with("Llama4") {
        // Three layers in four use chunked attention (SGLang's `get_hybrid_layer_ids`).
        return llama4(args, m).map(|r| (r, layers - layers / 4));
    }
    let sliding = m.num_sliding_layers.filter(|&s| s > 0 && s < layers)?;
    if args.flag(opt::DISABLE_HYBRID_SWA_MEMORY) || arch.starts_with("Gemma") {
        return None;
    }
    if arch.starts_with("GptOss") && Family::of(args.flags.release()) < Family::V0510 {
        return None;
    }
    let r = args
        .float(opt::SWA_FULL_TOKENS_RATIO)
        .filter(|r| *r > 0.0 && *r <= 1.0)
        .unwrap_or(0.8);
    Some((r, sliding))
}

/// Llama-4's chunked-attention pool, sized from `--hybrid-kvcache-ratio`.
fn llama4(args: &SglangArgs, m: &ModelFacts) -> Option<f64> {
    let r = args.float(opt::HYBRID_KVCACHE_RATIO).filter(|r| *r > 0.0)?;
    let chunk = m.sliding_window? as f64;
    let context = crate::resolve::decided::context_length(args, Some(m))?.value as f64;
    (context > chunk).then(|| (1.0 - r.min(1.0)) + r.min(1.0) * chunk / context)
}
