//! Quantisation methods and schemes whose kernels the older releases import from vLLM, which
//! their CUDA dependencies leave out: with the install read and no vLLM in it, the loader stops
//! on every GPU before a weight is read.

use super::*;
use crate::facts::model::quant::CompressedScheme;

/// The install SGLang runs from was read, holds SGLang, and holds no vLLM. Only an install that
/// was read says vLLM is missing.
fn vllm_missing(ctx: &Context) -> bool {
    ctx.packages
        .is_some_and(|p| p.get("sglang").is_some() && p.get("vllm").is_none())
}

/// QUANT027: an AWQ or GPTQ checkpoint on a release that loads both methods from vLLM, with the
/// install read and no vLLM in it: the loader stops before a weight is read, on every GPU. The
/// catalogue's range is the releases the goldens record it for (0.4.5.post3 to 0.5.0rc1).
pub(crate) fn int4_without_vllm(ctx: &Context) -> Vec<Fired> {
    let v = ctx.version;
    let int4 = ["awq", "awq_marlin", "gptq", "gptq_marlin"];
    let Some(q) = ctx
        .quant()
        .filter(|q| vllm_missing(ctx) && int4.contains(&q.as_str()))
    else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{} {q}: SGLang {v} loads AWQ and GPTQ with vLLM's kernels, and vllm is not installed for \
         the interpreter SGLang runs, so its loader stops on every GPU before a weight is \
         read (an error naming vllm, or a NameError for the import it lacks); install the vllm \
         release SGLang {v} names, or run SGLang 0.5.0rc2 or later, which has its own AWQ and \
         GPTQ kernels",
        super::quant::source(ctx)
    ))]
}

/// QUANT028: a compressed-tensors checkpoint whose scheme the release builds from vLLM's
/// kernels (0.4.5.post3 to 0.5.3.post2): integer or FP8 weight-only layers anywhere, and FP8
/// W8A8 layers below compute capability 8.9, where the release runs them weight-only.
pub(crate) fn compressed_without_vllm(ctx: &Context) -> Vec<Fired> {
    let Some(m) = super::quant_ct::compressed_model(ctx).filter(|_| vllm_missing(ctx)) else {
        return vec![];
    };
    let schemes = m.compressed_schemes.as_slice();
    let v = ctx.version;
    let has = |s: CompressedScheme| schemes.contains(&s);
    // (the GPUs it names first, what the checkpoint holds, where building it stops)
    // FP4 weight-only groups pass the same weight-only test.
    let wna16 = has(CompressedScheme::Wna16) || has(CompressedScheme::Fp4WeightOnlyGroup);
    let (gpus, what, on) = if wna16 {
        // SGLang's WNA16 test also takes FP8 weights per channel: the word "integer" would be loose.
        (String::new(), "weight-only (WNA16) layers", "every GPU")
    } else if has(CompressedScheme::Fp8WeightOnly) {
        (String::new(), "FP8 weight-only layers", "every GPU")
    } else {
        let old = ctx.gpus_where(|cc| cc < (8, 9));
        if !has(CompressedScheme::Fp8W8a8) || old.is_empty() {
            return vec![];
        }
        let what = "FP8 W8A8 layers, run weight-only below compute capability 8.9";
        (format!("{}; ", Context::describe(&old)), what, "these GPUs")
    };
    vec![Fired::new(format!(
        "{gpus}a compressed-tensors checkpoint with {what}: SGLang {v} builds that scheme from \
         vLLM's kernels, and vllm is not installed for the interpreter SGLang runs, so building \
         the model stops on {on} before a weight is read ('vllm is not installed, to use …'); \
         install the vllm release SGLang {v} names, or run SGLang 0.5.4 or later, which has its \
         own kernels for these schemes"
    ))]
}
