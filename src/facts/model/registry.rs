//! What SGLang's model registry looks a checkpoint up by: config.json's top-level
//! `architectures` (after `--json-model-override-args`, which SGLang applies to the config before
//! the lookup), its `model_type`, and whether its `auto_map` names an `AutoModel` (the custom
//! class SGLang's Transformers fallback may load).

use serde_json::{Map, Value};

/// The registry's keys for one checkpoint. Empty `architectures`: config.json names none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegistryKeys {
    /// Every name in `architectures`, in order (SGLang takes the first one its registry has).
    pub architectures: Vec<String>,
    /// The top-level `model_type` (a multimodal config's own, not its text model's).
    pub model_type: Option<String>,
    /// `auto_map` has an `AutoModel` entry.
    pub auto_model: bool,
    /// `auto_map` has an `AutoConfig` entry: the checkpoint's own configuration code, which
    /// transformers runs for a model type it does not map when the code is trusted.
    pub auto_config: bool,
}

/// Bounds on what is kept: a config is user input, and a real one names one or two classes.
const MAX_NAMES: usize = 16;
const MAX_NAME_LEN: usize = 200;

pub(crate) fn read(top: &Map<String, Value>) -> RegistryKeys {
    let short = |s: &&str| s.len() <= MAX_NAME_LEN;
    let architectures = match top.get("architectures") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .filter(short)
            .take(MAX_NAMES)
            .map(str::to_owned)
            .collect(),
        // transformers keeps a lone string as given, and SGLang's registry takes it as a list of one.
        Some(Value::String(s)) if short(&s.as_str()) => vec![s.clone()],
        _ => Vec::new(),
    };
    let auto_map = |key: &str| {
        top.get("auto_map")
            .and_then(Value::as_object)
            .is_some_and(|m| m.contains_key(key))
    };
    RegistryKeys {
        architectures,
        model_type: top
            .get("model_type")
            .and_then(Value::as_str)
            .filter(short)
            .map(str::to_owned),
        auto_model: auto_map("AutoModel"),
        auto_config: auto_map("AutoConfig"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(v: Value) -> RegistryKeys {
        read(v.as_object().unwrap())
    }

    #[test]
    fn reads_the_top_level_names() {
        let k = keys(json!({
            "architectures": ["DeciLMForCausalLM", 3, "X"],
            "model_type": "nemotron-nas",
            "auto_map": {"AutoConfig": "configuration_decilm.DeciLMConfig",
                         "AutoModelForCausalLM": "modeling_decilm.DeciLMForCausalLM"},
            "text_config": {"architectures": ["Inner"]},
        }));
        assert_eq!(k.architectures, ["DeciLMForCausalLM", "X"]);
        assert_eq!(k.model_type.as_deref(), Some("nemotron-nas"));
        assert!(!k.auto_model);
        assert!(k.auto_config);
        assert!(!keys(json!({"auto_map": {"AutoModel": "m.C"}})).auto_config);
        assert!(keys(json!({"auto_map": {"AutoModel": "m.C"}})).auto_model);
        assert_eq!(keys(json!({"architectures": "A"})).architectures, ["A"]);
        assert!(
            keys(json!({"architectures": null}))
                .architectures
                .is_empty()
        );
        let many: Vec<String> = (0..100).map(|i| format!("A{i}")).collect();
        assert_eq!(
            keys(json!({ "architectures": many })).architectures.len(),
            MAX_NAMES
        );
    }
}
