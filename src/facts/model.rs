//! Model facts from `--model-path`: config.json, quantisation, weight bytes. Offline only.
//!
//! `--model-path` is a local directory or a Hugging Face id looked up in the local HF cache
//! (`HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`). Nothing is downloaded.
//! Weight bytes come from the safetensors headers (only the 8-byte length and the JSON header
//! are read), else from `model.safetensors.index.json`, else from an estimate from the dimensions.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::Env;
use crate::sglang::SglangArgs;

/// Safetensors headers larger than this are treated as malformed (real ones are a few MB).
const MAX_SAFETENSORS_HEADER: u64 = 100 * 1024 * 1024;

/// Where `weight_bytes` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightSource {
    /// Sum of tensor sizes in the safetensors headers.
    SafetensorsHeaders,
    /// `model.safetensors.index.json` `metadata.total_size`.
    Index,
    /// Estimated from the config's dimensions and quantisation.
    #[default]
    Estimate,
}

/// What the rules and the memory planner need to know about the model.
/// Fields are `None` when the config does not say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelFacts {
    /// The directory the config was read from.
    pub dir: PathBuf,
    /// `architectures[0]`, e.g. `Qwen3ForCausalLM`.
    pub architecture: Option<String>,
    /// `model_type`, e.g. `qwen3`, `deepseek_v3` (of the text model for multimodal configs).
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
    /// `quantization_config.quant_method` (fp8, awq, gptq, modelopt_fp4, mxfp4, …), or `--quantization`.
    pub quant_method: Option<String>,
    /// Total bytes of the checkpoint's tensors, when known (safetensors headers or index), else an estimate.
    pub weight_bytes: Option<u64>,
    pub weight_source: WeightSource,
    /// Dense MLP width and the MoE expert width.
    pub intermediate_size: Option<u64>,
    pub moe_intermediate_size: Option<u64>,
    pub n_shared_experts: Option<u64>,
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
    /// Sliding-window attention: window size, and how many of the layers use it (hybrid models).
    pub sliding_window: Option<u64>,
    pub num_sliding_layers: Option<u64>,
    /// Mamba / linear-attention hybrids: the layers that keep a KV cache (the rest keep a
    /// per-request state instead).
    pub num_full_attention_layers: Option<u64>,
    /// DeepSeek sparse attention (DSA/NSA): the indexer's key width per layer.
    pub index_head_dim: Option<u64>,
    /// Weight bits for integer/fp4 quantisations (awq/gptq `bits`, fp4 = 4).
    pub weight_bits: Option<u32>,
    /// Block-quantised checkpoints: `quantization_config.weight_block_size` as (block_n, block_k).
    pub weight_block_size: Option<(u64, u64)>,
    /// Layers the checkpoint leaves unquantised (`ignored_layers`, `modules_to_not_convert`).
    pub quant_ignored: Vec<String>,
    /// Qwen-MoE-style shared expert width (`shared_expert_intermediate_size`).
    pub shared_expert_intermediate_size: Option<u64>,
    /// `kv_cache_quant_algo` / `kv_cache_scheme` says the checkpoint wants an FP8 KV cache.
    pub kv_cache_fp8: bool,
    /// The config has a `vision_config` (multimodal); its depth and width (SGLang's VLM mfs adjustment).
    pub is_multimodal: bool,
    pub vision_layers: Option<u64>,
    pub vision_hidden_size: Option<u64>,
    /// Context length the server will use: `--context-length`, else the config's.
    pub context_length: Option<u64>,
    /// `--kv-cache-dtype` as given (`auto` when not given).
    pub kv_cache_dtype: String,
}

impl ModelFacts {
    /// MLA attention (latent KV): SGLang sizes the KV cache from `kv_lora_rank + qk_rope_head_dim`.
    pub fn is_mla(&self) -> bool {
        self.kv_lora_rank.is_some()
    }

    /// Head dimension: explicit `head_dim`, else hidden / heads.
    pub fn head_dim_or_derived(&self) -> Option<u64> {
        self.head_dim.or_else(|| {
            let h = self.hidden_size?;
            let n = self.num_attention_heads?;
            (n > 0).then(|| h / n)
        })
    }

    /// Bytes per element of the model's activations (`torch_dtype`; bf16 when absent).
    pub fn dtype_bytes(&self) -> u64 {
        match self.dtype.as_deref() {
            Some("float32") | Some("fp32") => 4,
            _ => 2,
        }
    }
}

