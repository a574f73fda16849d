//! Model facts from `--model-path`: config.json, quantisation, weight bytes, read from disk.
//!
//! `--model-path` is a local directory or a Hugging Face id looked up in `--download-dir` and
//! the local HF cache (`HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`);
//! a snapshot fetched from the Hub ([`crate::facts::hub`]) is read with [`load_dir`] the same way.
//! Weight bytes come from the safetensors headers (only the 8-byte length and the JSON header
//! are read), else from `model.safetensors.index.json`, else from the Hub's parameter counts
//! recorded in a fetched snapshot, else from an estimate from the dimensions.

use crate::sglang::opt;
use crate::sglang::release::at_least;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Env;
use crate::sglang::SglangArgs;

mod args;
mod config;
mod context;
pub mod deepseek_v4;
pub(crate) mod defaults;
pub(crate) mod encoder;
mod estimate;
mod files;
pub(crate) mod hybrid;
pub(crate) mod layouts;
mod local;
mod missing;
pub mod nemotron_h;
mod online;
pub(crate) mod plausible;
pub mod quant;
pub mod registry;
#[cfg(test)]
mod tests;
pub mod xllm;

pub(crate) use args::float32_served_as;
use args::{apply_args, merge_override};
pub use config::facts_from_config;
pub(crate) use config::facts_read_by;
pub(crate) use context::Transformers;
pub use estimate::{MAX_WEIGHT_ESTIMATE_BYTES, estimate_weight_bytes};
pub(crate) use estimate::{Parts, weight_breakdown};
use files::weight_bytes_from_files;
pub use files::{safetensors_bytes_in, safetensors_tensor_bytes};
use local::{read_json, resolve_dir};
pub(crate) use plausible::Implausible;

/// Where `weight_bytes` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightSource {
    /// Sum of tensor sizes in the safetensors headers.
    SafetensorsHeaders,
    /// `model.safetensors.index.json` `metadata.total_size`.
    Index,
    /// The Hub's parameter counts per dtype, recorded in a fetched snapshot.
    HubMetadata,
    /// Estimated from the config's dimensions and quantisation.
    #[default]
    Estimate,
}

/// Architectures SGLang gives a sparse-attention indexer when their config has `index_topk`, each
/// with the first release whose list names it (`is_deepseek_nsa` / `is_deepseek_dsa`, read in
/// every wheel). A release before that serves the architecture, if at all, as plain MLA.
const DSA_ARCHITECTURES: &[(&str, &str)] = &[
    ("DeepseekV3ForCausalLM", "0.5.3rc2"),
    ("DeepseekV32ForCausalLM", "0.5.3rc2"),
    ("MistralLarge3ForCausalLM", "0.5.6.post1"),
    ("PixtralForConditionalGeneration", "0.5.6.post1"),
    ("GlmMoeDsaForCausalLM", "0.5.9"),
    ("LongcatFlashForCausalLM", "0.5.16"),
    ("Dots3NoteForCausalLM", "0.5.19"),
    ("Glm5NextForConditionalGeneration", "0.5.20"),
    ("HYV4ForCausalLM", "0.5.20"),
];

/// A DSA model's indexer top-k shared across layers, as config.json marks it (SGLang reads each
/// key with its own default: a frequency of 1, no pattern, no layer types).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DsaIndexSharing {
    /// `index_topk_freq`: every how many layers compute their own top-k.
    pub freq: Option<u64>,
    /// `index_topk_pattern` has an `S` (a layer that takes another's top-k).
    pub pattern_shared: bool,
    /// `indexer_types` lists a `shared` layer.
    pub types_shared: bool,
}

