//! An FP4 KV cache against the attention backends SGLang's KV4 check takes (0.5.7+).
//!
//! SGLang compares the prefill and decode backends it settled on: different ones (prefill not
//! FA4) only warn; prefill FA4 needs a decode backend from one list; otherwise the main backend
//! must come from another. The lists and the dtypes that trigger the check changed by release (recorded in tests/evidence/ATTN016.jsonl).

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
    if kv == "nvfp4"
        && (at_least(ctx.version, "0.5.21")
            || !ctx.gpus_where(|(m, _)| m != 10 && m != 12).is_empty())
    {
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
        let role = b
            .decode_attention
            .as_ref()
            .map(|_| opt::DECODE_ATTENTION_BACKEND);
        return (!ok).then(|| (label(role, decode), true));
    }
    if prefill.value != decode.value {
        return None;
    }
    let main = b.attention.as_ref()?;
    let ok = allowed(ctx.version, mla, false).contains(&main.value.as_str());
    let split = b.prefill_attention.is_some() && b.decode_attention.is_some();
    let role = split.then_some("--prefill-attention-backend and --decode-attention-backend");
    (!ok).then(|| (label(role, main), false))
}

/// How the user sees a backend: the option naming it, `--attention-backend`, or SGLang's pick.
fn label(option: Option<&str>, c: &Chosen) -> String {
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
