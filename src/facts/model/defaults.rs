//! transformers' configuration defaults per `model_type` (data/model-defaults.json, written by
//! scripts/gen-model-defaults.py). The file keeps one model type per line, so a lookup decodes
//! only the entry it needs.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

const DATA: &str = include_str!("../../../data/model-defaults.json");

/// What transformers' configuration class for one model type does when config.json is silent.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct TypeDefaults {
    /// Constant defaults of the planner's keys, by canonical name.
    #[serde(rename = "d", default)]
    pub(crate) values: Map<String, Value>,
    /// Canonical name → the key config.json spells (gpt2: `num_hidden_layers` → `n_layer`).
    #[serde(rename = "a", default)]
    pub(crate) aliases: BTreeMap<String, String>,
    /// Sub-configs the class builds when config.json has none: attribute → model type.
    #[serde(rename = "s", default)]
    pub(crate) subs: BTreeMap<String, String>,
    /// Keys the class computes from others: their default is not a constant.
    #[serde(rename = "x", default)]
    pub(crate) derived: Vec<String>,
    /// The repeating unit of `layer_types`, when the class builds the list by repetition.
    #[serde(rename = "p", default)]
    pub(crate) layer_unit: Option<Vec<String>>,
    /// `rope_parameters` is kept per layer type.
    #[serde(rename = "n", default)]
    pub(crate) nested_rope: bool,
}

impl TypeDefaults {
    /// The constant default of `key`, if the class has one.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        if self.derived.iter().any(|d| d == key) {
            return None;
        }
        self.values.get(key).filter(|v| !v.is_null())
    }

    /// The key config.json uses for `key` in this model type.
    pub(crate) fn alias(&self, key: &str) -> Option<&str> {
        self.aliases.get(key).map(String::as_str)
    }
}

/// The transformers release the defaults were read from.
pub(crate) fn transformers_version() -> &'static str {
    let first = DATA.lines().next().unwrap_or_default();
    first
        .split('"')
        .nth(3)
        .filter(|_| first.starts_with("{\"transformers\":"))
        .unwrap_or("unknown")
}

/// The defaults of `model_type`, or `None` when transformers has no such model type.
pub(crate) fn lookup(model_type: &str) -> Option<TypeDefaults> {
    let key = serde_json::to_string(model_type).ok()?;
    // One type a line, each line starting with its key: found by one fast substring search.
    let start = memchr::memmem::find(DATA.as_bytes(), format!("\n{key}:").as_bytes())? + 1;
    let line = DATA[start..].lines().next()?;
    let body = line[key.len() + 1..].trim_end_matches(',');
    serde_json::from_str(body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_lookup_equals_the_whole_file_parse() {
        let whole: Value = serde_json::from_str(DATA).unwrap();
        let types = whole["types"].as_object().unwrap();
        assert!(types.len() > 500, "{}", types.len());
        for (mt, entry) in types {
            let parsed: TypeDefaults = serde_json::from_value(entry.clone()).unwrap();
            assert_eq!(lookup(mt).as_ref(), Some(&parsed), "{mt}");
        }
        assert_eq!(whole["transformers"], transformers_version());
    }

    #[test]
    fn known_facts_of_the_pinned_release() {
        // A key is whole, and only the types' keys are keys.
        for not_a_type in ["llam", "transformers", "types", ""] {
            assert_eq!(lookup(not_a_type), None, "{not_a_type}");
        }
        let gpt2 = lookup("gpt2").unwrap();
        assert_eq!(gpt2.alias("num_hidden_layers"), Some("n_layer"));
        assert_eq!(gpt2.get("num_hidden_layers"), Some(&Value::from(12)));
        let llama = lookup("llama").unwrap();
        // Llama derives both from the heads and width it is given.
        assert_eq!(llama.get("head_dim"), None);
        assert_eq!(llama.get("num_key_value_heads"), None);
        assert_eq!(llama.get("vocab_size"), Some(&Value::from(32000)));
        let gemma = lookup("gemma3").unwrap();
        assert_eq!(gemma.subs["text_config"], "gemma3_text");
        let text = lookup("gemma3_text").unwrap();
        assert_eq!(text.get("head_dim"), Some(&Value::from(256)));
        assert!(text.nested_rope);
        assert_eq!(lookup("no_such_type"), None);
        assert_eq!(lookup("llam"), None);
        assert_eq!(transformers_version(), "5.19.0");
    }
}
