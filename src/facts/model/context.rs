//! The context length SGLang derives from the language model's config: the first of its
//! context keys, times the RoPE scaling factor it counts.

use serde_json::{Map, Value};

use crate::sglang::release;

/// The transformers major version SGLang reads configs with: its RoPE handling differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transformers {
    /// `rope_scaling` as config.json gives it.
    V4,
    /// `rope_scaling` is `rope_parameters`: per layer type for some models, and for llama3 /
    /// yarn / longrope always carrying `original_max_position_embeddings`.
    V5,
}

impl Transformers {
    /// SGLang pins transformers 4.x up to 0.5.9 and 5.x from 0.5.10rc0.
    pub(crate) fn for_sglang(release: &str) -> Self {
        if release::cmp(release, "0.5.10rc0").is_lt() {
            Transformers::V4
        } else {
            Transformers::V5
        }
    }
}

/// SGLang's context-length keys, in its order of preference.
const CONTEXT_KEYS: [&str; 5] = [
    "max_sequence_length",
    "seq_length",
    "max_seq_len",
    "model_max_length",
    "max_position_embeddings",
];

/// SGLang's fallback when the config names no context length.
const NO_CONTEXT_KEY: u64 = 2048;

/// The derived context length (what `--context-length` may not exceed without
/// SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN on releases that refuse it), from the language
/// model's values (SGLang reads these keys from it alone); `nested`: the model type keeps RoPE
/// per layer type.
pub(super) fn derived_context_length<'v>(
    text: impl Fn(&str) -> Option<&'v Value>,
    nested: bool,
    t: Transformers,
) -> u64 {
    let factor = rope_factor(rope(&text, t), nested, t);
    CONTEXT_KEYS
        .iter()
        .find_map(|k| text(k).and_then(Value::as_f64))
        .map(|v| (factor * v).max(0.0).min(u64::MAX as f64) as u64)
        .unwrap_or(NO_CONTEXT_KEY)
}

/// The length a RoPE scaling with its original window reaches (`original_max_position_embeddings`
/// × `factor`, a factor above 1): SGLang counts the config's maximum, not this, yet the model
/// attends this far.
pub(super) fn rope_scaled_length<'v>(
    text: impl Fn(&str) -> Option<&'v Value>,
    t: Transformers,
) -> Option<u64> {
    let r = rope(&text, t)?;
    let original = r.get("original_max_position_embeddings")?.as_f64()?;
    let factor = r
        .get("factor")?
        .as_f64()
        .filter(|f| f.is_finite() && *f > 1.0)?;
    Some((original * factor).clamp(0.0, u64::MAX as f64) as u64)
}

/// The RoPE dictionary SGLang sees as `rope_scaling`.
fn rope<'v>(
    text: &impl Fn(&str) -> Option<&'v Value>,
    t: Transformers,
) -> Option<&'v Map<String, Value>> {
    let get = |k: &str| text(k).and_then(Value::as_object);
    match t {
        Transformers::V4 => get("rope_scaling"),
        Transformers::V5 => get("rope_scaling").or_else(|| get("rope_parameters")),
    }
}

/// The factor SGLang multiplies the context length by: the scaling `factor`, except where the
/// dictionary says the config's maximum already is the scaled one.
fn rope_factor(rope: Option<&Map<String, Value>>, nested: bool, t: Transformers) -> f64 {
    let Some(r) = rope.filter(|r| !r.is_empty()) else {
        return 1.0;
    };
    let kind = r
        .get("rope_type")
        .or_else(|| r.get("type"))
        .and_then(Value::as_str);
    let per_layer = nested || r.values().all(Value::is_object);
    let keeps_original = matches!(kind, Some("llama3" | "yarn" | "longrope"));
    let one = match t {
        Transformers::V5 => per_layer || keeps_original,
        Transformers::V4 => false,
    };
    if one || r.contains_key("original_max_position_embeddings") || kind == Some("llama3") {
        return 1.0;
    }
    r.get("factor")
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite())
        .unwrap_or(1.0)
}
