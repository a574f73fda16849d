//! The unified cache's external linker (0.5.20+): the radix cache linked straight to an external
//! KV store, with no host tier.

use serde_json::Value;

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// The keys SGLang's dynamic linker configuration takes (0.5.23).
const DYNAMIC_KEYS: &[&str] = &["linker", "linker_module_path", "linker_extra_config"];

/// CACHE025: what SGLang refuses about the external linker while it resolves the cache
/// arguments, the first it meets, in its order.
pub(crate) fn external_linker(ctx: &Context) -> Vec<Fired> {
    let why = config_refused(ctx)
        .or_else(|| mla_dedup_refused(ctx))
        .or_else(|| linker_conflict(ctx));
    refused_at_start(ctx, why.into_iter().collect())
}

/// The linker's configuration (0.5.23): any value must be an object, and the dynamic backend's
/// must name its linker class and module.
fn config_refused(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let config = u
        .get_or_default(opt::UNIFIED_CACHE_EXTERNAL_LINKER_CONFIG)
        .filter(|c| !c.is_null());
    let name = opt::UNIFIED_CACHE_EXTERNAL_LINKER_CONFIG;
    if config.is_some_and(|c| !c.is_object()) {
        return Some(format!("{name} that is not a JSON object"));
    }
    let dynamic = u.str(opt::UNIFIED_CACHE_EXTERNAL_LINKER_BACKEND) == Some("dynamic");
    let linker = u.flag(opt::ENABLE_UNIFIED_CACHE_EXTERNAL_LINKER);
    if !at_least(ctx.version, "0.5.23") || !dynamic || !(linker || config.is_some()) {
        return None;
    }
    let lacks = dynamic_config_lacks(config)?;
    Some(format!(
        "{} dynamic with {lacks}",
        opt::UNIFIED_CACHE_EXTERNAL_LINKER_BACKEND
    ))
}

/// What the dynamic backend's configuration lacks, if anything.
fn dynamic_config_lacks(config: Option<&Value>) -> Option<String> {
    let name = opt::UNIFIED_CACHE_EXTERNAL_LINKER_CONFIG;
    let Some(map) = config.and_then(Value::as_object) else {
        return Some(format!("no {name}"));
    };
    if let Some(k) = map.keys().find(|k| !DYNAMIC_KEYS.contains(&k.as_str())) {
        return Some(format!("{name} holding an unknown key '{k}'"));
    }
    let text = |k: &str| map.get(k).and_then(Value::as_str).map(str::trim);
    if let Some(k) = ["linker", "linker_module_path"]
        .into_iter()
        .find(|k| text(k).is_none_or(str::is_empty))
    {
        return Some(format!("{name} without a non-empty '{k}'"));
    }
    (map.get("linker_extra_config")).and_then(|e| {
        (!e.is_object()).then(|| format!("{name} whose 'linker_extra_config' is not an object"))
    })
}

/// `--enable-linker-mla-dedup` (0.5.21+) needs the linker on, with the Mooncake backend.
fn mla_dedup_refused(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let mooncake = u.str(opt::UNIFIED_CACHE_EXTERNAL_LINKER_BACKEND) == Some("mooncake");
    (u.flag(opt::ENABLE_LINKER_MLA_DEDUP)
        && !(u.flag(opt::ENABLE_UNIFIED_CACHE_EXTERNAL_LINKER) && mooncake))
        .then(|| {
            format!(
                "{} without {} on the mooncake backend",
                opt::ENABLE_LINKER_MLA_DEDUP,
                opt::ENABLE_UNIFIED_CACHE_EXTERNAL_LINKER
            )
        })
}

/// The linker takes the place of the host tier and needs SGLang's own radix cache.
fn linker_conflict(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    if !u.flag(opt::ENABLE_UNIFIED_CACHE_EXTERNAL_LINKER) {
        return None;
    }
    let v = ctx.version;
    // A PD decode server turns its radix cache off unless told to keep it, before this check.
    let decode_off = u.str(opt::DISAGGREGATION_MODE) == Some("decode")
        && !u.flag(opt::DISAGGREGATION_DECODE_ENABLE_RADIX_CACHE);
    holding([
        (
            at_least(v, "0.5.23") && u.flag(opt::DISABLE_RADIX_CACHE),
            opt::DISABLE_RADIX_CACHE,
        ),
        (
            at_least(v, "0.5.23") && decode_off,
            "a PD decode server's radix cache off (no --disaggregation-decode-enable-radix-cache)",
        ),
        (
            at_least(v, "0.5.23") && u.given(opt::RADIX_CACHE_BACKEND),
            opt::RADIX_CACHE_BACKEND,
        ),
        (
            u.flag(opt::ENABLE_HIERARCHICAL_CACHE),
            opt::ENABLE_HIERARCHICAL_CACHE,
        ),
        (
            u.str(opt::HICACHE_STORAGE_BACKEND).is_some(),
            opt::HICACHE_STORAGE_BACKEND,
        ),
    ])
    .next()
    .map(|o| format!("{} with {o}", opt::ENABLE_UNIFIED_CACHE_EXTERNAL_LINKER))
}
