//! The page-major KV layout (`--enable-page-major-kv-layout`, implied by
//! `--enable-unified-memory`) against the kernels SGLang lets read it (ATTN018, 0.5.15+).
//!
//! Only some attention, linear-attention and Mamba kernels address the layout's strided views.
//! The lists grew by release: Triton alone at first, paged MLA backends under unified memory
//! from 0.5.17, MHA backends from 0.5.19, where page-major without unified memory is refused
//! and so is a model whose K and V rows differ in width (recorded in tests/evidence/ATTN018.jsonl).

use super::*;
use crate::resolve::{ChoiceSource, Chosen};
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// The full-attention backends the layout takes, by release, MLA and unified memory.
fn full_allowed(version: &str, mla: bool, unified: bool) -> Vec<&'static str> {
    let mut l = vec!["triton"];
    if !at_least(version, "0.5.17") || !unified {
        return l;
    }
    if mla {
        l.extend(["fa3", "trtllm_mla", "flashinfer", "cutedsl_mla"]);
        l.extend((!at_least(version, "0.5.23")).then_some("tokenspeed_mla"));
        l.extend(at_least(version, "0.5.19").then_some("flashmla"));
    } else if at_least(version, "0.5.19") {
        l.extend(["fa3", "fa4", "flashinfer", "trtllm_mha"]);
    }
    l
}

/// The linear-attention kernels the layout takes for decode and for prefill (0.5.17+; before,
/// every linear and Mamba kernel had to be Triton).
fn linear_allowed(version: &str, mla: bool, decode: bool) -> Vec<&'static str> {
    let mut l = vec!["triton"];
    if decode {
        l.push("flashinfer");
    } else {
        l.push("flashkda");
        l.extend(at_least(version, "0.5.23").then_some("flashinfer"));
    }
    if mla {
        l.push("cutedsl");
        l.extend(at_least(version, "0.5.18").then_some("helion"));
    }
    l
}

pub(crate) fn page_major_backend(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let unified = u.flag(opt::ENABLE_UNIFIED_MEMORY);
    if !unified && !u.flag(opt::ENABLE_PAGE_MAJOR_KV_LAYOUT) {
        return vec![];
    }
    let layout = match unified {
        true => opt::ENABLE_UNIFIED_MEMORY,
        false => opt::ENABLE_PAGE_MAJOR_KV_LAYOUT,
    };
    // SGLang stops at the first of these.
    without_pool(ctx, unified)
        .or_else(|| asymmetric_rows(ctx, unified))
        .or_else(|| full_refusal(ctx, unified))
        .or_else(|| linear_refusal(ctx))
        .map(|why| {
            Fired::new(format!(
                "{layout} (the page-major KV layout): {why}; SGLang {} refuses this while resolving its arguments",
                ctx.version
            ))
        })
        .into_iter()
        .collect()
}

/// From 0.5.19 the layout exists only inside the unified pool.
fn without_pool(ctx: &Context, unified: bool) -> Option<String> {
    (!unified && at_least(ctx.version, "0.5.19")).then(|| {
        format!(
            "from this release it exists only inside {}",
            opt::ENABLE_UNIFIED_MEMORY
        )
    })
}

/// From 0.5.19 to 0.5.22 the unified pool needs K and V rows of one width (MLA aside).
fn asymmetric_rows(ctx: &Context, unified: bool) -> Option<String> {
    let v = ctx.version;
    if !unified || !at_least(v, "0.5.19") || at_least(v, "0.5.23") || ctx.model_is_mla() {
        return None;
    }
    let (k, val) = asymmetric(ctx)?;
    Some(format!(
        "this model's K rows ({k} wide) and V rows ({val}) differ, which the unified pool does not take"
    ))
}

/// The model's K and V head widths when they differ (a model without MLA).
fn asymmetric(ctx: &Context) -> Option<(u64, u64)> {
    ctx.model?.asymmetric_kv()
}