/// Why the model's facts are missing or partly estimated. Display is one line naming the path
/// and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelProblem {
    /// The model can't be found offline (not a local dir, not in the HF cache).
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
    /// A file was found but can't be understood.
    #[error(transparent)]
    Invalid(#[from] Invalid),
}

/// Why the model can't be found offline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
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
pub enum Invalid {
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
    pub path: PathBuf,
    pub problem: HeaderProblem,
}

/// What is wrong with a safetensors header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderProblem {
    /// Opening or reading the file failed (the OS's message).
    #[error("{0}")]
    Io(String),
    #[error("truncated safetensors header")]
    Truncated,
    /// A header length of zero, beyond the file, or beyond any real header.
    #[error("implausible safetensors header length {0}")]
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
    pub problem: Option<ModelProblem>,
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

/// Read the model's facts, honouring the SGLang arguments that change them.
pub fn load(model_path: &str, env: &Env, args: &SglangArgs) -> ModelLoad {
    let revision = args.str("--revision").filter(|r| !r.is_empty());
    let Some(dir) = resolve_dir(model_path, env, revision) else {
        let model_path = model_path.to_owned();
        let problem = match revision {
            Some(r) => Unavailable::RevisionNotCached {
                model_path,
                revision: r.to_owned(),
            },
            None => Unavailable::NotCached { model_path },
        };
        return ModelLoad::failed(problem);
    };
    let config_path = dir.join("config.json");
    let mut config = match read_json(&config_path) {
        Ok(v) => v,
        Err(problem) => return ModelLoad::failed(problem),
    };
    if let Some(over) = args.str("--json-model-override-args") {
        match serde_json::from_str::<Value>(over) {
            Ok(Value::Object(o)) => merge_override(&mut config, &o),
            Ok(_) | Err(_) => return ModelLoad::failed(Invalid::OverrideNotAnObject),
        }
    }
    let Value::Object(obj) = &config else {
        return ModelLoad::failed(Invalid::NotAnObject { path: config_path });
    };
    let mut facts = facts_from_config(obj);
    facts.dir = dir.clone();
    apply_args(&mut facts, args);
    let mut problem = None;
    match weight_bytes_from_files(&dir) {
        Ok(Some((bytes, source))) => {
            facts.weight_bytes = Some(bytes);
            facts.weight_source = source;
        }
        Ok(None) => {
            facts.weight_bytes = estimate_weight_bytes(&facts);
            facts.weight_source = WeightSource::Estimate;
        }
        Err(e) => {
            facts.weight_bytes = estimate_weight_bytes(&facts);
            facts.weight_source = WeightSource::Estimate;
            problem = Some(e.into());
        }
    }
    ModelLoad {
        facts: Some(facts),
        problem,
    }
}

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
        quant_method: quant
            .and_then(|q| q.get("quant_method"))
            .and_then(Value::as_str)
            .map(str::to_owned),
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
        num_full_attention_layers: c.full_attention_layers(layers),
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

