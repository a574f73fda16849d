//! Adaptive speculative decoding (`--speculative-adaptive`): the draft steps move per batch size
//! among candidate counts, and the steps the server starts with must be one of them.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// Architectures whose own SGLang hooks turn multi-layer EAGLE on under EAGLE, which turns the
/// adaptive mode off before its steps are checked (name prefixes: each family has several).
const MULTI_LAYER_EAGLE_FAMILIES: &[&str] = &["MiMoV2", "Step3p", "GigaChat35"];

/// SPEC029: `--speculative-num-steps` outside the adaptive mode's candidate steps (0.5.14+),
/// with SGLang's default candidates (no `--speculative-adaptive-config`). Judged where the
/// adaptive mode stays on: EAGLE/EAGLE3, top-k 1 or unset, no attention DP, multi-layer EAGLE,
/// two-batch overlap or PD multiplexing, and a model read whose own hooks keep it.
pub(crate) fn adaptive_steps(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let Some(steps) = u.given_int(opt::SPECULATIVE_NUM_STEPS) else {
        return vec![];
    };
    let candidates = default_candidates(ctx.version);
    if !adaptive_stays_on(ctx)
        || u.given(opt::SPECULATIVE_ADAPTIVE_CONFIG)
        || candidates.contains(&steps)
    {
        return vec![];
    }
    let list: Vec<String> = candidates.iter().map(i64::to_string).collect();
    let why = format!(
        "{} with {} {steps}, not one of the default candidate steps {{{}}}",
        opt::SPECULATIVE_ADAPTIVE,
        opt::SPECULATIVE_NUM_STEPS,
        list.join(", ")
    );
    refused_at_start(ctx, vec![why])
}

/// The union of SGLang's default candidate steps over its batch-size slots.
fn default_candidates(v: &str) -> &'static [i64] {
    if at_least(v, "0.5.20") {
        &[0, 1, 3, 5, 7]
    } else {
        &[0, 1, 3, 7]
    }
}

/// SGLang keeps `--speculative-adaptive` on (rather than dropping it with a warning), where the
/// model is known.
fn adaptive_stays_on(ctx: &Context) -> bool {
    let Some(arch) = ctx.model_arch() else {
        return false;
    };
    ctx.user().flag(opt::SPECULATIVE_ADAPTIVE)
        && at_least(ctx.version, "0.5.14")
        && !dropped_by_line(ctx)
        && !MULTI_LAYER_EAGLE_FAMILIES
            .iter()
            .any(|f| arch.starts_with(f))
}

/// 0.5.14+ drops the adaptive mode, before it fills in the steps, for what the line itself
/// shows: an algorithm other than EAGLE/EAGLE3, a top-k above 1, attention DP, multi-layer
/// EAGLE, two-batch overlap or PD multiplexing.
pub(crate) fn dropped_by_line(ctx: &Context) -> bool {
    let u = ctx.user();
    let algo = ctx.spec_algo().unwrap_or_default();
    let topk = u.given_int(opt::SPECULATIVE_EAGLE_TOPK);
    !matches!(algo.as_str(), "EAGLE" | "EAGLE3")
        || topk.is_some_and(|k| k != 1)
        || ctx.dp_attention()
        || u.flag(opt::ENABLE_MULTI_LAYER_EAGLE)
        || u.flag(opt::ENABLE_TWO_BATCH_OVERLAP)
        || u.flag(opt::ENABLE_PDMUX)
}
