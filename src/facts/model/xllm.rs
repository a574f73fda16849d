//! SGLang's native xLLM family (`model_type` `xllm`, and K2 Horizon's `k2_horizon`): the few
//! config fields its model module validates before it builds any layer.

use serde_json::{Map, Value};

/// What the native xLLM path reads from config.json (after `--json-model-override-args`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Xllm {
    /// `mova_num_experts`: value experts in attention (MoVA); 0 for a dense-attention model.
    pub mova_experts: u64,
    /// `xllm_source_router_gemm_partitions` as the JSON text config.json gives, when present:
    /// the router's source sharding, which SGLang will not infer.
    pub router_partitions: Option<String>,
}

/// The native family's `model_type`s.
const MODEL_TYPES: [&str; 2] = ["xllm", "k2_horizon"];

/// The family's fields, for a config of one of its model types.
pub(super) fn read(top: &Map<String, Value>) -> Option<Xllm> {
    let model_type = top.get("model_type").and_then(Value::as_str)?;
    MODEL_TYPES.contains(&model_type).then(|| Xllm {
        mova_experts: (top.get("mova_num_experts"))
            .and_then(Value::as_u64)
            .unwrap_or(0),
        router_partitions: (top.get("xllm_source_router_gemm_partitions")).map(Value::to_string),
    })
}
