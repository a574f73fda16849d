//! Radix / hierarchical cache, paging and chunked prefill.

use super::*;
use crate::resolve::attention::{EXTRA_BUFFER_LIST_FROM, NEVER_LISTED, no_extra_buffer};
use crate::sglang::opt;
use crate::sglang::release::{at_least, within};

pub(crate) fn hicache_radix(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_HIERARCHICAL_CACHE) {
        return vec![];
    }
    let Some(why) = radix_off(ctx) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "--enable-hierarchical-cache with {why}: HiCache is built on the radix cache; SGLang rejects (older releases crash on) the combination"
    ))]
}

/// CACHE010: 0.4.3.post3 and 0.4.3.post4 pass the hierarchical radix cache a keyword its
/// constructor lacks; with the radix cache off the scheduler builds the chunk cache instead.
pub(crate) fn hicache_constructor(ctx: &Context) -> Vec<Fired> {
    let user = ctx.user();
    if !user.flag(opt::ENABLE_HIERARCHICAL_CACHE) || user.flag(opt::DISABLE_RADIX_CACHE) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--enable-hierarchical-cache: SGLang {}'s scheduler builds HiRadixCache with a keyword its constructor does not take (TypeError: unexpected keyword argument 'token_to_kv_pool_allocator'), after the weights load; 0.4.4 fixed it",
        ctx.version
    ))]
}

/// Why the radix cache is off: the user's flag or SGLang's own earlier steps
/// (tests/evidence/CACHE001.jsonl); `None` while it is on.
fn radix_off(ctx: &Context) -> Option<&'static str> {
    let user = ctx.user();
    if user.flag(opt::DISABLE_RADIX_CACHE) {
        Some(opt::DISABLE_RADIX_CACHE)
    } else if user.sval(opt::DISAGGREGATION_MODE).as_deref() == Some("decode")
        && !user.flag(opt::DISAGGREGATION_DECODE_ENABLE_RADIX_CACHE)
    {
        Some(
            "--disaggregation-mode decode (SGLang turns the radix cache off on a decode server unless --disaggregation-decode-enable-radix-cache keeps it, where the release has that option)",
        )
    } else if !ctx.server.switches.radix_cache.on
        && at_least(ctx.version, crate::resolve::DETERMINISTIC_FIRST)
    {
        // From 0.5.12 deterministic inference's step (which turns the radix cache off) runs
        // before the cache checks; earlier releases check first.
        Some(
            "--enable-deterministic-inference (SGLang turns the radix cache off for it under this attention backend)",
        )
    } else {
        None
    }
}

/// The page size SGLang ends up with: forced by the backend, else `--page-size`, else 1.
fn effective_page(ctx: &Context) -> i64 {
    let given = ctx.user().int(opt::PAGE_SIZE).unwrap_or(1).max(1);
    let role = |o: &str, b: &str| ctx.user().sval(o).as_deref() == Some(b);
    // The MLA backends force a page size as the main or decode backend only (trtllm_mla as the
    // main one only before 0.5.0); cutedsl_mla, hpc_ops and trtllm_mha in any role.
    let main_or_decode = |b: &str| {
        role(opt::ATTENTION_BACKEND, b)
            || (role(opt::DECODE_ATTENTION_BACKEND, b)
                && (b != "trtllm_mla" || at_least(ctx.version, "0.5.0rc0")))
    };
    let any = |b: &str| main_or_decode(b) || role(opt::PREFILL_ATTENTION_BACKEND, b);
    let mut page = given;
    if main_or_decode("flashmla") {
        page = 64;
    }
    if main_or_decode("cutlass_mla") {
        page = 128;
    }
    if (main_or_decode("trtllm_mla") || any("cutedsl_mla")) && ![32, 64].contains(&page) {
        page = 64;
    }
    // trtllm_mha takes 128 from 0.5.17.
    let mha: &[i64] = if at_least(ctx.version, "0.5.17") {
        &[16, 32, 64, 128]
    } else {
        &[16, 32, 64]
    };
    if any("trtllm_mha") && !mha.contains(&page) {
        page = 64;
    }
    if any("hpc_ops") {
        page = 64;
    }
    page
}

pub(crate) fn chunk_page(ctx: &Context) -> Vec<Fired> {
    if ctx.user().sval(opt::DISAGGREGATION_MODE).as_deref() == Some("decode") {
        return vec![];
    }
    match ctx.user().int(opt::CHUNKED_PREFILL_SIZE) {
        Some(chunk) if chunk > 0 => given_chunk_page(ctx, chunk),
        Some(_) => vec![],
        None => default_chunk_page(ctx),
    }
}

/// The chunk the line gives, split among the attention-DP ranks.
fn given_chunk_page(ctx: &Context, chunk: i64) -> Vec<Fired> {
    let dp = if ctx.dp_attention() {
        ctx.attn_dp().max(1)
    } else {
        1
    };
    let per_rank = chunk / dp;
    let page = effective_page(ctx);
    if per_rank % page == 0 {
        return vec![];
    }
    vec![Fired::new(format!(
        "--chunked-prefill-size {chunk}{} is not a multiple of the page size {page}: SGLang rejects it; use a multiple of {}",
        if dp > 1 {
            format!(" (÷ attention DP {dp} = {per_rank})")
        } else {
            String::new()
        },
        page * dp
    ))]
}

