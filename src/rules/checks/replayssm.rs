//! ReplaySSM's buffered decode for linear attention (`--enable-linear-replayssm`, 0.5.15+): the
//! decode kernels that write its ring, and the caches and servers it is wired for.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// ATTN026: what SGLang refuses with `--enable-linear-replayssm`, in the order it checks.
pub(crate) fn replayssm(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let name = opt::ENABLE_LINEAR_REPLAYSSM;
    if !u.flag(name) {
        return vec![];
    }
    // The check reads the strategy, not the model: asked for, it counts on any model.
    let buffer = (ctx.model_arch())
        .and_then(|a| super::cache::extra_buffer_in_effect(ctx, a))
        .or_else(|| super::cache::extra_buffer_asked_with_radix(ctx));
    let mode = u.sval(opt::DISAGGREGATION_MODE).filter(|m| m != "null");
    let len = u.int(opt::LINEAR_REPLAYSSM_CACHE_LEN).filter(|l| *l < 1);
    let why = if let Some(d) = decode_backend(ctx).filter(|d| !ring_writer(ctx.version, d)) {
        let helion = if at_least(ctx.version, "0.5.18") {
            " (or helion for KDA)"
        } else {
            ""
        };
        format!("{name} on the {d} linear-attention decode backend: it needs triton{helion}")
    } else if let Some(b) = buffer {
        format!("{name} under {b}: it needs the no_buffer strategy or --disable-radix-cache")
    } else if let Some(m) = mode {
        format!("{name} on a PD {m} server")
    } else if let Some(l) = len {
        format!("{name} with {} {l}", opt::LINEAR_REPLAYSSM_CACHE_LEN)
    } else {
        return vec![];
    };
    refused_at_start(ctx, vec![why])
}

/// The linear-attention decode backend SGLang runs: the one named for decode, else the shared
/// one (triton by default); from 0.5.11 FlashInfer on SM100 for bfloat16 Mamba states when
/// decode names none. FlashKDA is prefill-only: decode stays on triton.
fn decode_backend(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let named = u.sval(opt::LINEAR_ATTN_DECODE_BACKEND);
    let shared = u.sval(opt::LINEAR_ATTN_BACKEND)?;
    let sm100_bf16 = named.is_none()
        && shared != "helion"
        && ctx.majors().contains(&10)
        && u.sval(opt::MAMBA_SSM_DTYPE).as_deref() == Some("bfloat16");
    let decode = if sm100_bf16 {
        "flashinfer".to_owned()
    } else {
        named.unwrap_or(shared)
    };
    Some(if decode == "flashkda" {
        "triton".to_owned()
    } else {
        decode
    })
}

/// Whether ReplaySSM runs on decode backend `d`: triton, and from 0.5.18 Helion (KDA's).
fn ring_writer(v: &str, d: &str) -> bool {
    d == "triton" || (d == "helion" && at_least(v, "0.5.18"))
}