/// What the rules and the memory planner need to know about the model.
/// Fields are `None` when the config does not say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelFacts {
    /// The directory the config was read from.
    pub dir: PathBuf,
    /// `architectures[0]`, e.g. `Qwen3ForCausalLM`.
    pub architecture: Option<String>,
    /// What SGLang's model registry looks the checkpoint up by (every name in `architectures`).
    pub registry: registry::RegistryKeys,
    /// `model_type`, e.g. `qwen3`, `deepseek_v3` (of the text model for multimodal configs).
    pub model_type: Option<String>,
    pub num_hidden_layers: Option<u64>,
    pub hidden_size: Option<u64>,
    pub num_attention_heads: Option<u64>,
    pub num_key_value_heads: Option<u64>,
    pub head_dim: Option<u64>,
    /// Gemma 4's head size on its global (full-attention) layers, `global_head_dim`.
    pub global_head_dim: Option<u64>,
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
    /// The top level's own `torch_dtype` / `dtype` (not a text config's): what SGLang's
    /// `--dtype auto` reads, `--dtype` left out of it.
    pub top_dtype: Option<String>,
    /// `quantization_config.quant_method` (fp8, awq, gptq, modelopt_fp4, mxfp4, …), or `--quantization`.
    pub quant_method: Option<String>,
    /// Total bytes of the checkpoint's tensors, when known (safetensors headers or index), else an estimate.
    pub weight_bytes: Option<u64>,
    pub weight_source: WeightSource,
    /// Dense MLP width and the MoE expert width.
    pub intermediate_size: Option<u64>,
    pub moe_intermediate_size: Option<u64>,
    /// Shared experts per MoE layer (`n_shared_experts`, Kimi's `num_shared_experts`).
    pub n_shared_experts: Option<u64>,
    /// A latent MoE's routed-expert width (Kimi-K3's `routed_expert_hidden_size`): the experts
    /// work in it, between a down and an up projection of the hidden state.
    pub expert_hidden_size: Option<u64>,
    /// DeepSeek-style: the first k layers are dense.
    pub first_k_dense_replace: Option<u64>,
    /// Llama-4-style interleaving: every `step`-th layer is MoE, the others dense with
    /// `dense_intermediate_size` (`intermediate_size_mlp`); `intermediate_size` is the expert's.
    pub moe_layer_step: Option<u64>,
    pub dense_intermediate_size: Option<u64>,
    pub qk_nope_head_dim: Option<u64>,
    pub v_head_dim: Option<u64>,
    pub q_lora_rank: Option<u64>,
    pub tie_word_embeddings: bool,
    /// MTP / NextN layers shipped with the checkpoint (not in `num_hidden_layers`).
    pub num_nextn_predict_layers: Option<u64>,
    /// The checkpoint carries a DSpark draft head (any `dspark_*` key SGLang reads as the mark).
    pub bundles_dspark_draft: bool,
    /// A DFlash draft's block size as SGLang reads it from this config (see `config.rs`); SGLang
    /// takes 16 where there is none.
    pub dflash_block_size: Option<u64>,
    /// config.json has a `dual_chunk_attention_config` (Qwen2.5-1M's long-context attention):
    /// SGLang then runs the dual-chunk flash-attention backend and refuses any other.
    pub dual_chunk_attention: bool,
    /// Sliding-window attention: window size, and how many of the layers use it (hybrid models).
    pub sliding_window: Option<u64>,
    pub num_sliding_layers: Option<u64>,
    /// Mamba / linear-attention hybrids: the layers that keep a KV cache (the rest keep a
    /// per-request state instead).
    pub num_full_attention_layers: Option<u64>,
    /// DeepSeek sparse attention (DSA/NSA): the indexer's key width per layer.
    pub index_head_dim: Option<u64>,
    /// DeepSeek sparse attention's indexer top-k (`index_topk`): with a DSA architecture, the
    /// mark SGLang reads to run the sparse-attention indexer.
    pub index_topk: Option<u64>,
    /// How a DSA config shares the indexer's top-k across layers.
    pub dsa_index_sharing: DsaIndexSharing,
    /// Weight bits for integer/fp4 quantisations (awq/gptq `bits`, fp4 = 4).
    pub weight_bits: Option<u32>,
    /// How the checkpoint stores its quantised weights (None: not quantised, or only
    /// `--quantization` says so).
    pub weight_format: Option<quant::WeightFormat>,
    /// The checkpoint leaves attention unquantised (MXFP4 experts only, a `*self_attn*` exclusion).
    pub attention_unquantised: bool,
    /// The checkpoint leaves every shared expert unquantised (a `*shared_expert*` exclusion).
    pub shared_experts_unquantised: bool,
    /// Block-quantised checkpoints: `quantization_config.weight_block_size` as (block_n, block_k).
    pub weight_block_size: Option<(u64, u64)>,
    /// Layers the checkpoint leaves unquantised (`ignored_layers`, `modules_to_not_convert`).
    pub quant_ignored: Vec<String>,
    /// A GPTQ checkpoint's `quantization_config` has what SGLang's GPTQ Marlin method takes
    /// (`bits` 4 or 8, `sym` true, `desc_act` set, `group_size` -1, 32, 64 or 128). `None`: the
    /// checkpoint is not GPTQ.
    pub gptq_marlin_config: Option<bool>,
    /// Of the keys every GPTQ config reader requires (`bits`, `group_size`, `desc_act`), those a
    /// GPTQ `quantization_config` lacks (empty for other methods).
    pub gptq_missing_keys: Vec<String>,
    /// An AWQ checkpoint's `quantization_config` has what SGLang's AWQ Marlin method takes
    /// (`bits` 4, `zero_point` set, `group_size` -1, 32, 64 or 128). `None`: not AWQ.
    pub awq_marlin_config: Option<bool>,
    /// Qwen-MoE-style shared expert width (`shared_expert_intermediate_size`).
    pub shared_expert_intermediate_size: Option<u64>,
    /// `kv_cache_quant_algo` / `kv_cache_scheme` says the checkpoint wants an FP8 KV cache.
    pub kv_cache_fp8: bool,
    /// A compressed-tensors checkpoint with 8-bit integer weights and activations (W8A8-INT8).
    pub compressed_w8a8_int8: bool,
    /// The scheme of each compressed-tensors config group (empty for other methods).
    pub compressed_schemes: Vec<quant::CompressedScheme>,
    /// A hybrid FP8 + NVFP4 checkpoint as SGLang marks it (mixed precision, NVFP4 experts, a
    /// group size), which its NVFP4 MoE runners take whatever `--quantization` holds.
    pub nvfp4_moe_hybrid: bool,
    /// config.json's quantisation marks the routed experts MXFP4 (a mixed FP8 + MXFP4 export).
    pub fp4_experts_marked: bool,
    /// The config has a `vision_config` (multimodal); its depth and width (SGLang's VLM mfs adjustment).
    pub is_multimodal: bool,
    pub vision_layers: Option<u64>,
    pub vision_hidden_size: Option<u64>,
    /// Context length the server will use: `--context-length`, else the derived one.
    pub context_length: Option<u64>,
    /// The context length SGLang derives from the config (context keys × RoPE factor).
    pub derived_context_length: Option<u64>,
    /// How far a RoPE scaling that keeps its original window reaches (original × factor).
    pub rope_scaled_length: Option<u64>,
    /// `--kv-cache-dtype` as given (`auto` when not given).
    pub kv_cache_dtype: String,
    /// Mamba / linear-attention hybrids: the linear layers' recurrent state shape.
    pub linear_state: Option<hybrid::LinearState>,
    /// Kimi's KDA layers: one layer's token-mixer parameters and the replicated part of them.
    pub kda_mixer_params: Option<(u64, u64)>,
    /// Kimi-K3's MLA layers gate their output (`mla_use_output_gate`): one more projection.
    pub mla_output_gate: bool,
    /// Vision towers and audio encoders (`vision_config`, `audio_config`).
    pub encoders: Vec<encoder::EncoderDims>,
    /// The checkpoint's own `quant_method` (`quant_method` also takes `--quantization`).
    pub checkpoint_quant_method: Option<String>,
    /// config.json's own `quantization_config.quant_method`, lowercased, as SGLang's model config
    /// compares it with `--quantization` (none when it came from `hf_quant_config.json`).
    pub config_quant_method: Option<String>,
    /// `config_quant_method` is the language model's (`text_config`, `llm_config`,
    /// `language_config`), which SGLang copies onto a top level without one from 0.4.4.
    pub config_quant_nested: bool,
    /// A ModelOpt `hf_quant_config.json` that gave the checkpoint its quantisation, config.json
    /// naming none.
    pub hf_quant: Option<HfQuant>,
    /// Online quantisation (`--quantization fp8` on a 16-bit checkpoint): the checkpoint's
    /// bytes, all resident before SGLang quantises them; `weight_bytes` is then the quantised size.
    pub online_quant_load_bytes: Option<u64>,
    /// Values no real model has (config.json, safetensors headers, the index), left out of the
    /// facts above: the memory plan is not made on them (MEM013).
    pub implausible: Vec<Implausible>,
    /// DeepSeek-V4's own dimensions, for its official block-FP8 checkpoint layout.
    pub deepseek_v4: Option<deepseek_v4::V4Layout>,
    /// Nemotron-H's layers, kind by kind (the weight estimate sizes them one by one).
    pub nemotron_h: Option<nemotron_h::Layout>,
    /// The native xLLM family's own fields (xLLM, K2 Horizon).
    pub xllm: Option<xllm::Xllm>,
}

