//! AUTO: problems with what SGLang chooses on its own after parsing (the resolved server's
//! backends), where the user typed nothing wrong.

use super::*;
use crate::resolve::{ChoiceSource, attention, vision};
use crate::sglang::opt;

/// The vision tower gets FA3 from SGLang (the model's code asks for it) on a GPU where SGLang
/// then refuses FA3.
pub(crate) fn mm_fa3_refused(ctx: &Context) -> Vec<Fired> {
    if !sglang_tower_pick(ctx, "fa3") {
        return vec![];
    }
    let refused = vision::fa3_refused_on(ctx.version);
    let bad = ctx.gpus_where(|(m, _)| refused.contains(&m));
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; SGLang {} will choose fa3 for the vision tower of {} (its model code asks for FA3), which it rejects on this GPU ('The 'fa3' backend is not supported on Blackwell GPUs')",
        Context::describe(&bad),
        ctx.version,
        ctx.model_arch().unwrap_or("this model"),
    ))
    .with_fix(set_arg(opt::MM_ATTENTION_BACKEND, "triton_attn"))]
}

/// AUTO003: 0.5.10 to 0.5.12.post1 give the vision tower FA4 on every SM10x GPU, SM103 (B300,
/// GB300) included, where the FA4 forward kernel's architecture assert stops the first vision
/// pass; 0.5.13 to 0.5.20 pick triton_attn there instead.
pub(crate) fn mm_fa4_sm103(ctx: &Context) -> Vec<Fired> {
    if !sglang_tower_pick(ctx, "fa4") {
        return vec![];
    }
    let sm103 = ctx.gpus_where(|cc| cc == (10, 3));
    if sm103.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; SGLang {} will choose fa4 for the vision tower of {}, whose FA4 kernel stops on SM 10.3 at the first image ('Only SM 10.x and 11.x are supported', at warmup or the first multimodal request); 0.5.13 picks triton_attn on these GPUs",
        Context::describe(&sm103),
        ctx.version,
        ctx.model_arch().unwrap_or("this model"),
    ))
    .with_fix(set_arg(opt::MM_ATTENTION_BACKEND, "triton_attn"))]
}

/// SGLang itself (no `--mm-attention-backend`) gives the vision tower `backend`.
fn sglang_tower_pick(ctx: &Context, backend: &str) -> bool {
    ctx.server
        .backends
        .multimodal_attention
        .as_ref()
        .is_some_and(|mm| mm.source == ChoiceSource::Sglang && mm.value == backend)
}

/// `--page-size` the attention backend SGLang picks on its own does not take: SGLang silently
/// uses another page size.
pub(crate) fn auto_backend_page_size(ctx: &Context) -> Vec<Fired> {
    let Some(page) = ctx
        .args
        .get(opt::PAGE_SIZE)
        .and_then(serde_json::Value::as_i64)
    else {
        return vec![];
    };
    let Some(a) = &ctx.server.backends.attention else {
        return vec![];
    };
    if a.source != ChoiceSource::Sglang {
        return vec![];
    }
    let Some((ok, forced)) = attention::accepted_pages(ctx.version, &a.value) else {
        return vec![];
    };
    if ok.contains(&(page.max(1) as u64)) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; --page-size {page}: SGLang {} will choose the {} attention backend here (no --attention-backend given), which takes page sizes {}; SGLang silently uses {forced}",
        ctx.describe_used(),
        ctx.version,
        a.value,
        ok.iter().map(u64::to_string).collect::<Vec<_>>().join("/"),
    ))
    .with_fix(set_arg(opt::PAGE_SIZE, &forced.to_string()))]
}

/// AUTO004: 0.5.3rc2 and 0.5.3 set a DSA model's fraction to 0.8, and 0.5.3rc2 to 0.5.4.post1
/// its KV cache to FP8 on SM100 and newer, whatever the line gives.
pub(crate) fn dsa_overrides_given(ctx: &Context) -> Vec<Fired> {
    if !ctx.model.is_some_and(|m| m.is_dsa(ctx.version)) {
        return vec![];
    }
    let arch = ctx.model_arch().unwrap_or("this model");
    let mut out = Vec::new();
    if let (Some(fixed), Some(given)) =
        (ctx.server.fixed_fraction(), ctx.server.user_mem_fraction())
        && (given - fixed).abs() >= 5e-4
    {
        out.push(
            Fired::new(format!(
                "--mem-fraction-static {given}: SGLang {} sets {fixed} for {arch} (DeepSeek sparse attention) whatever fraction is given, and the server runs at {fixed}; 0.5.3.post1 keeps the one given",
                ctx.version
            ))
            .with_fix(set_arg(opt::MEM_FRACTION_STATIC, &fixed.to_string())),
        );
    }
    // The dtype as given is this rule's subject: the server holds the one SGLang puts over it.
    let given = ctx.user().given_sval(opt::KV_CACHE_DTYPE);
    if let (Some(given), Some(used)) = (given, ctx.kv_cache_dtype())
        && given != used
    {
        out.push(
            Fired::new(format!(
                "{}; --kv-cache-dtype {given}: SGLang {} sets {used} for {arch} (DeepSeek sparse attention) on these GPUs whatever dtype is given; 0.5.4.post2 keeps the one given",
                ctx.describe_used(),
                ctx.version
            ))
            .with_fix(set_arg(opt::KV_CACHE_DTYPE, used)),
        );
    }
    out
}
