//! The model architectures an all-to-all MoE backend's own argument checks accept.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// The first architecture SGLang's DeepEP v2 check accepts (0.5.19+), with the release that
/// added each to its list.
const DEEPEP_V2: &[(&str, &str)] = &[
    ("DeepseekV3ForCausalLM", "0.5.19"),
    ("DeepseekV4ForCausalLM", "0.5.19"),
    ("Qwen3MoeForCausalLM", "0.5.19"),
    ("Glm5NextForConditionalGeneration", "0.5.21"),
    ("GlmMoeDsaForCausalLM", "0.5.22"),
    ("MiMoV2ForCausalLM", "0.5.22"),
    ("MiMoV2FlashForCausalLM", "0.5.22"),
];

/// The architectures SGLang's FlashInfer MegaMOE check accepts, any of config.json's names
/// (0.5.20+), with the release that added each.
const FLASHINFER_MEGAMOE: &[(&str, &str)] = &[
    ("DeepseekV2ForCausalLM", "0.5.20"),
    ("DeepseekV3ForCausalLM", "0.5.20"),
    ("DeepseekV32ForCausalLM", "0.5.20"),
    ("DeepseekV4ForCausalLM", "0.5.20"),
    ("Glm4MoeForCausalLM", "0.5.20"),
    ("NemotronHForCausalLM", "0.5.20"),
    ("NemotronHPuzzleForCausalLM", "0.5.20"),
    ("Qwen2MoeForCausalLM", "0.5.20"),
    ("Qwen3MoeForCausalLM", "0.5.20"),
    ("GlmMoeDsaForCausalLM", "0.5.21"),
    ("BeamForCausalLM", "0.5.23"),
    ("KimiK3ForConditionalGeneration", "0.5.23"),
    ("KimiK3LinearForCausalLM", "0.5.23"),
];

/// config.json's architecture names; facts built without the registry keys carry the first alone.
fn config_archs(m: &crate::facts::model::ModelFacts) -> Vec<&str> {
    if m.registry.architectures.is_empty() {
        m.architecture.iter().map(String::as_str).collect()
    } else {
        (m.registry.architectures.iter())
            .map(String::as_str)
            .collect()
    }
}

fn listed(list: &[(&str, &str)], arch: &str, version: &str) -> bool {
    list.iter()
        .any(|(a, from)| *a == arch && at_least(version, from))
}

/// EP027: `--moe-a2a-backend deepep_v2` (0.5.19+) or `flashinfer_megamoe` (0.5.20+) on a model
/// the release's list does not name; SGLang refuses it while resolving the arguments. A model
/// package loaded through `SGLANG_EXTERNAL_MODEL_PACKAGE` may register its own architecture.
pub(crate) fn a2a_model_unvalidated(ctx: &Context) -> Vec<Fired> {
    let external = (ctx.env.get("SGLANG_EXTERNAL_MODEL_PACKAGE")).is_some_and(|v| !v.is_empty());
    let (Some(a2a), Some(m)) = (ctx.moe_a2a(), ctx.model) else {
        return vec![];
    };
    let archs = config_archs(m);
    let v = ctx.version;
    let refused = match a2a.as_str() {
        "deepep_v2" if at_least(v, "0.5.19") => {
            archs.first().is_some_and(|a| !listed(DEEPEP_V2, a, v))
        }
        "flashinfer_megamoe" if at_least(v, "0.5.20") => {
            !archs.is_empty() && !archs.iter().any(|a| listed(FLASHINFER_MEGAMOE, a, v))
        }
        _ => false,
    };
    if !refused || external {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} {a2a} with {}: SGLang {v} has not validated this all-to-all backend for the model and refuses the line before loading ('is not validated for'); use {} deepep, or none",
        opt::MOE_A2A_BACKEND,
        archs.join(", "),
        opt::MOE_A2A_BACKEND,
    ))]
}

/// EP031: from 0.5.20 FlashInfer MegaMOE takes, on a model it has validated, only MXFP8,
/// ModelOpt NVFP4 (and from 0.5.23 online NVFP4 with the CuteDSL W4A16 switch), FP4 experts or a
/// hybrid NVFP4 export, and only with attention DP as wide as TP. DeepSeek-V4 and MiMo-V2 decide
/// FP4 experts from their weights or the environment, so their checkpoints are not judged.
pub(crate) fn megamoe_requirements(ctx: &Context) -> Vec<Fired> {
    let v = ctx.version;
    let (Some("flashinfer_megamoe"), Some(m)) = (ctx.moe_a2a().as_deref(), ctx.model) else {
        return vec![];
    };
    let archs = config_archs(m);
    let validated = archs.iter().any(|a| listed(FLASHINFER_MEGAMOE, a, v));
    let decides_itself = archs
        .iter()
        .any(|a| a.starts_with("DeepseekV4") || a.starts_with("MiMoV2"));
    if !at_least(v, "0.5.20") || !validated {
        return vec![];
    }
    let mut why = Vec::new();
    if !decides_itself && !megamoe_takes(ctx, m) {
        let got = ctx.quant().map_or("no quantisation".to_owned(), |q| {
            format!("quantisation {q}")
        });
        why.push(format!(
            "{got} (it takes only MXFP8, ModelOpt NVFP4, FP4-expert or hybrid NVFP4 MoE checkpoints: 'currently supports only')"
        ));
    }
    if ctx.attn_dp() != ctx.tp() {
        why.push(format!(
            "attention DP {} under TP {} (it needs DP attention as wide as TP)",
            ctx.attn_dp(),
            ctx.tp()
        ));
    }
    if why.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} flashinfer_megamoe with {}: SGLang {v} refuses the line before loading",
        opt::MOE_A2A_BACKEND,
        why.join("; with ")
    ))]
}

/// The checkpoint is one FlashInfer MegaMOE has kernels for.
fn megamoe_takes(ctx: &Context, m: &crate::facts::model::ModelFacts) -> bool {
    let quant = ctx.quant();
    let w4a16 = (ctx.env.get("SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16")).is_some_and(env_true);
    matches!(quant.as_deref(), Some("mxfp8" | "modelopt_fp4"))
        || (quant.as_deref() == Some("nvfp4_online") && w4a16 && at_least(ctx.version, "0.5.23"))
        || m.fp4_experts_marked
        || m.nvfp4_moe_hybrid
}
