//! Plausible model facts: every number the memory plan reads from config.json (the language
//! model's level, the top level, vision/audio towers, `quantization_config`) is type- and
//! range-checked before it becomes a fact. A value outside its range is dropped from the facts
//! (no rule or planner arithmetic ever sees it) and recorded as an [`Implausible`]; the memory
//! planner then plans nothing and says why (MEM013), rather than acting on garbage.
//!
//! Types: transformers keeps whatever JSON gives. A float dimension (`4096.0`, `1e12`) passes
//! Python arithmetic but `nn.Linear` / `torch.empty` refuse it, and a string or a bool fails
//! earlier, so only JSON integers count (JSON `true` is not 1). An explicit `null` on a key no
//! model does without (layers, width, heads, vocabulary) leaves the class's `None` in place,
//! which SGLang cannot size either. An array or object on another key is not read as a number
//! (Gemma-3n's per-layer `intermediate_size`), as before.
//!
//! The ranges are generous: an order of magnitude or more past the real spread of the configs
//! in tests/fixtures, /work/shared/models and transformers' own defaults
//! (data/model-defaults.json), so that only garbage falls outside.
//!
//! | keys | plausible | real spread |
//! |---|---|---|
//! | `num_hidden_layers`, `first_k_dense_replace`, `num_nextn_predict_layers`, layer steps | 1 (0 for the counts and steps) ..= 2^10 | 1..=128 |
//! | `hidden_size`, `routed_expert_hidden_size` | 1..=2^20 | 8..=16384 |
//! | `num_attention_heads`, `num_key_value_heads` | 1..=2^16 | 1..=128 |
//! | `head_dim`, `v_head_dim`, `index_head_dim` (`qk_rope_head_dim`, `qk_nope_head_dim` from 0) | 1..=2^12 | 64..=1280 |
//! | `kv_lora_rank` (MLA: ≥ 1 when present) | 1..=2^16 | 128..=512 |
//! | `q_lora_rank` | 1..=2^20 | 384..=2048 |
//! | `vocab_size` | 1..=2^24 | 1..=290943 |
//! | `intermediate_size`, `moe_intermediate_size`, `intermediate_size_mlp` (shared expert from 0) | 1..=2^22 | 384..=53248 |
//! | `num_experts`, `n_routed_experts`, `num_local_experts`, experts per token, `n_shared_experts`, `num_shared_experts` | 0..=2^16 | 0..=16384 |
//! | `sliding_window`, `attention_chunk_size` | 0..=2^32 | 0..=131072 |
//! | context keys (`max_position_embeddings`, `seq_length`, …) | 1..=2^32 | 77..=10485760 |
//! | linear-attention / Mamba head counts, widths, state, conv kernel | 1..=2^16 (`mamba_d_ssm` 2^22) | 4..=256 |
//! | vision/audio towers: width, depth, MLP width, patch, image, channels | as the text model's; patch and channels 1..=2^12, image 1..=2^20 | 3..=8192 |
//! | `quantization_config` `bits`, `w_bit`, `num_bits` | 1..=32 | 4..=8 |
//! | `weight_block_size` | two whole numbers 1..=2^16 | [128, 128] |
//! | index `total_size` (bytes; an integral float is accepted, as before) | 1..=2^50 | 1 GB..=2 TB |
//! | safetensors headers | a known dtype's width × the shape = the `data_offsets` span, inside the file | |
//!
//! Inside these bounds a product of several facts can still pass `u64` (layers × width × MLP
//! width × experts is 2^68), so the planner multiplies in `f64` or saturating; the memory
//! planner's tests run it on a config with every key at its maximum.

use std::fmt;

use serde_json::{Map, Value};

/// A value from the model's files that no real model has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Implausible {
    /// The file, in the model's directory: `config.json`, `model.safetensors.index.json`.
    pub(crate) file: String,
    /// Where in it: `text_config.hidden_size`, `tensor lm_head.weight`.
    pub(crate) key: String,
    /// The value as the file writes it (shortened).
    pub(crate) value: String,
    /// What a real model has there.
    pub(crate) expected: String,
}