/// A ModelOpt `hf_quant_config.json` read beside config.json.
#[derive(Debug, Clone, PartialEq)]
pub struct HfQuant {
    /// Its `quant_algo` as the file gives it: SGLang compares it case by case.
    pub algo: String,
    /// The method it makes here (`modelopt_fp4`, `modelopt_mixed`, ...).
    pub method: String,
    /// Read from a Hugging Face cache snapshot: the release may look the file up on the Hub
    /// rather than in a local directory, and some read the two apart.
    pub hub: bool,
}

impl HfQuant {
    /// A ModelOpt mixed-precision export (FP8 and NVFP4 or INT4 layers, layer by layer).
    pub fn mixed_precision(&self) -> bool {
        self.algo == "MIXED_PRECISION"
    }
}

impl ModelFacts {
    /// MLA attention (latent KV): SGLang sizes the KV cache from `kv_lora_rank + qk_rope_head_dim`.
    /// An implausible `kv_lora_rank` still says the model is MLA.
    pub fn is_mla(&self) -> bool {
        self.kv_lora_rank.is_some()
            || self
                .implausible
                .iter()
                .any(|i| i.key.rsplit('.').next() == Some("kv_lora_rank"))
    }

    /// K and V row widths when they differ (`head_dim` against `v_head_dim`, a model without
    /// MLA): SGLang's asymmetric K/V.
    pub fn asymmetric_kv(&self) -> Option<(u64, u64)> {
        if self.is_mla() {
            return None;
        }
        let (k, v) = (self.head_dim_or_derived()?, self.v_head_dim?);
        (k != v).then_some((k, v))
    }

