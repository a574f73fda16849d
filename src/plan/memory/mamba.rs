//! The recurrent-state pool of Mamba / linear-attention hybrids.
//!
//! SGLang carves the state pool out of the memory left for the KV cache before sizing the KV
//! pool (`handle_max_mamba_cache`; releases with `--mamba-full-memory-ratio`, read in 0.5.5,
//! 0.5.10.post1, 0.5.23). Slots: `--max-mamba-cache-size` when given; with the radix cache off
//! and `--max-running-requests` given, that many (0.5.5: else 512); otherwise the share
//! `rest · r / (1 + r)` of the memory left, `r = --mamba-full-memory-ratio` (0.9).
//! Speculative decoding keeps per-draft-token states: 0.5.5 multiplies each slot by
//! `1 + draft tokens`; 0.5.10 and later first set aside `requests × draft tokens` states.
//! Each slot holds the conv state (bf16, `SGLANG_MAMBA_CONV_DTYPE`) and the SSM state
//! (`--mamba-ssm-dtype`, fp32 by default) of every linear layer.
//!
//! Before the ratio (0.5.2 to 0.5.3.post2, the releases with `--max-mamba-cache-size` but not
//! `--mamba-full-memory-ratio`) the model runner turns the radix cache off for these models and
//! takes a fixed pool: `--max-mamba-cache-size`, else `--max-running-requests`, else 512 slots
//! (per DP rank), one state per slot; what is left must still hold a KV token or SGLang stops
//! with "Not enough memory".

use super::Context;
use super::terms::MIB;
use crate::resolve::Family;
use crate::resolve::defaults::int_arg;
use crate::sglang::opt;

/// The state pool SGLang allocates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StatePool {
    pub(crate) slots: u64,
    pub(crate) mib: f64,
}

/// Bytes per element of a state dtype name.
fn dtype_bytes(name: &str) -> Option<u64> {
    match name {
        "float32" => Some(4),
        "bfloat16" | "float16" => Some(2),
        _ => None,
    }
}

/// One request's state on one rank, bytes; `None` for models without linear layers or
/// releases without the state pool.
pub(crate) fn per_request_bytes(ctx: &Context) -> Option<u64> {
    let s = ctx.model?.linear_state?;
    if !ctx.args.knows(opt::MAX_MAMBA_CACHE_SIZE) || s.layers == 0 {
        return None;
    }
    let p = &ctx.server.parallel;
    let attn_tp = (p.tp / p.attn_dp.max(1)).max(1) as u64;
    let conv = ctx
        .env
        .get("SGLANG_MAMBA_CONV_DTYPE")
        .and_then(|v| dtype_bytes(v.trim()))
        .unwrap_or(2);
    let ssm = ctx
        .args
        .str(opt::MAMBA_SSM_DTYPE)
        .and_then(dtype_bytes)
        .unwrap_or(4);
    let stage = |l: u64| l.div_ceil(p.pp.max(1) as u64);
    let mut staged = s;
    staged.layers = stage(s.layers);
    Some(staged.bytes_per_request(attn_tp, conv, ssm)).filter(|&b| b > 0)
}

/// Whether the release takes the fixed pool of the releases before the ratio.
pub(crate) fn fixed_pool(ctx: &Context) -> bool {
    !ctx.args.knows(opt::MAMBA_FULL_MEMORY_RATIO)
}

/// The fixed pool: the slots given or the requests given, else 512, per DP rank.
fn fixed(ctx: &Context, per_req: u64) -> StatePool {
    let attn_dp = ctx.server.defaults.attn_dp_size.max(1) as u64;
    let slots = int_arg(ctx.args, opt::MAX_MAMBA_CACHE_SIZE)
        .or_else(|| int_arg(ctx.args, opt::MAX_RUNNING_REQUESTS))
        .filter(|&s| s > 0)
        .map_or(512, |s| s as u64)
        / attn_dp;
    StatePool {
        slots,
        mib: slots as f64 * per_req as f64 / MIB,
    }
}

/// The pool for `per_req` bytes a slot out of `rest_mib` left after the weights.
pub(crate) fn pool(ctx: &Context, per_req: u64, rest_mib: f64) -> StatePool {
    if fixed_pool(ctx) {
        return fixed(ctx, per_req);
    }
    let d = &ctx.server.defaults;
    let attn_dp = d.attn_dp_size.max(1) as u64;
    let per_req = per_req as f64;
    let draft_tokens = ctx
        .server
        .speculative
        .as_ref()
        .and(ctx.server.spec_params)
        .map_or(0, |s| s.num_draft_tokens.value.max(0) as u64) as f64;
    let mrr = int_arg(ctx.args, opt::MAX_RUNNING_REQUESTS)
        .or(d.max_running_requests)
        .map(|m| m.max(1) as u64);
    let radix_off = !ctx.server.switches.radix_cache.on;
    let ratio = ctx
        .args
        .float(opt::MAMBA_FULL_MEMORY_RATIO)
        .filter(|r| *r >= 0.0)
        .unwrap_or(0.9);
    let legacy = Family::of(ctx.version) < Family::V0510;
    // Bytes a slot costs, and the per-draft-token states set aside before slots are counted.
    let (slot_bytes, set_aside_mib) = if legacy {
        (per_req * (1.0 + draft_tokens), 0.0)
    } else {
        let reqs = mrr.map_or(0.0, |m| (m / attn_dp) as f64);
        (per_req, reqs * draft_tokens * per_req / MIB)
    };
    let rest = (rest_mib - set_aside_mib).max(0.0);
    let slots = match int_arg(ctx.args, opt::MAX_MAMBA_CACHE_SIZE).filter(|&s| s > 0) {
        Some(s) => s as u64 / attn_dp,
        None if radix_off && (legacy || mrr.is_some()) => mrr.unwrap_or(512) / attn_dp,
        None => (rest * ratio / (1.0 + ratio) * MIB / slot_bytes) as u64,
    };
    StatePool {
        slots,
        mib: slots as f64 * slot_bytes / MIB + set_aside_mib,
    }
}
