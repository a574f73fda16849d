//! KV-cache cell size (bytes per token per GPU), weights per GPU, and the token count SGLang
//! profiles from the memory left.

use crate::facts::model::{self, ModelFacts};
use crate::resolve::Speculative;
use crate::resolve::defaults::int_arg;
use crate::resolve::server::DraftSource;
use crate::sglang::opt;
use crate::sglang::release::at_least;
use crate::sglang::{Parallel, SglangArgs};

pub use super::split::Split;

/// Bytes per token of the KV pool on one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct KvCell {
    /// The target model's layers (what SGLang logs as K/V size ÷ tokens).
    pub target: u64,
    /// Target plus the speculative draft's KV layers (the pool is sized with this).
    pub(crate) total: u64,
    /// Hybrid sliding-window models: SWA-layer tokens per full-layer token.
    pub swa_ratio: Option<f64>,
    /// Bytes of one SWA-pool token over the window layers (0 without a separate pool).
    pub(crate) swa_token_bytes: u64,
}

/// Element size of the KV cache, bytes (the block formats count their scale bytes: one per 16
/// FP4 values, one per 32 MXFP8 values; NVFP4's dequant workspace, one per token, is left out).
fn kv_elem_bytes(dtype: &str, m: &ModelFacts) -> f64 {
    match dtype {
        "fp8_e4m3" | "fp8_e5m2" | "fp8" => 1.0,
        "fp4_e2m1" | "nvfp4" | "fp4_mx_block16" => 0.5 + 1.0 / 16.0,
        "mxfp8" => 1.0 + 1.0 / 32.0,
        "bf16" | "bfloat16" | "float16" | "half" => 2.0,
        "float32" => 4.0,
        // auto: the checkpoint's FP8 KV scheme, else the model dtype
        _ => {
            if m.kv_cache_fp8 {
                1.0
            } else {
                m.dtype_bytes() as f64
            }
        }
    }
}

/// Layers on the first pipeline stage (SGLang gives the remainder to the early stages).
fn stage_layers(layers: u64, pp: u64) -> u64 {
    layers.div_ceil(pp.max(1))
}

/// Per-layer bytes of one token on one GPU, for a model's attention shape. `dsa_scaled`: the
/// sparse-attention pool's FP8 layout (see [`dsa_scaled_fp8`]).
fn per_layer_bytes(p: &Parallel, m: &ModelFacts, b: f64, dsa_scaled: bool) -> Option<f64> {
    if m.is_mla() {
        let (lora, rope) = (
            m.kv_lora_rank? as f64,
            m.qk_rope_head_dim.unwrap_or(64) as f64,
        );
        let latent = if dsa_scaled && m.index_head_dim.is_some() {
            // FP8 latent, one fp32 scale per 128 of it, the rope part kept in BF16.
            lora + (lora / 128.0).floor() * 4.0 + rope * 2.0
        } else {
            (lora + rope) * b
        };
        // DSA/NSA indexer keys: FP8 with one fp32 scale per 128.
        let indexer = m
            .index_head_dim
            .map(|d| d as f64 + (d as f64 / 128.0).ceil() * 4.0)
            .unwrap_or(0.0);
        return Some(latent + indexer);
    }
    let attn_tp = (p.tp / p.attn_dp).max(1) as u64;
    let total_kvh = m.num_key_value_heads?;
    // KV heads are replicated when the attention TP width exceeds them.
    let kvh = (total_kvh / attn_tp).max(1);
    let hd = m.head_dim_or_derived()?;
    Some(kvh as f64 * 2.0 * hd as f64 * b)
}

/// SGLang's sparse-attention (DSA) pool stores an `fp8_e4m3` cache in its scaled layout (from
/// 0.5.5; 0.5.3 and 0.5.4 hard-code the same 656 bytes) unless a DSA kernel of TensorRT-LLM runs
/// (0.5.9 on), which reads the raw layout. SGLang picks those kernels itself for FP8 on SM 10 and
/// up from 0.5.10 (GLM-5 on SM 12 gets FlashInfer's sparse MLA instead, from 0.5.17).
fn dsa_scaled_fp8(
    args: &SglangArgs,
    dtype: Option<&str>,
    gpu_major: Option<u32>,
    m: &ModelFacts,
) -> bool {
    if dtype != Some("fp8_e4m3") || m.index_head_dim.is_none() {
        return false;
    }
    let v = args.flags.release();
    let named = |pair: [&str; 2]| {
        pair.iter()
            .find(|o| args.is_set(o))
            .and_then(|o| args.str(o))
    };
    let glm_sm12 = m.architecture.as_deref() == Some("GlmMoeDsaForCausalLM")
        && gpu_major == Some(12)
        && at_least(v, "0.5.17");
    let sglang_trtllm = at_least(v, "0.5.10") && gpu_major.is_some_and(|g| g >= 10) && !glm_sm12;
    let trtllm = [
        [opt::NSA_PREFILL_BACKEND, opt::DSA_PREFILL_BACKEND],
        [opt::NSA_DECODE_BACKEND, opt::DSA_DECODE_BACKEND],
    ]
    .into_iter()
    .any(|pair| named(pair).map_or(sglang_trtllm, |b| b == "trtllm"));
    !(trtllm && at_least(v, "0.5.9"))
}

