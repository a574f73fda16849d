//! Speculative decoding's verification and draft-window settings SGLang validates while it
//! resolves the arguments: block verification and rejection sampling, the draft attention
//! window and its sink, and DFlash's block size.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// SPEC026: the settings the release refuses, one finding each.
pub(crate) fn draft_settings(ctx: &Context) -> Vec<Fired> {
    let algo = ctx.spec_algo();
    let mut out = window_and_sink(ctx, algo.as_deref());
    out.extend(verification(ctx, algo.as_deref()));
    out.extend(dflash_block(ctx, algo.as_deref()));
    if algo.as_deref() == Some("NGRAM") {
        out.extend(ngram_corpus(ctx));
    }
    refused_at_start(ctx, out)
}

/// A sink without a window, or a negative sink (0.5.21+, any algorithm); a window that is not
/// positive (0.5.13+, any algorithm; DFlash's own check in 0.5.11 and 0.5.12).
fn window_and_sink(ctx: &Context, algo: Option<&str>) -> Vec<String> {
    let u = ctx.user();
    let v = ctx.version;
    let window = draft_window(ctx);
    let mut out = vec![];
    let checked = at_least(v, "0.5.13") || algo == Some("DFLASH");
    if let Some((name, w)) = window.filter(|(_, w)| *w <= 0 && checked) {
        out.push(format!("{name} {w}: it must be positive"));
    }
    if let Some(s) = u.int(opt::SPECULATIVE_DRAFT_SINK_SIZE) {
        if s < 0 {
            out.push(format!(
                "{} {s}: it must not be negative",
                opt::SPECULATIVE_DRAFT_SINK_SIZE
            ));
        } else if window.is_none() {
            out.push(format!(
                "{} without {}: the sink is kept beside that window",
                opt::SPECULATIVE_DRAFT_SINK_SIZE,
                opt::SPECULATIVE_DRAFT_WINDOW_SIZE
            ));
        }
    }
    out
}

/// Block verification (0.5.22+) on an algorithm it does not take, and rejection sampling
/// (0.5.14+; block verification turns it on for EAGLE) on STANDALONE, with a top-k above 1 or
/// with accept thresholds.
fn verification(ctx: &Context, algo: Option<&str>) -> Vec<String> {
    let u = ctx.user();
    let block = u.flag(opt::SPECULATIVE_USE_BLOCK_VERIFICATION);
    let mut out = vec![];
    let block_algos = ["EAGLE", "EAGLE3", "DFLASH", "DSPARK"];
    if block && !algo.is_some_and(|a| block_algos.contains(&a)) {
        out.push(format!(
            "{} with {}: it takes EAGLE, EAGLE3, NEXTN, DFLASH or DSPARK",
            opt::SPECULATIVE_USE_BLOCK_VERIFICATION,
            algo.map_or("no speculative algorithm".into(), |a| format!(
                "--speculative-algorithm {a}"
            ))
        ));
    }
    let eagle = matches!(algo, Some("EAGLE" | "EAGLE3"));
    let rejection = u.flag(opt::SPECULATIVE_USE_REJECTION_SAMPLING) || (block && eagle);
    if !rejection {
        return out;
    }
    let name = opt::SPECULATIVE_USE_REJECTION_SAMPLING;
    let threshold = [
        opt::SPECULATIVE_ACCEPT_THRESHOLD_SINGLE,
        opt::SPECULATIVE_ACCEPT_THRESHOLD_ACC,
    ]
    .into_iter()
    .find(|o| {
        u.get_or_default(o)
            .and_then(|x| x.as_f64())
            .is_some_and(|t| t != 1.0)
    });
    let topk = super::spec::resolved_topk(ctx);
    if algo == Some("STANDALONE") {
        out.push(format!(
            "{name} with STANDALONE: it takes EAGLE, EAGLE3 or NEXTN"
        ));
    } else if eagle && topk != 1 {
        out.push(format!(
            "{name} (or block verification, which turns it on) with top-k {topk}: it takes top-k 1"
        ));
    } else if let Some(t) = threshold.filter(|_| eagle) {
        out.push(format!(
            "{name} with {t}: rejection sampling takes no accept thresholds"
        ));
    }
    out
}

