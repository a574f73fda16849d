//! PD disaggregation's policies SGLang validates while it resolves the arguments: buffering
//! received KV in host memory (0.5.21+), allocating decode memory only once the prefill completes
//! (0.5.22+) and switching a server's role at run time (0.5.21+).

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// The host-receive threshold, and whether it turns host buffering on: in 0.5.21 any value
/// above 0 does (the default is 0), from 0.5.22 any value below 1 (the default is 1).
pub(crate) fn host_receive(ctx: &Context) -> Option<(f64, bool)> {
    let t = (ctx.user())
        .get_or_default(opt::DISAGGREGATION_DECODE_HOST_RECEIVE_THRESHOLD)?
        .as_f64()?;
    let on = if at_least(ctx.version, "0.5.22") {
        t < 1.0
    } else {
        t > 0.0
    };
    Some((t, on))
}

/// PAR024: decode host KV buffering out of range, or with HiSparse, PD role switching or the
/// cpu_tensor retraction backup.
pub(crate) fn pd_host_receive(ctx: &Context) -> Vec<Fired> {
    let Some((t, on)) = host_receive(ctx) else {
        return vec![];
    };
    let u = ctx.user();
    let name = opt::DISAGGREGATION_DECODE_HOST_RECEIVE_THRESHOLD;
    let why = if !(0.0..=1.0).contains(&t) {
        format!("{name} {t}: it must be between 0 and 1")
    } else if on && (u.flag(opt::ENABLE_HISPARSE) || u.flag(opt::ENABLE_PD_ROLE_SWITCH)) {
        format!(
            "{name} {t} buffers received KV in host memory, which does not work with {} or {}",
            opt::ENABLE_HISPARSE,
            opt::ENABLE_PD_ROLE_SWITCH
        )
    } else if on && u.str(opt::DISAGGREGATION_DECODE_RETRACTION_BACKUP) == Some("cpu_tensor") {
        format!(
            "{name} {t} buffers received KV in host memory, which needs {} host_pool, not cpu_tensor",
            opt::DISAGGREGATION_DECODE_RETRACTION_BACKUP
        )
    } else {
        return vec![];
    };
    refused_at_start(ctx, vec![why])
}

/// PAR025: `--disaggregation-decode-allocation-policy prefill_complete` (0.5.22+) with what it
/// does not support yet.
pub(crate) fn pd_prefill_complete(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if u.str(opt::DISAGGREGATION_DECODE_ALLOCATION_POLICY) != Some("prefill_complete") {
        return vec![];
    }
    let lacks = prefill_complete_lacks(ctx);
    if lacks.is_empty() {
        return vec![];
    }
    let why = format!(
        "{} prefill_complete does not support {} yet",
        opt::DISAGGREGATION_DECODE_ALLOCATION_POLICY,
        lacks.join(", ")
    );
    refused_at_start(ctx, vec![why])
}

/// What the line has that the prefill-complete policy does not support, in SGLang's order.
fn prefill_complete_lacks(ctx: &Context) -> Vec<&'static str> {
    let u = ctx.user();
    let mode = u.sval(opt::DISAGGREGATION_MODE).unwrap_or_default();
    let backend = u
        .sval(opt::DISAGGREGATION_TRANSFER_BACKEND)
        .unwrap_or_default();
    let size = |o| u.int(o).unwrap_or(1);
    let hicache = u.flag(opt::ENABLE_HIERARCHICAL_CACHE);
    let prefill_hicache_other = hicache
        && (u.str(opt::HICACHE_STORAGE_BACKEND).is_some()
            || u.str(opt::HICACHE_WRITE_POLICY) != Some("write_back"));
    let env = |name| ctx.env.truthy(name);
    holding([
        (mode != "prefill" && mode != "decode", "aggregated serving"),
        (
            !matches!(backend.as_str(), "mooncake" | "mooncake_tcp"),
            "transfer backends other than mooncake",
        ),
        (
            ctx.pp() != 1 || size(opt::ATTN_CP_SIZE) != 1 || size(opt::DCP_SIZE) != 1,
            "pipeline or attention context parallelism",
        ),
        // SGLang compares TP with a DP attention size it reads after turning the deprecated
        // `--enable-dp-attention` into `--attn-dp-size`, so any TP above 1 counts here.
        (ctx.tp() != 1, "attention TP above 1"),
        (
            u.flag(opt::ENABLE_PDMUX)
                || u.str(opt::DECOUPLED_SPEC_ROLE).is_some_and(|r| r != "null"),
            "PD multiplexing or decoupled speculation",
        ),
        (u.flag(opt::ENABLE_PD_ROLE_SWITCH), "PD role switching"),
        (
            u.flag(opt::ENCODER_ONLY) || u.flag(opt::LANGUAGE_ONLY),
            "encoder disaggregation",
        ),
        (u.flag(opt::ENABLE_HISPARSE), "HiSparse"),
        (
            host_receive(ctx).is_some_and(|(_, on)| on),
            "decode host KV buffering",
        ),
        (
            mode == "decode" && (hicache || u.flag(opt::DISAGGREGATION_DECODE_ENABLE_RADIX_CACHE)),
            "a decode radix cache or HiCache",
        ),
        (
            mode == "prefill" && prefill_hicache_other,
            "prefill HiCache other than L2 write_back",
        ),
        (env("SGLANG_DISAGG_STAGING_BUFFER"), "staging buffers"),
        (env("SGLANG_RUST_SERVER"), "the Rust bootstrap registry"),
    ])
    .collect()
}

/// PAR029: PD role switching (0.5.21+) on a PD server with state a role flip does not rebuild.
pub(crate) fn pd_role_switch(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let mode = u.sval(opt::DISAGGREGATION_MODE).unwrap_or_default();
    if !u.flag(opt::ENABLE_PD_ROLE_SWITCH) || !matches!(mode.as_str(), "prefill" | "decode") {
        return vec![];
    }
    let lacks = role_switch_lacks(ctx);
    if lacks.is_empty() {
        return vec![];
    }
    let why = format!(
        "{} on a PD {mode} server with {}, which a role switch does not rebuild",
        opt::ENABLE_PD_ROLE_SWITCH,
        lacks.join(", ")
    );
    refused_at_start(ctx, vec![why])
}

/// What the line has that a role flip does not rebuild, in SGLang's order. Attention DP and DP
/// replicas are refused through 0.5.22; 0.5.23 refuses only attention DP's local control
/// broadcast (judged where the line asks for it).
fn role_switch_lacks(ctx: &Context) -> Vec<&'static str> {
    let u = ctx.user();
    let dp_ok = at_least(ctx.version, "0.5.23");
    let dp_attention = ctx.dp_attention();
    holding([
        (!dp_ok && dp_attention, "DP attention"),
        // The EP size as given: SGLang sets it for an all-to-all backend only later.
        (ctx.ep_given() > 1, "expert parallelism"),
        (ctx.moe_a2a().is_some(), "a MoE all-to-all backend"),
        (ctx.pp() > 1, "pipeline parallelism"),
        (!dp_ok && ctx.dp() > 1, "data parallelism"),
        (
            dp_ok && dp_attention && u.flag(opt::ENABLE_DP_ATTENTION_LOCAL_CONTROL_BROADCAST),
            "DP attention's local control broadcast",
        ),
        (
            u.int(opt::DCP_SIZE).is_some_and(|d| d > 1),
            "decode context parallelism",
        ),
        (ctx.spec_algo().is_some(), "speculative decoding"),
    ])
    .collect()
}
