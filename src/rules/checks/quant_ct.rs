//! compressed-tensors schemes a release cannot build while it builds the model: NVFP4 (none
//! before 0.5.7, and below compute capability 10.0 until 0.5.22 added a weight-only fallback),
//! asymmetric integer weights (none before 0.5.13), and the schemes that ask for 8.0.

use super::*;
use crate::facts::model::ModelFacts;
use crate::facts::model::quant::CompressedScheme;
use crate::sglang::release::at_least;

/// The model, when SGLang loads it with its compressed-tensors method.
pub(super) fn compressed_model<'c>(ctx: &Context<'c>) -> Option<&'c ModelFacts> {
    ctx.model
        .filter(|_| ctx.quant().as_deref() == Some("compressed-tensors"))
}

/// An MoE export that leaves attention unquantised: its first quantised layer may be an expert.
fn experts_only(m: &ModelFacts) -> bool {
    m.attention_unquantised && m.num_experts.is_some_and(|e| e > 1)
}

/// The first release with a compressed-tensors NVFP4 scheme.
const SCHEME_FROM: &str = "0.5.7";

/// QUANT029: a compressed-tensors NVFP4 checkpoint that building the model stops on.
pub(crate) fn ct_nvfp4_unbuildable(ctx: &Context) -> Vec<Fired> {
    let Some(m) =
        compressed_model(ctx).filter(|m| m.compressed_schemes.contains(&CompressedScheme::Nvfp4))
    else {
        return vec![];
    };
    let v = ctx.version;
    // Attention is built first; an MoE export that leaves it out meets its experts' scheme.
    let experts_first = experts_only(m);
    if !at_least(v, SCHEME_FROM) {
        let error = if experts_first {
            "'Unsupported FusedMoe scheme' from the experts"
        } else {
            "'No compressed-tensors compatible scheme was found'"
        };
        return vec![Fired::new(format!(
            "a compressed-tensors NVFP4 checkpoint: SGLang {v} has no compressed-tensors scheme for \
             NVFP4 ({SCHEME_FROM} brings one), so building the model stops on every GPU before a \
             weight is read ({error}, or with a compressed-tensors before 0.10 a validation error \
             on 'tensor_group'); run SGLang {SCHEME_FROM} or later on Blackwell, or a ModelOpt \
             NVFP4 export of the model"
        ))];
    }
    // Both NVFP4 schemes, the linear layers' and the experts', ask for Blackwell.
    let old = ctx.gpus_where(|cc| cc < (10, 0));
    if old.is_empty() {
        return vec![];
    }
    let error = if experts_first {
        "'Current platform does not support NVFP4 quantization' from the experts"
    } else {
        "'Current platform does not support w4a4 nvfp4 quantization'"
    };
    vec![Fired::new(format!(
        "{}; a compressed-tensors NVFP4 checkpoint: SGLang {v}'s NVFP4 schemes need compute \
         capability 10.0 and have no weight-only fallback, so building the model stops before a \
         weight is read ({error}); use Blackwell GPUs, SGLang 0.5.22 or later (FP4 Marlin, \
         weight-only), or a BF16 or FP8 checkpoint",
        Context::describe(&old)
    ))]
}

/// QUANT030: asymmetric integer weight-only groups (zero points) before 0.5.13, whose scheme
/// test asks for symmetric weights: the first quantised layer stops the build on every GPU.
pub(crate) fn ct_asymmetric_unbuildable(ctx: &Context) -> Vec<Fired> {
    let asymmetric = compressed_model(ctx)
        .is_some_and(|m| m.compressed_schemes.contains(&CompressedScheme::Wna16Asym));
    if !asymmetric {
        return vec![];
    }
    vec![Fired::new(format!(
        "a compressed-tensors checkpoint with asymmetric integer weights (zero points, the \
         W4A16_ASYM preset or an AWQ export): SGLang {} takes weight-only integer groups as \
         symmetric only, so building the model stops on every GPU before a weight is read ('No \
         compressed-tensors compatible scheme was found'); run SGLang 0.5.13 or later, or a \
         symmetric (W4A16), AWQ or GPTQ checkpoint of the model",
        ctx.version
    ))]
}

/// QUANT031: compressed-tensors' weight-only, FP8 and (from 0.5.7) INT8 schemes declare compute
/// capability 8.0, which the config checks for each layer as it builds the model.
pub(crate) fn ct_below_ampere(ctx: &Context) -> Vec<Fired> {
    use CompressedScheme::*;
    // Only the linear schemes are checked; an MoE export that leaves attention unquantised
    // may quantise nothing but the experts, whose methods these releases do not gate.
    let Some(m) = compressed_model(ctx).filter(|m| !experts_only(m)) else {
        return vec![];
    };
    // Before 0.5.7 INT8 asks for 8.9: QUANT019's.
    let int8 = m.compressed_w8a8_int8 && at_least(ctx.version, "0.5.7");
    let eighty = [Wna16, Fp8W8a8, Fp8WeightOnly];
    let old = ctx.gpus_where(|cc| cc < (8, 0));
    if old.is_empty() || !(int8 || m.compressed_schemes.iter().any(|s| eighty.contains(s))) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; a compressed-tensors checkpoint: SGLang {}'s scheme for its layers asks for compute \
         capability 8.0, so building the model stops before a weight is read ('Quantization scheme \
         is not supported for the current GPU. Min capability: 80'); use GPUs of compute \
         capability 8.0 or newer, or a GGUF, AWQ or GPTQ checkpoint",
        Context::describe(&old),
        ctx.version
    ))]
}
