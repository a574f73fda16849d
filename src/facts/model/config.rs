//! config.json read the way transformers builds it and SGLang reads it: the text model's
//! config (with its model type's defaults) first, then the top level (with its defaults).

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::context::{Transformers, derived_context_length, rope_scaled_length};
use super::defaults::{self, TypeDefaults};
use super::plausible::{self, Implausible};
use super::quant::{
    attention_unquantised, block_size, compressed_schemes, compressed_w8a8_int8, format,
    fp4_experts_marked, ignored_layers, kv_cache_fp8, method, nvfp4_moe_hybrid,
    shared_experts_unquantised, weight_bits,
};
use super::{ModelFacts, WeightSource};

/// Facts from an already-parsed config.json object (no files, no arguments), as the newest
/// SGLang reads it.
pub fn facts_from_config(obj: &Map<String, Value>) -> ModelFacts {
    facts_read_by(obj, Transformers::V5)
}

/// The quantisation config: the top's, the text model's, or compressed-tensors'
/// `compression_config`.
fn quant_config<'a>(
    top: &'a Map<String, Value>,
    text: &'a Map<String, Value>,
) -> Option<&'a Map<String, Value>> {
    top.get("quantization_config")
        .or_else(|| text.get("quantization_config"))
        .or_else(|| top.get("compression_config"))
        .and_then(Value::as_object)
}

/// The key is in the config with a value (null is no value).
fn set(top: &Map<String, Value>, key: &str) -> bool {
    top.get(key).is_some_and(|v| !v.is_null())
}

/// The context length SGLang derives, and how far a RoPE scaling with its original window reaches.
fn context_lengths(c: &Config, t: Transformers) -> (u64, Option<u64>) {
    let text = |k: &str| c.text_value(k).filter(|_| !c.rejected(k));
    let nested = c.text().defaults().is_some_and(|d| d.nested_rope);
    (
        derived_context_length(text, nested, t),
        rope_scaled_length(text, t),
    )
}