/// The KV cell for this version, arguments and model; `None` when the config lacks dimensions.
/// The KV cache dtype is the one SGLang runs (`resolved`: the user's, or SGLang's own for the
/// model and GPU), else the option's value.
pub fn kv_cell(
    args: &SglangArgs,
    resolved: Option<&str>,
    gpu_major: Option<u32>,
    p: &Parallel,
    spec: Option<&Speculative>,
    m: &ModelFacts,
    draft: Option<&ModelFacts>,
) -> Option<KvCell> {
    let pp = p.pp as u64;
    let given = crate::resolve::decided::kv_cache_dtype(args);
    let dtype = resolved.or(given.as_ref().map(|d| d.value.as_str()));
    let b = kv_elem_bytes(dtype.unwrap_or("auto"), m);
    let scaled = dsa_scaled_fp8(args, dtype, gpu_major, m);
    let per_layer = per_layer_bytes(p, m, b, scaled)?;
    // Mamba / linear-attention hybrids keep KV only in their full-attention layers.
    let layers = stage_layers(m.num_full_attention_layers.or(m.num_hidden_layers)?, pp);
    let (target, swa_ratio, swa_token_bytes) = match super::swa::pool(args, m) {
        Some((r, sliding)) => {
            let n_swa = stage_layers(sliding, pp);
            let n_full = layers.saturating_sub(n_swa);
            let swa = per_layer * n_swa as f64;
            (
                per_layer * n_full as f64 + r * swa,
                Some(r),
                swa.ceil() as u64,
            )
        }
        None => (per_layer * layers as f64, None, 0),
    };
    let mut total = target;
    if let Some(draft_layers_bytes) = draft_kv_bytes(p, spec, m, draft, b, scaled) {
        total += draft_layers_bytes;
    }
    Some(KvCell {
        target: target.ceil() as u64,
        total: total.ceil() as u64,
        swa_ratio,
        swa_token_bytes,
    })
}

/// KV bytes per token of the speculative draft (EAGLE/MTP/STANDALONE share the token budget).
fn draft_kv_bytes(
    p: &Parallel,
    spec: Option<&Speculative>,
    m: &ModelFacts,
    draft: Option<&ModelFacts>,
    b: f64,
    scaled: bool,
) -> Option<f64> {
    let spec = spec.filter(|s| s.uses_draft_model())?;
    if spec.draft == DraftSource::Mtp {
        return Some(per_layer_bytes(p, m, b, scaled)? * m.num_nextn_predict_layers? as f64);
    }
    let draft = draft?;
    let layers = draft.num_hidden_layers.unwrap_or(1);
    Some(per_layer_bytes(p, draft, b, scaled)? * layers as f64)
}

/// Target weights per GPU, bytes: the checkpoint without the MTP layers the target doesn't load
/// (unless they serve as the speculative draft, then less the embedding and head copies the
/// draft shares with the target), plus MLA's absorbed copies, split over TP × PP,
/// plus the matrices every TP rank holds in full and what the layout keeps beyond a TP share.
pub fn target_weights_per_gpu_bytes(
    p: &Parallel,
    split: &Split,
    spec: Option<&Speculative>,
    m: &ModelFacts,
) -> Option<u64> {
    let tp = p.tp as f64;
    let pp = p.pp as f64;
    let total = m.weight_bytes? as f64;
    // Terms from an absurd config may be infinite; then only the total is used.
    let b = model::weight_breakdown(m)
        .filter(|b| {
            [b.model, b.mtp, b.replicated, b.mla_absorbed]
                .iter()
                .all(|x| x.is_finite() && *x >= 0.0)
        })
        .unwrap_or_default();
    let mtp_in_use = spec.is_some_and(|s| s.draft == DraftSource::Mtp);
    let loaded = if mtp_in_use {
        (total - super::draft::mtp_shared_bytes(m)).max(0.0)
    } else {
        (total - b.mtp).max(0.0)
    };
    let sharded = loaded + b.mla_absorbed;
    let even = sharded / (tp * pp) + b.replicated * (1.0 - 1.0 / tp) / pp;
    Some((even + split.extra_bytes(&b.by_part)) as u64)
}

/// Target plus draft weights per GPU, bytes (the draft is loaded before the KV cache is sized).
pub fn weights_per_gpu_bytes(
    p: &Parallel,
    split: &Split,
    spec: Option<&Speculative>,
    m: &ModelFacts,
    draft: Option<&ModelFacts>,
) -> Option<u64> {
    let target = target_weights_per_gpu_bytes(p, split, spec, m)?;
    let separate = spec.is_some_and(|s| s.separate_draft().is_some());
    let draft = match draft.filter(|_| separate) {
        Some(d) => d.weight_bytes.map(|w| w / p.tp.max(1) as u64).unwrap_or(0),
        None => 0,
    };
    Some(target.saturating_add(draft))
}

/// `max_total_num_tokens` from the memory left for the KV cache (MiB), as SGLang computes it:
/// floor division by the cell, alignment down to the page size, then the `--max-total-tokens` cap.
pub fn tokens_from_rest(rest_mib: f64, cell: &KvCell, page_size: u64, args: &SglangArgs) -> u64 {
    if rest_mib <= 0.0 || cell.total == 0 {
        return 0;
    }
    let mut tokens = (rest_mib * 1024.0 * 1024.0 / cell.total as f64).floor() as u64;
    let page = page_size.max(1);
    tokens = tokens / page * page;
    if let Some(cap) = int_arg(args, opt::MAX_TOTAL_TOKENS).filter(|&c| c > 0) {
        tokens = tokens.min(cap as u64);
    }
    tokens
}

/// Bytes per token for the target model only.
#[cfg(test)]
pub(crate) fn kv_bytes_per_token(args: &SglangArgs, p: &Parallel, m: &ModelFacts) -> Option<u64> {
    kv_cell(args, None, None, p, None, m, None).map(|c| c.target)
}
