//! Mega MoE's per-rank token buffer against the largest MoE forward SGLang can run.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

const VAR: &str = "SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK";

/// Architectures whose Mega MoE layer has no fallback path, so 0.5.21+ checks the buffer for
/// them whatever their quantisation (read in the 0.5.21–0.5.23 wheels).
const NO_FALLBACK: &[&str] = &[
    "DeepseekV4ForCausalLM",
    "InternS2PreviewForConditionalGeneration",
    "MellumForCausalLM",
    "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM",
    "Qwen3NextForCausalLM",
    "Qwen3VLMoeForConditionalGeneration",
    "Qwen3_5MoeForCausalLM",
    "Qwen3_5MoeForConditionalGeneration",
];

/// The models SGLang checks: DeepSeek-V4 in 0.5.17–0.5.20; from 0.5.21 the no-fallback
/// architectures and any NVFP4-expert checkpoint, which is repacked for Mega MoE at load.
fn checked_model(ctx: &Context) -> Option<String> {
    let arch = ctx.model_arch()?;
    if !at_least(ctx.version, "0.5.21") {
        return (arch == "DeepseekV4ForCausalLM").then(|| arch.to_owned());
    }
    let nvfp4 = ctx.quant().is_some_and(|q| {
        q == "modelopt_fp4" || (q == "minimax_m3_nvfp4" && at_least(ctx.version, "0.5.23"))
    });
    (NO_FALLBACK.contains(&arch) || nvfp4).then(|| arch.to_owned())
}

/// A prefill chunk's tokens on one rank, rounded up to the alignment SGLang pads to, and how the
/// chunk is split (for the message). `None`: SGLang's own "positive chunk" refusal applies.
fn prefill_need(ctx: &Context, chunk: i64) -> Option<(i64, String)> {
    let u = ctx.user();
    let cp = u.int(opt::ATTN_CP_SIZE).unwrap_or(1).max(1);
    let (local, align, split) = if u.flag(opt::ENABLE_PREFILL_CP) {
        ((chunk + cp - 1) / cp, 1, format!("over attention CP {cp}"))
    } else if ctx.dp_attention() {
        let dp = ctx.attn_dp().max(1);
        let align = (ctx.tp() / dp / cp).max(1);
        (chunk / dp, align, format!("over attention DP {dp}"))
    } else {
        (chunk, (ctx.tp() / cp).max(1), "on every rank".to_owned())
    };
    (local > 0).then(|| ((local + align - 1) / align * align, split))
}

/// The chunk size SGLang checks: the one in effect, except that 0.5.17–0.5.20 check before DP
/// attention divides it among the DP ranks.
fn checked_chunk(ctx: &Context) -> i64 {
    let chunk = ctx.server.defaults.chunked_prefill_size;
    if !ctx.dp_attention() || chunk <= 0 || at_least(ctx.version, "0.5.21") {
        return chunk;
    }
    let given = ctx.user().int(opt::CHUNKED_PREFILL_SIZE).filter(|c| *c > 0);
    given.unwrap_or_else(|| chunk.saturating_mul(ctx.attn_dp().max(1)))
}

/// 0.5.21+: the largest decode (or verify) forward on one rank, outside a PD prefill server.
fn decode_need(ctx: &Context) -> Option<i64> {
    let role = ctx.user().sval(opt::DISAGGREGATION_MODE);
    if !at_least(ctx.version, "0.5.21") || role.as_deref() == Some("prefill") {
        return None;
    }
    let d = &ctx.server.defaults;
    if !d.decode_graph || ctx.cuda_graph_disabled() {
        return None;
    }
    let mut bs = d.decode_max_bs?;
    // 0.5.23 cuts the graph's batch at one attention-DP rank's request pool, padded to the
    // attention-TP width; 0.5.21 and 0.5.22 take the graph's own maximum.
    if let Some(pool) = d
        .max_running_requests
        .filter(|_| at_least(ctx.version, "0.5.23"))
    {
        let dp = ctx.attn_dp().max(1);
        let width = (ctx.tp() / dp).max(1);
        bs = bs.min((pool / dp + width - 1) / width * width);
    }
    let per_req = if ctx.spec_algo().is_some() {
        (ctx.server.spec_params).map_or(1, |p| p.num_draft_tokens.value.max(1))
    } else {
        1
    };
    Some(bs * per_req)
}

/// EP033: with Mega MoE as the all-to-all backend, SGLang refuses a line whose per-rank token
/// buffer (`SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK`: 1024 in 0.5.17, 8192 after)
/// is smaller than a prefill chunk's share on one rank, or (0.5.21+) the largest decode graph's
/// tokens, or a line without chunked prefill.
pub(crate) fn mega_moe_token_budget(ctx: &Context) -> Vec<Fired> {
    if ctx.moe_a2a().as_deref() != Some("megamoe") {
        return vec![];
    }
    let Some(arch) = checked_model(ctx) else {
        return vec![];
    };
    let default = (ctx.env_registry().0.var(VAR)).and_then(|v| v.default.as_i64());
    let Some(capacity) = default.and_then(|d| env_int(ctx.env, VAR, d)) else {
        return vec![];
    };
    let named = (ctx.server.backends.moe_a2a.as_ref())
        .is_some_and(|c| c.source == crate::resolve::ChoiceSource::User);
    let how = if named {
        format!("{} megamoe", opt::MOE_A2A_BACKEND)
    } else {
        format!("Mega MoE ({}=1)", crate::resolve::a2a::MEGA_MOE_VAR)
    };
    let refuse = |why: String| {
        vec![Fired::new(format!(
            "{how} on {arch}: {why}; SGLang {} refuses the line before loading",
            ctx.version
        ))]
    };
    if let Some(need) = decode_need(ctx).filter(|n| *n > capacity) {
        let max_bs = [opt::CUDA_GRAPH_MAX_BS_DECODE, opt::CUDA_GRAPH_MAX_BS]
            .into_iter()
            .find(|o| ctx.user().knows(o))
            .unwrap_or(opt::CUDA_GRAPH_MAX_BS);
        return refuse(format!(
            "the largest decode CUDA graph runs {need} tokens per rank, but {VAR}={capacity}; set {VAR}={need}, or lower {max_bs}"
        ));
    }
    let u = ctx.user();
    let decode_role = u.sval(opt::DISAGGREGATION_MODE).as_deref() == Some("decode");
    if decode_role || (ctx.pp() > 1 && u.flag(opt::ENABLE_DYNAMIC_CHUNKING)) {
        return vec![];
    }
    let chunk = checked_chunk(ctx);
    if chunk <= 0 {
        return refuse(format!(
            "Mega MoE needs chunked prefill to bound its per-rank tokens, and {} is {chunk}; give it a positive size",
            opt::CHUNKED_PREFILL_SIZE
        ));
    }
    let Some((need, split)) = prefill_need(ctx, chunk) else {
        return refuse(format!(
            "{} {chunk} leaves no prefill tokens per rank once split; raise it",
            opt::CHUNKED_PREFILL_SIZE
        ));
    };
    if need <= capacity {
        return vec![];
    }
    refuse(format!(
        "a prefill chunk of {chunk} tokens puts {need} tokens {split}, but {VAR}={capacity}; set {VAR}={need}, or lower {}",
        opt::CHUNKED_PREFILL_SIZE
    ))
}