    /// DeepSeek sparse attention (DSA/NSA) in `version`: an architecture that release runs the
    /// indexer for, with an `index_topk` in its config (SGLang's own test).
    pub fn is_dsa(&self, version: &str) -> bool {
        let arch = self.architecture.as_deref();
        self.index_topk.is_some()
            && DSA_ARCHITECTURES
                .iter()
                .any(|&(a, since)| arch == Some(a) && at_least(version, since))
    }

    /// The method SGLang `version` reads from the checkpoint. A ModelOpt mixed-precision export
    /// with NVFP4 layers kept in `hf_quant_config.json` (`modelopt_mixed` from 0.5.15) was
    /// `w4afp8` to 0.4.9.post1 – 0.5.9, and to 0.5.10rc0 – 0.5.14 unless the model is a
    /// Nemotron-H. One that config.json names is read the same way once the model config parses
    /// config.json's ModelOpt block by its `quant_algo` (see `config_read_by_algo`); before,
    /// the launcher's reading stands.
    pub fn quant_method_in(&self, version: &str) -> Option<String> {
        let q = self.quant_method.as_deref()?;
        Some(
            if self.hf_quant.is_some() || self.config_read_by_algo(version) {
                self.method_in(q, version)
            } else {
                q.to_owned()
            },
        )
    }

    /// `w4afp8` where release `version` reads config.json's own ModelOpt block by its
    /// `quant_algo` and makes it that method (a mixed-precision export before 0.5.15): the
    /// method its model config then holds `--quantization` against.
    pub fn config_read_as_w4afp8(&self, version: &str) -> bool {
        self.config_read_by_algo(version)
            && (self.checkpoint_quant_method.as_deref())
                .is_some_and(|q| self.method_in(q, version) == "w4afp8")
    }

    /// SGLang's model config reads config.json's own ModelOpt `quantization_config` by its
    /// `quant_algo`, as it reads `hf_quant_config.json`: from 0.5.9 when the block names no
    /// `quant_method`, from 0.5.10rc0 also when it names `modelopt` (read in the wheels; the
    /// model config of 0.5.9, 0.5.10rc0, 0.5.13, 0.5.14, 0.5.15 and 0.5.21 on NVIDIA's
    /// Qwen3.6-35B-A3B-NVFP4 export says `modelopt`, `w4afp8` four times, `modelopt_mixed`).
    fn config_read_by_algo(&self, version: &str) -> bool {
        match self.config_quant_method.as_deref() {
            Some("modelopt") => at_least(version, "0.5.10rc0"),
            // A block without the key (the method came from config.json, not from
            // hf_quant_config.json alone).
            None => {
                self.hf_quant.is_none()
                    && self.checkpoint_quant_method.is_some()
                    && at_least(version, "0.5.9")
            }
            Some(_) => false,
        }
    }

