//! Features SGLang turns on or off on its own: the sampling backend, the radix cache, the
//! overlap scheduler and the decode CUDA graph.

use crate::sglang::opt;
use serde::Serialize;

use super::choice::{ChoiceSource, Chosen, sglang, user_text};
use super::inputs::Inputs;
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

/// The sampling backend: the user's, pytorch for deterministic inference, else FlashInfer.
pub(crate) fn sampling(i: &Inputs) -> Option<Chosen> {
    if !i.args.knows(opt::SAMPLING_BACKEND) {
        return None;
    }
    if i.flag(opt::ENABLE_DETERMINISTIC_INFERENCE) {
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

/// The switches, given the attention backend SGLang ends up with.
pub(crate) fn resolve(i: &Inputs, attention: Option<&str>, pp: i64) -> Switches {
    // The Mamba cache without its extra buffer has no overlap scheduler, and no radix cache on
    // trtllm_mha (which cannot run its one-token pages).
    // With a draft, 0.5.9 turns the radix cache off there (0.5.10 refuses: CACHE006).
    let no_buffer = mamba_no_buffer(i) && i.spec.is_none();
    let draft_no_radix = mamba_no_buffer(i) && i.spec.is_some() && !at_least(i.version, "0.5.10");
    let trtllm = attention == Some("trtllm_mha");
    let radix = user_off(i, &[opt::DISABLE_RADIX_CACHE]).unwrap_or_else(|| {
        let deterministic = i.flag(opt::ENABLE_DETERMINISTIC_INFERENCE)
            && attention.is_some_and(|a| !RADIX_DETERMINISTIC.contains(&a));
        sglang_says(!(deterministic || (no_buffer && trtllm) || draft_no_radix))
    });
    let overlap = user_off(i, &[opt::DISABLE_OVERLAP_SCHEDULE]).unwrap_or_else(|| {
        let spec_off = i
            .spec
            .as_deref()
            .is_some_and(|a| spec_disables_overlap(i, a));
        let mamba_off = (no_buffer && !trtllm) || mamba_radix_no_overlap(i);
        sglang_says(!(pp > 1 || spec_off || mamba_off))
    });
    let cuda_graph = user_off(i, &[opt::DISABLE_CUDA_GRAPH]).unwrap_or_else(|| {
        let eager = attention.is_some_and(|a| a == "torch_native" || a == "flex_attention");
        sglang_says(!eager)
    });
    Switches {
        radix_cache: radix,
        overlap_schedule: overlap,
        cuda_graph,
    }
}

/// 0.5.9–0.5.13 resolve the Mamba scheduler strategy of Qwen's hybrid linear-attention models
/// to `no_buffer` (the user's `extra_buffer` aside) while the radix cache is on.
pub(crate) fn mamba_no_buffer(i: &Inputs) -> bool {
    let v = i.version;
    let Some(arch) = i.arch else {
        return false;
    };
    let member = no_buffer_family(arch, v);
    let extra = i
        .args
        .str(opt::MAMBA_SCHEDULER_STRATEGY)
        .is_some_and(|s| s.starts_with("extra_buffer"));
    member
        && at_least(v, "0.5.9")
        && !at_least(v, "0.5.14")
        && !extra
        && !i.flag(opt::DISABLE_RADIX_CACHE)
}

/// 0.5.6 turns the overlap scheduler off for Qwen3-Next whenever the radix cache is on
/// (tests/resolution/0.5.6.post2.jsonl; 0.5.8 does not).
fn mamba_radix_no_overlap(i: &Inputs) -> bool {
    let v = i.version;
    i.arch == Some("Qwen3NextForCausalLM")
        && at_least(v, "0.5.6")
        && !at_least(v, "0.5.7")
        && !i.flag(opt::DISABLE_RADIX_CACHE)
}

/// The models 0.5.9–0.5.13 give the `no_buffer` Mamba cache: Qwen's hybrid linear-attention
/// family, and InternS2-Preview from 0.5.12.
pub(crate) fn no_buffer_family(arch: &str, version: &str) -> bool {
    super::attention::hybrid_linear(arch, version)
        || (arch == "InternS2PreviewForConditionalGeneration" && at_least(version, "0.5.12"))
}

/// Speculative decoding runs without the overlap scheduler unless the "spec v2" path is on
/// (`SGLANG_ENABLE_SPEC_V2`, on by default from 0.5.12); NGRAM always does.
fn spec_disables_overlap(i: &Inputs, algo: &str) -> bool {
    if algo == "NGRAM" {
        return true;
    }
    !i.env_bool("SGLANG_ENABLE_SPEC_V2", at_least(i.version, "0.5.12"))
}