impl fmt::Display for Implausible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} = {}: expected {}",
            self.file, self.key, self.value, self.expected
        )
    }
}

impl Implausible {
    pub(super) fn new(
        file: impl Into<String>,
        key: impl Into<String>,
        value: &Value,
        expected: impl Into<String>,
    ) -> Self {
        Implausible {
            file: file.into(),
            key: key.into(),
            value: shorten(&value.to_string()),
            expected: expected.into(),
        }
    }
}

fn shorten(s: &str) -> String {
    const MAX: usize = 60;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// The plausible whole numbers for one config key.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bound {
    pub(crate) key: &'static str,
    min: u64,
    max: u64,
    /// No model does without it: `null` (or a list) is implausible too.
    required: bool,
}

const fn b(key: &'static str, min: u64, max: u64) -> Bound {
    Bound {
        key,
        min,
        max,
        required: false,
    }
}

const fn required(key: &'static str, min: u64, max: u64) -> Bound {
    Bound {
        key,
        min,
        max,
        required: true,
    }
}

const LAYERS: u64 = 1 << 10;
const WIDTH: u64 = 1 << 20;
const HEADS: u64 = 1 << 16;
const HEAD_DIM: u64 = 1 << 12;
const MLP: u64 = 1 << 22;
const EXPERTS: u64 = 1 << 16;
pub(super) const TOKENS: u64 = 1 << 32;

/// The language model's keys (read from its level, else the top level).
pub(super) const TEXT: &[Bound] = &[
    required("num_hidden_layers", 1, LAYERS),
    required("hidden_size", 1, WIDTH),
    required("num_attention_heads", 1, HEADS),
    b("num_key_value_heads", 1, HEADS),
    b("head_dim", 1, HEAD_DIM),
    b("kv_lora_rank", 1, HEADS),
    b("qk_rope_head_dim", 0, HEAD_DIM),
    b("qk_nope_head_dim", 0, HEAD_DIM),
    b("v_head_dim", 1, HEAD_DIM),
    b("q_lora_rank", 1, WIDTH),
    b("index_head_dim", 1, HEAD_DIM),
    required("vocab_size", 1, 1 << 24),
    b("intermediate_size", 1, MLP),
    b("moe_intermediate_size", 1, MLP),
    b("intermediate_size_mlp", 1, MLP),
    b("shared_expert_intermediate_size", 0, MLP),
    b("num_experts", 0, EXPERTS),
    b("n_routed_experts", 0, EXPERTS),
    b("num_local_experts", 0, EXPERTS),
    b("num_experts_per_tok", 0, EXPERTS),
    b("experts_per_token", 0, EXPERTS),
    b("n_shared_experts", 0, EXPERTS),
    b("num_shared_experts", 0, EXPERTS),
    b("routed_expert_hidden_size", 1, WIDTH),
    b("first_k_dense_replace", 0, LAYERS),
    b("interleave_moe_layer_step", 0, LAYERS),
    b("num_nextn_predict_layers", 0, LAYERS),
    b("sliding_window", 0, TOKENS),
    b("attention_chunk_size", 0, TOKENS),
    b("sliding_window_pattern", 0, LAYERS),
    b("full_attention_interval", 0, LAYERS),
    b("max_sequence_length", 1, TOKENS),
    b("seq_length", 1, TOKENS),
    b("max_seq_len", 1, TOKENS),
    b("model_max_length", 1, TOKENS),
    b("max_position_embeddings", 1, TOKENS),
    b("linear_num_value_heads", 1, HEADS),
    b("linear_value_head_dim", 1, HEADS),
    b("linear_num_key_heads", 1, HEADS),
    b("linear_key_head_dim", 1, HEADS),
    b("linear_conv_kernel_dim", 1, HEADS),
    b("mamba_num_heads", 1, HEADS),
    b("mamba_head_dim", 1, HEADS),
    b("n_groups", 1, HEADS),
    b("ssm_state_size", 1, HEADS),
    b("conv_kernel", 1, HEADS),
    b("mamba_n_heads", 1, HEADS),
    b("mamba_d_head", 1, HEADS),
    b("mamba_d_ssm", 1, MLP),
    b("mamba_expand", 1, LAYERS),
    b("mamba_n_groups", 1, HEADS),
    b("mamba_d_state", 1, HEADS),
    b("mamba_d_conv", 1, HEADS),
];

