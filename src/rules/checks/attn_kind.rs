//! SGLang's attention registry builds each backend for the model's attention kind, and the MLA
//! kernels (latent KV) and the MHA kernels refuse the other kind when the model runner builds
//! them, after the weights are loaded.

use super::*;

/// The architectures every release that has them runs with MLA (the model config's own list,
/// the part that holds across releases). Another model with `kv_lora_rank` is left out: its MLA
/// depends on the release.
const MLA_ARCHS: &[&str] = &[
    "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM",
    "KimiK25ForConditionalGeneration",
    "Glm4MoeLiteForCausalLM",
    "MiniCPM3ForCausalLM",
];

/// The backends SGLang builds only for an MLA model (0.5.23 builds tokenspeed_mla as
/// cutedsl_mla, which refuses the same way).
fn mla_only(backend: &str) -> bool {
    matches!(backend, "trtllm_mla" | "cutedsl_mla" | "tokenspeed_mla")
}

/// The backends SGLang builds only for a model without MLA.
fn mha_only(backend: &str) -> bool {
    matches!(backend, "trtllm_mha" | "hpc_ops")
}

/// ATTN027: an attention backend for the other attention kind than the model's.
pub(crate) fn backend_attention_kind(ctx: &Context) -> Vec<Fired> {
    let Some(model) = ctx.model else {
        return vec![];
    };
    let mla = model.is_mla() && ctx.model_arch().is_some_and(|a| MLA_ARCHS.contains(&a));
    let mha = !model.is_mla();
    let refused = |v: &str| (mha && mla_only(v)) || (mla && mha_only(v));
    let uses = ctx.effective_backends_where(refused);
    if uses.is_empty() {
        return vec![];
    }
    let (kind, needs) = if mla {
        (
            "uses MLA (latent KV)",
            "a backend for MLA (flashinfer, fa3, flashmla, triton, or trtllm_mla on Blackwell)",
        )
    } else {
        (
            "has no MLA",
            "a backend for it (flashinfer, fa3, triton, or trtllm_mha on Blackwell)",
        )
    };
    vec![Fired::new(format!(
        "{} with {}: the model {kind}, and SGLang {}'s model runner refuses that backend for it at start-up; use {needs}",
        ctx.model_arch().unwrap_or("the model"),
        uses.join(", "),
        ctx.version,
    ))]
}