/// On SM100 with no attention backend named, SGLang picks the backend of Qwen's hybrid
/// linear-attention models and sets their page size with it (64 or 1), whatever the line gives.
pub(super) fn sets_own_pages(ctx: &Context) -> bool {
    ctx.model_arch()
        .is_some_and(|a| crate::resolve::attention::hybrid_linear(a, ctx.version))
        && ctx.majors().contains(&10)
        && ctx.user().sval(opt::ATTENTION_BACKEND).is_none()
}

/// The chunk SGLang picks for the GPU (per attention-DP rank), against the page size: judged
/// only where the backends the line names and SGLang's own picks agree on a page it refuses.
fn default_chunk_page(ctx: &Context) -> Vec<Fired> {
    let chunk = ctx.server.defaults.chunked_prefill_size;
    let pages = [effective_page(ctx), ctx.server.page_size as i64];
    if chunk <= 0 || sets_own_pages(ctx) || pages.iter().any(|p| *p <= 0 || chunk % p == 0) {
        return vec![];
    }
    vec![Fired::new(format!(
        "page size {} with the chunked prefill size SGLang picks here ({chunk}): it is not a multiple of the page size and SGLang rejects it; give a page size that divides {chunk}, or a --chunked-prefill-size that is a multiple of it",
        pages[0]
    ))]
}

pub(crate) fn hicache_page_one(ctx: &Context) -> Vec<Fired> {
    // Models SGLang gives a page size of their own (DeepSeek-V4's 256, the sparse-attention
    // models' 64): the resolved size says so.
    let own_pages = ctx
        .model
        .is_some_and(|m| m.is_dsa(ctx.version) || m.deepseek_v4_official().is_some());
    // A DSA backend named for a model whose config is not known: a sparse-attention model,
    // whose page size SGLang sets to 64 itself.
    let dsa_named = ctx.model.is_none()
        && (ctx.dsa_backends().into_iter().flatten()).any(|(o, _)| ctx.user().given(o));
    // 0.4.4.post1–post3's HiCache refuses any other page size: 1 is the only choice there.
    let one_only = at_least(ctx.version, "0.4.4.post1") && !at_least(ctx.version, "0.4.4.post4");
    if !ctx.user().flag(opt::ENABLE_HIERARCHICAL_CACHE)
        || effective_page(ctx) != 1
        || (own_pages && ctx.server.page_size != 1)
        || dsa_named
        || one_only
    {
        return vec![];
    }
    // With neither a page size nor a backend chosen, SGLang's own backend choice on Blackwell
    // (trtllm-gen kernels) can raise the page size: the launcher can't claim it stays 1.
    if !ctx.user().given(opt::PAGE_SIZE)
        && ctx.attention_backends().is_empty()
        && ctx.majors().iter().any(|&m| m >= 10)
    {
        return vec![];
    }
    vec![Fired::new(
        "--enable-hierarchical-cache with page size 1: host-cache transfers go token by token and high --mem-fraction-static has run out of memory; --page-size 64 is the usual setting".to_string(),
    )]
}

pub(crate) fn multi_item_scoring(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().given(opt::MULTI_ITEM_SCORING_DELIMITER) {
        return vec![];
    }
    let radix = !ctx.user().flag(opt::DISABLE_RADIX_CACHE);
    let chunk = ctx.user().int(opt::CHUNKED_PREFILL_SIZE);
    let chunked = chunk != Some(-1);
    if !radix && !chunked {
        return vec![];
    }
    let mut args = vec![];
    let mut what = vec![];
    if radix {
        what.push("the radix cache is on");
        args.push(crate::rules::ArgEdit::AddFlag {
            option: opt::DISABLE_RADIX_CACHE.into(),
        });
    }
    if chunked {
        what.push("chunked prefill is on");
        args.push(crate::rules::ArgEdit::Set {
            option: opt::CHUNKED_PREFILL_SIZE.into(),
            value: "-1".into(),
        });
    }
    let summary = args
        .iter()
        .map(|e| match e {
            crate::rules::ArgEdit::AddFlag { option } => format!("added {option}"),
            _ => "set --chunked-prefill-size -1".to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ");
    vec![Fired::new(format!(
        "--multi-item-scoring-delimiter needs the radix cache and chunked prefill off, but {}; SGLang rejects it",
        what.join(" and ")
    ))
    .with_fix(crate::rules::Fix { summary, args, env: vec![] })]
}

pub(crate) fn hicache_fa3_decode(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_HIERARCHICAL_CACHE)
        || ctx.decode_backend().as_deref() != Some("fa3")
    {
        return vec![];
    }
    vec![Fired::new(
        "--enable-hierarchical-cache with fa3 decode: HiCache falls back to slower direct I/O for this layout; flashinfer or triton decode, or a larger --page-size, avoid it".to_string(),
    )]
}

/// The models whose start-up takes SGLang's Mamba radix-cache path with the cache supported
/// (`_handle_mamba_radix_cache`, read in the 0.5.10–0.5.13 wheels; 0.5.12 moves NemotronH's into
/// its own hook): the resolver's `no_buffer` family (Qwen's hybrids, NemotronH, Falcon-H1, Jet,
/// LFM2, InternS2) and two more. GraniteMoeHybrid takes the path only with Mamba layers, which the
/// facts do not tell: left out.
fn mamba_radix_family(arch: &str, version: &str) -> bool {
    crate::resolve::no_buffer_family(arch, version)
        || (arch == "MiniCPMV4_6ForConditionalGeneration" && at_least(version, "0.5.12"))
        || (arch == "BailingMoeV2_5ForCausalLM" && at_least(version, "0.5.13"))
}

/// CACHE006: 0.5.10–0.5.13 resolve the Mamba strategy `auto` to `no_buffer` and then refuse
/// the radix cache with speculative decoding for the hybrid models of [`mamba_radix_family`].
pub(crate) fn mamba_radix_spec(ctx: &Context) -> Vec<Fired> {
    let Some(arch) = ctx.model_arch() else {
        return vec![];
    };
    let member = mamba_radix_family(arch, ctx.version);
    let Some(algo) = ctx.spec_algo() else {
        return vec![];
    };
    let u = ctx.user();
    // From 0.5.11 a PD decode server's chunk cache (no radix cache unless asked for) is settled
    // before this check (tests/evidence/CACHE006.jsonl).
    let decode_chunk_cache = at_least(ctx.version, "0.5.11") && pd_decode_chunk_cache(ctx);
    if !member
        || decode_chunk_cache
        || u.flag(opt::DISABLE_RADIX_CACHE)
        || u.sval(opt::MAMBA_SCHEDULER_STRATEGY).as_deref() == Some("extra_buffer")
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "{arch} with {algo} speculative decoding and the radix cache: SGLang {} resolves the Mamba scheduler strategy to no_buffer and refuses the radix cache with speculative decoding for this model; add --disable-radix-cache, or --mamba-scheduler-strategy extra_buffer with SGLANG_ENABLE_SPEC_V2=1",
        ctx.version
    ))]
}