/// Weight bits of a `quantization_config`: `bits` / `w_bit`, else what the method or
/// modelopt's `quant_algo` implies, else compressed-tensors' `config_groups.*.weights.num_bits`.
fn weight_bits(q: &Map<String, Value>) -> Option<u32> {
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
fn block_size(q: &Map<String, Value>) -> Option<(u64, u64)> {
    match q.get("weight_block_size")?.as_array()?.as_slice() {
        [n, k] => Some((n.as_u64()?, k.as_u64()?)).filter(|&(n, k)| n > 0 && k > 0),
        _ => None,
    }
}

/// Module names a `quantization_config` leaves unquantised (SGLang's FP8 config reads both keys).
fn ignored_layers(q: &Map<String, Value>) -> Vec<String> {
    ["ignored_layers", "modules_to_not_convert"]
        .iter()
        .filter_map(|k| q.get(*k)?.as_array())
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// `kv_cache_quant_algo` / `kv_cache_scheme` of a `quantization_config` asks for an FP8 KV cache.
fn kv_cache_fp8(q: &Map<String, Value>) -> bool {
    q.get("kv_cache_quant_algo")
        .and_then(Value::as_str)
        .is_some_and(|a| a.to_ascii_uppercase().contains("FP8"))
        || q.get("kv_cache_scheme").is_some_and(|k| {
            k.get("num_bits").and_then(Value::as_u64) == Some(8)
                && k.get("type").and_then(Value::as_str) == Some("float")
        })
}

/// A weight bit width from a config: 1–32, else not believed.
fn plausible_bits(b: u64) -> Option<u32> {
    u32::try_from(b).ok().filter(|b| (1..=32).contains(b))
}

/// `--context-length`, `--kv-cache-dtype`, `--quantization`, `--dtype`.
fn apply_args(f: &mut ModelFacts, args: &SglangArgs) {
    f.context_length = args
        .int("--context-length")
        .filter(|&c| c > 0)
        .map(|c| c as u64)
        .or(f.max_position_embeddings);
    if let Some(k) = args.str("--kv-cache-dtype") {
        f.kv_cache_dtype = k.to_owned();
    }
    if let Some(q) = args.str("--quantization") {
        f.quant_method = Some(q.to_owned());
        if f.weight_bits.is_none() {
            f.weight_bits = match q {
                "fp8" | "w8a8_fp8" | "modelopt_fp8" | "w8a8_int8" | "qoq" => Some(8),
                "awq" | "awq_marlin" | "gptq" | "gptq_marlin" | "modelopt_fp4" | "mxfp4"
                | "w4afp8" => Some(4),
                _ => None,
            };
        }
    }
    match args.str("--dtype") {
        Some("auto") | None => {}
        Some("half") | Some("float16") => f.dtype = Some("float16".into()),
        Some("float") | Some("float32") => f.dtype = Some("float32".into()),
        Some(d) => f.dtype = Some(d.to_owned()),
    }
}

/// Merge `--json-model-override-args` into the config (and its text_config, as SGLang's does for VLMs).
fn merge_override(config: &mut Value, over: &Map<String, Value>) {
    if let Value::Object(c) = config {
        for (k, v) in over {
            c.insert(k.clone(), v.clone());
        }
        if let Some(Value::Object(t)) = c.get_mut("text_config") {
            for (k, v) in over {
                if t.contains_key(k) {
                    t.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// A local directory with a config.json, or the HF cache snapshot for an `org/name` id
/// (`--revision`: a branch or tag under `refs/`, or a commit hash; default `main`).
fn resolve_dir(model_path: &str, env: &Env, revision: Option<&str>) -> Option<PathBuf> {
    let p = Path::new(model_path);
    if p.join("config.json").is_file() {
        return Some(p.to_path_buf());
    }
    if p.is_dir() {
        // A directory without config.json is still the user's model: let the read report it.
        return Some(p.to_path_buf());
    }
    let hub = if let Some(h) = env.get("HF_HUB_CACHE").filter(|h| !h.is_empty()) {
        PathBuf::from(h)
    } else if let Some(h) = env.get("HF_HOME").filter(|h| !h.is_empty()) {
        Path::new(h).join("hub")
    } else {
        Path::new(env.get("HOME")?).join(".cache/huggingface/hub")
    };
    let (org, name) = model_path.split_once('/')?;
    if org.is_empty() || name.is_empty() || name.contains('/') || org.starts_with('.') {
        return None;
    }
    let repo = hub.join(format!("models--{org}--{name}"));
    let snapshots = repo.join("snapshots");
    if let Some(rev) = revision.filter(|r| !r.is_empty()) {
        // Only plain names: a revision must not walk out of the cache.
        if Path::new(rev)
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return None;
        }
        let hash = std::fs::read_to_string(repo.join("refs").join(rev))
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| rev.to_owned());
        let snap = snapshots.join(hash);
        return snap.join("config.json").is_file().then_some(snap);
    }
    if let Ok(rev) = std::fs::read_to_string(repo.join("refs/main")) {
        let snap = snapshots.join(rev.trim());
        if snap.join("config.json").is_file() {
            return Some(snap);
        }
    }
    // No refs/main: the newest snapshot that has a config.
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(&snapshots).ok()?.flatten() {
        let path = entry.path();
        if !path.join("config.json").is_file() {
            continue;
        }
        let t = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        if best.as_ref().is_none_or(|(bt, _)| t > *bt) {
            best = Some((t, path));
        }
    }
    best.map(|(_, p)| p)
}

/// A JSON file of the model: a missing file makes the model unavailable, any other failure
/// invalid.
fn read_json(path: &Path) -> Result<Value, ModelProblem> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let (path, error) = (path.to_path_buf(), e.to_string());
        if e.kind() == std::io::ErrorKind::NotFound {
            ModelProblem::from(Unavailable::Missing { path, error })
        } else {
            ModelProblem::from(Invalid::Unreadable { path, error })
        }
    })?;
    serde_json::from_str(&text).map_err(|e| {
        ModelProblem::from(Invalid::Json {
            path: path.to_path_buf(),
            error: e.to_string(),
        })
    })
}

/// Weight bytes from the checkpoint files: safetensors headers first, then the index.
/// `Ok(None)` when there are no weight files; `Err` names a malformed file.
fn weight_bytes_from_files(dir: &Path) -> Result<Option<(u64, WeightSource)>, Invalid> {
    let mut shards: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "safetensors"))
            .collect(),
        Err(_) => Vec::new(),
    };
    shards.sort();
    if !shards.is_empty() {
        let mut total = 0u64;
        let mut failure = None;
        for shard in &shards {
            match safetensors_tensor_bytes(shard) {
                Ok(b) => total = total.saturating_add(b),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        match failure {
            None => return Ok(Some((total, WeightSource::SafetensorsHeaders))),
            // A shard that isn't there (e.g. a partial download) still leaves the index usable.
            Some(e) => {
                if let Some(t) = index_total(dir)? {
                    return Ok(Some((t, WeightSource::Index)));
                }
                return Err(e.into());
            }
        }
    }
    Ok(index_total(dir)?.map(|t| (t, WeightSource::Index)))
}

/// `metadata.total_size` of `model.safetensors.index.json`; `Ok(None)` without one. The
/// index was found, so any failure to read it makes it invalid.
fn index_total(dir: &Path) -> Result<Option<u64>, Invalid> {
    let path = dir.join("model.safetensors.index.json");
    if !path.is_file() {
        return Ok(None);
    }
    let v = read_json(&path).map_err(|p| match p {
        ModelProblem::Invalid(e) => e,
        ModelProblem::Unavailable(u) => Invalid::Unreadable {
            path: path.clone(),
            error: match u {
                Unavailable::Missing { error, .. } => error,
                other => other.to_string(),
            },
        },
    })?;
    match v.pointer("/metadata/total_size") {
        Some(t) => t
            .as_u64()
            .or_else(|| t.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .map(Some)
            .ok_or(Invalid::IndexTotalSize { path }),
        None => Ok(None),
    }
}

/// Sum of tensor byte ranges in one safetensors file, reading only its header.
pub fn safetensors_tensor_bytes(path: &Path) -> Result<u64, SafetensorsError> {
    let bad = |problem: HeaderProblem| SafetensorsError {
        path: path.to_path_buf(),
        problem,
    };
    let io = |e: std::io::Error| bad(HeaderProblem::Io(e.to_string()));
    let mut f = File::open(path).map_err(io)?;
    let file_len = f.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let mut len = [0u8; 8];
    f.read_exact(&mut len)
        .map_err(|_| bad(HeaderProblem::Truncated))?;
    let n = u64::from_le_bytes(len);
    if n == 0 || n > MAX_SAFETENSORS_HEADER || n > file_len.saturating_sub(8) {
        return Err(bad(HeaderProblem::Length(n)));
    }
    let mut header = Vec::with_capacity(n as usize);
    f.take(n).read_to_end(&mut header).map_err(io)?;
    if header.len() as u64 != n {
        return Err(bad(HeaderProblem::Truncated));
    }
    let v: Value =
        serde_json::from_slice(&header).map_err(|e| bad(HeaderProblem::Json(e.to_string())))?;
    let Value::Object(map) = v else {
        return Err(bad(HeaderProblem::NotAnObject));
    };
    let mut total = 0u64;
    for (name, t) in &map {
        if name == "__metadata__" {
            continue;
        }
        let offs = t
            .get("data_offsets")
            .and_then(Value::as_array)
            .filter(|a| a.len() == 2)
            .ok_or_else(|| bad(HeaderProblem::NoOffsets(name.clone())))?;
        let (a, b) = (offs[0].as_u64(), offs[1].as_u64());
        match (a, b) {
            (Some(a), Some(b)) if b >= a => total = total.saturating_add(b - a),
            _ => return Err(bad(HeaderProblem::BadOffsets(name.clone()))),
        }
    }
    Ok(total)
}

/// The checkpoint's bytes by kind, estimated from the dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WeightBreakdown {
    /// Everything the target model loads (excludes MTP/NextN layers).
    pub model: f64,
    /// MTP/NextN layers shipped in the checkpoint, with their own embedding and head copies.
    pub mtp: f64,
    /// The part of `model` every TP rank holds in full: MLA down-projections (`q_a_proj`,
    /// `kv_a_proj_with_mqa`) and MoE router gates are replicated, not sharded.
    pub replicated: f64,
    /// MLA: the absorbed `w_kc`/`w_vc` copies SGLang builds from `kv_b_proj` after loading
    /// (dequantised to the model dtype on CUDA), sharded over TP; not in the checkpoint.
    pub mla_absorbed: f64,
}

/// Bytes per parameter of quantised linear weights, with their scales: block FP8 (one fp32
/// scale per 128×128), group-128 int4 (fp16 scale + zero), MXFP4 (one byte per 32), NVFP4
/// (one fp8 per 16).
fn quantised_bytes(f: &ModelFacts, bits: u32) -> f64 {
    let method = f.quant_method.as_deref().unwrap_or("");
    match bits {
        8 => 1.0 + 4.0 / (128.0 * 128.0),
        4 if method == "mxfp4" => 0.5 + 1.0 / 32.0,
        4 if method.contains("fp4") => 0.5 + 1.0 / 16.0,
        b => b as f64 / 8.0 + 2.5 / 128.0,
    }
}

/// Parameter bytes estimated from the dimensions: embeddings, attention, MLP / experts, head.
/// Quantised linear layers are priced at their bit width plus scales (MXFP4 checkpoints quantise
/// only the experts); embeddings, norms, routers and the head stay in the model dtype.
pub fn weight_breakdown(f: &ModelFacts) -> Option<WeightBreakdown> {
    let h = f.hidden_size? as f64;
    let layers = f.num_hidden_layers? as f64;
    let vocab = f.vocab_size.unwrap_or(32000) as f64;
    let heads = f.num_attention_heads? as f64;
    let kvh = f.num_key_value_heads.unwrap_or(f.num_attention_heads?) as f64;
    let hd = f.head_dim_or_derived()? as f64;
    let mut mla_absorbed = 0.0;
    let (attn, attn_replicated) = if f.is_mla() {
        let rope = f.qk_rope_head_dim.unwrap_or(64) as f64;
        let nope = f.qk_nope_head_dim.unwrap_or(128) as f64;
        let v = f.v_head_dim.unwrap_or(128) as f64;
        let lora = f.kv_lora_rank? as f64;
        let (q, q_a) = match f.q_lora_rank {
            Some(r) => (r as f64 * heads * (nope + rope), h * r as f64),
            None => (h * heads * (nope + rope), 0.0),
        };
        let kv_a = h * (lora + rope);
        mla_absorbed = layers * lora * heads * (nope + v) * f.dtype_bytes() as f64;
        (
            q + q_a + kv_a + lora * heads * (nope + v) + heads * v * h,
            q_a + kv_a,
        )
    } else {
        (h * heads * hd + 2.0 * h * kvh * hd + heads * hd * h, 0.0)
    };
    let inter = f.intermediate_size.unwrap_or((h * 4.0) as u64) as f64;
    let interleaved = f
        .moe_layer_step
        .filter(|_| f.num_experts.is_some_and(|e| e > 1));
    let dense_mlp = 3.0 * h * f.dense_intermediate_size.map_or(inter, |d| d as f64);
    let (experts, router, dense_layers) = match f.num_experts {
        Some(e) if e > 1 => {
            let mi = f.moe_intermediate_size.map(|m| m as f64).unwrap_or(inter);
            // Llama-4's MoE layers carry one shared expert its config does not count.
            let shared = f
                .n_shared_experts
                .unwrap_or(u64::from(interleaved.is_some())) as f64;
            let dense = match interleaved {
                Some(step) => layers - (layers / step as f64).floor(),
                None => f.first_k_dense_replace.unwrap_or(0) as f64,
            };
            (3.0 * h * mi * (e as f64 + shared), h * e as f64, dense)
        }
        _ => (0.0, 0.0, layers),
    };
    // A config may claim more dense layers than layers.
    let dense_layers = dense_layers.min(layers);
    let moe_layers = layers - dense_layers;
    let dtype = f.dtype_bytes() as f64;
    let (q_bytes, experts_only) = match f.weight_bits {
        Some(bits) if bits < 16 => (
            quantised_bytes(f, bits),
            f.quant_method.as_deref() == Some("mxfp4"),
        ),
        _ => (dtype, false),
    };
    let other_linear_bytes = if experts_only { dtype } else { q_bytes };
    let attn_b = attn * other_linear_bytes;
    let layer_dense = attn_b + dense_mlp * other_linear_bytes;
    let layer_moe = attn_b + experts * q_bytes + router * dtype;
    let embed = vocab * h * dtype;
    let head = if f.tie_word_embeddings { 0.0 } else { embed };
    let model = dense_layers * layer_dense + moe_layers * layer_moe + embed + head;
    let per_layer_replicated = attn_replicated * other_linear_bytes;
    let replicated = layers * per_layer_replicated + moe_layers * router * dtype;
    // An MTP layer is a full decoder layer (MoE when the model is) plus its own embed and head.
    let mtp_layer = if moe_layers > 0.0 {
        layer_moe
    } else {
        layer_dense
    };
    let mtp = f.num_nextn_predict_layers.unwrap_or(0) as f64 * (mtp_layer + 2.0 * embed);
    Some(WeightBreakdown {
        model,
        mtp,
        replicated,
        mla_absorbed,
    })
}

/// Estimates above this are a config error, not a model: the largest open checkpoints are a few
/// TB, so 1 PiB leaves room for any real one while keeping every sum over weights finite.
pub const MAX_WEIGHT_ESTIMATE_BYTES: u64 = 1 << 50;

/// Checkpoint bytes estimated from the dimensions (including MTP layers, as a checkpoint has);
/// `None` when the config lacks the dimensions or they give an implausible size.
pub fn estimate_weight_bytes(f: &ModelFacts) -> Option<u64> {
    let b = weight_breakdown(f)?;
    let total = b.model + b.mtp;
    (total.is_finite() && total > 0.0 && total <= MAX_WEIGHT_ESTIMATE_BYTES as f64)
        .then_some(total as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(dir: &Path, name: &str, bytes: &[u8]) {
        std::fs::write(dir.join(name), bytes).unwrap();
    }

    fn st_file(header: &str, data_len: usize) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        v.extend(std::iter::repeat_n(0u8, data_len));
        v
    }

    #[test]
    fn safetensors_header_sums_tensor_ranges() {
        let d = tempfile::tempdir().unwrap();
        let h = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[8,16]}}"#;
        write(d.path(), "model.safetensors", &st_file(h, 16));
        assert_eq!(
            safetensors_tensor_bytes(&d.path().join("model.safetensors")),
            Ok(16)
        );
    }

    #[test]
    fn huge_or_garbage_header_is_an_error_not_an_allocation() {
        let d = tempfile::tempdir().unwrap();
        let mut v = u64::MAX.to_le_bytes().to_vec();
        v.extend_from_slice(b"{}");
        write(d.path(), "x.safetensors", &v);
        let e = safetensors_tensor_bytes(&d.path().join("x.safetensors"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.safetensors") && e.contains("implausible"),
            "{e}"
        );
        write(d.path(), "y.safetensors", &st_file("not json", 0));
        assert!(safetensors_tensor_bytes(&d.path().join("y.safetensors")).is_err());
        write(d.path(), "z.safetensors", &[1, 2, 3]);
        assert!(safetensors_tensor_bytes(&d.path().join("z.safetensors")).is_err());
    }

    #[test]
    fn block_size_and_unquantised_layers_come_from_the_quantisation_config() {
        let c = json!({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 64],
            "modules_to_not_convert": ["lm_head"], "ignored_layers": ["model.layers.0.mlp.shared_expert.gate_proj"]},
            "shared_expert_intermediate_size": 512});
        let f = facts_from_config(c.as_object().unwrap());
        assert_eq!(f.weight_block_size, Some((128, 64)));
        assert_eq!(f.shared_expert_intermediate_size, Some(512));
        assert_eq!(f.quant_ignored.len(), 2);
        for bad in [
            json!([128]),
            json!([0, 128]),
            json!("128"),
            json!([128, -1]),
        ] {
            let c = json!({"quantization_config": {"weight_block_size": bad}});
            assert_eq!(
                facts_from_config(c.as_object().unwrap()).weight_block_size,
                None
            );
        }
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/models/deepseek-ai__DeepSeek-R1"
        );
        let r1 = load(dir, &Env::default(), &args(&[])).facts.unwrap();
        assert_eq!(r1.weight_block_size, Some((128, 128)));
    }

    fn args(values: &[(&str, Value)]) -> SglangArgs {
        SglangArgs::with_values(crate::sglang::flagset::get("0.5.23").unwrap(), values)
    }

    const CONFIG: &str = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,
        "num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":128256,
        "intermediate_size":14336,"max_position_embeddings":131072,"torch_dtype":"bfloat16"}"#;

    #[test]
    fn hf_cache_snapshot_via_refs_main() {
        let hub = tempfile::tempdir().unwrap();
        let repo = hub.path().join("models--org--tiny");
        std::fs::create_dir_all(repo.join("snapshots/abc123")).unwrap();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), "abc123\n").unwrap();
        write(
            &repo.join("snapshots/abc123"),
            "config.json",
            CONFIG.as_bytes(),
        );
        let env = Env::from_pairs([("HF_HUB_CACHE", hub.path().to_str().unwrap())]);
        let l = load("org/tiny", &env, &args(&[]));
        assert_eq!(l.problem, None);
        let f = l.facts.unwrap();
        assert!(f.dir.ends_with("snapshots/abc123"));
        assert_eq!(f.head_dim_or_derived(), Some(128));
        assert_eq!(f.context_length, Some(131072));
        assert_eq!(f.weight_source, WeightSource::Estimate);
        // ~8.0e9 parameters in BF16
        let w = f.weight_bytes.unwrap() as f64;
        assert!((w / 16.06e9 - 1.0).abs() < 0.03, "{w}");
        // --revision picks a branch (refs/NAME) or a commit hash; one not cached is unavailable.
        std::fs::create_dir_all(repo.join("snapshots/def456")).unwrap();
        write(
            &repo.join("snapshots/def456"),
            "config.json",
            CONFIG.as_bytes(),
        );
        std::fs::write(repo.join("refs/v2"), "def456").unwrap();
        for rev in ["v2", "def456"] {
            let l = load("org/tiny", &env, &args(&[("--revision", json!(rev))]));
            assert!(l.facts.unwrap().dir.ends_with("snapshots/def456"), "{rev}");
        }
        for rev in ["v3", "../../etc"] {
            let l = load("org/tiny", &env, &args(&[("--revision", json!(rev))]));
            assert!(
                matches!(l.problem, Some(ModelProblem::Unavailable(_))),
                "{rev}"
            );
        }
        // HF_HOME/hub is the second choice; nothing there means unavailable, never a download.
        let env = Env::from_pairs([("HF_HOME", "/nonexistent")]);
        let l = load("org/tiny", &env, &args(&[]));
        assert_eq!(
            l.problem.unwrap().to_string(),
            "org/tiny: not a local directory and not in the Hugging Face cache"
        );
    }

    #[test]
    fn arguments_override_the_config() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "config.json", CONFIG.as_bytes());
        let a = args(&[
            ("--context-length", json!(8192)),
            ("--kv-cache-dtype", json!("fp8_e5m2")),
            ("--quantization", json!("fp8")),
            (
                "--json-model-override-args",
                json!(r#"{"num_hidden_layers": 2}"#),
            ),
        ]);
        let f = load(d.path().to_str().unwrap(), &Env::default(), &a)
            .facts
            .unwrap();
        assert_eq!(f.context_length, Some(8192));
        assert_eq!(f.kv_cache_dtype, "fp8_e5m2");
        assert_eq!(f.quant_method.as_deref(), Some("fp8"));
        assert_eq!(f.weight_bits, Some(8));
        assert_eq!(f.num_hidden_layers, Some(2));
    }

    #[test]
    fn index_total_size_and_problems_name_the_file() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "config.json", CONFIG.as_bytes());
        write(
            d.path(),
            "model.safetensors.index.json",
            br#"{"metadata":{"total_size":16060522496},"weight_map":{}}"#,
        );
        let f = load(d.path().to_str().unwrap(), &Env::default(), &args(&[]))
            .facts
            .unwrap();
        assert_eq!(
            (f.weight_bytes, f.weight_source),
            (Some(16060522496), WeightSource::Index)
        );

        write(d.path(), "config.json", b"{not json");
        let l = load(d.path().to_str().unwrap(), &Env::default(), &args(&[]));
        let problem = l.problem.unwrap();
        assert!(matches!(
            problem,
            ModelProblem::Invalid(Invalid::Json { .. })
        ));
        assert!(problem.to_string().contains("config.json"), "{problem}");

        let e = tempfile::tempdir().unwrap();
        write(e.path(), "config.json", CONFIG.as_bytes());
        write(e.path(), "model.safetensors", &[9, 9]);
        let l = load(e.path().to_str().unwrap(), &Env::default(), &args(&[]));
        assert!(l.facts.is_some(), "dimensions still give an estimate");
        let problem = l.problem.unwrap();
        assert!(matches!(
            problem,
            ModelProblem::Invalid(Invalid::Safetensors(_))
        ));
        assert!(
            problem.to_string().contains("model.safetensors"),
            "{problem}"
        );
    }

    #[test]
    fn multimodal_text_config_quant_and_sliding_layers() {
        let gemma = r#"{"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3","torch_dtype":"bfloat16",
            "text_config":{"head_dim":128,"hidden_size":5376,"num_hidden_layers":62,"num_attention_heads":32,
            "num_key_value_heads":16,"sliding_window":1024,"model_type":"gemma3_text"},
            "vision_config":{"hidden_size":1152,"num_hidden_layers":27}}"#;
        let v: Value = serde_json::from_str(gemma).unwrap();
        let f = facts_from_config(v.as_object().unwrap());
        assert_eq!(
            (f.num_hidden_layers, f.num_key_value_heads),
            (Some(62), Some(16))
        );
        assert!(f.is_multimodal);
        assert_eq!(f.num_sliding_layers, Some(62 - 62 / 6));
        let oss = r#"{"architectures":["GptOssForCausalLM"],"num_hidden_layers":4,"hidden_size":2880,
            "num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,
            "layer_types":["sliding_attention","full_attention","sliding_attention","full_attention"],
            "quantization_config":{"quant_method":"mxfp4"}}"#;
        let v: Value = serde_json::from_str(oss).unwrap();
        let f = facts_from_config(v.as_object().unwrap());
        assert_eq!(f.num_sliding_layers, Some(2));
        assert_eq!(
            (f.quant_method.as_deref(), f.weight_bits),
            (Some("mxfp4"), Some(4))
        );
    }

    #[test]
    fn absurd_dimensions_give_no_or_bounded_estimates() {
        let base = json!({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "vocab_size": 128256, "intermediate_size": 14336});
        let with = |k: &str, v: Value| {
            let mut c = base.clone();
            c[k] = v;
            facts_from_config(c.as_object().unwrap())
        };
        let sane = estimate_weight_bytes(&with("hidden_size", json!(4096))).unwrap();
        assert!(sane > 14_000_000_000 && sane < 18_000_000_000, "{sane}");
        // more dense layers than layers: still the dense model, never negative
        let moe = with("num_experts", json!(8));
        let mut moe_over = moe.clone();
        moe_over.first_k_dense_replace = Some(1000);
        let w = estimate_weight_bytes(&moe_over).unwrap();
        assert_eq!(w, sane);
        // implausible sizes are not estimates
        assert_eq!(
            estimate_weight_bytes(&with("hidden_size", json!(u64::MAX))),
            None
        );
        // no layers: the embeddings and head alone
        assert_eq!(
            estimate_weight_bytes(&with("num_hidden_layers", json!(0))),
            Some(2 * 128256 * 4096 * 2)
        );
        // bit widths that do not fit a u32 are not believed
        let q = with(
            "quantization_config",
            json!({"quant_method": "gptq", "bits": 4294967300u64}),
        );
        assert_eq!(q.weight_bits, None);
    }

    #[test]
    fn hybrid_and_sparse_attention_fields() {
        let next = r#"{"architectures":["Qwen3NextForCausalLM"],"num_hidden_layers":48,
            "full_attention_interval":4,"hidden_size":2048,"num_attention_heads":16,
            "num_key_value_heads":2,"head_dim":256}"#;
        let v: Value = serde_json::from_str(next).unwrap();
        assert_eq!(
            facts_from_config(v.as_object().unwrap()).num_full_attention_layers,
            Some(12)
        );
        let typed = r#"{"num_hidden_layers":4,"layer_types":["linear_attention","linear_attention",
            "linear_attention","full_attention"]}"#;
        let v: Value = serde_json::from_str(typed).unwrap();
        assert_eq!(
            facts_from_config(v.as_object().unwrap()).num_full_attention_layers,
            Some(1)
        );
        let dsa = r#"{"kv_lora_rank":512,"qk_rope_head_dim":64,"index_head_dim":128}"#;
        let v: Value = serde_json::from_str(dsa).unwrap();
        assert_eq!(
            facts_from_config(v.as_object().unwrap()).index_head_dim,
            Some(128)
        );
    }
}
