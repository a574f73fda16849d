//! The `quantization_config` of a checkpoint: bit width, block size, unquantised modules.

use serde_json::{Map, Value};

/// Weight bits of a `quantization_config`: `bits` / `w_bit`, else what the method or
/// modelopt's `quant_algo` implies, else compressed-tensors' `config_groups.*.weights.num_bits`.
pub(super) fn weight_bits(q: &Map<String, Value>) -> Option<u32> {
    q.get("bits")
        .or_else(|| q.get("w_bit"))
        .and_then(Value::as_u64)
        .and_then(plausible_bits)
        .or_else(|| match q.get("quant_method").and_then(Value::as_str) {
            Some("mxfp4") | Some("modelopt_fp4") => Some(4),
            Some("fp8") | Some("modelopt_fp8") | Some("modelopt") => Some(8),
            _ => None,
        })
        .or_else(|| {
            // modelopt: {"quant_algo": "NVFP4"|"FP8"}; compressed-tensors: config_groups.*.weights.num_bits
            let algo = q.get("quant_algo").and_then(Value::as_str).unwrap_or("");
            if algo.contains("FP4") {
                Some(4)
            } else if algo.contains("FP8") {
                Some(8)
            } else {
                q.get("config_groups")
                    .and_then(Value::as_object)
                    .and_then(|g| g.values().next())
                    .and_then(|g| g.pointer("/weights/num_bits"))
                    .and_then(Value::as_u64)
                    .and_then(plausible_bits)
            }
        })
}

/// `weight_block_size: [n, k]` of a `quantization_config`; anything else is not a block size.
pub(super) fn block_size(q: &Map<String, Value>) -> Option<(u64, u64)> {
    match q.get("weight_block_size")?.as_array()?.as_slice() {
        [n, k] => Some((n.as_u64()?, k.as_u64()?)).filter(|&(n, k)| n > 0 && k > 0),
        _ => None,
    }
}

/// Module names a `quantization_config` leaves unquantised (SGLang's FP8 config reads both keys).
pub(super) fn ignored_layers(q: &Map<String, Value>) -> Vec<String> {
    ["ignored_layers", "modules_to_not_convert"]
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

/// A weight bit width from a config: 1–32, else not believed.
pub(super) fn plausible_bits(b: u64) -> Option<u32> {
    u32::try_from(b).ok().filter(|b| (1..=32).contains(b))
}