/// Facts from config.json as SGLang reads it with transformers major version `t`.
pub(crate) fn facts_read_by(obj: &Map<String, Value>, t: Transformers) -> ModelFacts {
    let mut c = Config::new(obj);
    let mut implausible = c.reject_implausible();
    let (derived, rope_scaled) = context_lengths(&c, t);
    implausible.extend(plausible::derived_context(derived));
    let towers_ok = clean(&implausible, &["vision_config.", "audio_config."]);
    let quant_ok = clean(&implausible, &["quantization_config."]);
    let (top, u, s) = (
        c.top.json.unwrap_or(obj),
        |k: &str| c.u(k),
        |k: &str| c.s(k),
    );
    let flag = |k: &str| c.value(k).and_then(Value::as_bool).unwrap_or(false);
    let quant = quant_config(top, c.text_json());
    let quant_dims = quant.filter(|_| quant_ok);
    let ok = implausible.is_empty();
    let nemotron_h = read_if(ok, top, super::nemotron_h::read);
    // Nemotron-3 Ultra's config names its layers instead of counting them.
    let layers = u("num_hidden_layers").or_else(|| Some(nemotron_h?.kinds.total()));
    let sliding_window = u("sliding_window").or_else(|| u("attention_chunk_size"));
    // config.json's vision tower, else transformers' built one (Llama 4's), with type defaults.
    let vision = c.top.sub("vision_config");
    let tower = |k: &str| {
        vision
            .as_ref()
            .filter(|_| towers_ok)
            .and_then(|v| v.value(k))
            .and_then(Value::as_u64)
    };
    let linear_state = read_if(ok, top, super::hybrid::read);
    let quant_method = quant.and_then(method);
    ModelFacts {
        dir: PathBuf::new(),
        architecture: first_architecture(top),
        registry: super::registry::read(top),
        model_type: s("model_type"),
        num_hidden_layers: layers,
        hidden_size: u("hidden_size"),
        num_attention_heads: u("num_attention_heads"),
        num_key_value_heads: u("num_key_value_heads").or_else(|| u("num_attention_heads")),
        head_dim: u("head_dim"),
        global_head_dim: u("global_head_dim"),
        kv_lora_rank: u("kv_lora_rank"),
        qk_rope_head_dim: u("qk_rope_head_dim"),
        vocab_size: u("vocab_size"),
        max_position_embeddings: u("max_position_embeddings"),
        num_experts: u("num_experts")
            .or_else(|| u("n_routed_experts"))
            .or_else(|| u("num_local_experts")),
        num_experts_per_tok: u("num_experts_per_tok").or_else(|| u("experts_per_token")),
        dtype: s("torch_dtype").or_else(|| s("dtype")),
        top_dtype: top_dtype(top),
        checkpoint_quant_method: quant_method.clone(),
        config_quant_method: config_quant_method(top),
        config_quant_nested: false,
        hf_quant: None,
        quant_method,
        weight_bytes: None,
        weight_source: WeightSource::Estimate,
        intermediate_size: u("intermediate_size"),
        moe_intermediate_size: u("moe_intermediate_size"),
        n_shared_experts: u("n_shared_experts").or_else(|| u("num_shared_experts")),
        expert_hidden_size: u("routed_expert_hidden_size"),
        first_k_dense_replace: u("first_k_dense_replace"),
        moe_layer_step: u("interleave_moe_layer_step").filter(|&s| s > 0),
        dense_intermediate_size: u("intermediate_size_mlp"),
        qk_nope_head_dim: u("qk_nope_head_dim"),
        v_head_dim: u("v_head_dim"),
        q_lora_rank: u("q_lora_rank"),
        tie_word_embeddings: flag("tie_word_embeddings"),
        num_nextn_predict_layers: u("num_nextn_predict_layers"),
        bundles_dspark_draft: DSPARK_KEYS.iter().any(|k| set(top, k)),
        dflash_block_size: dflash_block_size(top),
        sliding_window,
        dual_chunk_attention: set(top, "dual_chunk_attention_config"),
        num_sliding_layers: c.sliding_layers(layers, sliding_window),
        num_full_attention_layers: c
            .full_attention_layers(layers)
            .or(linear_state.map(|s| s.attention_layers)),
        index_head_dim: u("index_head_dim"),
        index_topk: u("index_topk"),
        dsa_index_sharing: dsa_index_sharing(&c),
        weight_bits: quant_dims.and_then(weight_bits),
        weight_format: quant_dims.and_then(format),
        attention_unquantised: quant_dims.is_some_and(|q| attention_unquantised(q, layers)),
        shared_experts_unquantised: quant_dims.is_some_and(shared_experts_unquantised),
        weight_block_size: quant_dims.and_then(block_size),
        quant_ignored: quant.map(ignored_layers).unwrap_or_default(),
        gptq_marlin_config: quant.and_then(gptq_marlin_config),
        gptq_missing_keys: quant.map(gptq_missing_keys).unwrap_or_default(),
        awq_marlin_config: quant.and_then(awq_marlin_config),
        shared_expert_intermediate_size: u("shared_expert_intermediate_size"),
        kv_cache_fp8: quant.is_some_and(kv_cache_fp8),
        compressed_w8a8_int8: quant.is_some_and(compressed_w8a8_int8),
        compressed_schemes: quant.map(compressed_schemes).unwrap_or_default(),
        nvfp4_moe_hybrid: quant.is_some_and(nvfp4_moe_hybrid),
        fp4_experts_marked: quant.is_some_and(fp4_experts_marked),
        is_multimodal: vision.is_some(),
        vision_layers: tower("num_hidden_layers"),
        vision_hidden_size: tower("hidden_size"),
        context_length: None,
        derived_context_length: Some(derived),
        rope_scaled_length: rope_scaled,
        kv_cache_dtype: "auto".into(),
        linear_state,
        kda_mixer_params: read_if(ok, top, super::hybrid::kda_mixer_params),
        mla_output_gate: flag("mla_use_output_gate"),
        encoders: if towers_ok {
            super::encoder::read(top, u("hidden_size"))
        } else {
            Vec::new()
        },
        online_quant_load_bytes: None,
        deepseek_v4: read_if(ok, top, super::deepseek_v4::read),
        nemotron_h,
        xllm: super::xllm::read(top),
        implausible,
    }
}

/// config.json's own `quantization_config.quant_method`, lowercased.
fn config_quant_method(top: &Map<String, Value>) -> Option<String> {
    top.get("quantization_config")
        .and_then(|q| q.get("quant_method"))
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
}

/// The keys that share a DSA indexer's top-k across layers.
fn dsa_index_sharing(c: &Config) -> super::DsaIndexSharing {
    let pattern = c.value("index_topk_pattern").and_then(Value::as_str);
    let types = c.value("indexer_types").and_then(Value::as_array);
    super::DsaIndexSharing {
        freq: c.u("index_topk_freq"),
        pattern_shared: pattern.is_some_and(|p| p.contains('S')),
        types_shared: types.is_some_and(|t| t.iter().any(|v| v.as_str() == Some("shared"))),
    }
}