    /// `method` as release `version` names it (see `quant_method_in`).
    fn method_in(&self, method: &str, version: &str) -> String {
        let nemotron_h = self.model_type.as_deref() == Some("nemotron_h")
            || self
                .architecture
                .as_deref()
                .is_some_and(|a| a.starts_with("NemotronH"));
        let w4afp8 = method == "modelopt_mixed"
            && at_least(version, "0.4.9.post1")
            && !at_least(version, "0.5.15")
            && !(nemotron_h && at_least(version, "0.5.10rc0"));
        if w4afp8 { "w4afp8" } else { method }.to_owned()
    }

    /// The methods SGLang `version`'s model config may read from a folded-in
    /// `hf_quant_config.json` and hold `--quantization` against: from 0.4.5.post1 `modelopt`,
    /// and for a local mixed-precision export `w4afp8` from 0.4.9.post1; from 0.5.3.post1 it
    /// parses the file's `quant_algo`. Two where a hub and a local checkpoint are read apart.
    pub fn hf_quant_methods_in(&self, version: &str) -> Vec<String> {
        let Some(hq @ HfQuant { algo, method, hub }) = self.hf_quant.as_ref() else {
            return vec![];
        };
        let mixed = hq.mixed_precision();
        if !at_least(version, "0.4.5.post1") {
            return vec![];
        }
        if at_least(version, "0.5.3.post1") {
            let parsed = if mixed {
                Some(method.as_str())
            } else {
                parsed_algo(algo, version)
            };
            return parsed
                .map(|m| self.method_in(m, version))
                .into_iter()
                .collect();
        }
        let local_mixed = mixed && at_least(version, "0.4.9.post1");
        let mut out = vec![];
        if *hub || !local_mixed {
            out.push("modelopt".to_owned());
        }
        if local_mixed {
            out.push("w4afp8".to_owned());
        }
        out
    }

    /// The FP8 KV-cache dtype to suggest for this model: DeepSeek's sparse-attention indexer
    /// takes fp8_e4m3 only; elsewhere fp8_e5m2.
    pub fn fp8_kv_cache_dtype(&self, version: &str) -> &'static str {
        if self.is_dsa(version) {
            "fp8_e4m3"
        } else {
            "fp8_e5m2"
        }
    }

    /// Every fact read is plausible: the memory plan may be made on them.
    pub(crate) fn plausible(&self) -> bool {
        self.implausible.is_empty()
    }

    /// DeepSeek-V4's layout when the checkpoint is the official packing (MXFP4 experts in a
    /// block-FP8 config), the one its weight estimate and loaded sizes follow.
    pub fn deepseek_v4_official(&self) -> Option<&deepseek_v4::V4Layout> {
        self.deepseek_v4.as_ref().filter(|l| l.mxfp4_experts)
    }

    /// Head dimension: explicit `head_dim`, else hidden / heads.
    pub fn head_dim_or_derived(&self) -> Option<u64> {
        self.head_dim.or_else(|| {
            let h = self.hidden_size?;
            let n = self.num_attention_heads?;
            (n > 0).then(|| h / n)
        })
    }

    /// Bytes of the encoders (vision / audio towers), in the model dtype.
    pub fn encoder_bytes(&self) -> u64 {
        encoder::bytes(&self.encoders, self.dtype_bytes())
    }

    /// Bytes per element of the model's activations (`torch_dtype`; bf16 when absent).
    pub(crate) fn dtype_bytes(&self) -> u64 {
        match self.dtype.as_deref() {
            Some("float32") | Some("fp32") => 4,
            _ => 2,
        }
    }
}

/// Why the model's facts are missing or partly estimated. Display is one line naming the path
/// and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ModelProblem {
    /// The model can't be found offline (not a local dir, not in the HF cache).
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
    /// A file was found but can't be understood.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// Not on disk, and the Hugging Face Hub did not give its files.
    #[error(transparent)]
    Hub(#[from] super::hub::HubProblem),
}

