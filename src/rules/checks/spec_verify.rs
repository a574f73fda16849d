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
    refused_at_start(ctx, out)
}

/// A sink without a window, or a negative sink (0.5.21+, any algorithm); a window that is not
/// positive (0.5.13+, any algorithm; DFlash's own check in 0.5.12).
fn window_and_sink(ctx: &Context, algo: Option<&str>) -> Vec<String> {
    let u = ctx.user();
    let v = ctx.version;
    let window = u.int(opt::SPECULATIVE_DRAFT_WINDOW_SIZE);
    let mut out = vec![];
    let checked = at_least(v, "0.5.13") || algo == Some("DFLASH");
    if let Some(w) = window.filter(|w| *w <= 0 && checked) {
        out.push(format!(
            "{} {w}: it must be positive",
            opt::SPECULATIVE_DRAFT_WINDOW_SIZE
        ));
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
/// window no smaller than the draft tokens (0.5.12+), judged where the command line gives them.
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
    let tokens = block.filter(|b| *b > 0).or(draft);
    let window = u.int(opt::SPECULATIVE_DRAFT_WINDOW_SIZE).filter(|w| *w > 0);
    if let (Some(w), Some(t)) = (window, tokens)
        && w < t
    {
        out.push(format!(
            "{} {w} is smaller than the {t} draft tokens of a DFLASH block",
            opt::SPECULATIVE_DRAFT_WINDOW_SIZE
        ));
    }
    out
}