/// The keys whose presence marks a bundled DSpark draft head, as SGLang checks them.
const DSPARK_KEYS: [&str; 4] = [
    "dspark_block_size",
    "dspark_markov_rank",
    "dspark_noise_token_id",
    "dspark_target_layer_ids",
];

/// The block a DFlash draft's config gives SGLang: `dflash_config.block_size` (a key there
/// holding null included), else the top-level `block_size`, read as Python's `int()` reads it.
/// `None` where SGLang takes no block from it (absent, or a value it refuses, whereupon it falls
/// back to 16); 1, the smallest block, where the launcher cannot tell what `int()` makes of it.
fn dflash_block_size(top: &Map<String, Value>) -> Option<u64> {
    let raw = match top.get("dflash_config") {
        None | Some(Value::Null) => top.get("block_size"),
        Some(Value::Object(d)) if d.contains_key("block_size") => d.get("block_size"),
        Some(Value::Object(_)) => top.get("block_size"),
        Some(_) => return Some(1),
    };
    let n = match raw? {
        Value::Null => return None,
        Value::Bool(b) => i64::from(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i,
            None => n.as_f64().filter(|f| f.is_finite())?.trunc() as i64,
        },
        Value::String(s) => match s.trim().parse::<i64>() {
            Ok(i) => i,
            Err(_) => return Some(1),
        },
        _ => return None,
    };
    u64::try_from(n).ok().filter(|&n| n >= 1)
}

/// A layout reader's answer for a config whose every number is plausible: the readers multiply
/// raw numbers, so an absurd one is named (MEM013), never overflowed.
fn read_if<T>(
    ok: bool,
    top: &Map<String, Value>,
    read: impl Fn(&Map<String, Value>) -> Option<T>,
) -> Option<T> {
    if ok { read(top) } else { None }
}

/// No implausible value lies under these sub-configs: they may be read.
fn clean(implausible: &[Implausible], prefixes: &[&str]) -> bool {
    !implausible
        .iter()
        .any(|i| prefixes.iter().any(|p| i.key.starts_with(p)))
}

/// One level of a config: its config.json object (absent when transformers builds it from
/// defaults alone) and its model type's defaults.
pub(super) struct Level<'a> {
    json: Option<&'a Map<String, Value>>,
    defaults: Option<TypeDefaults>,
}

impl<'a> Level<'a> {
    /// The level's model type is its own `model_type`, else what its parent builds.
    fn new(json: Option<&'a Map<String, Value>>, parent_builds: Option<&str>) -> Self {
        let own = json
            .and_then(|j| j.get("model_type"))
            .and_then(Value::as_str);
        let defaults = own.or(parent_builds).and_then(defaults::lookup);
        Level { json, defaults }
    }

    /// config.json's value for `key` or the model type's alias of it; `null` included.
    fn given(&self, key: &str) -> Option<&'a Value> {
        let json = self.json?;
        json.get(key).or_else(|| {
            let alias = self.defaults.as_ref()?.alias(key)?;
            json.get(alias)
        })
    }

    /// The value transformers' class holds for `key`: config.json's, else a constant default.
    /// An explicit `null` is no value (the class keeps the None it was given).
    fn value(&self, key: &str) -> Option<&Value> {
        match self.given(key) {
            Some(v) => (!v.is_null()).then_some(v),
            None => self.defaults.as_ref()?.get(key),
        }
    }

    /// The sub-config `name`: config.json's object, else the one the class builds by default.
    fn sub(&self, name: &str) -> Option<Level<'a>> {
        let builds = self
            .defaults
            .as_ref()
            .and_then(|d| d.subs.get(name))
            .map(String::as_str);
        match self.json.and_then(|j| j.get(name)) {
            Some(Value::Object(o)) => Some(Level::new(Some(o), builds)),
            Some(v) if !v.is_null() => None,
            _ => builds.map(|b| Level::new(None, Some(b))),
        }
    }

    pub(super) fn defaults(&self) -> Option<&TypeDefaults> {
        self.defaults.as_ref()
    }
}

/// A config.json object, read the way SGLang picks the language model's config out of a
/// multimodal one (its own order: thinker, llm, language, text).
pub(super) struct Config<'a> {
    top: Level<'a>,
    /// The language model's sub-config, when there is one.
    text: Option<Level<'a>>,
    /// Its path in config.json (`text_config`, `thinker_config.text_config`).
    text_name: Option<&'static str>,
    /// Keys whose value is implausible: read as absent.
    rejected: Vec<&'static str>,
}