/// The hybrids whose branch in SGLang's argument handling refuses the Mamba extra buffer, with
/// the releases it does (first, first without).
const NO_EXTRA_BUFFER: &[(&str, &str, &str)] = &[
    ("NemotronHForCausalLM", "0.5.7", "0.5.13"),
    ("FalconH1ForCausalLM", "0.5.7", "0.5.13"),
    ("JetNemotronForCausalLM", "0.5.7", "0.5.13"),
    ("JetVLMForConditionalGeneration", "0.5.7", "0.5.13"),
    ("Lfm2ForCausalLM", "0.5.9", "0.5.14"),
];

/// The Mamba cache's extra buffer SGLang validates for `arch`: asked for (the release taking it
/// for this model), or from 0.5.14 SGLang's pick for `auto`; with the radix cache on.
pub(super) fn extra_buffer_in_effect(ctx: &Context, arch: &str) -> Option<String> {
    let v = ctx.version;
    if !at_least(v, "0.5.7") || !mamba_radix_family(arch, v) || !radix_cache_on(ctx) {
        return None;
    }
    if refuses_extra_buffer(ctx, arch) {
        return None;
    }
    if let Some(asked) = extra_buffer_asked(ctx) {
        return Some(asked);
    }
    (at_least(v, EXTRA_BUFFER_LIST_FROM) && !resolves_no_buffer(ctx, arch))
        .then(|| "the extra buffer (SGLang's pick for the `auto` strategy)".to_owned())
}

/// The extra-buffer strategy asked for with the radix cache on, whatever the model: what SGLang's
/// own test of the strategy reads where it does not ask the model.
pub(super) fn extra_buffer_asked_with_radix(ctx: &Context) -> Option<String> {
    extra_buffer_asked(ctx).filter(|_| radix_cache_on(ctx))
}

/// The extra-buffer strategy the user asked for, under either option name.
fn extra_buffer_asked(ctx: &Context) -> Option<String> {
    let lazy_too = at_least(ctx.version, "0.5.13");
    mamba_strategy(ctx, |v| {
        v == "extra_buffer" || (lazy_too && v == "extra_buffer_lazy")
    })
    .map(|(o, v)| format!("{o} {v}"))
}

/// The Mamba strategy the line holds, under its 0.5.14 name or the older one, when it matches
/// `pred`: (option, value).
fn mamba_strategy(ctx: &Context, pred: impl Fn(&str) -> bool) -> Option<(&'static str, String)> {
    [
        opt::MAMBA_RADIX_CACHE_STRATEGY,
        opt::MAMBA_SCHEDULER_STRATEGY,
    ]
    .into_iter()
    .filter_map(|o| ctx.user().sval(o).map(|v| (o, v)))
    .find(|(_, v)| pred(v))
}

/// The radix cache is on when SGLang's Mamba cache handling runs (from 0.5.14 it checks only
/// then): not turned off by the user or a PD decode server's chunk cache, which are settled
/// first; deterministic inference's step comes after it (tests/evidence/CACHE014.jsonl).
fn radix_cache_on(ctx: &Context) -> bool {
    !(ctx.user().flag(opt::DISABLE_RADIX_CACHE) || pd_decode_chunk_cache(ctx))
}

/// Whether release `v` refuses the extra buffer for `arch` (before 0.5.14 whatever the cache,
/// but for a PD decode server's chunk cache, which falls back to no_buffer first from 0.5.11).
fn refuses_extra_buffer(ctx: &Context, arch: &str) -> bool {
    let v = ctx.version;
    if at_least(v, EXTRA_BUFFER_LIST_FROM) {
        return denied_extra_buffer(ctx, arch) && radix_cache_on(ctx);
    }
    if at_least(v, "0.5.11") && pd_decode_chunk_cache(ctx) {
        return false;
    }
    NO_EXTRA_BUFFER
        .iter()
        .any(|&(a, from, until)| a == arch && within(v, from, Some(until)))
}

