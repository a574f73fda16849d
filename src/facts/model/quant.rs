//! The `quantization_config` of a checkpoint: method, storage format, block size, unquantised
//! modules. The formats are the ones SGLang loads; each prices a quantised weight with its
//! scales ([`WeightFormat::bytes_per_weight`]).

use serde_json::{Map, Value};

/// How a checkpoint stores its quantised linear weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WeightFormat {
    /// FP8 (or INT8) with one fp32 scale per 128×128 block.
    BlockEight,
    /// FP8 or INT8 with per-tensor or per-channel scales.
    Eight,
    /// NVFP4: e2m1 values with one FP8 scale per 16 (ModelOpt, compressed-tensors).
    Nvfp4,
    /// MXFP4: e2m1 values with one e8m0 scale per 32.
    Mxfp4,
    /// Integers of `bits` with an fp16 scale and a packed zero point per group (AWQ, GPTQ,
    /// compressed-tensors `pack-quantized`); `None`: per output channel.
    Int { bits: u32, group: Option<u64> },
    /// bitsandbytes 4-bit (NF4/FP4): an fp32 absmax per 64 weights, or with double
    /// quantisation an 8-bit one plus an fp32 per 256 of those.
    Bnb4 { double: bool },
}

impl WeightFormat {
    /// Bytes per quantised weight, scales included.
    pub fn bytes_per_weight(self) -> f64 {
        match self {
            WeightFormat::BlockEight => 1.0 + 4.0 / (128.0 * 128.0),
            WeightFormat::Eight => 1.0,
            WeightFormat::Nvfp4 => 0.5 + 1.0 / 16.0,
            WeightFormat::Mxfp4 => 0.5 + 1.0 / 32.0,
            WeightFormat::Int { bits, group } => {
                let per_group = group.map_or(0.0, |g| (2.0 + f64::from(bits) / 8.0) / g as f64);
                f64::from(bits) / 8.0 + per_group
            }
            WeightFormat::Bnb4 { double: false } => 0.5 + 4.0 / 64.0,
            WeightFormat::Bnb4 { double: true } => 0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0),
        }
    }
}

/// The storage format of a `quantization_config` (its method as [`method`] resolves it).
pub(super) fn format(q: &Map<String, Value>) -> Option<WeightFormat> {
    let m = method(q)?;
    let bits = weight_bits(q)?;
    Some(match m.as_str() {
        "mxfp4" => WeightFormat::Mxfp4,
        "modelopt_fp4" | "modelopt_mixed" => WeightFormat::Nvfp4,
        "compressed-tensors" if bits == 4 && is_mxfp4_format(q) => WeightFormat::Mxfp4,
        "compressed-tensors" if bits == 4 && is_nvfp4_format(q) => WeightFormat::Nvfp4,
        "quark" if bits == 4 => WeightFormat::Mxfp4,
        "bitsandbytes" if bits == 4 => WeightFormat::Bnb4 {
            double: q.get("bnb_4bit_use_double_quant").and_then(Value::as_bool) == Some(true),
        },
        _ if bits == 8 && block_size(q).is_some() => WeightFormat::BlockEight,
        _ if bits == 8 => WeightFormat::Eight,
        _ => WeightFormat::Int {
            bits,
            group: group_size(q),
        },
    })
}

