//! Speculative-decoding parameters SGLang fills in when the user names only the algorithm:
//! steps, EAGLE top-k and draft tokens, by model architecture and release.

use crate::sglang::opt;
use serde::Serialize;

use super::choice::ChoiceSource;
use super::inputs::Inputs;
use crate::sglang::release::at_least;

/// One resolved integer parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ChosenInt {
    pub value: i64,
    pub(crate) source: ChoiceSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SpecParams {
    pub num_steps: ChosenInt,
    pub eagle_topk: ChosenInt,
    pub num_draft_tokens: ChosenInt,
}

/// Architectures that get (3 steps, top-k 1, 4 draft tokens), with the release each joined.
const SHORT_CHAIN: &[(&str, &str)] = &[
    ("DeepseekV3ForCausalLM", "0.4.7"),
    ("DeepseekV2ForCausalLM", "0.4.7"),
    ("GptOssForCausalLM", "0.5.1"),
    ("DeepseekV32ForCausalLM", "0.5.3"),
    ("BailingMoeForCausalLM", "0.5.3"),
    ("BailingMoeV2ForCausalLM", "0.5.3"),
    ("Glm4MoeForCausalLM", "0.5.7"),
    ("MiMoV2FlashForCausalLM", "0.5.7"),
    ("MistralLarge3ForCausalLM", "0.5.7"),
    ("PixtralForConditionalGeneration", "0.5.7"),
    ("Glm4MoeLiteForCausalLM", "0.5.8"),
    ("BailingMoeV2_5ForCausalLM", "0.5.9"),
    ("GlmMoeDsaForCausalLM", "0.5.9"),
    ("MiMoV2ForCausalLM", "0.5.12"),
];

/// Architectures that keep (5, 4, 8) whatever the release.
const LONG_TREE: &[&str] = &["LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM"];

/// The parameters for the EAGLE family and STANDALONE; `None` otherwise.
pub(crate) fn resolve(i: &Inputs) -> Option<SpecParams> {
    let algo = i.spec.as_deref()?;
    if !matches!(algo, "EAGLE" | "EAGLE3" | "STANDALONE") {
        return None;
    }
    let user = |o: &str| i.args.is_set(o).then(|| i.args.int(o)).flatten();
    let c = |value, source| ChosenInt { value, source };
    if let Some(fixed) = dataclass_defaults(i.version) {
        // Before 0.4.5 nothing is chosen: each parameter not given keeps its default.
        let or =
            |o: &str, d| user(o).map_or(c(d, ChoiceSource::Sglang), |u| c(u, ChoiceSource::User));
        return Some(SpecParams {
            num_steps: or(opt::SPECULATIVE_NUM_STEPS, fixed.0),
            eagle_topk: or(opt::SPECULATIVE_EAGLE_TOPK, fixed.1),
            num_draft_tokens: or(opt::SPECULATIVE_NUM_DRAFT_TOKENS, fixed.2),
        });
    }
    let (steps, topk, draft) = match user(opt::SPECULATIVE_NUM_STEPS) {
        Some(s) => (
            c(s, ChoiceSource::User),
            c(user(opt::SPECULATIVE_EAGLE_TOPK)?, ChoiceSource::User),
            c(user(opt::SPECULATIVE_NUM_DRAFT_TOKENS)?, ChoiceSource::User),
        ),
        None => {
            let (s, k, d) = auto(i, algo);
            let src = ChoiceSource::Sglang;
            (c(s, src), c(k, src), c(d, src))
        }
    };
    // Top-k 1 is a chain: SGLang makes the draft tokens steps + 1 (0.4.5.post3 on).
    // Python's ints do not overflow; an i64::MAX step count saturates here rather than panic.
    let chain = steps.value.saturating_add(1);
    let draft = if topk.value == 1 && draft.value != chain && at_least(i.version, "0.4.5.post3") {
        c(chain, ChoiceSource::Sglang)
    } else {
        draft
    };
    Some(SpecParams {
        num_steps: steps,
        eagle_topk: topk,
        num_draft_tokens: draft,
    })
}

/// The (steps, top-k, draft tokens) ServerArgs declares before 0.4.5, which chooses nothing:
/// (5, 8, 64) from 0.4.1.post4, where they arrive, and (5, 4, 8) from 0.4.3.post3.
fn dataclass_defaults(version: &str) -> Option<(i64, i64, i64)> {
    if at_least(version, "0.4.5") {
        None
    } else if at_least(version, "0.4.3.post3") {
        Some((5, 4, 8))
    } else {
        Some((5, 8, 64))
    }
}

/// 0.4.1.post4 – 0.4.3.post2 serve EAGLE one prefill at a time: no radix cache, no chunked
/// prefill, no overlap scheduler.
pub(crate) fn early_eagle(version: &str, spec: Option<&str>) -> bool {
    spec == Some("EAGLE") && at_least(version, "0.4.1.post4") && !at_least(version, "0.4.3.post3")
}

fn auto(i: &Inputs, algo: &str) -> (i64, i64, i64) {
    const SHORT: (i64, i64, i64) = (3, 1, 4);
    const LONG: (i64, i64, i64) = (5, 4, 8);
    if algo == "STANDALONE" && at_least(i.version, "0.5.2") {
        return SHORT;
    }
    let arch = i.arch.unwrap_or("");
    if LONG_TREE.contains(&arch) {
        return LONG;
    }
    if SHORT_CHAIN
        .iter()
        .any(|(a, since)| *a == arch && at_least(i.version, since))
    {
        return SHORT;
    }
    if at_least(i.version, "0.5.8") {
        SHORT
    } else {
        LONG
    }
}