/// 0.5.14+: the hybrid is off the extra-buffer list, or the line names a linear-attention backend
/// other than triton.
fn denied_extra_buffer(ctx: &Context, arch: &str) -> bool {
    mamba_radix_family(arch, ctx.version)
        && no_extra_buffer(arch, ctx.user().str(opt::LINEAR_ATTN_BACKEND))
}

/// The `--linear-attn-backend` other than triton that denies a listed hybrid the extra buffer
/// (0.5.14+).
fn linear_denies(ctx: &Context, arch: &str) -> Option<String> {
    let linear = ctx.user().sval(opt::LINEAR_ATTN_BACKEND)?;
    let listed = !NEVER_LISTED.contains(&arch);
    (listed && linear != "triton" && at_least(ctx.version, EXTRA_BUFFER_LIST_FROM))
        .then_some(linear)
}

/// A PD decode server without `--disaggregation-decode-enable-radix-cache`: a chunk cache.
fn pd_decode_chunk_cache(ctx: &Context) -> bool {
    let u = ctx.user();
    u.str(opt::DISAGGREGATION_MODE) == Some("decode")
        && !u.flag(opt::DISAGGREGATION_DECODE_ENABLE_RADIX_CACHE)
}

/// CACHE015: 0.5.10–0.5.13 refuse the extra buffer with `--disable-radix-cache` for the hybrids
/// whose branch takes it (a PD decode server's chunk cache falls back to no_buffer from 0.5.11).
pub(crate) fn mamba_extra_buffer_no_radix(ctx: &Context) -> Vec<Fired> {
    let v = ctx.version;
    let Some(arch) = ctx.model_arch() else {
        return vec![];
    };
    let takes_it = mamba_radix_family(arch, v) && !refuses_extra_buffer(ctx, arch);
    let window = within(v, "0.5.10", Some(EXTRA_BUFFER_LIST_FROM));
    let Some(asked) = extra_buffer_asked(ctx).filter(|_| window && takes_it) else {
        return vec![];
    };
    if !ctx.user().flag(opt::DISABLE_RADIX_CACHE) || pd_decode_chunk_cache(ctx) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{asked} with --disable-radix-cache on {arch}: SGLang {v} refuses the pair while resolving its arguments ('mamba extra_buffer is not compatible with --disable-radix-cache'); drop the strategy (no_buffer keeps the overlap scheduler without the radix cache) or keep the radix cache"
    ))]
}

/// CACHE012: the Mamba extra buffer asked for on a hybrid the release refuses it for.
pub(crate) fn mamba_extra_buffer_unsupported(ctx: &Context) -> Vec<Fired> {
    let Some(arch) = ctx.model_arch() else {
        return vec![];
    };
    let Some(asked) = extra_buffer_asked(ctx) else {
        return vec![];
    };
    if without_mamba_state(ctx, arch) {
        return vec![Fired::new(format!(
            "{asked} on {arch}, which has no Mamba state: SGLang {}'s argument handling refuses it with the radix cache on ('needs mamba state'); drop it",
            ctx.version
        ))];
    }
    if !refuses_extra_buffer(ctx, arch) {
        return vec![];
    }
    let (on, whom, remedy) = match linear_denies(ctx, arch) {
        Some(b) => (
            format!(" with --linear-attn-backend {b}"),
            "on that backend",
            "drop it, or the linear-attention backend (only triton's kernels keep the extra buffer)",
        ),
        None => (
            String::new(),
            "for this model",
            "drop it (the default no_buffer runs)",
        ),
    };
    vec![Fired::new(format!(
        "{asked} on {arch}{on}: SGLang {}'s argument handling refuses the Mamba extra buffer {whom} ('extra_buffer is not supported for {arch}'); {remedy}",
        ctx.version
    ))]
}

/// Architectures SGLang's Mamba radix-cache resolution takes (0.5.21–0.5.23: its list and its
/// linear-attention model registry), beyond the ones the launcher's families name: a model on
/// this list, or whose config has linear layers, has Mamba state.
const MAMBA_STATE_ARCHS: &[&str] = &[
    "KimiLinearForCausalLM",
    "KimiK3ForConditionalGeneration",
    "BailingMoeV2_5ForCausalLM",
    "BailingMoeV3ForCausalLM",
    "BailingMoeV3VLForConditionalGeneration",
    "Qwen3NextForCausalLM",
    "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForCausalLM",
    "Qwen3_5ForCausalLM",
    "Qwen4ExpForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration",
    "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration",
    "NemotronHForCausalLM",
    "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3",
    "NemotronH_Nano_VL_V2",
    "FalconH1ForCausalLM",
    "JetNemotronForCausalLM",
    "JetVLMForConditionalGeneration",
    "Lfm2ForCausalLM",
    "Lfm2MoeForCausalLM",
    "ZayaForCausalLM",
    "Glm5NextForConditionalGeneration",
    "GraniteMoeHybridForCausalLM",
    // Registered by their config class in SGLang's linear-attention model registry.
    "GigaChat35ForCausalLM",
    "GigaChat35ForCausalLMNextN",
];

/// 0.5.21+ refuse the extra buffer asked for on a model without Mamba state while the radix
/// cache is on (before, it was ignored there).
fn without_mamba_state(ctx: &Context, arch: &str) -> bool {
    let hybrid = MAMBA_STATE_ARCHS.contains(&arch)
        || mamba_radix_family(arch, ctx.version)
        || ctx.model.is_some_and(|m| m.linear_state.is_some());
    at_least(ctx.version, "0.5.21") && !hybrid && radix_cache_on(ctx)
}

