//! Nemotron-H's latent MoE projections under ModelOpt FP8 (0.5.8).

use super::*;

/// QUANT041: 0.5.8 builds Nemotron-H's latent MoE projections as replicated linear layers with
/// the checkpoint's quantisation, and the replicated layer hands its method the sizes by
/// position; ModelOpt's FP8 linear method takes them by keyword only until 0.5.9.
pub(crate) fn latent_modelopt_fp8(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx.model else {
        return vec![];
    };
    let latent = m.nemotron_h.is_some_and(|l| l.latent && l.kinds.moe > 0);
    // A projection the export leaves unquantised gets the unquantised method.
    let skipped = (m.quant_ignored.iter()).any(|p| p.contains("latent_proj"));
    if !latent || skipped || ctx.quant().as_deref() != Some("modelopt_fp8") {
        return vec![];
    }
    vec![Fired::new(format!(
        "ModelOpt FP8 on a Nemotron-H latent MoE (moe_latent_size): SGLang {} builds the latent projections (fc1_latent_proj, fc2_latent_proj) as replicated layers that pass their sizes to ModelOpt's FP8 linear method by position, which it does not take, so building the model stops ('TypeError: ModelOptFp8LinearMethod.create_weights() takes 5 positional arguments but 7 were given'); use SGLang 0.5.9 or later",
        ctx.version
    ))]
}
