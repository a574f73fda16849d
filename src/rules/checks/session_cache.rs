//! The session radix cache (0.5.15+) tags per-session KV for bulk eviction, which 0.5.15 and
//! 0.5.16 build on the priority eviction policy only.

use super::*;
use crate::rules::{ArgEdit, Fix};
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// CACHE026: `--enable-session-radix-cache` with an eviction policy other than priority.
pub(crate) fn session_cache_policy(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if !u.flag(opt::ENABLE_SESSION_RADIX_CACHE) || at_least(ctx.version, "0.5.17") {
        return vec![];
    }
    let policy = u
        .get_or_default(opt::RADIX_EVICTION_POLICY)
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "lru".into());
    if policy == "priority" {
        return vec![];
    }
    refused_at_start(
        ctx,
        vec![format!(
            "{} with --radix-eviction-policy {policy}: the session cache needs the priority policy here",
            opt::ENABLE_SESSION_RADIX_CACHE,
        )],
    )
    .into_iter()
    .map(|f| {
        f.with_fix(Fix {
            summary: "set --radix-eviction-policy priority".into(),
            args: vec![ArgEdit::Set {
                option: opt::RADIX_EVICTION_POLICY.into(),
                value: "priority".into(),
            }],
            env: vec![],
        })
    })
    .collect()
}