/// The Mamba strategy resolves to `no_buffer` on 0.5.14+: the user's, or `auto` for a model
/// without the extra buffer, or with the overlap scheduler off and no page size above one.
fn resolves_no_buffer(ctx: &Context, arch: &str) -> bool {
    let u = ctx.user();
    match mamba_strategy(ctx, |v| v != "auto") {
        Some((_, s)) => s == "no_buffer",
        None => {
            let paging = u.int(opt::PAGE_SIZE).is_some_and(|p| p > 1);
            let wants_extra = !u.flag(opt::DISABLE_OVERLAP_SCHEDULE) || paging;
            denied_extra_buffer(ctx, arch) || !wants_extra
        }
    }
}

/// CACHE013: 0.5.14+ refuse TRT-LLM MHA under the `no_buffer` Mamba cache (it cannot run the
/// one-token pages), when it is named or is the model's own pick (NemotronH on SM100, 0.5.19+).
pub(crate) fn mamba_no_buffer_trtllm(ctx: &Context) -> Vec<Fired> {
    let Some(arch) = ctx.model_arch() else {
        return vec![];
    };
    let b = &ctx.server.backends;
    let named = ctx.user().sval(opt::ATTENTION_BACKEND).as_deref() == Some("trtllm_mha");
    // With a draft NemotronH's pick (0.5.19+) takes the extra buffer as well.
    let picked = b.attention_by_model
        && ctx.spec_algo().is_none()
        && b.attention
            .as_ref()
            .is_some_and(|a| a.value == "trtllm_mha");
    if !at_least(ctx.version, EXTRA_BUFFER_LIST_FROM)
        || !mamba_radix_family(arch, ctx.version)
        || !radix_cache_on(ctx)
        || !(named || picked)
        || !resolves_no_buffer(ctx, arch)
    {
        return vec![];
    }
    let how = if named {
        "--attention-backend trtllm_mha".to_owned()
    } else {
        format!("trtllm_mha (SGLang's pick for {arch} on this GPU)")
    };
    let extra = if denied_extra_buffer(ctx, arch) {
        ""
    } else {
        "keep the overlap scheduler on or give --page-size 64 (the extra buffer), "
    };
    vec![Fired::new(format!(
        "{how} with {arch}'s Mamba cache under no_buffer and the radix cache on: SGLang {} refuses the pair while resolving its arguments ('no_buffer do not support trtllm_mha attention backend'); {extra}name another attention backend, or add --disable-radix-cache",
        ctx.version
    ))]
}

/// CACHE014: 0.5.14+ validate the `no_buffer` Mamba cache: no page size above one (SGLang
/// rewrites the page size itself for Qwen's hybrids on SM100 when no backend is named: left
/// out), and the overlap scheduler off, which SGLang turns off itself only when it resolves
/// `auto` (a line it otherwise keeps on: no draft, pipeline or PD role).
pub(crate) fn mamba_no_buffer_validation(ctx: &Context) -> Vec<Fired> {
    let Some(arch) = ctx.model_arch() else {
        return vec![];
    };
    let v = ctx.version;
    if !at_least(v, EXTRA_BUFFER_LIST_FROM)
        || !mamba_radix_family(arch, v)
        || !radix_cache_on(ctx)
        || !resolves_no_buffer(ctx, arch)
    {
        return vec![];
    }
    let u = ctx.user();
    let page = u.int(opt::PAGE_SIZE).filter(|&p| p > 1);
    if let Some(p) = page.filter(|_| !sets_own_pages(ctx)) {
        return vec![Fired::new(format!(
            "--page-size {p} with {arch}'s Mamba cache under no_buffer: SGLang {v} refuses it while resolving its arguments ('no_buffer only supports page_size=1'); drop --page-size{}",
            match linear_denies(ctx, arch) {
                Some(b) => format!(
                    ", or keep it on the triton linear-attention backend (not {b}), which takes the extra buffer"
                ),
                None if NEVER_LISTED.contains(&arch) => String::new(),
                None => ", or keep it with --mamba-radix-cache-strategy extra_buffer".into(),
            }
        ))];
    }
    if !explicit_no_buffer_with_overlap(ctx) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--mamba-radix-cache-strategy no_buffer with the overlap scheduler on: SGLang {v} refuses it while resolving its arguments for {arch} ('no_buffer do not support overlap schedule'; it turns the scheduler off itself only for `auto`); add --disable-overlap-schedule, or leave the strategy to SGLang"
    ))]
}

/// `no_buffer` given, the overlap scheduler left on and nothing that may turn it off beside
/// (a pipeline, a PD role); a draft keeps it on from 0.5.14 (tests/evidence/CACHE014.jsonl).
fn explicit_no_buffer_with_overlap(ctx: &Context) -> bool {
    let u = ctx.user();
    let given = mamba_strategy(ctx, |v| v == "no_buffer").is_some();
    let quiet_line = ctx.pp() <= 1 && u.str(opt::DISAGGREGATION_MODE).is_none_or(|m| m == "null");
    given && quiet_line && ctx.server.switches.overlap_schedule.on
}

