//! The SGLang arguments that change a model's facts.

use crate::sglang::opt;
use serde_json::{Map, Value};

use super::ModelFacts;
use crate::sglang::SglangArgs;

/// `--context-length`, `--kv-cache-dtype`, `--quantization`, `--dtype`.
pub(super) fn apply_args(f: &mut ModelFacts, args: &SglangArgs) {
    f.context_length = args
        .int(opt::CONTEXT_LENGTH)
        .filter(|&c| c > 0)
        .map(|c| c as u64)
        .or(f.derived_context_length);
    if let Some(k) = args.str(opt::KV_CACHE_DTYPE) {
        f.kv_cache_dtype = k.to_owned();
    }
    if let Some(q) = args.str(opt::QUANTIZATION) {
        f.quant_method = Some(q.to_owned());
        if f.weight_bits.is_none() {
            f.weight_bits = match q {
                "fp8" | "w8a8_fp8" | "modelopt_fp8" | "w8a8_int8" | "qoq" => Some(8),
                "awq" | "awq_marlin" | "gptq" | "gptq_marlin" | "modelopt_fp4" | "mxfp4"
                | "w4afp8" => Some(4),
                _ => None,
            };
        }
    }
    match args.str(opt::DTYPE) {
        Some("auto") | None => f.dtype = auto_dtype(f),
        Some("half") | Some("float16") => f.dtype = Some("float16".into()),
        Some("float") | Some("float32") => f.dtype = Some("float32".into()),
        Some(d) => f.dtype = Some(d.to_owned()),
    }
}

/// What `--dtype auto` runs a model in: the config's dtype, except that SGLang casts a float32
/// checkpoint down rather than serve it in float32.
fn auto_dtype(f: &ModelFacts) -> Option<String> {
    match f.dtype.as_deref() {
        Some("float32" | "float") => Some(float32_served_as(f.model_type.as_deref()).into()),
        _ => f.dtype.clone(),
    }
}

/// The dtype `--dtype auto` gives a float32 (or dtype-less) config: float16, bfloat16 for Gemma.
pub(crate) fn float32_served_as(model_type: Option<&str>) -> &'static str {
    if model_type.is_some_and(|t| t.starts_with("gemma")) {
        "bfloat16"
    } else {
        "float16"
    }
}

/// Merge `--json-model-override-args` into the config (and its text_config, as SGLang's does for VLMs).
pub(super) fn merge_override(config: &mut Value, over: &Map<String, Value>) {
    if let Value::Object(c) = config {
        for (k, v) in over {
            c.insert(k.clone(), v.clone());
        }
        if let Some(Value::Object(t)) = c.get_mut("text_config") {
            for (k, v) in over {
                if t.contains_key(k) {
                    t.insert(k.clone(), v.clone());
                }
            }
        }
    }
}
