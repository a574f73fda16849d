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

/// The first release with a weight-only NVFP4 scheme (FP4 Marlin).
const NVFP4_A16_FROM: &str = "0.5.22";

/// QUANT031: compressed-tensors' weight-only, FP8, (from 0.5.7) INT8 and (from 0.5.22) NVFP4
/// weight-only schemes declare compute capability 8.0, which the config checks for each layer
/// as it builds the model.
pub(crate) fn ct_below_ampere(ctx: &Context) -> Vec<Fired> {
    use CompressedScheme::*;
    // Only the linear schemes are checked; an MoE export that leaves attention unquantised
    // may quantise nothing but the experts, whose methods these releases do not gate.
    let Some(m) = compressed_model(ctx).filter(|m| !experts_only(m)) else {
        return vec![];
    };
    // Before 0.5.7 INT8 asks for 8.9: QUANT019's.
    let int8 = m.compressed_w8a8_int8 && at_least(ctx.version, "0.5.7");
    let nvfp4_a16 =
        m.compressed_schemes.contains(&Nvfp4WeightOnly) && at_least(ctx.version, NVFP4_A16_FROM);
    let eighty = [Wna16, Fp8W8a8, Fp8WeightOnly];
    let old = ctx.gpus_where(|cc| cc < (8, 0));
    let gated = int8 || nvfp4_a16 || m.compressed_schemes.iter().any(|s| eighty.contains(s));
    if old.is_empty() || !gated {
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

/// The first release whose experts take FP4 weight-only groups (MXFP4A16).
const FP4_GROUP_EXPERTS_FROM: &str = "0.5.17";

/// QUANT039: FP4 weights with activations left unquantised, which the release has no scheme
/// for: NVFP4A16 before 0.5.22; FP4 groups (MXFP4A16) in any linear layer, and in the experts
/// before they take them. The first quantised layer stops the build on every GPU.
pub(crate) fn ct_fp4_weight_only_unbuildable(ctx: &Context) -> Vec<Fired> {
    use CompressedScheme::*;
    let Some(m) = compressed_model(ctx) else {
        return vec![];
    };
    let v = ctx.version;
    let experts_first = experts_only(m);
    let has = |s: CompressedScheme| m.compressed_schemes.contains(&s);
    // (what the checkpoint holds, where building it stops, the first release that builds it)
    let (what, error, from) = if has(Nvfp4WeightOnly) && !at_least(v, NVFP4_A16_FROM) {
        // From 0.5.7 the linear W8A8 test reads the absent activation settings; the experts'
        // scheme does so later.
        let error = match (experts_first, at_least(v, "0.5.7")) {
            (false, false) => "'No compressed-tensors compatible scheme was found'",
            (false, true) => "an AttributeError on the activation settings it lacks",
            (true, _) => {
                "'Unsupported FusedMoe scheme', or an AttributeError on the activation settings \
                 it lacks"
            }
        };
        (
            "NVFP4 weight-only layers (NVFP4A16)",
            error,
            Some(NVFP4_A16_FROM),
        )
    } else if has(Fp4WeightOnlyGroup) && !experts_first {
        let error = if at_least(v, NVFP4_A16_FROM) {
            "'No compressed-tensors compatible scheme was found'"
        } else {
            "'Other method (CompressedTensorsW4A16Sparse24) is not supported now'"
        };
        (
            "FP4 weight-only groups (MXFP4A16) in its linear layers",
            error,
            None,
        )
    } else if has(Fp4WeightOnlyGroup) && !at_least(v, FP4_GROUP_EXPERTS_FROM) {
        let error = "'For Fused MoE layers, only pack-quantized is supported'";
        let what = "FP4 weight-only groups (MXFP4A16) in its experts";
        (what, error, Some(FP4_GROUP_EXPERTS_FROM))
    } else {
        return vec![];
    };
    let upgrade = from.map_or(String::new(), |r| format!("run SGLang {r} or later, or "));
    vec![Fired::new(format!(
        "a compressed-tensors checkpoint with {what}: SGLang {v} has no scheme for them, so \
         building the model stops on every GPU before a weight is read ({error}); {upgrade}use \
         an NVFP4 (W4A4), FP8 or BF16 checkpoint of the model"
    ))]
}