/// The hybrids whose scheduler builds the Mamba radix cache (the GDN hybrids, and from 0.5.7 the
/// Mamba2 ones: the model runner's `hybrid_gdn_config` / `mamba2_config` in the 0.5.4–0.5.10.post1
/// wheels), with the first release that does.
const MAMBA_RADIX_TREE: &[(&str, &str)] = &[
    ("Qwen3NextForCausalLM", "0.5.4"),
    ("JetNemotronForCausalLM", "0.5.6"),
    ("JetVLMForConditionalGeneration", "0.5.6"),
    ("NemotronHForCausalLM", "0.5.7"),
    ("NemotronH_Nano_VL_V2", "0.5.7"),
    ("FalconH1ForCausalLM", "0.5.7"),
    ("Qwen3_5MoeForConditionalGeneration", "0.5.9"),
    ("Qwen3_5ForConditionalGeneration", "0.5.9"),
    ("Lfm2ForCausalLM", "0.5.9"),
    ("Lfm2MoeForCausalLM", "0.5.9"),
];

/// From this release SGLang's argument handling sets the page size to 1 itself for `no_buffer`.
const NO_BUFFER_PAGE_FIXED_FROM: &str = "0.5.11";

/// CACHE016: 0.5.4–0.5.10.post1 let a hybrid's `no_buffer` Mamba radix cache through with pages
/// above one, and the scheduler's cache then asserts one-token pages. The page size and the radix
/// cache are the resolved ones (SGLang turns the cache off itself for a draft, trtllm_mha or a
/// PD decode server); HiCache and the C++ radix tree build other caches.
pub(crate) fn mamba_radix_page(ctx: &Context) -> Vec<Fired> {
    let v = ctx.version;
    let Some(arch) = ctx.model_arch() else {
        return vec![];
    };
    let tree = MAMBA_RADIX_TREE
        .iter()
        .any(|&(a, from)| a == arch && within(v, from, Some(NO_BUFFER_PAGE_FIXED_FROM)));
    let page = ctx.server.page_size;
    let other_cache = ctx.user().flag(opt::ENABLE_HIERARCHICAL_CACHE)
        || ctx
            .env
            .get("SGLANG_EXPERIMENTAL_CPP_RADIX_TREE")
            .is_some_and(crate::rules::view::env_true);
    if !tree
        || page <= 1
        || !ctx.server.switches.radix_cache.on
        || pd_decode_chunk_cache(ctx)
        || other_cache
        || extra_buffer_asked(ctx).is_some()
    {
        return vec![];
    }
    let given = ctx.user().int(opt::PAGE_SIZE).is_some_and(|p| p > 1);
    let whose = if given {
        format!("--page-size {page}")
    } else {
        format!("page size {page} (the attention backend's)")
    };
    // 0.5.7's extra buffer takes only pages that divide its 64-token chunks.
    let fits_chunks = at_least(v, "0.5.8") || 64 % page == 0;
    let keep = if at_least(v, "0.5.7") && fits_chunks && !refuses_extra_buffer(ctx, arch) {
        ", or keep the pages with --mamba-scheduler-strategy extra_buffer"
    } else {
        ""
    };
    vec![Fired::new(format!(
        "{whose} with {arch}'s Mamba radix cache (no extra buffer): SGLang {v}'s argument handling lets it through, and the scheduler then asserts one-token pages when it builds the cache ('Page size must be 1 for MambaRadixCache'), after the weights load; drop --page-size (or the backend that sets it), add --disable-radix-cache{keep}"
    ))]
}

/// The compute-capability majors SGLang takes an NVFP4 KV cache on (SM100, SM120).
pub(crate) const NVFP4_KV_MAJORS: &[u32] = &[10, 12];

/// CACHE007: the FP4 and MXFP8 KV caches SGLang takes on Blackwell only: NVFP4 on SM100/SM120,
/// MXFP8 where its Blackwell gate holds.
pub(crate) fn kv_dtype_blackwell(ctx: &Context) -> Vec<Fired> {
    let Some(dtype) = ctx.kv_cache_dtype() else {
        return vec![];
    };
    let majors: &[u32] = match dtype {
        "nvfp4" => NVFP4_KV_MAJORS,
        "mxfp8" => crate::resolve::blackwell_majors(ctx.version),
        _ => return vec![],
    };
    let bad = ctx.gpus_where(|(m, _)| !majors.contains(&m));
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} {dtype}: SGLang {} takes this KV-cache format on compute capability {} only and refuses the line before loading the model",
        Context::describe(&bad),
        opt::KV_CACHE_DTYPE,
        ctx.version,
        Context::majors_text(majors)
    ))]
}

/// CACHE009: LMCache (0.5.21+) with the host cache tier or the external cache linker, with the
/// radix cache off (the user's switch or SGLang's, e.g. for deterministic inference), with
/// speculative decoding, DP attention, decode context parallelism, streaming sessions, the
/// buffer-only host mode or PD disaggregation: SGLang refuses each while resolving its
/// arguments, in that order.
pub(crate) fn lmcache_combination(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if !u.flag(opt::ENABLE_LMCACHE) {
        return vec![];
    }
    [
        opt::ENABLE_HIERARCHICAL_CACHE,
        opt::ENABLE_UNIFIED_CACHE_EXTERNAL_LINKER,
    ]
    .into_iter()
    .find(|o| u.flag(o))
    .or_else(|| radix_off(ctx))
    .map(str::to_owned)
    .or_else(|| ctx.spec_algo().map(|a| format!("speculative decoding {a}")))
    .or_else(|| lmcache_layout(ctx))
    .map(|what| {
        Fired::new(format!(
            "{} with {what}: SGLang {} refuses it; LMCache needs the radix cache, no other cache tier, no draft, and one colocated server without DP attention, decode context parallelism or streaming sessions",
            opt::ENABLE_LMCACHE,
            ctx.version
        ))
    })
    .into_iter()
    .collect()
}