impl<'a> Config<'a> {
    pub(super) fn new(top: &'a Map<String, Value>) -> Self {
        let top = Level::new(Some(top), None);
        let arch = top
            .given("architectures")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .unwrap_or("");
        // SGLang reads its own LLaVA variants from the top level.
        let (text, text_name) = if arch.starts_with("Llava") && arch.ends_with("ForCausalLM") {
            (None, None)
        } else if let Some(thinker) = top.sub("thinker_config") {
            match thinker.sub("text_config") {
                Some(t) => (Some(t), Some("thinker_config.text_config")),
                None => (Some(thinker), Some("thinker_config")),
            }
        } else {
            ["llm_config", "language_config", "text_config"]
                .iter()
                .find_map(|n| Some((top.sub(n)?, *n)))
                .map_or((None, None), |(t, n)| (Some(t), Some(n)))
        };
        Config {
            top,
            text,
            text_name,
            rejected: Vec::new(),
        }
    }

    /// Checks every number the facts are read from ([`plausible`]); the implausible ones are
    /// read as absent from now on.
    fn reject_implausible(&mut self) -> Vec<Implausible> {
        let mut out = Vec::new();
        for bound in plausible::TEXT {
            if let Some(i) = self.judge(bound) {
                self.rejected.push(bound.key);
                out.push(i);
            }
        }
        if let Some(top) = self.top.json {
            out.extend(plausible::towers(top));
            let quant = top
                .get("quantization_config")
                .or_else(|| self.text_json().get("quantization_config"))
                .and_then(Value::as_object);
            out.extend(quant.map(plausible::quant).unwrap_or_default());
        }
        out
    }

    /// The value [`Config::value`] reads for `bound`'s key, judged where config.json has it;
    /// a default is transformers' own and not judged.
    fn judge(&self, bound: &plausible::Bound) -> Option<Implausible> {
        let k = bound.key;
        let mut null_at = None;
        if let Some(text) = &self.text {
            let at = plausible::path(self.text_name, k);
            match text.given(k) {
                Some(v) if !v.is_null() => return bound.judge(&at, v),
                Some(_) => null_at = Some(at),
                None if text.defaults().is_some_and(|d| d.get(k).is_some()) => return None,
                None => {}
            }
        }
        match self.top.given(k) {
            Some(v) if !v.is_null() || null_at.is_none() => bound.judge(k, v),
            _ if self.top.value(k).is_some() => None,
            _ => null_at.and_then(|at| bound.judge(&at, &Value::Null)),
        }
    }

    /// `k`'s value was implausible.
    fn rejected(&self, k: &str) -> bool {
        self.rejected.contains(&k)
    }

    /// The language model's level (the top level for plain configs).
    pub(super) fn text(&self) -> &Level<'a> {
        self.text.as_ref().unwrap_or(&self.top)
    }

    /// The language model's own value (SGLang reads some keys from it alone).
    pub(super) fn text_value(&self, k: &str) -> Option<&Value> {
        self.text().value(k)
    }

    fn text_json(&self) -> &'a Map<String, Value> {
        self.text()
            .json
            .or(self.top.json)
            .expect("the top level has JSON")
    }

    /// The text model's value, else the top level's.
    pub(super) fn value(&self, k: &str) -> Option<&Value> {
        self.text
            .as_ref()
            .and_then(|t| t.value(k))
            .or_else(|| self.top.value(k))
    }

    /// A whole number from the text model's fields, else the top level's.
    fn u(&self, k: &str) -> Option<u64> {
        if self.rejected(k) {
            return None;
        }
        self.value(k).and_then(Value::as_u64)
    }

    /// A string from the text model's fields, else the top level's.
    fn s(&self, k: &str) -> Option<String> {
        self.value(k).and_then(Value::as_str).map(str::to_owned)
    }

    /// Explicit `layer_types`, else the class's repeating unit when config.json sets none of
    /// the keys that shape it.
    fn layer_types(&self, layers: Option<u64>) -> Option<Vec<String>> {
        let text = self.text();
        if let Some(types) = text.given("layer_types").and_then(Value::as_array) {
            return Some(
                types
                    .iter()
                    .map(|t| t.as_str().unwrap_or_default().to_owned())
                    .collect(),
            );
        }
        const SHAPING: [&str; 4] = [
            "sliding_window_pattern",
            "full_attention_interval",
            "use_sliding_window",
            "max_window_layers",
        ];
        if SHAPING.iter().any(|k| text.given(k).is_some()) {
            return None;
        }
        let unit = text.defaults()?.layer_unit.as_ref()?;
        let n = usize::try_from(layers?).ok()?.min(1 << 16);
        Some((0..n).map(|i| unit[i % unit.len()].clone()).collect())
    }

    /// Sliding-window layers: explicit `layer_types`, else Gemma-3's 5:1 pattern.
    fn sliding_layers(&self, layers: Option<u64>, sliding_window: Option<u64>) -> Option<u64> {
        let mt = self.s("model_type").unwrap_or_default();
        if mt.starts_with("gemma3")
            && sliding_window.is_some()
            && self.text().given("layer_types").is_none()
        {
            let pattern = self.u("sliding_window_pattern").unwrap_or(6).max(1);
            return layers.map(|l| l - l / pattern);
        }
        let types = self.layer_types(layers)?;
        let sliding = types
            .iter()
            .filter(|t| t.contains("sliding") || t.contains("chunked"))
            .count() as u64;
        // A uniform unit from the defaults says nothing the window doesn't.
        (sliding > 0 || self.text().given("layer_types").is_some()).then_some(sliding)
    }

    /// Hybrids' KV-cache layers: explicit layer types, else Qwen3-Next's
    /// `full_attention_interval`, else the class's layer pattern.
    fn full_attention_layers(&self, layers: Option<u64>) -> Option<u64> {
        if let Some(i) = self.u("full_attention_interval").filter(|&i| i > 0)
            && self.text().given("layer_types").is_none()
        {
            return layers.map(|l| l / i);
        }
        let types = self.layer_types(layers)?;
        let hybrid = types
            .iter()
            .any(|t| t.contains("linear") || t.contains("mamba"));
        hybrid.then(|| {
            types
                .iter()
                .filter(|t| t.contains("full") || *t == "attention")
                .count() as u64
        })
    }
}

