//! Data-parallel attention.

use super::*;
use crate::sglang::opt;

pub(crate) fn tp_divisible(ctx: &Context) -> Vec<Fired> {
    let (tp, dp) = (ctx.tp(), ctx.attn_dp());
    if !ctx.dp_attention() || dp <= 1 || tp % dp == 0 {
        return vec![];
    }
    vec![Fired::new(format!(
        "DP attention size {dp} does not divide TP {tp}: each DP rank needs tp/dp attention-TP GPUs"
    ))]
}

pub(crate) fn lm_head(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_DP_LM_HEAD) || (ctx.dp_attention() && ctx.attn_dp() > 1) {
        return vec![];
    }
    // From 0.5.3 a single DP rank drops the flag silently (SGLang's own resolution).
    if crate::sglang::release::at_least(ctx.version, "0.5.3") && ctx.dp().max(ctx.attn_dp()) <= 1 {
        return vec![];
    }
    vec![Fired::new(
        "--enable-dp-lm-head without DP attention (size > 1): the vocabulary-parallel LM head needs attention DP".to_string(),
    )]
}

pub(crate) fn multinode_dp(ctx: &Context) -> Vec<Fired> {
    let dp = ctx.dp();
    if dp <= 1 || ctx.nnodes() < 2 {
        return vec![];
    }
    // 0.5.20+: --dp-size is replica DP only; before, DP attention (given, or SGLang's own for
    // DeepSeek's sparse attention in 0.5.3-0.5.7) made it attention DP.
    let modern = ctx.user().knows(opt::ATTN_DP_SIZE);
    // Before 0.4.1.post7 DP attention spread over nodes is refused too.
    let early = !crate::sglang::release::at_least(ctx.version, "0.4.1.post7");
    if !modern && !early && ctx.dp_attention() {
        return vec![];
    }
    if modern && ctx.user().flag(opt::ENABLE_DP_ATTENTION) {
        return vec![]; // rewritten to --attn-dp-size by SGLang (FLAG003)
    }
    let instead = if early {
        "one server per node behind a router"
    } else if modern {
        "attention DP (--attn-dp-size) or one server per node behind a router"
    } else {
        "attention DP (--enable-dp-attention) or one server per node behind a router"
    };
    // Early DP attention sets the DP size to the TP size itself: name the value SGLang checks,
    // and the one given where it differs.
    let given = ctx.user().int(opt::DP_SIZE).unwrap_or(1);
    let dp_text = if given == dp {
        format!("--dp-size {dp}")
    } else {
        format!(
            "--dp-size {given} (with DP attention SGLang {} sets it to the TP size, {dp})",
            ctx.version
        )
    };
    vec![Fired::new(format!(
        "{dp_text} with --nnodes {}: multi-node data-parallel replicas are not supported; use {instead}",
        ctx.nnodes(),
    ))]
}

pub(crate) fn attn_dp_and_dp(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx
        .args
        .get(opt::ATTN_DP_SIZE)
        .and_then(serde_json::Value::as_i64)
    else {
        return vec![];
    };
    let dp = ctx.dp();
    if a <= 1 || dp <= 1 || ctx.user().flag(opt::ENABLE_DP_ATTENTION) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--attn-dp-size {a} with --dp-size {dp}: attention DP and data-parallel replicas cannot be combined in one server"
    ))]
}

/// DPA005: 0.4.4.post1 to 0.5.2rc2 assert DP attention runs with more than one DP rank.
pub(crate) fn single_rank(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_DP_ATTENTION) || ctx.dp() > 1 {
        return vec![];
    }
    let tp = ctx.tp();
    vec![Fired::new(format!(
        "--enable-dp-attention with --dp-size {}: SGLang {} asserts a DP size above 1 with DP attention before the server starts (later releases run it as one rank); pass --dp-size between 2 and the TP size ({tp}), for example --dp-size {tp}, or drop --enable-dp-attention",
        ctx.dp(),
        ctx.version
    ))]
}

/// DPA006: `--enable-tp-lm-head-all-to-all` (0.5.18+) asks for a layout SGLang's own default
/// picks only where it holds: attention DP over the whole TP group, no DP LM head and no
/// attention context parallelism. It asserts the first of these it finds missing.
pub(crate) fn tp_lm_head_all_to_all(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if !u.flag(opt::ENABLE_TP_LM_HEAD_ALL_TO_ALL) {
        return vec![];
    }
    let (tp, dp) = (ctx.tp(), ctx.attn_dp());
    let attn_cp = u.int(opt::ATTN_CP_SIZE).unwrap_or(1);
    let dp_on = ctx.dp_attention() && dp > 1;
    let why = holding([
        (!dp_on, "without DP attention".to_owned()),
        (
            u.flag(opt::ENABLE_DP_LM_HEAD),
            format!("with {}", opt::ENABLE_DP_LM_HEAD),
        ),
        (
            tp != dp,
            format!("with TP {tp} and DP attention size {dp}, which must be equal"),
        ),
        (attn_cp != 1, format!("with attention CP size {attn_cp}")),
    ])
    .next();
    let why = why.map(|w| format!("{} {w}", opt::ENABLE_TP_LM_HEAD_ALL_TO_ALL));
    refused_at_start(ctx, why.into_iter().collect())
}

/// DPA007: the indexer top-k capturer (0.5.12+) asserts that each attention group is one GPU,
/// which only DP attention as wide as TP gives; it is built for models with indexer layers.
pub(crate) fn indexer_topk_capture(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let indexers = ctx.model.is_some_and(|m| {
        m.is_dsa(ctx.version)
            || (m.deepseek_v4.as_ref()).is_some_and(|l| l.compress_ratios.contains(&4))
    });
    // Attention context parallelism splits the group another way; not judged here.
    let cp = u.int(opt::ATTN_CP_SIZE).is_some_and(|c| c > 1)
        || u.flag(opt::ENABLE_NSA_PREFILL_CONTEXT_PARALLEL)
        || u.flag(opt::ENABLE_PREFILL_CP);
    if !u.flag(opt::ENABLE_RETURN_INDEXER_TOPK) || !indexers || cp {
        return vec![];
    }
    let attn_tp = ctx.tp() / ctx.attn_dp().max(1);
    if attn_tp <= 1 {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} with attention TP {attn_tp} (TP {} over {} attention-DP group(s)): SGLang {}'s indexer top-k capturer asserts one GPU per attention group when the model runner starts, after the weights load ('IndexerTopkCapturer now only supports DP attention'); add --enable-dp-attention --dp {}",
        opt::ENABLE_RETURN_INDEXER_TOPK,
        ctx.tp(),
        ctx.attn_dp().max(1),
        ctx.version,
        ctx.tp()
    ))]
}
