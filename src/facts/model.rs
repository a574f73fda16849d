//! Model facts from `--model-path`: config.json, quantisation, weight bytes. Offline only.

use std::path::PathBuf;

/// What the rules and the memory planner need to know about the model.
/// Fields are `None` when the config does not say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelFacts {
    /// The directory the config was read from.
    pub dir: PathBuf,
    /// `architectures[0]`, e.g. `Qwen3ForCausalLM`.
    pub architecture: Option<String>,
    /// `model_type`, e.g. `qwen3`, `deepseek_v3`.
    pub model_type: Option<String>,
    pub num_hidden_layers: Option<u64>,
    pub hidden_size: Option<u64>,
    pub num_attention_heads: Option<u64>,
    pub num_key_value_heads: Option<u64>,
    pub head_dim: Option<u64>,
    /// MLA (DeepSeek-style): `kv_lora_rank` and `qk_rope_head_dim`.
    pub kv_lora_rank: Option<u64>,
    pub qk_rope_head_dim: Option<u64>,
    pub vocab_size: Option<u64>,
    pub max_position_embeddings: Option<u64>,
    /// MoE: routed experts and experts per token.
    pub num_experts: Option<u64>,
    pub num_experts_per_tok: Option<u64>,
    /// `torch_dtype` / `dtype` from the config.
    pub dtype: Option<String>,
    /// `quantization_config.quant_method` (fp8, awq, gptq, modelopt_fp4, mxfp4, …).
    pub quant_method: Option<String>,
    /// Total bytes of the checkpoint's tensors, when known (safetensors headers or index).
    pub weight_bytes: Option<u64>,
}
