//! The Mamba cache's extra buffer keeps a state every `--mamba-track-interval` tokens, and SGLang
//! checks that interval against the draft and the pages while it resolves the arguments (0.5.7+).

use super::*;
use crate::resolve::attention::hybrid_linear;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// The interval every release's parser gives `--mamba-track-interval`.
const DEFAULT_TRACK_INTERVAL: i64 = 256;

/// The FLA kernels' chunk, which the extra buffer's pages must divide (0.5.7) or divide or be a
/// multiple of (0.5.8–0.5.13).
const FLA_CHUNK: i64 = 64;

/// CACHE023: the extra buffer's track interval below the draft's tokens, or not a multiple of
/// the page size; before 0.5.14 also pages that do not fit the FLA chunk. SGLang stops at the
/// first, so one finding.
pub(crate) fn mamba_track(ctx: &Context) -> Vec<Fired> {
    let Some(arch) = ctx.model_arch().filter(|a| validated(ctx.version, a)) else {
        return vec![];
    };
    let Some(buffer) = super::cache::extra_buffer_in_effect(ctx, arch) else {
        return vec![];
    };
    let u = ctx.user();
    let interval = u.given_int(opt::MAMBA_TRACK_INTERVAL);
    let track = interval.unwrap_or(DEFAULT_TRACK_INTERVAL);
    let named = match interval {
        Some(i) => format!("{} {i}", opt::MAMBA_TRACK_INTERVAL),
        None => format!("the default track interval {track}"),
    };
    let draft = u
        .int(opt::SPECULATIVE_NUM_DRAFT_TOKENS)
        .filter(|d| ctx.spec_algo().is_some() && *d > track);
    let page = validator_page(ctx);
    let why = if let Some(d) = draft {
        format!("{named} is below {} {d}", opt::SPECULATIVE_NUM_DRAFT_TOKENS)
    } else if let Some(p) = page.filter(|p| track % p != 0) {
        format!("{named} is not a multiple of {} {p}", opt::PAGE_SIZE)
    } else if let Some(p) =
        page.filter(|&p| hybrid_linear(arch, ctx.version) && !fits_fla_chunk(ctx.version, p))
    {
        format!(
            "{} {p}, which does not fit the FLA kernels' {FLA_CHUNK}-token chunk",
            opt::PAGE_SIZE
        )
    } else {
        return vec![];
    };
    refused_at_start(ctx, vec![format!("{why} under {buffer} for {arch}")])
}

/// Whether release `v` validates the extra buffer of `arch`: 0.5.7 in Qwen3-Next's branch only,
/// 0.5.8–0.5.8.post1 in none of the hybrids' (the block sits in another model's branch there),
/// 0.5.9+ in the shared Mamba radix-cache handling.
fn validated(v: &str, arch: &str) -> bool {
    if at_least(v, "0.5.9") {
        true
    } else if at_least(v, "0.5.8") {
        false
    } else {
        arch == "Qwen3NextForCausalLM"
    }
}

/// The page size SGLang's Mamba check reads: the user's, where nothing rewrites it first. On
/// SM100 with no attention backend named SGLang picks one (and its page size) for Qwen's hybrid
/// linear-attention models around the check: left out.
fn validator_page(ctx: &Context) -> Option<i64> {
    let own_pick = super::cache::sets_own_pages(ctx);
    ctx.user()
        .int(opt::PAGE_SIZE)
        .filter(|&p| p > 1 && !own_pick)
}

/// Whether pages of `page` tokens fit the FLA chunk on release `v`, as checked before 0.5.14 (the
/// Gated-DeltaNet hybrids' chunk; later releases read a model's own, left alone).
fn fits_fla_chunk(v: &str, page: i64) -> bool {
    if at_least(v, "0.5.14") {
        true
    } else if at_least(v, "0.5.8") {
        page.max(FLA_CHUNK) % page.min(FLA_CHUNK) == 0
    } else {
        FLA_CHUNK % page == 0
    }
}
