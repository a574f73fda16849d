//! QUANT021: shared-expert fusion on a ModelOpt NVFP4 checkpoint that leaves its
//! shared experts unquantised (GLM-5 family, 0.5.9–0.5.20).

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// Whether an `exclude_modules` entry leaves a MoE layer's shared expert unquantised: no layer
/// index, or one past the dense layers (the MTP layers' are skipped at load).
fn excludes_shared_expert(entry: &str, moe_layers: (u64, u64)) -> bool {
    if !entry.contains("shared_expert") || entry.contains("shared_expert_gate") {
        return false;
    }
    let index = entry
        .split('.')
        .skip_while(|p| *p != "layers")
        .nth(1)
        .and_then(|i| i.parse::<u64>().ok());
    index.is_none_or(|i| (moe_layers.0..moe_layers.1).contains(&i))
}

/// The MoE runners whose setup turns the fusion off.
const UNFUSED_RUNNERS: &[&str] = &[
    "flashinfer_trtllm",
    "flashinfer_trtllm_routed",
    "experimental_sgl_trtllm",
    "flashinfer_cutedsl",
];

/// Whether SGLang keeps its shared-expert fusion on for this line (the model's gate passed).
fn fusion_kept(ctx: &Context) -> bool {
    let u = ctx.user();
    let off = [
        opt::DISABLE_SHARED_EXPERTS_FUSION,
        opt::ENABLE_TWO_BATCH_OVERLAP,
        opt::ENABLE_SINGLE_BATCH_OVERLAP,
    ]
    .iter()
    .any(|o| u.flag(o));
    let runner = u
        .sval(opt::MOE_RUNNER_BACKEND)
        .unwrap_or_else(|| "auto".into());
    let majors = ctx.majors();
    // On SM100 SGLang's own runner pick may be a TRT-LLM one, which turns the fusion off.
    let runner_keeps = !UNFUSED_RUNNERS.contains(&runner.as_str())
        && (runner != "auto" || majors.iter().all(|&m| m != 10));
    let gpus_fuse = !majors.is_empty() && majors.iter().all(|&m| m >= 8);
    !off && ctx.server.parallel.ep <= 1 && ctx.moe_a2a().is_none() && runner_keeps && gpus_fuse
}

/// QUANT021: GLM-5's shared expert fused into the NVFP4 routed experts while the checkpoint
/// keeps it in BF16: the fused loader copies a 16-bit weight into a packed FP4 slot.
pub(crate) fn nvfp4_shared_expert_fusion(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx.model else {
        return vec![];
    };
    let glm5 = m.architecture.as_deref() == Some("GlmMoeDsaForCausalLM")
        && m.num_experts == Some(256)
        && m.n_shared_experts == Some(1);
    let nvfp4 = ctx.quant().as_deref() == Some("modelopt_fp4");
    let moe_layers = (
        m.first_k_dense_replace.unwrap_or(0),
        m.num_hidden_layers.unwrap_or(u64::MAX),
    );
    let excluded = m
        .quant_ignored
        .iter()
        .find(|e| excludes_shared_expert(e, moe_layers));
    let window = at_least(ctx.version, "0.5.9") && !at_least(ctx.version, "0.5.21");
    let Some(entry) = excluded.filter(|_| glm5 && nvfp4 && window && fusion_kept(ctx)) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "GlmMoeDsaForCausalLM with ModelOpt NVFP4 experts whose shared expert the checkpoint leaves in BF16 (exclude_modules: {entry}): SGLang {} fuses the shared expert into the routed experts' packed FP4 weights and stops loading them ('The size of tensor a (3072) must match the size of tensor b (6144)'); added --disable-shared-experts-fusion, as 0.5.21 does by itself",
        ctx.version
    ))
    .with_fix(add_flag(opt::DISABLE_SHARED_EXPERTS_FUSION))]
}

#[cfg(test)]
mod tests {
    use super::excludes_shared_expert;

    #[test]
    fn shared_expert_entries_of_moe_layers_count() {
        let moe = (3, 78);
        assert!(excludes_shared_expert(
            "model.layers.10.mlp.shared_experts*",
            moe
        ));
        assert!(excludes_shared_expert("*.mlp.shared_expert.*", moe));
        // A dense layer's, an MTP layer's and the gate are not the fused weights.
        assert!(!excludes_shared_expert(
            "model.layers.1.mlp.shared_experts*",
            moe
        ));
        assert!(!excludes_shared_expert(
            "model.layers.78.mlp.shared_experts*",
            moe
        ));
        assert!(!excludes_shared_expert("*.shared_expert_gate", moe));
        assert!(!excludes_shared_expert("model.layers.10.self_attn*", moe));
    }
}
