//! SGLang's attention registry builds each backend for the model's attention kind, and the MLA
//! kernels (latent KV) and the MHA kernels refuse the other kind when the model runner builds
//! them. A speculative draft's model runner builds its backends for the draft's own kind.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

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

/// ATTN027: an attention backend for the other attention kind than the model's (the target's,
/// or a speculative draft's).
pub(crate) fn backend_attention_kind(ctx: &Context) -> Vec<Fired> {
    target(ctx).into_iter().chain(draft(ctx)).collect()
}

fn target(ctx: &Context) -> Option<Fired> {
    let model = ctx.model?;
    let mla = model.is_mla() && ctx.model_arch().is_some_and(|a| MLA_ARCHS.contains(&a));
    let mha = !model.is_mla();
    let uses = ctx.effective_backends_where(|v| (mha && mla_only(v)) || (mla && mha_only(v)));
    if uses.is_empty() {
        return None;
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
    Some(Fired::new(format!(
        "{} with {}: the model {kind}, and SGLang {}'s model runner refuses that backend for it at start-up; use {needs}",
        ctx.model_arch().unwrap_or("the model"),
        uses.join(", "),
        ctx.version,
    )))
}

/// A draft without MLA (an EAGLE3 head of DeepSeek or Kimi) builds the backend the target's
/// line names unless `--speculative-draft-attention-backend` names its own.
fn draft(ctx: &Context) -> Option<Fired> {
    let spec = ctx.server.speculative.as_ref()?;
    spec.separate_draft()?;
    if ctx.draft_facts()?.is_mla() {
        return None;
    }
    let uses = match ctx.user().sval(opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND) {
        Some(own) => mla_only(&own)
            .then(|| format!("--speculative-draft-attention-backend {own}"))
            .into_iter()
            .collect(),
        None => shared_backends(ctx),
    };
    if uses.is_empty() {
        return None;
    }
    let remedy = if ctx.user().knows(opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND) {
        "name the draft's own with --speculative-draft-attention-backend (flashinfer, fa3 or triton)"
    } else {
        "name a backend for both that is not MLA-only (flashinfer, fa3 or triton), or upgrade to 0.5.7+ for --speculative-draft-attention-backend"
    };
    Some(Fired::new(format!(
        "the {} draft has no MLA and builds {}: SGLang {}'s draft model runner refuses that backend for it at start-up; {remedy}",
        spec.algorithm,
        uses.join(", "),
        ctx.version,
    )))
}

/// The MLA-only backends a draft shares with the target: those the line names, and SGLang's own
/// pick where its argument handling makes it for every model runner (0.5.3.post2 on; before, each
/// runner picked for its own model).
fn shared_backends(ctx: &Context) -> Vec<String> {
    if at_least(ctx.version, "0.5.3.post2") {
        ctx.effective_backends_where(mla_only)
    } else {
        ctx.backends_where(mla_only)
    }
}
