//! The vision tower's attention backend. SGLang picks it when the model is built: the user's
//! `--mm-attention-backend`, else what the model's code passes, else the platform default.

use super::choice::{Chosen, sglang, user_text};
use super::inputs::Inputs;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// Vision towers whose code asks for FA3 outright: (architecture, first release, first release
/// without it). Qwen3-VL's blocks pass `flash_attention_3`, which its code maps to fa3; the MoE
/// model builds the same tower. 0.5.5.post3 dropped every such request; MiMo-V2's tower (built
/// when the config has both vision and audio parts) made one again from 0.5.11 to 0.5.15.post1.
const PASSES_FA3: &[(&str, &str, &str)] = &[
    ("InternVLChatModel", "0.4.8", "0.5.5.post3"),
    ("Step3VLForConditionalGeneration", "0.4.10", "0.5.5.post3"),
    (
        "Qwen3OmniMoeForConditionalGeneration",
        "0.5.4",
        "0.5.5.post3",
    ),
    ("Qwen3VLForConditionalGeneration", "0.5.3rc2", "0.5.5.post3"),
    (
        "Qwen3VLMoeForConditionalGeneration",
        "0.5.3rc2",
        "0.5.5.post3",
    ),
    ("MiMoV2ForCausalLM", "0.5.11", "0.5.16"),
    ("MiMoV2FlashForCausalLM", "0.5.11", "0.5.16"),
];

/// Vision towers whose code asks for SDPA outright (Llama 4's, Mllama's, Janus Pro's and the
/// Idefics2 encoder MiniCPM-V/O and Phi-4-MM use), until 0.5.5.post3; before 0.5.1 SDPA was
/// everyone's default anyway.
const PASSES_SDPA: &[&str] = &[
    "Llama4ForConditionalGeneration",
    "MllamaForConditionalGeneration",
    "MultiModalityCausalLM",
    "MiniCPMV",
    "MiniCPMO",
    "Phi4MMForCausalLM",
];
const PASSES_SDPA_UNTIL: &str = "0.5.5.post3";

/// The vision tower's backend; `None` for a model without one (or an unknown GPU).
pub(crate) fn resolve(i: &Inputs) -> Option<Chosen> {
    if !i.multimodal {
        return None;
    }
    if let Some(u) = user_text(i.args, opt::MM_ATTENTION_BACKEND) {
        return Some(u);
    }
    if model_passes_fa3(i) {
        return Some(sglang("fa3"));
    }
    if i.arch.is_some_and(|a| PASSES_SDPA.contains(&a)) && !at_least(i.version, PASSES_SDPA_UNTIL) {
        return Some(sglang("sdpa"));
    }
    Some(sglang(platform_default(i.version, i.cc?)))
}

/// SGLang's choice for a tower whose code passes no backend, or `Err(backend)` where SGLang
/// refuses the one it would run on this GPU.
pub fn tower_backend<'a>(
    version: &str,
    cc: (u32, u32),
    user: Option<&'a str>,
) -> Result<&'a str, &'a str> {
    let b = user.unwrap_or_else(|| platform_default(version, cc));
    if b == "fa3" && fa3_refused_on(version).contains(&cc.0) {
        Err(b)
    } else {
        Ok(b)
    }
}

fn model_passes_fa3(i: &Inputs) -> bool {
    i.arch.is_some_and(|a| {
        PASSES_FA3.iter().any(|(name, from, until)| {
            *name == a && at_least(i.version, from) && !at_least(i.version, until)
        })
    })
}

/// SGLang's default for a tower that passes nothing, on CUDA. FA4 on SM10x from 0.5.10, except
/// SM103 (B300, GB300) from 0.5.13 to 0.5.20, which get triton_attn.
pub(crate) fn platform_default(version: &str, (major, minor): (u32, u32)) -> &'static str {
    if !at_least(version, "0.5.1") {
        return "sdpa";
    }
    let sm103_skipped = minor == 3 && at_least(version, "0.5.13") && !at_least(version, "0.5.21");
    match major {
        9 => "fa3",
        10 if at_least(version, "0.5.10") && !sm103_skipped => "fa4",
        _ => "triton_attn",
    }
}

/// Compute-capability majors on which SGLang refuses FA3 for the vision tower ("not supported
/// on Blackwell GPUs": the majors its `is_blackwell()` counts); empty before the check existed.
pub(crate) fn fa3_refused_on(version: &str) -> &'static [u32] {
    if at_least(version, "0.5.1") {
        super::blackwell_majors(version)
    } else {
        &[]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read in the wheels' vision attention: `major == 10` picks FA4 from 0.5.10;
    /// `major == 10 and minor != 3` from 0.5.13 to 0.5.20; `major == 10` again from 0.5.21.
    #[test]
    fn sm103_towers_get_fa4_except_from_0_5_13_to_0_5_20() {
        let b300 = (10, 3);
        for (v, want) in [
            ("0.5.9", "triton_attn"),
            ("0.5.10", "fa4"),
            ("0.5.12.post1", "fa4"),
            ("0.5.13", "triton_attn"),
            ("0.5.20", "triton_attn"),
            ("0.5.21", "fa4"),
            ("0.5.23", "fa4"),
        ] {
            assert_eq!(platform_default(v, b300), want, "{v}");
        }
        assert_eq!(platform_default("0.5.14", (10, 0)), "fa4");
        assert_eq!(platform_default("0.5.14", (9, 0)), "fa3");
        assert_eq!(platform_default("0.5.14", (12, 0)), "triton_attn");
    }
}
