//! Options SGLang's DeepEP v2 and PPLX all-to-all backends refuse while it resolves the arguments.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// EP029: what 0.5.19+ refuses with `--moe-a2a-backend deepep_v2`: a MoE runner other than
/// DeepGEMM, forced shared-expert fusion, the NVLink-only direct mode across nodes (0.5.22+), and
/// DeepEP v2 as the draft's backend, named or inherited (a draft other than NGRAM without its
/// own `--speculative-moe-a2a-backend` takes the target's).
pub(crate) fn deepep_v2_options(ctx: &Context) -> Vec<Fired> {
    if ctx.moe_a2a().as_deref() != Some("deepep_v2") {
        return vec![];
    }
    let u = ctx.user();
    let mut why = Vec::new();
    why.extend(runner_not_deep_gemm(ctx, ": 'currently supports only'"));
    if u.flag(opt::ENFORCE_SHARED_EXPERTS_FUSION) {
        why.push(format!(
            "{} ('has not validated fused shared experts')",
            opt::ENFORCE_SHARED_EXPERTS_FUSION
        ));
    }
    let direct = u.sval(opt::DEEPEP_V2_MODE).as_deref() == Some("direct");
    if direct && ctx.nnodes() > 1 && at_least(ctx.version, "0.5.22") {
        why.push(format!(
            "{} direct across {} nodes (NVLink only; use hybrid)",
            opt::DEEPEP_V2_MODE,
            ctx.nnodes()
        ));
    }
    let draft = u.sval(opt::SPECULATIVE_MOE_A2A_BACKEND).or_else(|| {
        ctx.spec_algo()
            .filter(|a| !a.eq_ignore_ascii_case("NGRAM"))
            .map(|_| "deepep_v2".to_owned())
    });
    if draft.as_deref() == Some("deepep_v2") {
        why.push(format!(
            "DeepEP v2 as the draft model's all-to-all backend ('not validated as a speculative draft backend'; set {} to another backend)",
            opt::SPECULATIVE_MOE_A2A_BACKEND
        ));
    }
    refused(ctx, "deepep_v2", &why)
}

/// EP030: what 0.5.17+ refuses with `--moe-a2a-backend pplx`: DeepEP's normal mode, fewer than
/// two attention-DP groups, and a MoE runner other than DeepGEMM.
pub(crate) fn pplx_requirements(ctx: &Context) -> Vec<Fired> {
    if ctx.moe_a2a().as_deref() != Some("pplx") {
        return vec![];
    }
    let mut why = Vec::new();
    if ctx.user().sval(opt::DEEPEP_MODE).as_deref() == Some("normal") {
        why.push(format!(
            "{} normal (it has low-latency kernels only)",
            opt::DEEPEP_MODE
        ));
    }
    if ctx.attn_dp() < 2 {
        why.push(format!(
            "attention DP {} (it needs DP attention with at least 2 groups)",
            ctx.attn_dp()
        ));
    }
    why.extend(runner_not_deep_gemm(ctx, ""));
    why.extend(pplx_budget(ctx));
    refused(ctx, "pplx", &why)
}

/// The MoE runner in effect when it is not DeepGEMM, the only one both backends run (`quoted`:
/// SGLang's words, where the message gives them).
fn runner_not_deep_gemm(ctx: &Context, quoted: &str) -> Option<String> {
    let runner = super::ep::moe_runner(ctx);
    (!matches!(runner.as_str(), "auto" | "deep_gemm"))
        .then(|| format!("the MoE runner {runner} (it runs only deep_gemm{quoted})"))
}

/// One finding for what SGLang refuses with this all-to-all backend, if anything.
fn refused(ctx: &Context, backend: &str, why: &[String]) -> Vec<Fired> {
    if why.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "--moe-a2a-backend {backend} with {}: SGLang {} refuses the line before loading",
        why.join("; with "),
        ctx.version
    ))]
}

const PPLX_VAR: &str = "SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK";

/// PPLX's per-rank dispatch buffer (128 tokens unless set) against the chunk in effect and the
/// decode graphs' max batch; SGLang checks it only with chunked prefill on and off PD decode.
fn pplx_budget(ctx: &Context) -> Option<String> {
    let chunk = ctx.server.defaults.chunked_prefill_size;
    let decode_side = ctx.user().sval(opt::DISAGGREGATION_MODE).as_deref() == Some("decode");
    if chunk <= 0 || decode_side {
        return None;
    }
    let capacity = env_int(ctx.env, PPLX_VAR, 128)?;
    let need = chunk.max(ctx.server.defaults.decode_max_bs.unwrap_or(0));
    (need > capacity).then(|| {
        format!("a per-rank dispatch of up to {need} tokens (the prefill chunk, or the decode graphs' max batch) above {PPLX_VAR}={capacity} (raise it to {need})")
    })
}