/// Whether a `quantization_config` leaves every attention projection of the `layers` decoder
/// layers unquantised: MXFP4 (experts only), an exclusion for every layer's attention
/// (`*self_attn*`, `re:.*self_attn.*`), or one per layer (`model.layers.7.self_attn*`).
pub(super) fn attention_unquantised(q: &Map<String, Value>, layers: Option<u64>) -> bool {
    if method(q).as_deref() == Some("mxfp4") {
        return true;
    }
    let mut per_layer = std::collections::BTreeSet::new();
    for p in ignored_layers(q)
        .iter()
        .filter(|p| names_attention_weights(p))
    {
        let index: String = p
            .split('.')
            .find(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
            .unwrap_or("")
            .to_owned();
        match (index.is_empty(), p.contains('*')) {
            (true, true) => return true,
            (false, _) => {
                per_layer.insert(index);
            }
            _ => {}
        }
    }
    layers.is_some_and(|n| n > 0 && per_layer.len() as u64 >= n)
}

/// Whether a `quantization_config` leaves every layer's shared experts unquantised: an
/// exclusion pattern over them (`re:.*shared_experts.*`, `*shared_expert*`).
pub(super) fn shared_experts_unquantised(q: &Map<String, Value>) -> bool {
    ignored_layers(q)
        .iter()
        .any(|p| p.contains("shared_expert") && (p.contains('*') || p.starts_with("re:")))
}

/// An exclusion that covers attention projections: the attention module itself, a pattern over
/// it, or one of its projections; not its norms or the sparse-attention indexer's small parts,
/// which checkpoints such as GLM-5's list for every layer while the projections stay FP8.
fn names_attention_weights(pattern: &str) -> bool {
    let Some(at) = pattern.find("attn") else {
        return false;
    };
    let rest = &pattern[at..];
    let last = rest.rsplit('.').next().unwrap_or(rest);
    !(last.contains("norm") || last == "bias" || rest.contains("indexer"))
}

/// The quantisation method as SGLang resolves a checkpoint's `quantization_config`: ModelOpt's
/// `quant_algo` decides between `modelopt_fp4`, `modelopt_fp8`, `modelopt_mixed` and `w4afp8`
/// (a config without `quant_method` is ModelOpt's); every other method is its own name.
pub(super) fn method(q: &Map<String, Value>) -> Option<String> {
    let named = q.get("quant_method").and_then(Value::as_str);
    if named.is_some_and(|m| m != "modelopt") {
        return named.map(str::to_owned);
    }
    let algo = q
        .get("quant_algo")
        .and_then(Value::as_str)?
        .to_ascii_uppercase();
    Some(
        match algo.as_str() {
            "MIXED_PRECISION" if mixed_has_nvfp4(q) => "modelopt_mixed",
            "MIXED_PRECISION" => "w4afp8",
            "MXFP8" => "modelopt_mxfp8",
            a if a.contains("FP4") => "modelopt_fp4",
            "FP8" => "modelopt_fp8",
            _ => return named.map(str::to_owned),
        }
        .to_owned(),
    )
}

fn mixed_has_nvfp4(q: &Map<String, Value>) -> bool {
    q.get("quantized_layers")
        .and_then(Value::as_object)
        .is_some_and(|layers| {
            layers.values().any(|l| {
                l.get("quant_algo")
                    .and_then(Value::as_str)
                    .is_some_and(|a| a.to_ascii_uppercase().contains("NVFP4"))
            })
        })
}

/// Weight bits of a `quantization_config`: `bits` / `w_bit` (AWQ, GPTQ), else what the method
/// implies, else compressed-tensors' `config_groups.*.weights.num_bits`, bitsandbytes'
/// `load_in_4bit`/`load_in_8bit`, or Quark's weight dtype.
pub(super) fn weight_bits(q: &Map<String, Value>) -> Option<u32> {
    let explicit = q
        .get("bits")
        .or_else(|| q.get("w_bit"))
        .and_then(Value::as_u64)
        .and_then(plausible_bits);
    explicit
        .or_else(|| match method(q).as_deref()? {
            "mxfp4" | "modelopt_fp4" | "modelopt_mixed" | "w4afp8" => Some(4),
            "fp8" | "modelopt_fp8" | "modelopt_mxfp8" | "fbgemm_fp8" | "w8a8_fp8" | "w8a8_int8"
            | "blockwise_int8" | "qoq" => Some(8),
            "bitsandbytes" => bitsandbytes_bits(q),
            "quark" => quark_bits(q),
            _ => None,
        })
        .or_else(|| {
            q.get("config_groups")
                .and_then(Value::as_object)
                .and_then(|g| g.values().next())
                .and_then(|g| g.pointer("/weights/num_bits"))
                .and_then(Value::as_u64)
                .and_then(plausible_bits)
        })
}

fn bitsandbytes_bits(q: &Map<String, Value>) -> Option<u32> {
    let on = |k: &str| q.get(k).and_then(Value::as_bool) == Some(true);
    if on("load_in_4bit") {
        Some(4)
    } else if on("load_in_8bit") {
        Some(8)
    } else {
        None
    }
}

/// Quark (AMD): `global_quant_config.weight.dtype` (`fp4`, `fp8_e4m3`, `int4`, `int8`, …).
fn quark_bits(q: &Map<String, Value>) -> Option<u32> {
    let weight = q.get("global_quant_config")?.get("weight")?;
    let dtype = weight
        .get("dtype")
        .or_else(|| weight.get(0)?.get("dtype"))
        .and_then(Value::as_str)?;
    let digits: String = dtype.chars().filter(char::is_ascii_digit).take(1).collect();
    match digits.as_str() {
        "4" => Some(4),
        "8" => Some(8),
        _ => None,
    }
}

/// compressed-tensors' MXFP4: FP4 weights with an e8m0 scale per 32 (`mxfp4-pack-quantized`).
fn is_mxfp4_format(q: &Map<String, Value>) -> bool {
    let mxfp4 = |v: Option<&Value>| v.and_then(Value::as_str) == Some("mxfp4-pack-quantized");
    mxfp4(q.get("format"))
        || q.get("config_groups")
            .and_then(Value::as_object)
            .is_some_and(|g| g.values().any(|g| mxfp4(g.get("format"))))
}

/// compressed-tensors' NVFP4 format (`nvfp4-pack-quantized`): FP4 with an FP8 scale per 16.
pub(super) fn is_nvfp4_format(q: &Map<String, Value>) -> bool {
    q.get("format").and_then(Value::as_str) == Some("nvfp4-pack-quantized")
        || q.get("config_groups")
            .and_then(Value::as_object)
            .is_some_and(|g| {
                g.values().any(|g| {
                    g.pointer("/weights/type").and_then(Value::as_str) == Some("float")
                        && g.pointer("/weights/num_bits").and_then(Value::as_u64) == Some(4)
                })
            })
}

/// The group size of integer weight quantisation (AWQ/GPTQ `group_size`, compressed-tensors'
/// `weights.group_size`, bitsandbytes' block of 64); `None` for per-channel (`-1`) or none.
pub(super) fn group_size(q: &Map<String, Value>) -> Option<u64> {
    let raw = q
        .get("group_size")
        .or_else(|| q.get("q_group_size"))
        .or_else(|| {
            q.get("config_groups")
                .and_then(Value::as_object)
                .and_then(|g| g.values().next())
                .and_then(|g| g.pointer("/weights/group_size"))
        })
        .and_then(Value::as_i64);
    match raw {
        Some(g) if g > 0 => Some(g as u64),
        Some(_) => None,
        None if q.get("quant_method").and_then(Value::as_str) == Some("bitsandbytes") => Some(64),
        None => None,
    }
}

/// `weight_block_size: [n, k]` of a `quantization_config`; anything else is not a block size.
pub(super) fn block_size(q: &Map<String, Value>) -> Option<(u64, u64)> {
    match q.get("weight_block_size")?.as_array()?.as_slice() {
        [n, k] => Some((n.as_u64()?, k.as_u64()?)).filter(|&(n, k)| n > 0 && k > 0),
        _ => None,
    }
}

/// Module names a `quantization_config` leaves unquantised (SGLang's FP8 config reads the first
/// two, ModelOpt `exclude_modules`, compressed-tensors `ignore`, bitsandbytes `llm_int8_skip_modules`).
pub(super) fn ignored_layers(q: &Map<String, Value>) -> Vec<String> {
    [
        "ignored_layers",
        "modules_to_not_convert",
        "exclude_modules",
        "ignore",
        "llm_int8_skip_modules",
    ]
    .iter()
    .filter_map(|k| q.get(*k)?.as_array())
    .flatten()
    .filter_map(|v| v.as_str().map(str::to_owned))
    .collect()
}

/// `kv_cache_quant_algo` / `kv_cache_scheme` of a `quantization_config` asks for an FP8 KV cache.
pub(super) fn kv_cache_fp8(q: &Map<String, Value>) -> bool {
    q.get("kv_cache_quant_algo")
        .and_then(Value::as_str)
        .is_some_and(|a| a.to_ascii_uppercase().contains("FP8"))
        || q.get("kv_cache_scheme").is_some_and(|k| {
            k.get("num_bits").and_then(Value::as_u64) == Some(8)
                && k.get("type").and_then(Value::as_str) == Some("float")
        })
}

/// SGLang's mark of a hybrid FP8 + NVFP4 checkpoint (read from 0.5.15): mixed precision with
/// NVFP4 experts and a group size, whatever `quant_method` says.
pub(super) fn nvfp4_moe_hybrid(q: &Map<String, Value>) -> bool {
    let upper = |k: &str| {
        q.get(k)
            .and_then(Value::as_str)
            .map(str::to_ascii_uppercase)
    };
    upper("quant_algo").as_deref() == Some("MIXED_PRECISION")
        && upper("moe_quant_algo").as_deref() == Some("NVFP4")
        && q.get("group_size").is_some_and(|g| !g.is_null())
}

/// The config marks its routed experts MXFP4 inside another method's checkpoint: mixed FP8 +
/// MXFP4 exports (`routed_experts_quant_method`), MiMo-V2's (`store_dtype`).
pub(super) fn fp4_experts_marked(q: &Map<String, Value>) -> bool {
    let is_mxfp4 = |k: &str| {
        q.get(k)
            .and_then(Value::as_str)
            .is_some_and(|v| v.eq_ignore_ascii_case("mxfp4"))
    };
    is_mxfp4("routed_experts_quant_method") || is_mxfp4("store_dtype")
}

/// compressed-tensors W8A8-INT8: a config group whose weights and input activations are both
/// 8-bit integers (llm-compressor's `W8A8` preset, static or dynamic).
pub(super) fn compressed_w8a8_int8(q: &Map<String, Value>) -> bool {
    let int8 = |g: &Value, part: &str| {
        g.pointer(&format!("/{part}/num_bits"))
            .and_then(Value::as_u64)
            == Some(8)
            && g.pointer(&format!("/{part}/type")).and_then(Value::as_str) == Some("int")
    };
    method(q).as_deref() == Some("compressed-tensors")
        && q.get("config_groups")
            .and_then(Value::as_object)
            .is_some_and(|g| {
                g.values()
                    .any(|g| int8(g, "weights") && int8(g, "input_activations"))
            })
}

/// A weight bit width from a config: 1–32, else not believed.
pub(super) fn plausible_bits(b: u64) -> Option<u32> {
    u32::try_from(b).ok().filter(|b| (1..=32).contains(b))
}

/// The scheme SGLang's compressed-tensors config picks for a config group's linear layers, by
/// the tests its releases make (which releases can build which scheme is the rules' business).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CompressedScheme {
    /// Integer weights per group or channel, symmetric and static, no activation quantisation
    /// (llm-compressor's W4A16 / W8A16).
    Wna16,
    /// The same with asymmetric weights (zero points: the W4A16_ASYM preset, AWQ exports).
    Wna16Asym,
    /// FP8 weights and activations, per tensor or channel (the FP8 and FP8-dynamic presets).
    Fp8W8a8,
    /// FP8 weights only, per tensor or channel.
    Fp8WeightOnly,
    /// NVFP4: FP4 weights and activations in symmetric tensor groups of 16 (the NVFP4 preset).
    Nvfp4,
    /// NVFP4 weights with activations left unquantised (the NVFP4A16 preset).
    Nvfp4WeightOnly,
    /// FP4 weights per group or channel with activations left unquantised (the MXFP4A16
    /// preset): the integer weight-only test of releases before 0.5.22 takes them too.
    Fp4WeightOnlyGroup,
    /// Anything else (INT8 activations, block FP8, …).
    Other,
}

