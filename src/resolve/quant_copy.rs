//! On SM100 SGLang's argument handling copies the checkpoint's quantisation method into
//! `--quantization` for the families it tunes there (before it picks their MoE runner). A
//! method named that way is kept over its Marlin upgrade, as one the user names is: an AWQ or
//! GPTQ checkpoint of these families runs on its plain method on a B200.

use crate::sglang::release::at_least;

/// The architectures whose branch copies the method, with the first release that does
/// (0.5.5 to 0.5.14 read from `_handle_model_specific_adjustments`, later releases from their
/// model overrides; Qwen3-MoE's and Qwen3-Next's goldens in tests/evidence/QUANT033.jsonl).
const COPIED_FROM: &[(&str, &str)] = &[
    ("DeepseekV3ForCausalLM", "0.5.5"),
    ("Qwen3MoeForCausalLM", "0.5.6"),
    ("Qwen3VLMoeForConditionalGeneration", "0.5.6"),
    ("Qwen3NextForCausalLM", "0.5.6"),
    ("Glm4MoeForCausalLM", "0.5.8"),
    ("Qwen3_5MoeForConditionalGeneration", "0.5.9"),
    ("Qwen3_5ForConditionalGeneration", "0.5.9"),
    ("InternS2PreviewForConditionalGeneration", "0.5.12"),
];

/// SGLang names the checkpoint's method itself for `arch` on SM100 GPUs (compute capability
/// 10.x), with `--quantization` not given.
pub(crate) fn copies_checkpoint_method(version: &str, arch: &str) -> bool {
    COPIED_FROM
        .iter()
        .any(|(a, from)| *a == arch && at_least(version, from))
}
