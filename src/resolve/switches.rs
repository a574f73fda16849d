//! Features SGLang turns on or off on its own: the sampling backend, the radix cache, the
//! overlap scheduler and the decode CUDA graph.

use crate::sglang::opt;
use serde::Serialize;

use super::attention::{branch_trtllm_step, early_mamba_radix, mamba_no_buffer};
use super::choice::{ChoiceSource, Chosen, sglang, user_text};
use super::inputs::{Disagg, Inputs};
use crate::sglang::release::at_least;

/// One on/off decision and who made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Switch {
    pub on: bool,
    pub(crate) source: ChoiceSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Switches {
    pub radix_cache: Switch,
    pub overlap_schedule: Switch,
    pub cuda_graph: Switch,
}

/// Attention backends under which deterministic inference keeps the radix cache.
const RADIX_DETERMINISTIC: &[&str] = &["fa3", "fa4", "triton", "ascend"];

/// Whether deterministic inference keeps the radix cache under this attention backend: FA3
/// only in 0.5.3rc2 – 0.5.3.post1, every backend in 0.5.3.post2 and post3, the list from 0.5.4.
fn deterministic_radix(i: &Inputs, attention: &str) -> bool {
    if !at_least(i.version, "0.5.3.post2") {
        return attention == "fa3";
    }
    !at_least(i.version, "0.5.4") || RADIX_DETERMINISTIC.contains(&attention)
}

/// The sampling backend: the user's, pytorch for deterministic inference, else FlashInfer.
pub(crate) fn sampling(i: &Inputs) -> Option<Chosen> {
    if !i.args.knows(opt::SAMPLING_BACKEND) {
        return None;
    }
    if i.deterministic() {
        return Some(sglang("pytorch"));
    }
    user_text(i.args, opt::SAMPLING_BACKEND).or_else(|| Some(sglang("flashinfer")))
}

fn user_off(i: &Inputs, opts: &[&str]) -> Option<Switch> {
    opts.iter().any(|o| i.flag(o)).then_some(Switch {
        on: false,
        source: ChoiceSource::User,
    })
}

const fn sglang_says(on: bool) -> Switch {
    Switch {
        on,
        source: ChoiceSource::Sglang,
    }
}

/// The switches, given the attention backend SGLang ends up with and whether it captures
/// prefill graphs.
pub(crate) fn resolve(
    i: &Inputs,
    attention: Option<&str>,
    pp: i64,
    prefill_graph: bool,
) -> Switches {
    // The Mamba cache without its extra buffer has no overlap scheduler, and no radix cache on
    // trtllm_mha (which cannot run its one-token pages).
    // With a draft, 0.5.9 turns the radix cache off there (0.5.10 refuses: CACHE006).
    let no_buffer = (mamba_no_buffer(i) && i.spec.is_none()) || early_mamba_radix(i);
    let draft_no_radix =
        mamba_no_buffer(i) && i.spec.is_some() && !at_least(i.version, "0.5.10rc0");
    // Under trtllm_mha the branch turns the radix cache off and leaves the overlap scheduler be.
    let trtllm = attention == Some("trtllm_mha") && no_buffer && branch_trtllm_step(i);
    let radix = user_off(i, &[opt::DISABLE_RADIX_CACHE]).unwrap_or_else(|| {
        let deterministic =
            i.deterministic() && attention.is_some_and(|a| !deterministic_radix(i, a));
        let pd_decode = i.pd_decode_chunk_cache();
        let eagle = super::specparams::early_eagle(i.version, i.spec.as_deref());
        sglang_says(!(deterministic || trtllm || draft_no_radix || pd_decode || mis(i) || eagle))
    });
    let spec = i.spec.as_deref().and_then(|a| spec_overlap(i, a));
    // The Mamba cache without its buffer, or early DP attention, has no overlap scheduler.
    let forced_off =
        (no_buffer && !trtllm) || super::attention::unlisted_no_buffer(i) || early_dp_attention(i);
    let overlap = match spec {
        // SGLang turns it back on over the user's flag; PP and the Mamba cache still win.
        Some(true) => sglang_says(!(pp > 1 || forced_off)),
        _ => user_off(i, &[opt::DISABLE_OVERLAP_SCHEDULE])
            .unwrap_or_else(|| sglang_says(!(pp > 1 || spec == Some(false) || forced_off))),
    };
    let cuda_graph = user_off(i, &[opt::DISABLE_CUDA_GRAPH]).unwrap_or_else(|| {
        let eager = attention.is_some_and(|a| a == "torch_native" || a == "flex_attention");
        sglang_says(!(eager || pd_prefill_eager(i, prefill_graph) || mis(i)))
    });
    Switches {
        radix_cache: radix,
        overlap_schedule: overlap,
        cuda_graph,
    }
}

