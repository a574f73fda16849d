//! HiCache's storage backends: what the Mooncake store takes at start-up.

use serde_json::Value;

use super::*;
use crate::sglang::opt;

/// Whether the Mooncake store runs as a dummy client of a standalone one, the way the store
/// loads its configuration: the extra config when it names a server address, else (without a
/// config file) the environment. `None` where a config file decides it.
fn mooncake_standalone(ctx: &Context) -> Option<bool> {
    let extra = ctx.user().str(opt::HICACHE_STORAGE_BACKEND_EXTRA_CONFIG);
    let extra = extra.and_then(|t| serde_json::from_str::<Value>(t).ok());
    let addressed = |c: &Value| {
        ["master_server_address", "client_server_address"]
            .iter()
            .any(|k| c.get(k).is_some_and(|v| !v.is_null()))
    };
    if let Some(c) = extra.filter(addressed) {
        return Some(c.get("standalone_storage").is_some_and(python_truthy));
    }
    if ctx.env.get("SGLANG_HICACHE_MOONCAKE_CONFIG_PATH").is_some() {
        return None;
    }
    Some(
        ctx.env
            .get("MOONCAKE_STANDALONE_STORAGE")
            .is_some_and(env_true),
    )
}

/// A JSON value as Python's `if value:` reads it.
fn python_truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Null => false,
    }
}

/// CACHE027: 0.5.13 and 0.5.14 give HiCache the EAGLE draft's host KV pool and register it with
/// the Mooncake store, but build that pool with the default allocator; a dummy client of a
/// standalone store can register only buffers from Mooncake's own allocator, so start-up stops.
pub(crate) fn mooncake_draft_pool(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let mooncake = u.sval(opt::HICACHE_STORAGE_BACKEND).as_deref() == Some("mooncake");
    if !u.flag(opt::ENABLE_HIERARCHICAL_CACHE) || !mooncake || !ctx.spec_eagle() {
        return vec![];
    }
    if mooncake_standalone(ctx) != Some(true) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--speculative-algorithm {} with --enable-hierarchical-cache and the Mooncake store as a standalone store's dummy client: SGLang {} registers the draft model's host KV pool with the store but allocates it without Mooncake's allocator, so every scheduler stops at start-up with 'Failed to register buffer to Mooncake Store, error code: -1'; run Mooncake without standalone_storage, or use SGLang 0.5.15, which allocates the draft pool the store's way",
        ctx.spec_algo().unwrap_or_default(),
        ctx.version
    ))]
}
