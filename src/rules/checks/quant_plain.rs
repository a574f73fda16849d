//! AWQ and GPTQ checkpoints where SGLang's Marlin methods do not take them over: named with
//! `--quantization awq|gptq`, on GPUs below compute capability 8.0, or (GPTQ) a config the
//! Marlin method does not read.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// Methods whose kernels take float16 activations only (AWQ's and GPTQ's own GEMMs; their
/// Marlin methods take bfloat16 too).
const FLOAT16_ONLY: [&str; 2] = ["awq", "gptq"];

/// The first release without plain GPTQ on CUDA: only `gptq_marlin` remains.
const NO_PLAIN_GPTQ_FROM: &str = "0.5.20";

/// Every used GPU is below compute capability 8.0, where no Marlin kernel runs.
fn all_below_marlin<'c>(ctx: &'c Context) -> Option<Vec<&'c crate::facts::Gpu>> {
    let used = ctx.used();
    let old = ctx.gpus_where(|cc| cc < (8, 0));
    (!used.is_empty() && old.len() == used.len()).then_some(old)
}

/// No used GPU is below compute capability 8.0, so Marlin runs on all of them.
pub(super) fn marlin_runs(ctx: &Context) -> bool {
    ctx.gpus_where(|cc| cc < (8, 0)).is_empty()
}

/// The plain AWQ/GPTQ method SGLang loads and why: `--quantization` names it (SGLang then keeps
/// it over its Marlin method), or the checkpoint's on GPUs below 8.0, where Marlin does not run,
/// or a GPTQ config the Marlin method does not take.
pub(super) fn plain_method(ctx: &Context) -> Option<(String, String)> {
    let checkpoint = ctx.model?.config_quant_method.as_deref()?;
    let gone = checkpoint == "gptq" && at_least(ctx.version, NO_PLAIN_GPTQ_FROM);
    if !FLOAT16_ONLY.contains(&checkpoint) || gone {
        return None;
    }
    match ctx.quant_given() {
        // Another method than the checkpoint's is QUANT009's refusal.
        Some(q) if q == checkpoint => {
            let why = format!("{} {q} keeps SGLang's plain {q} method", opt::QUANTIZATION);
            Some((q, why))
        }
        Some(_) => None,
        None => {
            let why = if let Some(old) = all_below_marlin(ctx) {
                format!("on {}, below the 8.0 Marlin needs", Context::describe(&old))
            } else if ctx.model?.gptq_marlin_config == Some(false) {
                "whose quantization_config the Marlin method does not take".to_owned()
            } else if let Some(arch) = sglang_names_method(ctx) {
                format!(
                    "because on SM100 SGLang sets {} to it itself for {arch}, and a method set that way is kept over Marlin",
                    opt::QUANTIZATION
                )
            } else {
                return None;
            };
            let why = format!(
                "the checkpoint's {checkpoint} runs on SGLang's plain {checkpoint} method {why}"
            );
            Some((checkpoint.to_owned(), why))
        }
    }
}

/// The architecture whose SM100 branch copies the checkpoint's method into `--quantization`
/// (every used GPU SM100), when the line names none.
pub(super) fn sglang_names_method<'c>(ctx: &Context<'c>) -> Option<&'c str> {
    let arch = ctx.model?.architecture.as_deref()?;
    let used = ctx.used();
    let sm100 = !used.is_empty() && ctx.gpus_where(|cc| cc.0 == 10).len() == used.len();
    (sm100 && crate::resolve::quant_copy::copies_checkpoint_method(ctx.version, arch))
        .then_some(arch)
}

/// The dtype SGLang runs the model in, and whether `--dtype` named it: `--dtype`, else the
/// config's top-level dtype, where float32 or none becomes float16 (bfloat16 for Gemma).
pub(crate) fn model_dtype(ctx: &Context) -> Option<(&'static str, bool)> {
    let given = ctx.user().str(opt::DTYPE).filter(|d| *d != "auto");
    let named = given.is_some();
    let text = match given {
        Some(d) => d.to_owned(),
        None => ctx.model?.top_dtype.clone().unwrap_or_default(),
    };
    let dtype = match text.as_str() {
        "half" | "float16" => "float16",
        "bfloat16" => "bfloat16",
        "float" | "float32" if named => "float32",
        "" | "float" | "float32" => {
            crate::facts::model::float32_served_as(ctx.model.and_then(|m| m.model_type.as_deref()))
        }
        _ => return None,
    };
    Some((dtype, named))
}

