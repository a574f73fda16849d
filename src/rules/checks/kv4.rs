//! An FP4 KV cache against what SGLang's checks of it take: the attention backends of its KV4
//! check (ATTN016, 0.5.7+) and NVFP4's own path (ATTN017, 0.5.21+).
//!
//! The KV4 check compares the prefill and decode backends SGLang settled on: different ones
//! (prefill not FA4) only warn; prefill FA4 needs a decode backend from one list; otherwise the
//! main backend must come from another. The lists and the dtypes that trigger the check changed
//! by release (recorded in tests/evidence/ATTN016.jsonl).

use super::*;
use crate::resolve::{ChoiceSource, Chosen};
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// The KV-cache dtypes the release's KV4 check runs for.
fn kv4_dtypes(version: &str) -> &'static [&'static str] {
    if at_least(version, "0.5.16") {
        &["nvfp4", "fp4_mx_block16"]
    } else if at_least(version, "0.5.7") {
        &["fp4_e2m1"]
    } else {
        &[]
    }
}

/// The backends the check takes: for MLA or MHA models, for the decode backend under FA4
/// prefill (`fa4`) or for the main backend.
fn allowed(version: &str, mla: bool, fa4: bool) -> Vec<&'static str> {
    if !mla {
        let mut l = vec!["triton", "torch_native", "flex_attention"];
        l.extend((!fa4).then_some("trtllm_mha"));
        return l;
    }
    let mut l = vec![];
    l.extend((!at_least(version, "0.5.20")).then_some("cutlass_mla"));
    l.extend(["flashinfer", "trtllm_mla"]);
    l.extend((!fa4 && !at_least(version, "0.5.16")).then_some("flashmla"));
    l
}

pub(crate) fn kv4_backend(ctx: &Context) -> Vec<Fired> {
    let Some(kv) = ctx.kv_cache_dtype() else {
        return vec![];
    };
    if !kv4_dtypes(ctx.version).contains(&kv) || ctx.used().is_empty() {
        return vec![];
    }
    // nvfp4 off SM100/SM120 is refused first (CACHE007); from 0.5.21 SGLang sets nvfp4's
    // prefill and decode backends itself before this check.
    if kv == "nvfp4" && (at_least(ctx.version, "0.5.21") || !nvfp4_gpus(ctx)) {
        return vec![];
    }
    refused_backend(ctx)
        .map(|(what, fa4)| {
            let mla = ctx.model_is_mla();
            Fired::new(format!(
                "{} {kv} with {what}: SGLang {}'s FP4 KV-cache check takes {} for {} model{}; use one of them or another KV-cache dtype",
                opt::KV_CACHE_DTYPE,
                ctx.version,
                allowed(ctx.version, mla, fa4).join(", "),
                if mla { "an MLA" } else { "a non-MLA" },
                if fa4 { " under FA4 prefill" } else { "" },
            ))
        })
        .into_iter()
        .collect()
}

/// The backend SGLang's check refuses, described, and whether it is the decode backend under
/// FA4 prefill. `None`: accepted, only warned about, or not known.
fn refused_backend(ctx: &Context) -> Option<(String, bool)> {
    ctx.model?;
    let b = &ctx.server.backends;
    let (prefill, decode) = (b.prefill()?, b.decode()?);
    let mla = ctx.model_is_mla();
    if prefill.value == "fa4" {
        let ok = allowed(ctx.version, mla, true).contains(&decode.value.as_str());
        let role =
            user_named(&b.decode_attention).then(|| opt::DECODE_ATTENTION_BACKEND.to_owned());
        return (!ok).then(|| (label(role, decode), true));
    }
    if prefill.value != decode.value {
        return None;
    }
    let main = b.attention.as_ref()?;
    let ok = allowed(ctx.version, mla, false).contains(&main.value.as_str());
    let split = user_named(&b.prefill_attention) && user_named(&b.decode_attention);
    let role = split.then(|| {
        format!(
            "{} and {}",
            opt::PREFILL_ATTENTION_BACKEND,
            opt::DECODE_ATTENTION_BACKEND
        )
    });
    (!ok).then(|| (label(role, main), false))
}