/// A prefill or decode attention backend in effect the layout does not take.
fn full_refusal(ctx: &Context, unified: bool) -> Option<String> {
    ctx.model?;
    let mla = ctx.model_is_mla();
    let allowed = if at_least(ctx.version, "0.5.23") && asymmetric(ctx).is_some() && !mla {
        vec!["triton", "fa3", "fa4"]
    } else {
        full_allowed(ctx.version, mla, unified)
    };
    let b = &ctx.server.backends;
    let mut bad: Vec<&Chosen> = [b.prefill(), b.decode()]
        .into_iter()
        .flatten()
        .filter(|c| !allowed.contains(&c.value.as_str()))
        .collect();
    bad.dedup_by(|x, y| x.value == y.value);
    (!bad.is_empty()).then(|| {
        let named = bad.iter().any(|c| c.source == ChoiceSource::User);
        format!(
            "attention backend {} ({}) is not among those the layout takes for {} model: {}",
            bad.iter()
                .map(|c| c.value.as_str())
                .collect::<Vec<_>>()
                .join(" and "),
            if named { "as given" } else { "SGLang's choice" },
            if mla { "an MLA" } else { "this" },
            allowed.join(", ")
        )
    })
}

/// A kernel in effect and the option that set it.
type Kernel<'a> = (&'static str, &'a str);

/// A linear-attention or Mamba kernel in effect the layout does not take: the first, in
/// SGLang's order, with the option that set it.
fn linear_refusal(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    // A per-mode kernel falls back to the base one.
    let per_mode = |o: &'static str| {
        u.str(o).map(|v| (o, v)).or_else(|| {
            u.str(opt::LINEAR_ATTN_BACKEND)
                .map(|v| (opt::LINEAR_ATTN_BACKEND, v))
        })
    };
    let own = |o: &'static str| u.str(o).map(|v| (o, v));
    let (v, mla) = (ctx.version, ctx.model_is_mla());
    let checks: Vec<(Option<Kernel>, Vec<&str>)> = if at_least(v, "0.5.17") {
        vec![
            (
                per_mode(opt::LINEAR_ATTN_DECODE_BACKEND),
                linear_allowed(v, mla, true),
            ),
            (
                per_mode(opt::LINEAR_ATTN_PREFILL_BACKEND),
                linear_allowed(v, mla, false),
            ),
            (own(opt::MAMBA_BACKEND), vec!["triton"]),
        ]
    } else {
        [
            opt::LINEAR_ATTN_BACKEND,
            opt::LINEAR_ATTN_DECODE_BACKEND,
            opt::LINEAR_ATTN_PREFILL_BACKEND,
            opt::MAMBA_BACKEND,
        ]
        .into_iter()
        .map(|o| (own(o), vec!["triton"]))
        .collect()
    };
    checks.into_iter().find_map(|(given, ok)| {
        let (o, val) = given?;
        (!ok.contains(&val)).then(|| {
            format!(
                "{o} {val} is not among the kernels the layout takes there ({})",
                ok.join(", ")
            )
        })
    })
}

/// CACHE008: what the unified memory pool (`--enable-unified-memory`, 0.5.15+) is refused with:
/// speculative algorithms outside the release's list, host cache tiers, decode context
/// parallelism (until 0.5.19), two-batch overlap (from 0.5.20), and PD disaggregation (until
/// 0.5.17; then only over mooncake and without pipeline parallelism).
pub(crate) fn unified_pool(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_UNIFIED_MEMORY) {
        return vec![];
    }
    [
        pool_spec(ctx),
        pool_cache_tier(ctx),
        pool_parallel(ctx),
        pool_pd(ctx),
    ]
    .into_iter()
    .flatten()
    .next()
    .map(|what| {
        Fired::new(format!(
            "{} with {what}: SGLang {} refuses the unified memory pool with it while resolving its arguments",
            opt::ENABLE_UNIFIED_MEMORY,
            ctx.version
        ))
    })
    .into_iter()
    .collect()
}