/// Why the model can't be found offline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unavailable {
    /// `--model-path` is neither a directory nor a Hugging Face id in the local cache.
    #[error("{model_path}: not a local directory and not in the Hugging Face cache")]
    NotCached { model_path: String },
    /// The Hugging Face id is cached, but not at this `--revision`.
    #[error(
        "{model_path}: not a local directory, and revision {revision} is not in the Hugging Face cache"
    )]
    RevisionNotCached {
        model_path: String,
        revision: String,
    },
    /// The model's directory has no such file (`config.json`); `error` is the OS's message.
    #[error("{}: {error}", .path.display())]
    Missing { path: PathBuf, error: String },
}

/// Why a model file that was found can't be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Invalid {
    /// The file could not be read; `error` is the OS's message.
    #[error("{}: {error}", .path.display())]
    Unreadable { path: PathBuf, error: String },
    /// Not JSON; `error` is the JSON reader's message.
    #[error("{}: invalid JSON: {error}", .path.display())]
    Json { path: PathBuf, error: String },
    /// JSON, but the config is not an object.
    #[error("{}: not a JSON object", .path.display())]
    NotAnObject { path: PathBuf },
    #[error("--json-model-override-args is not a JSON object")]
    OverrideNotAnObject,
    /// `model.safetensors.index.json` whose `metadata.total_size` is not a number.
    #[error("{}: metadata.total_size is not a number", .path.display())]
    IndexTotalSize { path: PathBuf },
    #[error(transparent)]
    Safetensors(#[from] SafetensorsError),
}

/// A safetensors file whose header can't be read (only the header is ever read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", .path.display())]
pub struct SafetensorsError {
    pub(crate) path: PathBuf,
    pub(crate) problem: HeaderProblem,
}

/// What is wrong with a safetensors header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderProblem {
    /// Opening or reading the file failed (the OS's message).
    #[error("{0}")]
    Io(String),
    #[error("truncated safetensors header")]
    Truncated,
    /// A header length of zero, beyond the file, or beyond any real header. The length is the
    /// file's first 8 bytes, which a message must not show (the path may name any file).
    #[error(
        "implausible safetensors header length (zero, past the end of the file or over 100 MiB): not a safetensors file"
    )]
    Length(u64),
    #[error("invalid header JSON: {0}")]
    Json(String),
    #[error("safetensors header is not an object")]
    NotAnObject,
    #[error("tensor {0} has no data_offsets")]
    NoOffsets(String),
    #[error("tensor {0} has bad data_offsets")]
    BadOffsets(String),
}

/// The outcome of reading the model: facts when possible, else (or also) a problem.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelLoad {
    pub facts: Option<ModelFacts>,
    pub(crate) problem: Option<ModelProblem>,
}

impl From<ModelFacts> for ModelLoad {
    /// Facts already read (a test's, or another reader's), with nothing to report.
    fn from(facts: ModelFacts) -> ModelLoad {
        ModelLoad {
            facts: Some(facts),
            problem: None,
        }
    }
}

impl ModelLoad {
    /// No facts, for this reason.
    fn failed(problem: impl Into<ModelProblem>) -> ModelLoad {
        ModelLoad {
            facts: None,
            problem: Some(problem.into()),
        }
    }
}

/// Weight bytes from the dimensions: the language model's estimate plus its encoders, which
/// the estimate does not count.
fn estimate_with_encoders(facts: &mut ModelFacts) {
    facts.weight_bytes =
        estimate_weight_bytes(facts).map(|b| b.saturating_add(facts.encoder_bytes()));
    facts.weight_source = WeightSource::Estimate;
}

/// Read the model's facts, honouring the SGLang arguments that change them.
pub fn load(model_path: &str, env: &Env, args: &SglangArgs) -> ModelLoad {
    load_at(model_path, args.str(opt::REVISION), env, args)
}

/// [`load`] at this revision (the separate draft has its own).
pub(crate) fn load_at(
    model_path: &str,
    revision: Option<&str>,
    env: &Env,
    args: &SglangArgs,
) -> ModelLoad {
    match locate(model_path, revision, env, args) {
        Ok(dir) => load_dir(dir, args),
        Err(problem) => ModelLoad::failed(problem),
    }
}