/// DFlash's block size (0.5.11+): positive, and the draft tokens when both are given; a draft
/// window no smaller than the block, which without either option SGLang reads from the draft's
/// config (16 where it has none or SGLang cannot parse it).
fn dflash_block(ctx: &Context, algo: Option<&str>) -> Vec<String> {
    if algo != Some("DFLASH") {
        return vec![];
    }
    let u = ctx.user();
    let block = u.int(opt::SPECULATIVE_DFLASH_BLOCK_SIZE);
    let draft = u
        .given(opt::SPECULATIVE_NUM_DRAFT_TOKENS)
        .then(|| u.int(opt::SPECULATIVE_NUM_DRAFT_TOKENS))
        .flatten();
    let mut out = vec![];
    match (block, draft) {
        (Some(b), _) if b <= 0 => out.push(format!(
            "{} {b}: it must be positive",
            opt::SPECULATIVE_DFLASH_BLOCK_SIZE
        )),
        (Some(b), Some(d)) if b != d => out.push(format!(
            "{} {b} with {} {d}: DFLASH needs them equal",
            opt::SPECULATIVE_DFLASH_BLOCK_SIZE,
            opt::SPECULATIVE_NUM_DRAFT_TOKENS
        )),
        _ => {}
    }
    let given = block.filter(|b| *b > 0).or(draft);
    let tokens = given
        .map(|t| (t, String::new()))
        .or_else(|| config_block(ctx));
    let window = draft_window(ctx).filter(|(_, w)| *w > 0);
    if let (Some((name, w)), Some((t, whose))) = (window, tokens)
        && w < t
    {
        out.push(format!(
            "{name} {w} is smaller than the {t} draft tokens of a DFLASH block{whose}"
        ));
    }
    out
}

/// The draft window as the release spells it: 0.5.11 has only DFlash's own option.
fn draft_window(ctx: &Context) -> Option<(&'static str, i64)> {
    let u = ctx.user();
    [
        opt::SPECULATIVE_DRAFT_WINDOW_SIZE,
        opt::SPECULATIVE_DFLASH_DRAFT_WINDOW_SIZE,
    ]
    .into_iter()
    .find(|o| u.knows(o))
    .and_then(|o| Some((o, u.int(o)?)))
}

/// The block SGLang reads from the draft's config, judged only where the launcher read the
/// same config: no model overrides, no other revision. SGLang falls back to 16 when it cannot
/// parse the config, so the smaller of the two is a block every outcome holds to.
fn config_block(ctx: &Context) -> Option<(i64, String)> {
    let u = ctx.user();
    let overridden = u
        .str(opt::JSON_MODEL_OVERRIDE_ARGS)
        .is_some_and(|a| !matches!(a.trim(), "" | "{}"));
    if overridden || u.given(opt::SPECULATIVE_DRAFT_MODEL_REVISION) {
        return None;
    }
    let (read, whose) = match ctx.draft_facts()?.dflash_block_size {
        None => (
            16,
            " (SGLang takes 16 where the draft's config gives no block)".into(),
        ),
        Some(b) if b > 16 => (
            16,
            format!(
                " (the draft's config gives {b}, and SGLang takes 16 where it cannot parse that config)"
            ),
        ),
        Some(b) => (b, " (the block the draft's config gives)".into()),
    };
    Some((i64::try_from(read).ok()?, whose))
}

/// NGRAM's external corpus (0.5.11+): a positive SAM budget (its default is 0) and token cap,
/// and a budget below the draft tokens where the command line gives them.
fn ngram_corpus(ctx: &Context) -> Vec<String> {
    let u = ctx.user();
    if !u.is_set(opt::SPECULATIVE_NGRAM_EXTERNAL_CORPUS_PATH) {
        return vec![];
    }
    let path = opt::SPECULATIVE_NGRAM_EXTERNAL_CORPUS_PATH;
    let budget_name = opt::SPECULATIVE_NGRAM_EXTERNAL_SAM_BUDGET;
    let cap_name = opt::SPECULATIVE_NGRAM_EXTERNAL_CORPUS_MAX_TOKENS;
    let mut out = vec![];
    let budget = u.int(budget_name);
    if let Some(b) = budget.filter(|b| *b <= 0) {
        out.push(format!(
            "{path} with {budget_name} {b}: it must be positive"
        ));
    }
    if let Some(c) = u.int(cap_name).filter(|c| *c <= 0) {
        out.push(format!("{path} with {cap_name} {c}: it must be positive"));
    }
    let draft = u
        .given(opt::SPECULATIVE_NUM_DRAFT_TOKENS)
        .then(|| u.int(opt::SPECULATIVE_NUM_DRAFT_TOKENS))
        .flatten();
    if let (Some(b), Some(d)) = (budget, draft)
        && b > d - 1
    {
        out.push(format!(
            "{budget_name} {b}: it must be at most {} {d} less one",
            opt::SPECULATIVE_NUM_DRAFT_TOKENS
        ));
    }
    out
}