/// The scheme of each compressed-tensors config group, in the config's order; empty for other
/// methods.
pub(super) fn compressed_schemes(q: &Map<String, Value>) -> Vec<CompressedScheme> {
    if method(q).as_deref() != Some("compressed-tensors") {
        return Vec::new();
    }
    // The formats whose layers may quantise activations too (compressed-tensors' names).
    let activation_format = matches!(
        q.get("format").and_then(Value::as_str),
        Some("naive-quantized" | "int-quantized" | "float-quantized")
    );
    (q.get("config_groups").and_then(Value::as_object))
        .into_iter()
        .flat_map(|g| g.values())
        .map(|g| scheme_of(g, activation_format))
        .collect()
}

fn scheme_of(group: &Value, activation_format: bool) -> CompressedScheme {
    let Some(w) = group.get("weights").filter(|w| w.is_object()) else {
        return CompressedScheme::Other;
    };
    let input = group.get("input_activations").filter(|a| a.is_object());
    let flag =
        |v: &Value, k: &str, default: bool| v.get(k).and_then(Value::as_bool).unwrap_or(default);
    let static_symmetric = flag(w, "symmetric", true) && !flag(w, "dynamic", false);
    let float = |v: &Value| v.get("type").and_then(Value::as_str) == Some("float");
    if nvfp4_args(w) {
        match input {
            None => return CompressedScheme::Nvfp4WeightOnly,
            Some(a) if nvfp4_args(a) => return CompressedScheme::Nvfp4,
            Some(_) => {}
        }
    }
    let strategy = weight_strategy(w);
    let per_tensor_or_channel = matches!(strategy, "tensor" | "channel");
    if input.is_none() && !flag(w, "dynamic", false) && matches!(strategy, "group" | "channel") {
        if float(w) && w.get("num_bits").and_then(Value::as_u64) == Some(4) {
            return CompressedScheme::Fp4WeightOnlyGroup;
        }
        return match flag(w, "symmetric", true) {
            true => CompressedScheme::Wna16,
            false => CompressedScheme::Wna16Asym,
        };
    }
    if !activation_format || !float(w) || !static_symmetric || !per_tensor_or_channel {
        return CompressedScheme::Other;
    }
    match input {
        Some(a) if float(a) => CompressedScheme::Fp8W8a8,
        _ => CompressedScheme::Fp8WeightOnly,
    }
}

/// One side of SGLang's NVFP4 test: 4-bit floats, symmetric, in tensor groups of 16.
fn nvfp4_args(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("float")
        && v.get("num_bits").and_then(Value::as_u64) == Some(4)
        && v.get("group_size").and_then(Value::as_u64) == Some(16)
        && v.get("strategy").and_then(Value::as_str) == Some("tensor_group")
        && v.get("symmetric").and_then(Value::as_bool).unwrap_or(true)
}

/// A weight group's `strategy`, or what compressed-tensors infers without one: per group with a
/// positive `group_size`, per channel with -1, else per tensor.
fn weight_strategy(w: &Value) -> &str {
    if let Some(s) = w.get("strategy").and_then(Value::as_str) {
        return s;
    }
    match w.get("group_size").and_then(Value::as_i64) {
        Some(g) if g > 0 => "group",
        Some(-1) => "channel",
        _ => "tensor",
    }
}