/// 0.4.0 – 0.4.1.post6 run DP attention without the overlap scheduler.
fn early_dp_attention(i: &Inputs) -> bool {
    i.args.flag(opt::ENABLE_DP_ATTENTION) && !at_least(i.version, "0.4.1.post7")
}

/// Multi-item scoring (0.5.11+): SGLang turns the radix cache, chunked prefill and every CUDA
/// graph off for it.
pub(crate) fn mis(i: &Inputs) -> bool {
    mis_on(i.version, i.args)
}

/// [`mis`] where only the arguments are at hand.
pub(crate) fn mis_on(version: &str, args: &crate::sglang::SglangArgs) -> bool {
    at_least(version, "0.5.11") && args.knows(opt::ENABLE_MIS) && args.flag(opt::ENABLE_MIS)
}

/// A PD prefill server decodes nothing: no decode CUDA graph, except on 0.5.6–0.5.12 while its
/// piecewise graphs are on.
fn pd_prefill_eager(i: &Inputs, prefill_graph: bool) -> bool {
    let v = i.version;
    // 0.5.6–0.5.12 turn it off only with the piecewise graphs off, which 0.5.6–0.5.10 do for
    // a prefill server and 0.5.11–0.5.12 do not (tests/resolution/0.5.12.jsonl).
    let keeps = match (
        at_least(v, "0.5.6"),
        at_least(v, "0.5.11"),
        at_least(v, "0.5.13"),
    ) {
        (true, false, _) => prefill_graph,
        (_, true, false) => true,
        _ => false,
    };
    i.disagg == Some(Disagg::Prefill) && !keeps
}

/// What speculative decoding does to the overlap scheduler: `Some(true)` turns it on (over the
/// user's `--disable-overlap-schedule`), `Some(false)` off, `None` leaves it be. The "spec v2"
/// overlap worker is opt-in (`--enable-beta-spec` in 0.5.4, then `SGLANG_ENABLE_SPEC_V2`,
/// on by default from 0.5.11, and gone from 0.5.14, where the overlap worker is the only one).
fn spec_overlap(i: &Inputs, algo: &str) -> Option<bool> {
    let v = i.version;
    if algo == "NGRAM" {
        return (!at_least(v, "0.5.14")).then_some(false);
    }
    if !at_least(v, "0.5.4") {
        return Some(false);
    }
    let v2 = if at_least(v, "0.5.4.post1") {
        i.env_bool("SGLANG_ENABLE_SPEC_V2", at_least(v, "0.5.11"))
    } else {
        i.flag(opt::ENABLE_BETA_SPEC)
    };
    let eagle = matches!(algo, "EAGLE" | "EAGLE3" | "STANDALONE");
    if !eagle && !at_least(v, "0.5.14") {
        return (!v2).then_some(false);
    }
    if !at_least(v, "0.5.7") {
        // Spec v2 forces it on for EAGLE and leaves EAGLE3 and STANDALONE be.
        return match (v2, algo) {
            (false, _) => Some(false),
            (true, "EAGLE") => Some(true),
            (true, _) => None,
        };
    }
    if !at_least(v, "0.5.11") {
        let v2_algo = algo != "STANDALONE" || at_least(v, "0.5.8");
        return Some(v2 && v2_algo);
    }
    if at_least(v, "0.5.14") {
        return None;
    }
    // 0.5.11–0.5.12 fall back to spec v1 for a tree the user asks for; 0.5.13 no longer does.
    let tree = i.user_topk.is_some_and(|k| k > 1) && !at_least(v, "0.5.13");
    (tree || !v2).then_some(false)
}
