//! The context length SGLang derives from the language model's config: the first of its
//! context keys, times the RoPE scaling factor it counts.

use serde_json::{Map, Value};

use super::config::Config;
use crate::sglang::version;

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
    pub fn for_sglang(release: &str) -> Self {
        if version::cmp(release, "0.5.10rc0").is_lt() {
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
/// SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN on releases that refuse it).
pub(super) fn derived_context_length(c: &Config, t: Transformers) -> u64 {
    let text = c.text();
    let nested = text.defaults().is_some_and(|d| d.nested_rope);
    let factor = rope_factor(rope(c, t), nested, t);
    CONTEXT_KEYS
        .iter()
        .find_map(|k| text_number(c, k))
        .map(|v| (factor * v).max(0.0).min(u64::MAX as f64) as u64)
        .unwrap_or(NO_CONTEXT_KEY)
}

/// SGLang reads the context keys from the language model's config alone.
fn text_number(c: &Config, key: &str) -> Option<f64> {
    c.text_value(key).and_then(Value::as_f64)
}

/// The RoPE dictionary SGLang sees as `rope_scaling`.
fn rope<'c>(c: &'c Config, t: Transformers) -> Option<&'c Map<String, Value>> {
    let get = |k: &str| c.text_value(k).and_then(Value::as_object);
    match t {
        Transformers::V4 => get("rope_scaling"),
        Transformers::V5 => get("rope_scaling").or_else(|| get("rope_parameters")),
    }
}

/// The factor SGLang multiplies the context length by: the scaling `factor`, except where the
/// dictionary says the config's maximum already is the scaled one.
pub(super) fn rope_factor(rope: Option<&Map<String, Value>>, nested: bool, t: Transformers) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn derived(config: Value, t: Transformers) -> u64 {
        let c = Config::new(config.as_object().unwrap());
        derived_context_length(&c, t)
    }

    #[test]
    fn rope_scaling_rules_follow_sglang() {
        use Transformers::*;
        let base = |rope: Value| json!({"model_type": "llama", "max_position_embeddings": 32768,
            "rope_scaling": rope});
        // yarn with the pre-scaling maximum: the config's maximum is already the scaled one.
        let yarn = json!({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192});
        assert_eq!(derived(base(yarn.clone()), V4), 32768);
        assert_eq!(derived(base(yarn), V5), 32768);
        // yarn without it: transformers 4 leaves it out, so SGLang scales; 5 fills it in.
        let bare = json!({"type": "yarn", "factor": 4.0});
        assert_eq!(derived(base(bare.clone()), V4), 131072);
        assert_eq!(derived(base(bare), V5), 32768);
        let llama3 = json!({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0});
        assert_eq!(derived(base(llama3.clone()), V4), 32768);
        assert_eq!(derived(base(llama3), V5), 32768);
        let linear = json!({"rope_type": "linear", "factor": 2.5});
        assert_eq!(derived(base(linear.clone()), V4), 81920);
        assert_eq!(derived(base(linear), V5), 81920);
        assert_eq!(derived(base(json!({})), V4), 32768);
        assert_eq!(derived(base(Value::Null), V5), 32768);
    }

    #[test]
    fn keys_in_sglang_order_then_the_fallback() {
        let c = json!({"model_type": "no_such_type", "seq_length": 4096, "max_position_embeddings": 8192});
        assert_eq!(derived(c, Transformers::V5), 4096);
        let none = json!({"model_type": "no_such_type"});
        assert_eq!(derived(none, Transformers::V5), 2048);
        // transformers' default for the type when the config is silent.
        let llama = json!({"model_type": "llama"});
        assert_eq!(derived(llama, Transformers::V5), 2048);
        let mistral = json!({"model_type": "mistral"});
        assert_eq!(derived(mistral, Transformers::V5), 131072);
    }

    #[test]
    fn gemma3_per_layer_rope_is_unscaled_from_transformers_5() {
        let gemma = json!({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text",
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"}}});
        assert_eq!(derived(gemma.clone(), Transformers::V4), 8 * 131072);
        assert_eq!(derived(gemma, Transformers::V5), 131072);
    }

    #[test]
    fn releases_map_to_their_transformers_pin() {
        assert_eq!(Transformers::for_sglang("0.4.10.post2"), Transformers::V4);
        assert_eq!(Transformers::for_sglang("0.5.9"), Transformers::V4);
        assert_eq!(Transformers::for_sglang("0.5.10rc0"), Transformers::V5);
        assert_eq!(Transformers::for_sglang("0.5.23"), Transformers::V5);
    }
}