/// The server layouts LMCache's radix cache does not take yet.
fn lmcache_layout(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let pd = u.sval(opt::DISAGGREGATION_MODE).filter(|m| m != "null");
    holding([
        (ctx.attn_dp() > 1, "DP attention".to_string()),
        (
            u.int(opt::DCP_SIZE).unwrap_or(1) > 1,
            format!("{} above 1", opt::DCP_SIZE),
        ),
        (
            u.flag(opt::ENABLE_STREAMING_SESSION),
            opt::ENABLE_STREAMING_SESSION.to_string(),
        ),
        (
            u.str(opt::HICACHE_HOST_MEMORY_MODE) == Some("buffer_only"),
            format!("{} buffer_only", opt::HICACHE_HOST_MEMORY_MODE),
        ),
        (
            pd.is_some(),
            format!(
                "{} {}",
                opt::DISAGGREGATION_MODE,
                pd.clone().unwrap_or_default()
            ),
        ),
    ])
    .next()
}

/// CACHE011: 0.5.12's scheduler builds HiRadixCache for DeepSeek-V4, whose KV pool it refuses;
/// the unified radix tree (or the C++ one) is built instead when its variable is set.
pub(crate) fn hicache_deepseek_v4(ctx: &Context) -> Vec<Fired> {
    let user = ctx.user();
    let v4 = ctx.model_arch() == Some(crate::facts::model::deepseek_v4::ARCH);
    let other_tree = [
        "SGLANG_ENABLE_UNIFIED_RADIX_TREE",
        "SGLANG_EXPERIMENTAL_CPP_RADIX_TREE",
    ]
    .into_iter()
    .find(|var| ctx.env.get(var).is_some_and(env_true));
    if !v4
        || !user.flag(opt::ENABLE_HIERARCHICAL_CACHE)
        || radix_off(ctx).is_some()
        || other_tree.is_some()
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "--enable-hierarchical-cache on DeepSeek-V4: SGLang {}'s scheduler builds HiRadixCache, which takes only MHA, MLA and NSA KV pools, and raises 'HiRadixCache only supports MHA, MLA, and NSA (DSA) models' after the weights load; SGLANG_ENABLE_UNIFIED_RADIX_TREE=1 builds the unified radix cache instead",
        ctx.version
    ))]
}

/// CACHE017: 0.5.10 settles the Mamba strategy `auto` on `no_buffer` before anything else, and its
/// Mamba radix-cache handling then refuses FlashInfer GDN decode named by
/// `--linear-attn-decode-backend` with it, whatever the GPU or the radix cache
/// (tests/evidence/CACHE017.jsonl). The shared `--linear-attn-backend` is not read there.
pub(crate) fn linear_flashinfer_no_buffer(ctx: &Context) -> Vec<Fired> {
    let Some(arch) = ctx.model_arch() else {
        return vec![];
    };
    let u = ctx.user();
    if !mamba_radix_family(arch, ctx.version)
        || u.str(opt::LINEAR_ATTN_DECODE_BACKEND) != Some("flashinfer")
        || extra_buffer_asked(ctx).is_some()
    {
        return vec![];
    }
    // The extra buffer needs the radix cache on this release (CACHE015).
    let keep = if refuses_extra_buffer(ctx, arch) || u.flag(opt::DISABLE_RADIX_CACHE) {
        ""
    } else {
        ", or add --mamba-scheduler-strategy extra_buffer"
    };
    vec![Fired::new(format!(
        "--linear-attn-decode-backend flashinfer on {arch} with the Mamba scheduler strategy no_buffer (auto resolves to it): SGLang {} refuses the pair while resolving its arguments; drop the decode backend (triton runs){keep}",
        ctx.version
    ))]
}

/// CACHE018: from 0.5.13 DeepSeek-V4's HiCache anchors on a logical host pool with no bytes per
/// token, and the hf3fs backend divides its file size by the page size it reads there.
pub(crate) fn hicache_hf3fs_deepseek_v4(ctx: &Context) -> Vec<Fired> {
    let user = ctx.user();
    let v4 = ctx.model_arch() == Some(crate::facts::model::deepseek_v4::ARCH);
    if !v4
        || !user.flag(opt::ENABLE_HIERARCHICAL_CACHE)
        || user.str(opt::HICACHE_STORAGE_BACKEND) != Some("hf3fs")
        || radix_off(ctx).is_some()
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "--hicache-storage-backend hf3fs on DeepSeek-V4: SGLang {}'s V4 HiCache anchors on a logical host pool of 0 bytes per token, and the hf3fs backend divides by that page size while the cache controller starts ('ZeroDivisionError: integer division or modulo by zero', sglang#34969); use another storage backend (mooncake) or HiCache without one",
        ctx.version
    ))]
}

