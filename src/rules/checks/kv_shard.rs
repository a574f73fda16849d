//! Logical-page KV cache sharding (`--enable-kv-cache-sharding`, 0.5.22+): what SGLang refuses
//! beside it while it resolves the arguments.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// CACHE021: KV sharding off a PD prefill server, or with what it does not take.
pub(crate) fn kv_sharding(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if !u.flag(opt::ENABLE_KV_CACHE_SHARDING) {
        return vec![];
    }
    let mode = u.str(opt::DISAGGREGATION_MODE).unwrap_or("null");
    let mut out = vec![];
    if mode != "prefill" {
        out.push(format!(
            "off a PD prefill server ({} {mode})",
            opt::DISAGGREGATION_MODE
        ));
    }
    out.extend(features(ctx).into_iter().map(|w| format!("with {w}")));
    out.extend(layout(ctx));
    let name = opt::ENABLE_KV_CACHE_SHARDING;
    let reasons = out.into_iter().map(|w| format!("{name} {w}")).collect();
    refused_at_start(ctx, reasons)
}

/// The features sharded pages cannot serve, one line each.
fn features(ctx: &Context) -> Vec<String> {
    let u = ctx.user();
    let v = ctx.version;
    // 0.5.23 takes GLM DSA's NextN: there only a model read as something else is judged.
    let glm_dsa =
        at_least(v, "0.5.23") && ctx.model_arch().is_none_or(|a| a == "GlmMoeDsaForCausalLM");
    let tree = ctx.env.get("SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND");
    // 0.5.23 sets the Python tree core itself where the variable is unset; 0.5.22 keeps Rust.
    let tree_core = tree.unwrap_or(if at_least(v, "0.5.23") {
        "python"
    } else {
        "rust"
    });
    let storage = u.sval(opt::HICACHE_STORAGE_BACKEND).is_some();
    let hicache = u.flag(opt::ENABLE_HIERARCHICAL_CACHE) && (storage || !at_least(v, "0.5.23"));
    let dcp = u.int(opt::DCP_SIZE).unwrap_or(1);
    let checks = [
        (
            ctx.spec_algo().is_some() && !glm_dsa,
            "speculative decoding".to_owned(),
        ),
        (
            u.sval(opt::DLLM_ALGORITHM).is_some(),
            "a diffusion LLM".to_owned(),
        ),
        (
            u.sval(opt::RADIX_CACHE_BACKEND).is_some(),
            opt::RADIX_CACHE_BACKEND.to_owned(),
        ),
        (
            !u.flag(opt::DISABLE_RADIX_CACHE) && tree_core != "python",
            format!("the radix cache on SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND={tree_core}"),
        ),
        (
            u.flag(opt::ENABLE_UNIFIED_CACHE_EXTERNAL_LINKER),
            opt::ENABLE_UNIFIED_CACHE_EXTERNAL_LINKER.to_owned(),
        ),
        (
            u.flag(opt::ENABLE_STREAMING_SESSION),
            opt::ENABLE_STREAMING_SESSION.to_owned(),
        ),
        (
            u.flag(opt::ENABLE_SESSION_RADIX_CACHE),
            opt::ENABLE_SESSION_RADIX_CACHE.to_owned(),
        ),
        (u.flag(opt::ENABLE_FLEXKV), opt::ENABLE_FLEXKV.to_owned()),
        (
            u.flag(opt::ENABLE_UNIFIED_MEMORY),
            opt::ENABLE_UNIFIED_MEMORY.to_owned(),
        ),
        (dcp > 1, format!("{} {dcp}", opt::DCP_SIZE)),
        (
            hicache,
            if storage {
                "HiCache and a storage backend"
            } else {
                "HiCache"
            }
            .to_owned(),
        ),
        (u.flag(opt::ENABLE_LMCACHE), opt::ENABLE_LMCACHE.to_owned()),
        (
            u.flag(opt::ENABLE_HISPARSE),
            opt::ENABLE_HISPARSE.to_owned(),
        ),
        (
            u.flag(opt::ENABLE_DYNAMIC_CHUNKING) && ctx.pp() > 1,
            format!("{} under PP", opt::ENABLE_DYNAMIC_CHUNKING),
        ),
        (
            u.flag(opt::ENABLE_TWO_BATCH_OVERLAP),
            opt::ENABLE_TWO_BATCH_OVERLAP.to_owned(),
        ),
    ];
    holding(checks).collect()
}

/// The transfer backend, the prefill attention backend the user names, the page size SGLang ends
/// up with, and how the pages are split: attention TP for MLA models (plain TP above 1), prefill context parallelism otherwise.
/// DeepSeek's sparse-attention models have checks of their own, and SGLang sets DeepSeek-V4's
/// context parallelism itself: both are left out.
fn layout(ctx: &Context) -> Vec<String> {
    let u = ctx.user();
    if ctx
        .model
        .is_some_and(|m| m.is_dsa(ctx.version) || m.deepseek_v4.is_some())
    {
        return vec![];
    }
    let mut out = vec![];
    let transfer = u
        .str(opt::DISAGGREGATION_TRANSFER_BACKEND)
        .unwrap_or("mooncake");
    // mooncake_tcp is mooncake over TCP.
    if !matches!(transfer, "mooncake" | "mooncake_tcp" | "nixl") {
        out.push(format!(
            "over {} {transfer}: it takes mooncake or nixl",
            opt::DISAGGREGATION_TRANSFER_BACKEND
        ));
    }
    let prefill = u
        .sval(opt::PREFILL_ATTENTION_BACKEND)
        .or_else(|| u.sval(opt::ATTENTION_BACKEND));
    // dsa is DeepSeek sparse attention's own backend, whose models are left to other checks.
    if let Some(b) = prefill.filter(|b| !matches!(b.as_str(), "fa3" | "trtllm_mla" | "dsa")) {
        out.push(format!(
            "on the {b} prefill attention backend: it takes fa3, or trtllm_mla for MLA"
        ));
    }
    // The page size follows the model's attention backend (trtllm_mla sets 64 on Blackwell):
    // without the model's facts the launcher's is no guide.
    if ctx.model.is_some() && ctx.server.page_size <= 1 {
        out.push(format!(
            "at page size {}: it needs real pages ({} 64)",
            ctx.server.page_size,
            opt::PAGE_SIZE
        ));
    }
    out.extend(page_split(ctx));
    out
}

/// An MLA model without prefill context parallelism splits the pages over plain TP above 1;
/// any other model needs prefill context parallelism above 1.
fn page_split(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let cp = u.flag(opt::ENABLE_PREFILL_CP) && u.int(opt::ATTN_CP_SIZE).is_some_and(|c| c > 1);
    let without = "without prefill context parallelism";
    match ctx.model.map(|m| m.is_mla()) {
        _ if cp => None,
        Some(true) if ctx.dp_attention() => {
            Some(format!("with DP attention on an MLA model {without}"))
        }
        Some(true) if ctx.tp() <= 1 => Some(format!("at TP 1 on an MLA model {without}")),
        Some(false) => Some(format!(
            "on a model without MLA, {without} ({} with an {} above 1)",
            opt::ENABLE_PREFILL_CP,
            opt::ATTN_CP_SIZE
        )),
        _ => None,
    }
}
