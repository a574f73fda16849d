//! DeepEP v2's per-rank dispatch buffer against the largest MoE forward SGLang can run.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

const VAR: &str = "SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK";

/// The prefill tokens one rank dispatches: the prefill buffer's ceiling (the chunk size in effect,
/// grown towards `--max-prefill-tokens` by PP's dynamic chunking; without chunking, that
/// budget), spread from 0.5.22 over the attention-TP ranks a chunk is scattered across.
fn prefill_tokens(ctx: &Context) -> i64 {
    let max_prefill = ctx.user().int(opt::MAX_PREFILL_TOKENS).unwrap_or(16384);
    let chunk = ctx.server.defaults.chunked_prefill_size.max(0);
    let mut ceiling = chunk;
    if chunk > 0 && ctx.user().flag(opt::ENABLE_DYNAMIC_CHUNKING) && ctx.pp() > 1 {
        ceiling = ceiling.max(max_prefill).max((chunk * 5 + 3) / 4);
    }
    if ceiling == 0 {
        ceiling = max_prefill.max(0);
    }
    if !at_least(ctx.version, "0.5.22") {
        return ceiling;
    }
    let scatter = (ctx.tp() / ctx.attn_dp().max(1)).max(1);
    (ceiling + scatter - 1) / scatter
}

/// EP028: from 0.5.19 SGLang refuses `--moe-a2a-backend deepep_v2` when the per-rank dispatch
/// buffer (`SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK`, 128 by default) is smaller than
/// a prefill chunk's share (not on a PD decode server) or the largest decode CUDA graph's tokens
/// (not on a PD prefill server).
pub(crate) fn deepep_v2_dispatch_budget(ctx: &Context) -> Vec<Fired> {
    if ctx.moe_a2a().as_deref() != Some("deepep_v2") {
        return vec![];
    }
    let Some(capacity) = env_int(ctx.env, VAR, 128) else {
        return vec![];
    };
    let role = ctx.user().sval(opt::DISAGGREGATION_MODE);
    let prefill = (role.as_deref() != Some("decode")).then(|| prefill_tokens(ctx));
    let per_req = (ctx.server.spec_params).map_or(1, |p| p.num_draft_tokens.value.max(1));
    let graph = (role.as_deref() != Some("prefill"))
        .then(|| ctx.decode_graph_max_bs())
        .flatten()
        .map(|bs| (bs, bs * per_req));
    // What to raise the buffer to: enough for both, so the next start does not stop at the other.
    let want = prefill.unwrap_or(0).max(graph.map_or(0, |g| g.1));
    if let Some(need) = prefill.filter(|n| *n > capacity) {
        return vec![Fired::new(format!(
            "--moe-a2a-backend deepep_v2: a prefill chunk dispatches up to {need} tokens per rank, but {VAR}={capacity}; SGLang {} refuses the line before loading ('per-rank prefill budget exceeds'); set {VAR}={want}, or lower --chunked-prefill-size",
            ctx.version
        ))];
    }
    let Some((bs, need)) = graph.filter(|(_, n)| *n > capacity) else {
        return vec![];
    };
    let drafts = if per_req > 1 {
        format!(" × {per_req} draft tokens")
    } else {
        String::new()
    };
    vec![Fired::new(format!(
        "--moe-a2a-backend deepep_v2: the largest decode CUDA graph dispatches {need} tokens per rank (batch {bs}{drafts}), but {VAR}={capacity}; SGLang {} refuses the line before loading ('per-rank decode CUDA graph exceeds'); set {VAR}={want}, or lower --cuda-graph-max-bs-decode",
        ctx.version
    ))]
}
