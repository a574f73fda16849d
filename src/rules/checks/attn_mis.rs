//! Multi-item scoring (`--enable-mis`, 0.5.11+) masks the items with FlashInfer's custom
//! attention mask, and SGLang asserts FlashInfer for prefill and decode once it has picked them.

use super::*;
use crate::sglang::opt;

/// ATTN025: `--enable-mis` with a prefill or decode backend other than FlashInfer.
pub(crate) fn mis_backends(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_MIS) {
        return vec![];
    }
    let b = &ctx.server.backends;
    let named = |o: &str| ctx.user().given(o);
    // SGLang's own pick depends on the model; without its config only what the line names counts.
    let known = ctx.model.is_some()
        || named(opt::ATTENTION_BACKEND)
        || (named(opt::PREFILL_ATTENTION_BACKEND) && named(opt::DECODE_ATTENTION_BACKEND));
    let (Some(prefill), Some(decode)) = (b.prefill(), b.decode()) else {
        return vec![];
    };
    if !known || (prefill.value == "flashinfer" && decode.value == "flashinfer") {
        return vec![];
    }
    let others = ctx.effective_backends_where(|v| v != "flashinfer");
    refused_at_start(
        ctx,
        vec![format!(
            "{} with {}: multi-item scoring needs FlashInfer for prefill and decode (--attention-backend flashinfer)",
            opt::ENABLE_MIS,
            others.join(", ")
        )],
    )
}