/// Vision and audio towers (`vision_config`, `audio_config`), every alias the encoder reads.
pub(super) const TOWER: &[Bound] = &[
    b("hidden_size", 1, WIDTH),
    b("d_model", 1, WIDTH),
    b("embed_dim", 1, WIDTH),
    b("width", 1, WIDTH),
    b("num_hidden_layers", 1, LAYERS),
    b("depth", 1, LAYERS),
    b("encoder_layers", 1, LAYERS),
    b("num_layers", 1, LAYERS),
    b("intermediate_size", 1, MLP),
    b("encoder_ffn_dim", 1, MLP),
    b("ffn_dim", 1, MLP),
    b("patch_size", 1, HEAD_DIM),
    b("image_size", 1, WIDTH),
    b("num_channels", 1, HEAD_DIM),
    b("in_channels", 1, HEAD_DIM),
];

/// `quantization_config`'s bit widths.
const BITS: [Bound; 2] = [b("bits", 1, 32), b("w_bit", 1, 32)];

/// The largest plausible index `total_size`, bytes (a petabyte; real checkpoints are ≤ 2 TB).
pub(crate) const MAX_TOTAL_SIZE: u64 = 1 << 50;

impl Bound {
    fn expected(&self) -> String {
        format!("a whole number from {} to {}", self.min, self.max)
    }

    /// The value at `path` is implausible for this key: `Some` says why.
    pub(super) fn judge(&self, path: &str, v: &Value) -> Option<Implausible> {
        let ok = match v {
            Value::Number(n) => n
                .as_u64()
                .is_some_and(|n| (self.min..=self.max).contains(&n)),
            Value::Null | Value::Array(_) | Value::Object(_) => !self.required,
            Value::Bool(_) | Value::String(_) => false,
        };
        (!ok).then(|| Implausible::new(CONFIG, path, v, self.expected()))
    }
}

const CONFIG: &str = "config.json";

/// The context SGLang derives (the config's maximum times the RoPE factor) is beyond any
/// model's: a factor that multiplies a plausible maximum is judged by what it makes.
pub(super) fn derived_context(derived: u64) -> Option<Implausible> {
    (derived > TOKENS).then(|| {
        Implausible::new(
            CONFIG,
            "max_position_embeddings × rope_scaling.factor",
            &serde_json::json!(derived),
            format!("at most {TOKENS} tokens"),
        )
    })
}

/// `prefix.key` (or `key` at the top level).
pub(super) fn path(prefix: Option<&str>, key: &str) -> String {
    match prefix {
        Some(p) => format!("{p}.{key}"),
        None => key.to_owned(),
    }
}

/// The towers' implausible values.
pub(super) fn towers(top: &Map<String, Value>) -> Vec<Implausible> {
    ["vision_config", "audio_config"]
        .iter()
        .filter_map(|k| Some((*k, top.get(*k)?.as_object()?)))
        .flat_map(|(name, c)| {
            TOWER.iter().filter_map(move |b| {
                let v = c.get(b.key)?;
                b.judge(&path(Some(name), b.key), v)
            })
        })
        .collect()
}