/// The directory SGLang would read `model_path` from at this revision: the path itself, or its
/// snapshot in `--download-dir` or the local Hugging Face cache.
pub(crate) fn locate(
    model_path: &str,
    revision: Option<&str>,
    env: &Env,
    args: &SglangArgs,
) -> Result<PathBuf, Unavailable> {
    let revision = revision.filter(|r| !r.is_empty());
    let download_dir = args.str(opt::DOWNLOAD_DIR).filter(|d| !d.is_empty());
    resolve_dir(model_path, env, revision, download_dir).ok_or_else(|| {
        let model_path = model_path.to_owned();
        match revision {
            Some(r) => Unavailable::RevisionNotCached {
                model_path,
                revision: r.to_owned(),
            },
            None => Unavailable::NotCached { model_path },
        }
    })
}

/// Read the model's facts from its directory (local, cached or fetched).
pub fn load_dir(dir: PathBuf, args: &SglangArgs) -> ModelLoad {
    ModelFiles::read(dir).facts(args)
}

/// What a model's directory holds, read once. Facts under given arguments are derived from it
/// without reading anything again ([`ModelFiles::facts`]): a fix round that changes an option
/// shaping the facts (`--context-length`, `--kv-cache-dtype`) costs no I/O.
#[derive(Debug, Clone)]
pub(crate) struct ModelFiles {
    dir: PathBuf,
    /// config.json as read, or why it could not be.
    config: Result<ConfigRead, ModelProblem>,
    /// The weight bytes the files give (`None`: estimate them), or why they could not be read.
    weights: Result<Option<files::FileWeights>, Invalid>,
    /// What reading the weight files found implausible.
    implausible: Vec<Implausible>,
}

/// config.json as read: with a ModelOpt `hf_quant_config.json` folded in (and what that gave),
/// and its own `quant_method` (and whether the language model's).
#[derive(Debug, Clone)]
struct ConfigRead {
    config: Value,
    own_method: Option<(String, bool)>,
    hf_quant: Option<HfQuant>,
}

impl ModelFiles {
    /// Reads config.json, then the weight files (not when config.json fails: nothing is planned).
    pub(crate) fn read(dir: PathBuf) -> ModelFiles {
        let mut implausible = Vec::new();
        let config = read_json(&dir.join("config.json")).map(|mut config| {
            let own_method = match config_quant_method(&config) {
                Some(m) => Some((m, false)),
                None => nested_quant_method(&config).map(|m| (m, true)),
            };
            let hf_quant = with_hf_quant_config(&mut config, &dir);
            ConfigRead {
                config,
                own_method,
                hf_quant,
            }
        });
        let weights = match config {
            Ok(_) => weight_bytes_from_files(&dir, &mut implausible),
            Err(_) => Ok(None),
        };
        ModelFiles {
            dir,
            config,
            weights,
            implausible,
        }
    }

    /// The facts under these arguments (pure).
    pub(crate) fn facts(&self, args: &SglangArgs) -> ModelLoad {
        let ConfigRead {
            config,
            own_method,
            hf_quant,
        } = match &self.config {
            Ok(c) => c.clone(),
            Err(problem) => return ModelLoad::failed(problem.clone()),
        };
        let mut facts = match config_facts(config, &self.dir.join("config.json"), args) {
            Ok(f) => f,
            Err(problem) => return ModelLoad::failed(problem),
        };
        facts.config_quant_nested = own_method.as_ref().is_some_and(|(_, nested)| *nested);
        facts.config_quant_method = own_method.map(|(m, _)| m);
        facts.hf_quant = hf_quant;
        facts.dir = self.dir.clone();
        facts.implausible.extend(self.implausible.iter().cloned());
        let mut problem = None;
        match &self.weights {
            Ok(Some(w)) => {
                facts.weight_bytes = Some(w.resident(facts.dtype.as_deref()));
                facts.weight_source = w.source;
            }
            Ok(None) => estimate_with_encoders(&mut facts),
            Err(e) => {
                estimate_with_encoders(&mut facts);
                problem = Some(e.clone().into());
            }
        }
        online::apply(&mut facts);
        ModelLoad {
            facts: Some(facts),
            problem,
        }
    }
}

/// config.json's `quantization_config.quant_method` as SGLang reads it (lowercased).
pub(crate) fn config_quant_method(config: &Value) -> Option<String> {
    config
        .get("quantization_config")?
        .get("quant_method")?
        .as_str()
        .map(str::to_ascii_lowercase)
}