/// The command line names this backend (not a model's own default SGLang sets).
fn user_named(c: &Option<Chosen>) -> bool {
    c.as_ref().is_some_and(|c| c.source == ChoiceSource::User)
}

/// How the user sees a backend: the option naming it, `--attention-backend`, or SGLang's pick.
fn label(option: Option<String>, c: &Chosen) -> String {
    match (option, c.source) {
        (Some(o), _) => format!("{o} {}", c.value),
        (None, ChoiceSource::User) => format!("{} {}", opt::ATTENTION_BACKEND, c.value),
        (None, ChoiceSource::Sglang) => format!(
            "{} (SGLang's choice: no {} given)",
            c.value,
            opt::ATTENTION_BACKEND
        ),
    }
}

/// What SGLang's NVFP4 KV path takes from 0.5.21, where it sets the prefill and decode backends
/// itself (prefill from the dequant dtype: fp8_e4m3 → flashinfer, nvfp4 → trtllm_mha; decode
/// trtllm_mha) and refuses what its SM100 native layout cannot serve yet.
pub(crate) fn nvfp4_kv_path(ctx: &Context) -> Vec<Fired> {
    let Some(kv) = ctx.kv_cache_dtype() else {
        return vec![];
    };
    let majors = ctx.majors();
    if !at_least(ctx.version, "0.5.21") || majors.is_empty() {
        return vec![];
    }
    // nvfp4 off SM100/SM120 is refused first (CACHE007).
    if kv == "nvfp4" && !nvfp4_gpus(ctx) {
        return vec![];
    }
    let sm100 = majors.iter().all(|&m| m == 10);
    let unified =
        ["nvfp4", "fp4_mx_block16"].contains(&kv) && ctx.user().flag(opt::ENABLE_UNIFIED_MEMORY);
    // SGLang stops at the first of these.
    dequant_refusal(ctx, kv, sm100)
        .or_else(|| {
            unified.then(|| {
                format!(
                    "{} {kv} with {}: SGLang {} has no unified pool for an FP4 KV cache and refuses it",
                    opt::KV_CACHE_DTYPE,
                    opt::ENABLE_UNIFIED_MEMORY,
                    ctx.version
                )
            })
        })
        .or_else(|| (kv == "nvfp4" && sm100).then(|| native_layout_refusal(ctx)).flatten())
        .into_iter()
        .map(Fired::new)
        .collect()
}

/// The GPUs in use take an NVFP4 KV cache (none outside SGLang's SM100/SM120 gate).
fn nvfp4_gpus(ctx: &Context) -> bool {
    ctx.gpus_where(|(m, _)| !super::cache::NVFP4_KV_MAJORS.contains(&m))
        .is_empty()
}

