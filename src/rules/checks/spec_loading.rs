//! Speculative decoding loads a draft model beside the target: weight-loading paths that serve
//! only the target refuse it.

use super::*;
use crate::sglang::opt;

/// SPEC028: the weight cache (`--weight-cache-mode daemon|client`, 0.5.17+) with speculative
/// decoding: the daemon exports the target's weights only.
pub(crate) fn weight_cache_spec(ctx: &Context) -> Vec<Fired> {
    let mode = ctx.user().sval(opt::WEIGHT_CACHE_MODE);
    let (Some(mode), Some(algo)) = (mode.filter(|m| m != "off"), ctx.spec_algo()) else {
        return vec![];
    };
    refused_at_start(
        ctx,
        vec![format!(
            "{} {mode} with {algo} speculative decoding: the weight cache does not carry the draft model's weights",
            opt::WEIGHT_CACHE_MODE
        )],
    )
}
