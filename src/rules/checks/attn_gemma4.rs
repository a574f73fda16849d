//! ATTN029: Gemma 4 decoding through FlashInfer's tensor-core path under CUDA graphs, before
//! 0.5.13 refuses the backend outright (ATTN019).

use super::*;
use crate::facts::model::ModelFacts;
use crate::resolve::attention::GEMMA4;

/// FlashInfer's prefill kernel has no valid tile configuration for a value head this wide
/// (`8 * head_dim / 16 >= 256` in its `IsInvalid` test).
const WIDEST_INVALID: u64 = 512;

/// Why SGLang's FlashInfer backend decodes with tensor cores (its `should_use_tensor_core`), or
/// `None` where it keeps the decode kernel: the variable decides when set; else an FP8 KV cache,
/// or a 16-bit one with at least four query heads per KV head on a rank.
fn tensor_core_reason(ctx: &Context, m: &ModelFacts) -> Option<String> {
    if let Some(v) = ctx.env.get("SGLANG_FLASHINFER_USE_TENSOR_CORE") {
        return v
            .eq_ignore_ascii_case("true")
            .then(|| "SGLANG_FLASHINFER_USE_TENSOR_CORE=true".to_owned());
    }
    let kv = ctx.kv_cache_dtype().unwrap_or("auto");
    if kv.starts_with("fp8") {
        return Some(format!("--kv-cache-dtype {kv}"));
    }
    if kv == "fp4_e2m1" {
        return None;
    }
    let tp = u64::try_from(ctx.server.parallel.attn_tp()).unwrap_or(1);
    let heads = m.num_attention_heads? / tp;
    let kv_heads = (m.num_key_value_heads? / tp).max(1);
    let group = heads / kv_heads;
    (group >= 4).then(|| format!("{group} query heads per KV head on a rank"))
}

/// ATTN029: with FlashInfer decoding on tensor cores, CUDA graph capture runs FlashInfer's
/// prefill kernel on Gemma 4's 512-wide global heads, a configuration the kernel refuses.
pub(crate) fn gemma4_flashinfer_graph(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx.model.filter(|m| {
        m.architecture
            .as_deref()
            .is_some_and(|a| GEMMA4.contains(&a))
            && m.global_head_dim.is_some_and(|d| d >= WIDEST_INVALID)
    }) else {
        return vec![];
    };
    let decode = ctx.server.backends.decode().map(|c| c.value.as_str());
    if decode != Some("flashinfer") || ctx.cuda_graph_disabled() {
        return vec![];
    }
    let Some(why) = tensor_core_reason(ctx, m) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "Gemma 4 with FlashInfer decode attention and CUDA graphs ({why}): SGLang {}'s FlashInfer backend then decodes through FlashInfer's prefill kernel, which has no configuration for the global layers' {}-wide heads, so CUDA graph capture stops with 'FlashInfer Internal Error: Invalid configuration : … NUM_MMA_D_VO=32 …'; use --attention-backend triton (SGLang's own pick for Gemma 4)",
        ctx.version,
        m.global_head_dim.unwrap_or(WIDEST_INVALID)
    ))]
}