/// Whether a GPTQ `quantization_config` has every field SGLang's GPTQ Marlin method reads, with
/// values it takes (its `is_gptq_marlin_compatible`, the GPU aside); `None` for other methods.
fn gptq_marlin_config(q: &Map<String, Value>) -> Option<bool> {
    let method = q.get("quant_method").and_then(Value::as_str)?;
    if !method.eq_ignore_ascii_case("gptq") {
        return None;
    }
    let bits = q.get("bits").and_then(Value::as_i64);
    let sym = q.get("sym").and_then(Value::as_bool);
    let desc_act = q.get("desc_act").is_some_and(|v| !v.is_null());
    let group = q.get("group_size").and_then(Value::as_i64);
    Some(
        matches!(bits, Some(4 | 8))
            && sym == Some(true)
            && desc_act
            && matches!(group, Some(-1 | 32 | 64 | 128)),
    )
}

/// The keys SGLang's GPTQ config readers require that a GPTQ `quantization_config` lacks (a key
/// set to null is present to them).
fn gptq_missing_keys(q: &Map<String, Value>) -> Vec<String> {
    let gptq = q
        .get("quant_method")
        .and_then(Value::as_str)
        .is_some_and(|m| m.eq_ignore_ascii_case("gptq"));
    ["bits", "group_size", "desc_act"]
        .into_iter()
        .filter(|k| gptq && !q.contains_key(*k))
        .map(str::to_owned)
        .collect()
}

/// Whether an AWQ `quantization_config` has what SGLang's AWQ Marlin method reads, with values it
/// takes (its `is_awq_marlin_compatible`, the GPU aside); `None` for other methods.
fn awq_marlin_config(q: &Map<String, Value>) -> Option<bool> {
    let method = q.get("quant_method").and_then(Value::as_str)?;
    if !method.eq_ignore_ascii_case("awq") {
        return None;
    }
    let bits = q.get("bits").and_then(Value::as_i64);
    let zero_point = q.get("zero_point").is_some_and(|v| !v.is_null());
    let group = q.get("group_size").and_then(Value::as_i64);
    Some(bits == Some(4) && zero_point && matches!(group, Some(-1 | 32 | 64 | 128)))
}

/// The top level's own `torch_dtype` (transformers 4) or `dtype` (5), not a text config's.
fn top_dtype(top: &Map<String, Value>) -> Option<String> {
    ["torch_dtype", "dtype"]
        .iter()
        .find_map(|k| top.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
}

/// The first name in `architectures`.
fn first_architecture(top: &Map<String, Value>) -> Option<String> {
    let names = top.get("architectures").and_then(Value::as_array)?;
    names.first().and_then(Value::as_str).map(str::to_owned)
}