/// A speculative algorithm the release's unified pool does not take.
fn pool_spec(ctx: &Context) -> Option<String> {
    let algo = ctx.spec_algo()?;
    let v = ctx.version;
    let ok: &[&str] = if at_least(v, "0.5.22") {
        &["DSPARK", "EAGLE", "EAGLE3", "DFLASH"]
    } else if at_least(v, "0.5.18") {
        &["DSPARK"]
    } else {
        &[]
    };
    if !ok.contains(&algo.as_str()) {
        let takes = match ok {
            [] => "none".to_owned(),
            _ => ok.join(", "),
        };
        return Some(format!(
            "speculative decoding {algo} (this release's pool takes {takes})"
        ));
    }
    // From 0.5.22 a linear draft chain only (SGLang's own top-k counts); from 0.5.23 EAGLE's
    // draft lives inside a hybrid target's pool entries.
    let k = super::spec::resolved_topk(ctx);
    if at_least(v, "0.5.22") && k > 1 {
        return Some(format!(
            "speculative decoding {algo} at top-k {k} (a linear draft chain only: top-k 1)"
        ));
    }
    let eagle = ["EAGLE", "EAGLE3"].contains(&algo.as_str());
    (eagle && at_least(v, "0.5.23") && ctx.model.is_some_and(|m| plain_attention(m, v))).then(|| {
        format!(
            "speculative decoding {algo} for a model with full attention in every layer (EAGLE needs a hybrid sliding-window or linear-attention target here)"
        )
    })
}

/// Architectures SGLang serves with full attention in every layer: never a hybrid target (its
/// hybrid sliding-window list is by architecture, and includes models without a
/// `sliding_window`, such as Llama 4).
const PLAIN_ATTENTION: &[&str] = &[
    "LlamaForCausalLM",
    "MistralForCausalLM",
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration",
    "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM",
];

/// A model with full attention in every layer (no sliding-window or linear-attention layers).
fn plain_attention(m: &crate::facts::model::ModelFacts, v: &str) -> bool {
    let arch = m.architecture.as_deref().unwrap_or_default();
    PLAIN_ATTENTION.contains(&arch) && m.linear_state.is_none() && !m.is_dsa(v)
}

/// A host cache tier: LMCache always, HiCache until 0.5.20.
fn pool_cache_tier(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let hicache = !at_least(ctx.version, "0.5.21") && u.flag(opt::ENABLE_HIERARCHICAL_CACHE);
    if hicache {
        return Some(opt::ENABLE_HIERARCHICAL_CACHE.to_owned());
    }
    u.flag(opt::ENABLE_LMCACHE)
        .then(|| opt::ENABLE_LMCACHE.to_owned())
}

/// Decode context parallelism until 0.5.19, two-batch overlap from 0.5.20.
fn pool_parallel(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let v = ctx.version;
    let dcp = u.int(opt::DCP_SIZE).unwrap_or(1);
    if dcp > 1 && !at_least(v, "0.5.20") {
        return Some(format!("{} {dcp}", opt::DCP_SIZE));
    }
    (at_least(v, "0.5.20") && u.flag(opt::ENABLE_TWO_BATCH_OVERLAP))
        .then(|| opt::ENABLE_TWO_BATCH_OVERLAP.to_owned())
}

/// PD disaggregation: refused until 0.5.17; from 0.5.18 over mooncake only and with one
/// pipeline stage.
fn pool_pd(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let mode = u.sval(opt::DISAGGREGATION_MODE).filter(|m| m != "null")?;
    let pd = format!("{} {mode}", opt::DISAGGREGATION_MODE);
    if !at_least(ctx.version, "0.5.18") {
        return Some(pd);
    }
    let transfer = u.sval(opt::DISAGGREGATION_TRANSFER_BACKEND);
    if let Some(t) = transfer.filter(|t| t != "mooncake") {
        return Some(format!(
            "{pd} over {} {t} (mooncake only)",
            opt::DISAGGREGATION_TRANSFER_BACKEND
        ));
    }
    (ctx.pp() > 1).then(|| format!("{pd} and pipeline parallelism"))
}