/// `quantization_config`'s implausible values: bit widths and the block size.
pub(super) fn quant(q: &Map<String, Value>) -> Vec<Implausible> {
    let name = "quantization_config";
    let mut out: Vec<Implausible> = BITS
        .iter()
        .filter_map(|b| b.judge(&path(Some(name), b.key), q.get(b.key)?))
        .collect();
    if let Some(groups) = q.get("config_groups").and_then(Value::as_object) {
        for (g, group) in groups {
            if let Some(v) = group.pointer("/weights/num_bits") {
                let p = format!("{name}.config_groups.{g}.weights.num_bits");
                out.extend(b("num_bits", 1, 32).judge(&p, v));
            }
        }
    }
    if let Some(v) = q.get("weight_block_size").filter(|v| !v.is_null()) {
        let side = b("weight_block_size", 1, HEADS);
        let ok = match v.as_array().map(Vec::as_slice) {
            Some([n, k]) => side.judge("", n).is_none() && side.judge("", k).is_none(),
            _ => false,
        };
        if !ok {
            out.push(Implausible::new(
                CONFIG,
                path(Some(name), "weight_block_size"),
                v,
                format!("two whole numbers from 1 to {HEADS}"),
            ));
        }
    }
    out
}

/// An index's `total_size`: whole bytes (an integral float, as some tools write it) in
/// 1..=[`MAX_TOTAL_SIZE`].
pub(super) fn total_size(v: &Value) -> Option<u64> {
    let n = v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= MAX_TOTAL_SIZE as f64)
            .map(|f| f as u64)
    })?;
    (1..=MAX_TOTAL_SIZE).contains(&n).then_some(n)
}

/// Width of a safetensors dtype in bits (the format's own list).
fn dtype_bits(dtype: &str) -> Option<u128> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E4M3" | "F8_E5M2" | "F8_E8M0" => 8,
        "BF16" | "F16" | "I16" | "U16" => 16,
        "F32" | "I32" | "U32" => 32,
        "F64" | "I64" | "U64" | "C64" => 64,
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        _ => return None,
    })
}

/// One safetensors tensor whose header entry disagrees with itself or the file: its shape ×
/// dtype width is not its `data_offsets` span, or the span ends past the data. `span` is the
/// already-checked `(begin, end)`; `data_len` the bytes after the header. A dtype this list does
/// not know (a newer format's) is not judged.
pub(super) fn tensor(
    file: &str,
    name: &str,
    t: &Value,
    span: (u64, u64),
    data_len: u64,
) -> Option<Implausible> {
    let key = format!("tensor {name}");
    let expected = "a shape × dtype size equal to its data_offsets span, inside the file";
    let dtype = t.get("dtype");
    let shape = t.get("shape");
    let described =
        || serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [span.0, span.1]});
    if span.1 > data_len {
        return Some(Implausible::new(file, &key, &described(), expected));
    }
    let Some(dtype) = dtype.and_then(Value::as_str) else {
        return Some(Implausible::new(file, &key, &described(), expected));
    };
    let bits = dtype_bits(dtype)?;
    let elements = shape.and_then(Value::as_array).and_then(|dims| {
        dims.iter()
            .try_fold(1u128, |n, d| n.checked_mul(u128::from(d.as_u64()?)))
    });
    let fits = elements
        .and_then(|n| n.checked_mul(bits))
        .is_some_and(|b| b == u128::from(span.1 - span.0) * 8);
    (!fits).then(|| Implausible::new(file, &key, &described(), expected))
}

/// A config with every judged key at the top of its range (a quantised multimodal MLA-MoE
/// hybrid no one would build), for checking that no arithmetic on plausible facts overflows.
/// `mla`: with `kv_lora_rank`.
#[cfg(test)]
pub(crate) fn largest_plausible_config(mla: bool) -> Value {
    let at_max = |bounds: &[Bound]| -> Map<String, Value> {
        bounds
            .iter()
            .map(|b| (b.key.to_owned(), Value::from(b.max)))
            .collect()
    };
    let mut text = at_max(TEXT);
    if !mla {
        text.remove("kv_lora_rank");
    }
    text.insert("model_type".into(), "deepseek_v3".into());
    text.insert("torch_dtype".into(), "float32".into());
    text.insert(
        "quantization_config".into(),
        serde_json::json!({"quant_method": "gptq", "bits": 32, "weight_block_size": [HEADS, HEADS]}),
    );
    text.insert("vision_config".into(), Value::Object(at_max(TOWER)));
    text.insert("audio_config".into(), Value::Object(at_max(TOWER)));
    Value::Object(text)
}
