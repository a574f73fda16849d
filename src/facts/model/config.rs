//! config.json read the way SGLang reads it: the text model's fields first, then the top level.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::quant::{block_size, ignored_layers, kv_cache_fp8, weight_bits};
use super::{ModelFacts, WeightSource};

/// Facts from an already-parsed config.json object (no files, no arguments).
pub fn facts_from_config(obj: &Map<String, Value>) -> ModelFacts {
    let c = Config::new(obj);
    let (top, u, s) = (c.top, |k: &str| c.u(k), |k: &str| c.s(k));
    let quant = top
        .get("quantization_config")
        .or_else(|| c.text.get("quantization_config"))
        .and_then(Value::as_object);
    let layers = u("num_hidden_layers");
    let sliding_window = u("sliding_window").or_else(|| u("attention_chunk_size"));
    let vision = top.get("vision_config").and_then(Value::as_object);
    let linear_state = super::hybrid::read(top);
    let quant_method = quant
        .and_then(|q| q.get("quant_method"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    ModelFacts {
        dir: PathBuf::new(),
        architecture: top
            .get("architectures")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_owned),
        model_type: s("model_type"),
        num_hidden_layers: layers,
        hidden_size: u("hidden_size"),
        num_attention_heads: u("num_attention_heads"),
        num_key_value_heads: u("num_key_value_heads").or_else(|| u("num_attention_heads")),
        head_dim: u("head_dim"),
        kv_lora_rank: u("kv_lora_rank"),
        qk_rope_head_dim: u("qk_rope_head_dim"),
        vocab_size: u("vocab_size"),
        max_position_embeddings: u("max_position_embeddings"),
        num_experts: u("num_experts")
            .or_else(|| u("n_routed_experts"))
            .or_else(|| u("num_local_experts")),
        num_experts_per_tok: u("num_experts_per_tok").or_else(|| u("experts_per_token")),
        dtype: s("torch_dtype").or_else(|| s("dtype")),
        checkpoint_quant_method: quant_method.clone(),
        quant_method,
        weight_bytes: None,
        weight_source: WeightSource::Estimate,
        intermediate_size: u("intermediate_size"),
        moe_intermediate_size: u("moe_intermediate_size"),
        n_shared_experts: u("n_shared_experts"),
        first_k_dense_replace: u("first_k_dense_replace"),
        moe_layer_step: u("interleave_moe_layer_step").filter(|&s| s > 0),
        dense_intermediate_size: u("intermediate_size_mlp"),
        qk_nope_head_dim: u("qk_nope_head_dim"),
        v_head_dim: u("v_head_dim"),
        q_lora_rank: u("q_lora_rank"),
        tie_word_embeddings: c
            .text
            .get("tie_word_embeddings")
            .or_else(|| top.get("tie_word_embeddings"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        num_nextn_predict_layers: u("num_nextn_predict_layers"),
        sliding_window,
        num_sliding_layers: c.sliding_layers(layers, sliding_window),
        num_full_attention_layers: c
            .full_attention_layers(layers)
            .or(linear_state.map(|s| s.attention_layers)),
        index_head_dim: u("index_head_dim"),
        weight_bits: quant.and_then(weight_bits),
        weight_block_size: quant.and_then(block_size),
        quant_ignored: quant.map(ignored_layers).unwrap_or_default(),
        shared_expert_intermediate_size: u("shared_expert_intermediate_size"),
        kv_cache_fp8: quant.is_some_and(kv_cache_fp8),
        is_multimodal: vision.is_some(),
        vision_layers: vision
            .and_then(|v| v.get("num_hidden_layers"))
            .and_then(Value::as_u64),
        vision_hidden_size: vision
            .and_then(|v| v.get("hidden_size"))
            .and_then(Value::as_u64),
        context_length: None,
        kv_cache_dtype: "auto".into(),
        linear_state,
        encoders: super::encoder::read(top, u("hidden_size")),
        online_quant_load_bytes: None,
    }
}

/// A config.json object, read the way SGLang reads model configs: multimodal configs keep the
/// language model's fields under `text_config`, which wins over the top level.
struct Config<'a> {
    top: &'a Map<String, Value>,
    /// `text_config` when there is one, else the top level.
    text: &'a Map<String, Value>,
}

impl<'a> Config<'a> {
    fn new(top: &'a Map<String, Value>) -> Self {
        let text = match top.get("text_config") {
            Some(Value::Object(t)) => t,
            _ => top,
        };
        Config { top, text }
    }

    /// A whole number from the text model's fields, else the top level's.
    fn u(&self, k: &str) -> Option<u64> {
        self.text
            .get(k)
            .and_then(Value::as_u64)
            .or_else(|| self.top.get(k).and_then(Value::as_u64))
    }

    /// A string from the text model's fields, else the top level's.
    fn s(&self, k: &str) -> Option<String> {
        self.text
            .get(k)
            .and_then(Value::as_str)
            .or_else(|| self.top.get(k).and_then(Value::as_str))
            .map(str::to_owned)
    }

    fn layer_types(&self) -> Option<&'a Vec<Value>> {
        self.text.get("layer_types").and_then(Value::as_array)
    }

    /// Sliding-window layers: explicit `layer_types`, else Gemma-3's 5:1 pattern.
    fn sliding_layers(&self, layers: Option<u64>, sliding_window: Option<u64>) -> Option<u64> {
        match self.layer_types() {
            Some(types) => Some(
                types
                    .iter()
                    .filter(|t| {
                        t.as_str()
                            .is_some_and(|t| t.contains("sliding") || t.contains("chunked"))
                    })
                    .count() as u64,
            ),
            None => {
                let mt = self.s("model_type").unwrap_or_default();
                if mt.starts_with("gemma3") && sliding_window.is_some() {
                    let pattern = self.u("sliding_window_pattern").unwrap_or(6).max(1);
                    layers.map(|l| l - l / pattern)
                } else {
                    None
                }
            }
        }
    }

    /// Hybrids' KV-cache layers: explicit layer types, else Qwen3-Next's
    /// `full_attention_interval`.
    fn full_attention_layers(&self, layers: Option<u64>) -> Option<u64> {
        match self.layer_types() {
            Some(types)
                if types.iter().any(|t| {
                    t.as_str()
                        .is_some_and(|t| t.contains("linear") || t.contains("mamba"))
                }) =>
            {
                Some(
                    types
                        .iter()
                        .filter(|t| {
                            t.as_str()
                                .is_some_and(|t| t.contains("full") || t == "attention")
                        })
                        .count() as u64,
                )
            }
            _ => self
                .u("full_attention_interval")
                .filter(|&i| i > 0)
                .and_then(|i| layers.map(|l| l / i)),
        }
    }
}