/// CACHE019: HiSparse without what SGLang asserts it runs on: the radix cache off (0.5.10rc0+),
/// a sparse-attention model (0.5.10+: DeepSeek sparse attention, DeepSeek-V4 from 0.5.12, MiniMax
/// M3's sparse models from 0.5.21), and no mixed chunks (0.5.22+). The model test fires only on a
/// config without `index_topk`, which every release's sparse-attention test requires, so a newer
/// sparse architecture the launcher does not list is never refused.
pub(crate) fn hisparse_requirements(ctx: &Context) -> Vec<Fired> {
    let user = ctx.user();
    if !user.flag(opt::ENABLE_HISPARSE) {
        return vec![];
    }
    let v = ctx.version;
    let arch = ctx.model_arch().unwrap_or_default();
    let sparse = ctx.model.is_some_and(|m| m.index_topk.is_some())
        || (at_least(v, "0.5.12") && arch.starts_with("DeepseekV4"))
        || (at_least(v, "0.5.21") && arch.starts_with("MiniMaxM3Sparse"));
    let mut out = vec![];
    if radix_off(ctx).is_none() {
        out.push(format!("it needs {}", opt::DISABLE_RADIX_CACHE));
    }
    if ctx.model.is_some() && !sparse && at_least(v, "0.5.10") {
        out.push(format!(
            "it runs on sparse-attention models only, and {arch} is not one"
        ));
    }
    if user.flag(opt::ENABLE_MIXED_CHUNK) && at_least(v, "0.5.22") {
        out.push(format!("it does not take {}", opt::ENABLE_MIXED_CHUNK));
    }
    let hisparse = |why| format!("{}: {why}", opt::ENABLE_HISPARSE);
    refused_at_start(ctx, out.into_iter().map(hisparse).collect())
}

/// CACHE020: cache options whose values SGLang range-checks: an explicit SWA full-token ratio
/// outside (0, 1] (0.5.7+; Step-3p models reset it under HiCache, so they and an unread model under
/// HiCache are left alone), the
/// host-pool fraction outside (0, 1], T-LRU eviction without a threshold above its next-prompt
/// estimate, negative SWA prefix tails (0.5.21+), and HiCache's buffer-only host mode without a
/// storage backend (0.5.19+).
pub(crate) fn cache_option_values(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let v = ctx.version;
    let frac = |o| u.get_or_default(o).and_then(serde_json::Value::as_f64);
    let outside = |x: f64| !(x > 0.0 && x <= 1.0);
    // Step-3p models reset the ratio under HiCache; an unread model under HiCache may be one.
    let step3p = ctx.model_arch().is_some_and(|a| a.starts_with("Step3p"))
        || (ctx.model.is_none() && u.flag(opt::ENABLE_HIERARCHICAL_CACHE));
    let mut out = vec![];
    let ratio = u
        .given(opt::SWA_FULL_TOKENS_RATIO)
        .then(|| frac(opt::SWA_FULL_TOKENS_RATIO));
    if let Some(r) = ratio
        .flatten()
        .filter(|r| outside(*r) && !step3p && at_least(v, "0.5.7"))
    {
        out.push(format!(
            "{} {r}: it must be in (0, 1]",
            opt::SWA_FULL_TOKENS_RATIO
        ));
    }
    if let Some(f) = frac(opt::HICACHE_HOST_MEMORY_FRACTION).filter(|f| outside(*f)) {
        out.push(format!(
            "{} {f}: it must be in (0, 1]",
            opt::HICACHE_HOST_MEMORY_FRACTION
        ));
    }
    if let Some(t) = u.int(opt::SWA_PREFIX_TAILS).filter(|t| *t < 0) {
        out.push(format!(
            "{} {t}: it must not be negative",
            opt::SWA_PREFIX_TAILS
        ));
    }
    out.extend(tlru_config(ctx));
    let buffer_only = u.str(opt::HICACHE_HOST_MEMORY_MODE) == Some("buffer_only");
    if buffer_only && host_tier_active(ctx) && u.str(opt::HICACHE_STORAGE_BACKEND).is_none() {
        out.push(format!(
            "{} buffer_only without {}: the host pool only stages data for the storage tier",
            opt::HICACHE_HOST_MEMORY_MODE,
            opt::HICACHE_STORAGE_BACKEND
        ));
    }
    refused_at_start(ctx, out)
}

/// Whether SGLang sets up the host tier (and checks its host memory mode): HiCache, a decode
/// server's KV offload, or a decode server whose retraction backup is the host pool (its
/// default), unless the external cache linker takes the cache over.
fn host_tier_active(ctx: &Context) -> bool {
    let u = ctx.user();
    let decode = u.sval(opt::DISAGGREGATION_MODE).as_deref() == Some("decode");
    let backup = u.str(opt::DISAGGREGATION_DECODE_RETRACTION_BACKUP);
    (u.flag(opt::ENABLE_HIERARCHICAL_CACHE)
        || u.flag(opt::DISAGGREGATION_DECODE_ENABLE_OFFLOAD_KVCACHE)
        || (decode && matches!(backup, None | Some("host_pool"))))
        && !u.flag(opt::ENABLE_UNIFIED_CACHE_EXTERNAL_LINKER)
}

/// T-LRU eviction (0.5.21+) needs a threshold above its next-prompt estimate, both non-negative
/// (each 0 unless `--radix-eviction-policy-config` gives it).
fn tlru_config(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    if u.str(opt::RADIX_EVICTION_POLICY) != Some("tlru") {
        return None;
    }
    let config = u.get_or_default(opt::RADIX_EVICTION_POLICY_CONFIG);
    let key = |k| {
        config
            .and_then(|c| c.get(k))
            .map_or(Some(0.0), serde_json::Value::as_f64)
    };
    let (Some(threshold), Some(estimate)) = (key("threshold"), key("next_prompt_estimate")) else {
        return None;
    };
    (threshold < 0.0 || estimate < 0.0 || threshold <= estimate).then(|| {
        format!(
            "{} tlru with threshold {threshold} and next_prompt_estimate {estimate} (from {}, 0 when absent): the threshold must be above the estimate, both non-negative",
            opt::RADIX_EVICTION_POLICY,
            opt::RADIX_EVICTION_POLICY_CONFIG
        )
    })
}