/// The language model's own `quant_method` where the top level has no `quantization_config`:
/// SGLang copies the text config's attributes the top level lacks onto it (from 0.4.4), in the
/// order its text-config lookup tries them.
fn nested_quant_method(config: &Value) -> Option<String> {
    if config.get("quantization_config").is_some() {
        return None;
    }
    ["text_config", "llm_config", "language_config"]
        .iter()
        .find_map(|k| config.get(k))
        .and_then(config_quant_method)
}

/// A ModelOpt checkpoint may keep its quantisation in `hf_quant_config.json` beside a config.json
/// without one: SGLang reads it then, and so does the planner (as `quantization_config`).
/// Returns what was folded in, when anything was.
fn with_hf_quant_config(config: &mut Value, dir: &Path) -> Option<HfQuant> {
    let Value::Object(c) = config else {
        return None;
    };
    if c.contains_key("quantization_config") || c.contains_key("compression_config") {
        return None;
    }
    let Ok(Value::Object(hf)) = read_json(&dir.join("hf_quant_config.json")) else {
        return None;
    };
    // `{"producer": …, "quantization": {"quant_algo": …}}`, or the flat form.
    let inner = match hf.get("quantization") {
        Some(Value::Object(q)) => q.clone(),
        _ => hf,
    };
    let mut q = inner;
    q.entry("quant_method")
        .or_insert_with(|| Value::String("modelopt".into()));
    let algo = q.get("quant_algo").and_then(Value::as_str);
    let read = algo.map(str::to_owned).zip(quant::method(&q));
    c.insert("quantization_config".into(), Value::Object(q));
    read.map(|(algo, method)| HfQuant {
        algo,
        method,
        hub: in_hub_snapshot(dir),
    })
}

/// The method 0.5.3.post1 and later parse a ModelOpt `quant_algo` other than mixed precision
/// as: FP4 before FP8; an algorithm naming neither defaults to FP8 until 0.5.4 and is left
/// unread from 0.5.4.post1.
fn parsed_algo(algo: &str, version: &str) -> Option<&'static str> {
    if algo.contains("FP4") {
        Some("modelopt_fp4")
    } else if algo.contains("FP8") || !at_least(version, "0.5.4.post1") {
        Some("modelopt_fp8")
    } else {
        None
    }
}

/// A directory inside a Hugging Face cache snapshot (`models--org--name/snapshots/REV`).
fn in_hub_snapshot(dir: &Path) -> bool {
    let parts: Vec<_> = dir.components().map(|c| c.as_os_str()).collect();
    parts
        .windows(2)
        .any(|w| w[0].to_string_lossy().starts_with("models--") && w[1] == "snapshots")
}

/// [`load_dir`] for a config.json's text, with no weight files (the weights estimated from
/// the dimensions) and no file system: the model loader's fuzz target reads through it.
#[doc(hidden)]
pub fn load_config_text(text: &[u8], args: &SglangArgs) -> ModelLoad {
    let path = PathBuf::from("config.json");
    let config = match local::python_json(text) {
        Ok(v) => v,
        Err(error) => return ModelLoad::failed(Invalid::Json { path, error }),
    };
    let mut facts = match config_facts(config, &path, args) {
        Ok(f) => f,
        Err(problem) => return ModelLoad::failed(problem),
    };
    estimate_with_encoders(&mut facts);
    online::apply(&mut facts);
    ModelLoad {
        facts: Some(facts),
        problem: None,
    }
}

/// The facts config.json gives under `--json-model-override-args` and the other arguments
/// that change them; weights not yet counted.
fn config_facts(mut config: Value, path: &Path, args: &SglangArgs) -> Result<ModelFacts, Invalid> {
    if let Some(over) = args.str(opt::JSON_MODEL_OVERRIDE_ARGS) {
        match serde_json::from_str::<Value>(over) {
            Ok(Value::Object(o)) => merge_override(&mut config, &o),
            Ok(_) | Err(_) => return Err(Invalid::OverrideNotAnObject),
        }
    }
    let Value::Object(obj) = &config else {
        return Err(Invalid::NotAnObject {
            path: path.to_path_buf(),
        });
    };
    let mut facts = facts_read_by(obj, Transformers::for_sglang(args.flags.release()));
    apply_args(&mut facts, args);
    Ok(facts)
}