/// The prefill dequant dtype and the backends it implies, as SGLang settles them for nvfp4.
fn dequant_refusal(ctx: &Context, kv: &str, sm100: bool) -> Option<String> {
    let user = ctx.user();
    let asked = user
        .sval(opt::PREFILL_KV_CACHE_DEQUANT_DTYPE)
        .unwrap_or_else(|| "auto".into());
    let v = ctx.version;
    if kv != "nvfp4" {
        return (asked != "auto").then(|| {
            format!(
                "{} {asked} with {} {kv}: SGLang {v} takes it with nvfp4 only",
                opt::PREFILL_KV_CACHE_DEQUANT_DTYPE,
                opt::KV_CACHE_DTYPE
            )
        });
    }
    let prefill = user.sval(opt::PREFILL_ATTENTION_BACKEND);
    // A model's own default backend is set before this and counts as named.
    let b = &ctx.server.backends;
    let model_pick = b
        .attention
        .as_ref()
        .filter(|_| b.attention_by_model)
        .map(|c| c.value.clone());
    let explicit = prefill
        .clone()
        .or_else(|| user.sval(opt::ATTENTION_BACKEND))
        .or_else(|| model_pick.clone());
    let dtype = match (asked.as_str(), explicit.as_deref()) {
        ("auto", Some("flashinfer")) => "fp8_e4m3",
        ("auto", Some("trtllm_mha")) => "nvfp4",
        ("auto", Some(b)) => {
            let whose = if prefill.is_none() && !user.given(opt::ATTENTION_BACKEND) {
                " (SGLang's own for this model)"
            } else {
                ""
            };
            return Some(format!(
                "{} nvfp4 with attention backend {b}{whose}: SGLang {v} prefills NVFP4 on flashinfer (FP8 workspace) or trtllm_mha (native) only",
                opt::KV_CACHE_DTYPE
            ));
        }
        ("auto", None) if sm100 => "nvfp4",
        ("auto", None) => "fp8_e4m3",
        (d, _) => d,
    };
    if dtype == "nvfp4" && !sm100 {
        return Some(format!(
            "{} nvfp4 with native NVFP4 prefill (trtllm_mha): SGLang {v} runs it on SM100 only; use {} fp8_e4m3",
            opt::KV_CACHE_DTYPE,
            opt::PREFILL_KV_CACHE_DEQUANT_DTYPE
        ));
    }
    let target = if dtype == "nvfp4" {
        "trtllm_mha"
    } else {
        "flashinfer"
    };
    if let Some(p) = prefill.filter(|p| p != target) {
        return Some(format!(
            "{} {p} with {} {dtype}: SGLang {v} prefills that NVFP4 recipe on {target} only",
            opt::PREFILL_ATTENTION_BACKEND,
            opt::PREFILL_KV_CACHE_DEQUANT_DTYPE
        ));
    }
    user.sval(opt::DECODE_ATTENTION_BACKEND)
        .filter(|d| d != "trtllm_mha")
        .map(|d| {
            format!(
                "{} {d} with {} nvfp4: SGLang {v} decodes NVFP4 on trtllm_mha only",
                opt::DECODE_ATTENTION_BACKEND,
                opt::KV_CACHE_DTYPE
            )
        })
}

/// On SM100, NVFP4 decodes on trtllm_mha with its native scale layout, which SGLang's
/// speculative workers, PD transfer and host cache tiers do not carry yet.
fn native_layout_refusal(ctx: &Context) -> Option<String> {
    let user = ctx.user();
    let v = ctx.version;
    let what = |w: String| {
        format!(
            "{} nvfp4 on SM100 with {w}: SGLang {v} refuses it",
            opt::KV_CACHE_DTYPE
        )
    };
    if let Some(algo) = ctx.spec_algo() {
        if !["EAGLE", "EAGLE3", "NGRAM"].contains(&algo.as_str()) {
            return Some(what(format!(
                "speculative decoding {algo} (EAGLE, EAGLE3, NEXTN or NGRAM only)"
            )));
        }
        let breadth = user
            .int(opt::SPECULATIVE_NGRAM_MAX_BFS_BREADTH)
            .unwrap_or(1);
        if algo == "NGRAM" && breadth != 1 {
            return Some(what(format!(
                "NGRAM at {} {breadth} (trtllm_mha verifies a linear chain: 1)",
                opt::SPECULATIVE_NGRAM_MAX_BFS_BREADTH
            )));
        }
        let draft = user.sval(opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND);
        if let Some(d) = draft.filter(|d| algo != "NGRAM" && d != "trtllm_mha") {
            return Some(what(format!(
                "{} {d} (the draft must use trtllm_mha)",
                opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND
            )));
        }
    }
    if let Some(mode) = user.sval(opt::DISAGGREGATION_MODE).filter(|m| m != "null") {
        return Some(what(format!("{} {mode}", opt::DISAGGREGATION_MODE)));
    }
    [opt::ENABLE_HIERARCHICAL_CACHE, opt::ENABLE_LMCACHE]
        .into_iter()
        .find(|o| user.flag(o))
        .map(|o| what(o.to_owned()))
}