/// QUANT024: plain AWQ or GPTQ with a model dtype other than float16. The catalogue's range
/// starts at 0.5.0rc2, SGLang's own methods; earlier releases import vLLM's.
pub(crate) fn float16_only_method(ctx: &Context) -> Vec<Fired> {
    let Some((method, why)) = plain_method(ctx) else {
        return vec![];
    };
    let Some((dtype, named)) = model_dtype(ctx).filter(|(d, _)| *d != "float16") else {
        return vec![];
    };
    let from = if named {
        opt::DTYPE
    } else {
        "the config's dtype"
    };
    // Dropping --quantization hands the checkpoint to Marlin only where Marlin takes it.
    let marlin_takes = marlin_runs(ctx)
        && ctx
            .model
            .is_some_and(|m| m.gptq_marlin_config != Some(false));
    let marlin = if ctx.quant_given().is_some() && marlin_takes {
        format!(
            ", or drop {} so SGLang picks {method}_marlin, which takes {dtype}",
            opt::QUANTIZATION
        )
    } else if marlin_takes && sglang_names_method(ctx).is_some() {
        format!(
            ", or pass {} {method}_marlin, which SGLang keeps and which takes {dtype}",
            opt::QUANTIZATION
        )
    } else {
        String::new()
    };
    let fired = Fired::new(format!(
        "{why}; that method takes float16 activations only, and the model's dtype is {dtype} ({from}): SGLang {}'s loader refuses it before loading the weights ('torch.{dtype} is not supported for quantization method {method}'); pass --dtype float16{marlin}",
        ctx.version
    ));
    // The user's own --dtype stays theirs; SGLang's reading of the config takes the fix.
    if named {
        vec![fired]
    } else {
        vec![fired.with_fix(set_arg(opt::DTYPE, "float16"))]
    }
}

/// QUANT025: a GPTQ checkpoint Marlin cannot take (GPUs below 8.0, or a config its GPTQ
/// Marlin method does not read) from 0.5.20, which has only that method for GPTQ on CUDA: the
/// model config finds no method for the checkpoint.
pub(crate) fn gptq_without_marlin(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx
        .model
        .filter(|m| m.config_quant_method.as_deref() == Some("gptq"))
    else {
        return vec![];
    };
    if ctx.quant_given().is_some() {
        return vec![];
    }
    let elsewhere = "use SGLang 0.5.19 or older, another checkpoint of the model (AWQ, or GPTQ that Marlin takes), or GPUs of compute capability 8.0 or newer";
    let (why, remedy) = if let Some(old) = all_below_marlin(ctx) {
        let why = format!(
            "its Marlin one needs compute capability 8.0 ({})",
            Context::describe(&old)
        );
        (why, elsewhere.to_owned())
    } else if m.gptq_marlin_config == Some(false) {
        ("its Marlin one takes only symmetric 4- or 8-bit checkpoints with desc_act set and groups of -1, 32, 64 or 128, which this quantization_config is not".to_owned(), elsewhere.to_owned())
    } else if let Some(arch) = sglang_names_method(ctx) {
        let why = format!(
            "on SM100 SGLang sets {} to the checkpoint's gptq itself for {arch}, which Marlin does not take over",
            opt::QUANTIZATION
        );
        let remedy = format!("pass {} gptq_marlin, which SGLang keeps", opt::QUANTIZATION);
        (why, remedy)
    } else {
        return vec![];
    };
    vec![Fired::new(format!(
        "a GPTQ checkpoint: SGLang {} has no plain GPTQ method on CUDA, and {why}, so the model config refuses the checkpoint before loading ('Unknown quantization method: gptq'); {remedy}",
        ctx.version
    ))]
}

/// QUANT042: both GPTQ config readers (plain and Marlin) require `bits`, `group_size` and
/// `desc_act`, and refuse a config without one before a weight is loaded (to 0.5.19; from 0.5.20
/// such a checkpoint is QUANT025's refusal).
pub(crate) fn gptq_config_keys(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx.model.filter(|m| {
        m.config_quant_method.as_deref() == Some("gptq") && !m.gptq_missing_keys.is_empty()
    }) else {
        return vec![];
    };
    let given = ctx.quant_given();
    if !matches!(given.as_deref(), None | Some("gptq" | "gptq_marlin")) {
        return vec![];
    }
    let keys = m.gptq_missing_keys.join("', '");
    vec![Fired::new(format!(
        "a GPTQ checkpoint whose quantization_config has no '{keys}': SGLang {}'s GPTQ config readers require it and stop before loading ('Cannot find any of ['{}'] in the model's quantization config'); add the key the export left out (desc_act is false unless the checkpoint was quantised with activation order), or use another export",
        ctx.version, m.gptq_missing_keys[0]
    ))]
}
