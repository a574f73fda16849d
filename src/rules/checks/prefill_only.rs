//! An embedding server that keeps no KV cache (`--prefill-only-disable-kv-cache`, 0.5.12+): the
//! FlashAttention path that skips the pool, and what would still write to it.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// CACHE024: what SGLang refuses with `--prefill-only-disable-kv-cache`, the first it checks.
pub(crate) fn prefill_only_no_kv(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let name = opt::PREFILL_ONLY_DISABLE_KV_CACHE;
    if !u.flag(name) {
        return vec![];
    }
    let Some(why) = structural(ctx).or_else(|| prefill_backend(ctx)) else {
        return vec![];
    };
    refused_at_start(ctx, vec![format!("{name} {why}")])
}

/// The preconditions SGLang checks on the arguments, in its order: an embedding server, a KV
/// dtype with one pool (0.5.16+), chunked prefill and the radix cache turned off on the line
/// (checked before SGLang fills either in), no context parallelism, no HiSparse.
fn structural(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let fp4_pools = ["nvfp4", "fp4_mx_block16", "mxfp8"];
    let kv = ctx
        .kv_cache_dtype()
        .filter(|d| fp4_pools.contains(d) && at_least(ctx.version, "0.5.16"));
    let checks = [
        (
            !u.flag(opt::IS_EMBEDDING),
            format!("without {}", opt::IS_EMBEDDING),
        ),
        (
            kv.is_some(),
            format!("with the {} KV cache", kv.unwrap_or_default()),
        ),
        (
            u.int(opt::CHUNKED_PREFILL_SIZE) != Some(-1),
            format!("without {} -1", opt::CHUNKED_PREFILL_SIZE),
        ),
        (
            !u.flag(opt::DISABLE_RADIX_CACHE),
            format!("without {}", opt::DISABLE_RADIX_CACHE),
        ),
        (
            u.int(opt::ATTN_CP_SIZE).unwrap_or(1) > 1,
            format!("with {} above 1", opt::ATTN_CP_SIZE),
        ),
        (
            u.flag(opt::ENABLE_PREFILL_CP),
            format!("with {}", opt::ENABLE_PREFILL_CP),
        ),
        (
            u.flag(opt::ENABLE_HISPARSE),
            format!("with {}", opt::ENABLE_HISPARSE),
        ),
    ];
    holding(checks).next()
}

/// Prefill on FlashAttention (fa3 or fa4), which alone skips the pool; judged where the backend
/// is known (the model's config read, or the backend named).
fn prefill_backend(ctx: &Context) -> Option<String> {
    let named = ctx.user().given(opt::ATTENTION_BACKEND)
        || ctx.user().given(opt::PREFILL_ATTENTION_BACKEND);
    let prefill = ctx.server.backends.prefill()?;
    let fa = prefill.value == "fa3" || prefill.value == "fa4";
    ((ctx.model.is_some() || named) && !fa)
        .then(|| format!("with prefill on {}: it needs fa3 or fa4", prefill.value))
}
