//! Attention backends by architecture, page size and model.

use super::*;
use crate::resolve::blackwell_majors;
use crate::sglang::opt;
use crate::sglang::release::{at_least, within};
use crate::sglang::vision_towers::builds_vision_attention;

fn using(ctx: &Context, backend: &str) -> Vec<String> {
    ctx.backends_where(|v| v == backend)
}

/// The fa3 backends SGLang builds: the main one is swapped for triton before it is built on an
/// fp8_e5m2 KV cache (every release) or with double sparsity (the model runner's switch).
fn fa3_built(ctx: &Context) -> Vec<String> {
    let swapped =
        ctx.kv_cache_dtype() == Some("fp8_e5m2") || ctx.user().given(opt::ENABLE_DOUBLE_SPARSITY);
    let mut out: Vec<String> = using(ctx, "fa3")
        .into_iter()
        .filter(|u| !(swapped && u.starts_with("--attention-backend ")))
        .collect();
    out.extend(dflash_draft_fa3(ctx));
    out
}

/// 0.5.11 to 0.5.14 build a DFLASH draft worker with its own model runner on the draft
/// attention backend, through the same backend registry (and its FA3 check) as the target's.
fn dflash_draft_fa3(ctx: &Context) -> Option<String> {
    let o = opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND;
    let window = at_least(ctx.version, "0.5.11") && !at_least(ctx.version, "0.5.15");
    (window && ctx.spec_algo().as_deref() == Some("DFLASH"))
        .then(|| ctx.user().sval(o))
        .flatten()
        .filter(|b| b == "fa3")
        .map(|b| format!("{o} {b}"))
}

pub(crate) fn fa3_arch(ctx: &Context) -> Vec<Fired> {
    let uses = fa3_built(ctx);
    let bad = ctx.gpus_where(|(m, _)| !(8..=9).contains(&m));
    if uses.is_empty() || bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {}: FlashAttention 3 needs compute capability 8.0–9.0 ('FlashAttention v3 Backend requires SM>=80 and SM<=90'); use flashinfer or triton",
        Context::describe(&bad),
        uses.join(", ")
    ))]
}

pub(crate) fn fa3_mla(ctx: &Context) -> Vec<Fired> {
    // The draft model's runner is not the MLA target's.
    let mut uses = fa3_built(ctx);
    uses.retain(|u| !u.starts_with(opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND));
    let bad = ctx.gpus_where(|(m, _)| m == 8);
    // `--disable-mla` (older releases) makes the runner take the non-MLA path.
    if uses.is_empty()
        || bad.is_empty()
        || !ctx.model_is_mla()
        || ctx.user().given(opt::DISABLE_MLA)
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} with an MLA model ({}): SGLang's FA3 MLA path needs SM90; use flashinfer or triton",
        Context::describe(&bad),
        uses.join(", "),
        ctx.model_arch().unwrap_or("kv_lora_rank set")
    ))]
}

pub(crate) fn mm_fa3_blackwell(ctx: &Context) -> Vec<Fired> {
    if ctx.user().sval(opt::MM_ATTENTION_BACKEND).as_deref() != Some("fa3") {
        return vec![];
    }
    // Only a model whose tower is SGLang's shared vision attention reads the option.
    let Some(arch) = ctx
        .model_arch()
        .filter(|a| ctx.multimodal_served() && builds_vision_attention(a, ctx.version))
    else {
        return vec![];
    };
    let refused = crate::resolve::vision::fa3_refused_on(ctx.version);
    let bad = ctx.gpus_where(|(m, _)| refused.contains(&m));
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; --mm-attention-backend fa3 with {arch}: SGLang {} refuses FA3 for the vision tower on Blackwell when it builds the model ('The 'fa3' backend is not supported on Blackwell GPUs')",
        Context::describe(&bad),
        ctx.version
    ))
    .with_fix(set_arg(opt::MM_ATTENTION_BACKEND, "triton_attn"))]
}

/// The attention options naming `backend` for the role SGLang checks: (option, role) where the
/// role is `prefill` (`--prefill-attention-backend`), `decode` (`--decode-attention-backend`) or
/// `both` (`--attention-backend`).
fn roles(ctx: &Context, backend: &str) -> Vec<(&'static str, &'static str)> {
    ctx.attention_backends()
        .into_iter()
        .filter(|(_, v)| v == backend)
        .map(|(o, _)| match o {
            opt::PREFILL_ATTENTION_BACKEND => (o, "prefill"),
            opt::DECODE_ATTENTION_BACKEND => (o, "decode"),
            _ => (o, "both"),
        })
        .collect()
}

/// The compute-capability majors SGLang accepts trtllm_mha on, for a role, by release:
/// SM100 only through 0.5.9; 0.5.10–0.5.18 also SM90/SM120 for decode; from 0.5.19 SM90, SM100
/// and SM120 for both (SGLang's own checks, recorded in tests/evidence/ATTN004.jsonl).
fn trtllm_mha_majors(version: &str, role: &str) -> &'static [u32] {
    if at_least(version, "0.5.19") || (at_least(version, "0.5.10") && role == "decode") {
        &[9, 10, 12]
    } else {
        &[10]
    }
}

/// Where the user's trtllm_mha serves: SGLang checks the prefill backend (`--prefill-attention-
/// backend`, else the main one) and the decode backend (likewise), so a main trtllm_mha with
/// another prefill backend is checked for decode only.
fn mha_roles(ctx: &Context) -> Vec<(&'static str, &'static str)> {
    let user = ctx.user();
    let pick = |role: &'static str| {
        user.sval(role)
            .map(|v| (role, v))
            .or_else(|| {
                user.sval(opt::ATTENTION_BACKEND)
                    .map(|v| (opt::ATTENTION_BACKEND, v))
            })
            .filter(|(_, v)| v == "trtllm_mha")
            .map(|(o, _)| o)
    };
    match (
        pick(opt::PREFILL_ATTENTION_BACKEND),
        pick(opt::DECODE_ATTENTION_BACKEND),
    ) {
        (Some(p), Some(d)) if p == d => vec![(p, "both")],
        (p, d) => p
            .map(|o| (o, "prefill"))
            .into_iter()
            .chain(d.map(|o| (o, "decode")))
            .collect(),
    }
}

/// The main backend when SGLang picks it itself (no `--attention-backend`), labelled so.
fn sglang_pick(ctx: &Context, backend: &str) -> Option<&'static str> {
    ctx.server
        .backends
        .attention
        .as_ref()
        .filter(|a| a.source == crate::resolve::ChoiceSource::Sglang && a.value == backend)
        .map(|_| "SGLang's own choice (no --attention-backend given):")
}

/// SGLang checks trtllm_mha after its own pick, so a pick it then refuses (0.5.6.post1–post2
/// choose it on every Blackwell) is refused too.
pub(crate) fn trtllm_mha_arch(ctx: &Context) -> Vec<Fired> {
    let mut out = vec![];
    let mut uses = mha_roles(ctx);
    uses.extend(sglang_pick(ctx, "trtllm_mha").map(|label| (label, "both")));
    for (option, role) in uses {
        let allowed = trtllm_mha_majors(ctx.version, role);
        let bad = ctx.gpus_where(|(m, _)| !allowed.contains(&m));
        if bad.is_empty() {
            continue;
        }
        out.push(Fired::new(format!(
            "{}; {option} trtllm_mha: SGLang {} accepts the TRT-LLM MHA backend{} on compute capability {} only",
            Context::describe(&bad),
            ctx.version,
            match role {
                "prefill" => " for prefill",
                "decode" => " for decode",
                _ => "",
            },
            Context::majors_text(allowed)
        )));
    }
    out
}

/// SGLang checks trtllm_mla as the main or decode backend only (a prefill-only choice passes).
pub(crate) fn trtllm_mla_arch(ctx: &Context) -> Vec<Fired> {
    let mut uses: Vec<String> = roles(ctx, "trtllm_mla")
        .into_iter()
        .filter(|(_, role)| *role != "prefill")
        .map(|(o, _)| format!("{o} trtllm_mla"))
        .collect();
    let mut out = vec![];
    // SGLang's Blackwell gate of the release (its own pick is on Blackwell by construction).
    let allowed = blackwell_majors(ctx.version);
    let bad = ctx.gpus_where(|(m, _)| !allowed.contains(&m));
    if !uses.is_empty() && !bad.is_empty() {
        out.push(Fired::new(format!(
            "{}; {}: SGLang {} accepts the TRT-LLM MLA backend on compute capability {} only",
            Context::describe(&bad),
            uses.join(", "),
            ctx.version,
            Context::majors_text(allowed)
        )));
    }
    // The dtype check runs after SGLang's own pick, so a pick it then refuses is refused too.
    uses.extend(sglang_pick(ctx, "trtllm_mla").map(|l| format!("{l} trtllm_mla")));
    if let Some(kv) = ctx.kv_cache_dtype()
        && !uses.is_empty()
        && at_least(ctx.version, "0.5.0rc1")
        && !trtllm_mla_kv(ctx.version).contains(&kv)
    {
        out.push(Fired::new(format!(
            "{} with --kv-cache-dtype {kv}: SGLang {} takes {} for TRT-LLM MLA",
            uses.join(", "),
            ctx.version,
            trtllm_mla_kv(ctx.version).join(", ")
        )));
    }
    out
}

/// The KV-cache dtypes SGLang's trtllm_mla check accepts, by release (the check exists from
/// 0.5.0rc1; 0.4.10.post2 and earlier take any dtype there).
fn trtllm_mla_kv(version: &str) -> &'static [&'static str] {
    if at_least(version, "0.5.21") {
        &["auto", "fp8_e4m3", "bf16", "bfloat16"]
    } else if at_least(version, "0.5.9") {
        &["auto", "fp8_e4m3", "fp4_e2m1", "bf16", "bfloat16"]
    } else if at_least(version, "0.5.5") {
        &["auto", "fp8_e4m3", "fp4_e2m1"]
    } else {
        &["auto", "fp8_e4m3"]
    }
}

pub(crate) fn fa4_decode(ctx: &Context) -> Vec<Fired> {
    if ctx.decode_backend().as_deref() != Some("fa4") {
        return vec![];
    }
    let o = if ctx.user().sval(opt::DECODE_ATTENTION_BACKEND).is_some() {
        opt::DECODE_ATTENTION_BACKEND
    } else {
        opt::ATTENTION_BACKEND
    };
    vec![Fired::new(format!(
        "{o} fa4 makes FA4 the decode backend, but in SGLang {} FA4 is prefill-only; use --prefill-attention-backend fa4 with another decode backend",
        ctx.version
    ))]
}

pub(crate) fn fa3_fp8_e5m2(ctx: &Context) -> Vec<Fired> {
    let uses = using(ctx, "fa3");
    if uses.is_empty() || ctx.kv_cache_dtype() != Some("fp8_e5m2") {
        return vec![];
    }
    // Every release swaps `--attention-backend fa3` for triton on e5m2 KV (the model runner up
    // to 0.5.4, ServerArgs from 0.5.5); the prefill/decode-specific options are never swapped:
    // FA3 then gets e5m2 it can't take.
    let swapped = ctx.user().sval(opt::ATTENTION_BACKEND).as_deref() == Some("fa3");
    let what = if swapped {
        "SGLang silently switches the attention backend to triton".to_string()
    } else {
        format!(
            "SGLang {} does not switch away from FA3 here, and FA3's FP8 path takes e4m3 only",
            ctx.version
        )
    };
    vec![Fired::new(format!(
        "{} with --kv-cache-dtype fp8_e5m2: {what}; fp8_e4m3 keeps FA3",
        uses.join(", ")
    ))]
}

/// Page sizes a backend forces or accepts: (backend, accepted sizes, size forced otherwise).
const PAGES: &[(&str, &[i64], i64)] = &[
    ("flashmla", &[64], 64),
    ("cutlass_mla", &[128], 128),
    ("trtllm_mla", &[32, 64], 64),
    ("trtllm_mha", &[16, 32, 64], 64),
];

pub(crate) fn page_size_override(ctx: &Context) -> Vec<Fired> {
    let Some(page) = ctx
        .args
        .get(opt::PAGE_SIZE)
        .and_then(serde_json::Value::as_i64)
    else {
        return vec![];
    };
    let mut out = vec![];
    for (o, v) in ctx.attention_backends() {
        if let Some((_, ok, forced)) = PAGES.iter().find(|(b, _, _)| *b == v)
            && !ok.contains(&page)
        {
            out.push(Fired::new(format!(
                "--page-size {page} with {o} {v}: SGLang silently uses page size {forced}"
            )));
            break;
        }
    }
    out
}

/// The backends SGLang takes for GPT-OSS, with the release each joined its list.
const GPT_OSS_BACKENDS: &[(&str, &str)] = &[
    ("triton", "0.5.0rc0"),
    ("trtllm_mha", "0.5.0rc0"),
    ("fa3", "0.5.0rc1"),
    ("fa4", "0.5.3.post1"),
    ("ascend", "0.5.8"),
    ("aiter", "0.5.10"),
    ("intel_xpu", "0.5.11"),
    ("intel_amx", "0.5.14"),
];

pub(crate) fn gpt_oss_backend(ctx: &Context) -> Vec<Fired> {
    if ctx.model_arch() != Some("GptOssForCausalLM") {
        return vec![];
    }
    // Before 0.5.3.post1 only the main --attention-backend is checked.
    let v = ctx.version;
    let taken: Vec<&str> = GPT_OSS_BACKENDS
        .iter()
        .filter(|(_, since)| at_least(v, since))
        .map(|(b, _)| *b)
        .collect();
    let accepted = |b: &str| taken.contains(&b);
    let mut bad: Vec<String> = ctx
        .attention_backends()
        .into_iter()
        .filter(|(o, _)| at_least(v, GPT_OSS_SPLIT) || *o == opt::ATTENTION_BACKEND)
        .filter(|(_, b)| !accepted(b))
        .map(|(o, b)| format!("{o} {b}"))
        .collect();
    bad.extend(gpt_oss_unset_role(ctx));
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "GPT-OSS with {}: SGLang {v} refuses it for this model (sinks, sliding window); it takes {}",
        bad.join(", "),
        taken.join(", ")
    ))]
}

/// The first release that checks GPT-OSS's prefill and decode backends, not the main one only.
const GPT_OSS_SPLIT: &str = "0.5.3.post1";

/// From 0.5.3.post1 SGLang checks GPT-OSS's prefill and decode backends (each falling back to
/// `--attention-backend`) and picks one itself only when none is named: a prefill or decode
/// backend alone leaves the other unset, which the check refuses (tests/evidence/ATTN009.jsonl).
fn gpt_oss_unset_role(ctx: &Context) -> Option<String> {
    let user = ctx.user();
    if !at_least(ctx.version, GPT_OSS_SPLIT) || user.sval(opt::ATTENTION_BACKEND).is_some() {
        return None;
    }
    let given = |o| user.sval(o).is_some();
    match (
        given(opt::PREFILL_ATTENTION_BACKEND),
        given(opt::DECODE_ATTENTION_BACKEND),
    ) {
        (true, false) => Some(format!(
            "{} alone (the decode backend is left unset)",
            opt::PREFILL_ATTENTION_BACKEND
        )),
        (false, true) => Some(format!(
            "{} alone (the prefill backend is left unset)",
            opt::DECODE_ATTENTION_BACKEND
        )),
        _ => None,
    }
}

pub(crate) fn no_cuda_graph_backend(ctx: &Context) -> Vec<Fired> {
    if ctx.cuda_graph_disabled() {
        return vec![];
    }
    let uses: Vec<String> = ctx.backends_where(|v| v == "torch_native" || v == "flex_attention");
    if uses.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}: SGLang disables CUDA graphs for this backend, so decode runs eagerly and much slower",
        uses.join(", ")
    ))]
}

/// Hybrid linear-attention (Gated DeltaNet) models.
fn hybrid_gdn(arch: &str) -> bool {
    arch.starts_with("Qwen3Next") || arch.starts_with("Qwen3_5")
}

/// Backends SGLang's hybrid-GDN wrapper takes on Blackwell (compute capability `major` 10 or 12).
fn gdn_allowed(version: &str, major: u32) -> &'static [&'static str] {
    let between = |lo, hi| at_least(version, lo) && !at_least(version, hi);
    if between("0.5.3.post1", "0.5.5.post2") {
        &["triton"]
    } else if !at_least(version, "0.5.10rc0") {
        &["triton", "trtllm_mha"]
    } else if !at_least(version, "0.5.16") {
        &["triton", "trtllm_mha", "fa4", "flashinfer"]
    } else if major == 12 {
        &["triton", "trtllm_mha", "flashinfer"]
    } else if !at_least(version, "0.5.21") {
        &["triton", "trtllm_mha", "fa4"]
    } else {
        &["triton", "trtllm_mha", "fa4", "flashinfer"]
    }
}

/// The explicit backends the wrapper checks: the main one before 0.5.16; from 0.5.16 prefill and
/// decode when both are given, else the main one; from 0.5.18 each role's backend (its own
/// option, else the main one).
fn gdn_checked(ctx: &Context) -> Vec<(&'static str, String)> {
    let get = |o: &'static str| ctx.user().sval(o).map(|v| (o, v));
    let main = get(opt::ATTENTION_BACKEND);
    let (p, d) = (
        get(opt::PREFILL_ATTENTION_BACKEND),
        get(opt::DECODE_ATTENTION_BACKEND),
    );
    let roles = if !at_least(ctx.version, "0.5.16") {
        vec![main]
    } else if !at_least(ctx.version, "0.5.18") {
        if p.is_some() && d.is_some() {
            vec![p, d]
        } else {
            vec![main]
        }
    } else {
        vec![p.or(main.clone()), d.or(main)]
    };
    let mut out: Vec<(&'static str, String)> = roles.into_iter().flatten().collect();
    out.dedup();
    out
}

/// The backend of a checked value (`flashinfer (SGLang's choice)` → `flashinfer`).
fn backend_name(v: &str) -> &str {
    v.split(' ').next().unwrap_or(v)
}

pub(crate) fn hybrid_gdn_blackwell(ctx: &Context) -> Vec<Fired> {
    let Some(arch) = ctx.model_arch().filter(|a| hybrid_gdn(a)) else {
        return vec![];
    };
    let majors: Vec<u32> = blackwell_majors(ctx.version)
        .iter()
        .copied()
        .filter(|&m| !ctx.gpus_where(|(g, _)| g == m).is_empty())
        .collect();
    let mut checked = gdn_checked(ctx);
    // No backend named: the wrapper sees the one SGLang picks itself.
    if checked.is_empty()
        && let Some(a) = ctx.server.backends.attention.as_ref()
    {
        checked.push((
            "attention backend",
            format!("{} (SGLang's choice)", a.value),
        ));
    }
    majors
        .into_iter()
        .filter_map(|m| {
            let ok = gdn_allowed(ctx.version, m);
            // 0.5.6's ServerArgs sets triton on SM10x whatever was asked.
            let replaced = |o: &str| ctx.version == "0.5.6" && m == 10 && o == opt::ATTENTION_BACKEND;
            let bad: Vec<String> = checked
                .iter()
                .filter(|(o, v)| !ok.contains(&backend_name(v)) && !replaced(o))
                .map(|(o, v)| format!("{o} {v}"))
                .collect();
            (!bad.is_empty()).then(|| {
                Fired::new(format!(
                    "{}; {arch} (hybrid linear attention) with {}: SGLang {} takes only {} here (asserted when the model runner builds the backend)",
                    Context::describe(&ctx.gpus_where(|(g, _)| g == m)),
                    bad.join(", "),
                    ctx.version,
                    ok.join(", ")
                ))
            })
        })
        .collect()
}

/// The backends Llama 4's start-up assertion accepts, by release (`None`: no assertion).
fn llama4_allowed(v: &str) -> Option<&'static [&'static str]> {
    Some(if !at_least(v, "0.4.9.post4") {
        return None;
    } else if !at_least(v, "0.5.1") {
        &["fa3"]
    } else if !at_least(v, "0.5.2rc2") {
        &["fa3", "aiter"]
    } else if !at_least(v, "0.5.4.post1") {
        &["fa3", "aiter", "triton"]
    } else if !at_least(v, "0.5.5.post1") {
        &["fa3", "aiter", "triton", "trtllm_mha"]
    } else if !at_least(v, "0.5.10rc0") {
        &["fa3", "aiter", "triton", "trtllm_mha", "intel_xpu"]
    } else {
        &[
            "fa3",
            "aiter",
            "triton",
            "ascend",
            "trtllm_mha",
            "intel_xpu",
        ]
    })
}

/// A backend Llama 4's assertion takes that runs on these GPUs, if there is one.
fn llama4_fix(ctx: &Context, allowed: &[&str]) -> Option<&'static str> {
    let majors = ctx.majors();
    if !majors.is_empty() && majors.iter().all(|m| (8..=9).contains(m)) {
        return Some("fa3");
    }
    allowed.contains(&"triton").then_some("triton")
}

/// Llama 4: SGLang asserts the attention backend when it adjusts arguments for the model.
/// Before 0.5.6 that runs before SGLang picks a backend, so an unset one fails too.
pub(crate) fn llama4_backend(ctx: &Context) -> Vec<Fired> {
    let Some(arch) = ctx.model_arch().filter(|a| a.starts_with("Llama4")) else {
        return vec![];
    };
    let Some(allowed) = llama4_allowed(ctx.version) else {
        return vec![];
    };
    let given = ctx.user().sval(opt::ATTENTION_BACKEND);
    let what = match &given {
        Some(b) if allowed.contains(&b.as_str()) => return vec![],
        Some(b) => format!("--attention-backend {b}"),
        None if at_least(ctx.version, "0.5.6") => return vec![],
        None => "no --attention-backend (SGLang picks one only after this check)".to_owned(),
    };
    let fired = Fired::new(format!(
        "{arch} with {what}: SGLang {} asserts the attention backend is one of {} ('... is required for Llama4 model') at start-up",
        ctx.version,
        allowed.join(", ")
    ));
    match llama4_fix(ctx, allowed) {
        Some(b) => vec![fired.with_fix(set_arg(opt::ATTENTION_BACKEND, b))],
        None => vec![fired],
    }
}

/// A dual-chunk-attention model runs only on SGLang's dual-chunk backend: another one is refused
/// at start-up, and from 0.5.4.post1 so is none, since SGLang picks its default for the GPU
/// before the check.
pub(crate) fn dual_chunk_backend(ctx: &Context) -> Vec<Fired> {
    const DUAL_CHUNK: &str = "dual_chunk_flash_attn";
    if !ctx.model.is_some_and(|m| m.dual_chunk_attention) {
        return vec![];
    }
    let what = match ctx.user().sval(opt::ATTENTION_BACKEND) {
        Some(b) if b == DUAL_CHUNK => return vec![],
        Some(b) => format!("--attention-backend is {b}"),
        // A prefill or decode backend may make the main one: not judged.
        None if ctx.user().given(opt::PREFILL_ATTENTION_BACKEND)
            || ctx.user().given(opt::DECODE_ATTENTION_BACKEND) =>
        {
            return vec![];
        }
        // Until 0.5.4 the model runner chose the dual-chunk backend for a line without one.
        None if !at_least(ctx.version, "0.5.4.post1") => return vec![],
        None => "no --attention-backend (SGLang picks its default for the GPU first)".to_owned(),
    };
    let fired = Fired::new(format!(
        "the model's config.json has a dual_chunk_attention_config and {what}: SGLang {} refuses any backend but {DUAL_CHUNK} for it at start-up ('Dual chunk attention is enabled, but attention backend is set to ...')",
        ctx.version
    ));
    vec![fired.with_fix(set_arg(opt::ATTENTION_BACKEND, DUAL_CHUNK))]
}

/// The backends deterministic inference accepts on CUDA (fa4 too from 0.5.16).
fn deterministic_ok(v: &str) -> &'static [&'static str] {
    if at_least(v, "0.5.16") {
        &["fa3", "fa4", "flashinfer", "triton"]
    } else {
        &["fa3", "flashinfer", "triton"]
    }
}

/// What DeepSeek-architecture models take (from 0.5.4.post1; fa4 too from 0.5.17).
fn deterministic_deepseek_ok(v: &str) -> &'static [&'static str] {
    if at_least(v, "0.5.17") {
        &["fa3", "fa4", "triton"]
    } else {
        &["fa3", "triton"]
    }
}

/// The architectures SGLang's deterministic check counts as DeepSeek, with the release each
/// joined the list.
const DETERMINISTIC_DEEPSEEK: &[(&str, &str)] = &[
    ("DeepseekV2ForCausalLM", "0.5.4.post1"),
    ("DeepseekV3ForCausalLM", "0.5.4.post1"),
    ("DeepseekV32ForCausalLM", "0.5.4.post1"),
    ("MistralLarge3ForCausalLM", "0.5.8"),
    ("PixtralForConditionalGeneration", "0.5.8"),
    ("GlmMoeDsaForCausalLM", "0.5.9"),
    ("Glm4MoeLiteForCausalLM", "0.5.19"),
    ("Glm5NextForConditionalGeneration", "0.5.20"),
];

/// The main backend SGLang's deterministic-inference check sees: from 0.5.4.post2 the one
/// resolved by then (its own pick included); before, the user's or the model's own pick, made
/// earlier in the same pass (SGLang's generic choice came later).
fn deterministic_sees(ctx: &Context) -> Option<String> {
    let b = &ctx.server.backends;
    let resolved = || b.attention.as_ref().map(|a| a.value.clone());
    if at_least(ctx.version, "0.5.4.post2") {
        resolved()
    } else {
        ctx.user()
            .sval(opt::ATTENTION_BACKEND)
            .or_else(|| resolved().filter(|_| b.attention_by_model))
    }
}

/// What SGLang's own fallback for deterministic inference would pick on these GPUs.
fn deterministic_fix(ctx: &Context, deepseek: bool) -> &'static str {
    let blackwell = ctx.majors().iter().any(|&m| m >= 10);
    // Gemma 4 asserts its own short list (ATTN019); triton is on both.
    let gemma4 = ctx
        .model_arch()
        .is_some_and(|a| crate::resolve::attention::GEMMA4.contains(&a));
    match (deepseek || gemma4, blackwell) {
        (true, true) => "triton",
        (false, true) => "flashinfer",
        _ => "fa3",
    }
}

pub(crate) fn deterministic_backend(ctx: &Context) -> Vec<Fired> {
    let v = ctx.version;
    let Some(by) = ctx.deterministic_by().filter(|_| at_least(v, "0.5.3rc2")) else {
        return vec![];
    };
    let deepseek = ctx.model_arch().is_some_and(|a| {
        DETERMINISTIC_DEEPSEEK
            .iter()
            .any(|(name, since)| *name == a && at_least(v, since))
    });
    let seen = deterministic_sees(ctx);
    if let Some(f) = deterministic_fa4_mla(ctx, &by, deepseek, seen.as_deref()) {
        return vec![f];
    }
    let (ok, which) = match seen.as_deref() {
        // 0.5.3.x have no fallback for an unset backend yet.
        None if !at_least(v, "0.5.4") => (deterministic_ok(v), ""),
        None => return vec![],
        Some(b) if !deterministic_ok(v).contains(&b) => (deterministic_ok(v), ""),
        Some(b) if deepseek && !deterministic_deepseek_ok(v).contains(&b) => {
            (deterministic_deepseek_ok(v), " with DeepSeek models")
        }
        Some(_) => return vec![],
    };
    let shown = match (&seen, ctx.user().sval(opt::ATTENTION_BACKEND)) {
        (Some(b), Some(u)) if &u == b => format!("--attention-backend {b}"),
        (Some(b), Some(u)) => format!("{b}, which SGLang puts in place of --attention-backend {u}"),
        (Some(b), None) => format!("{b}, SGLang's own choice (no --attention-backend given)"),
        (None, _) => "no --attention-backend".to_owned(),
    };
    vec![
        Fired::new(format!(
            "{by} with {shown}: SGLang {v} refuses it at start-up ('Currently only {} attention backends are supported for deterministic inference{which}')",
            ok.join(", ")
        ))
        .with_fix(set_arg(opt::ATTENTION_BACKEND, deterministic_fix(ctx, deepseek))),
    ]
}

/// From 0.5.18 SGLang takes fa4 for deterministic inference with DeepSeek-architecture
/// (absorbed-MLA) models on SM100/SM110 only.
fn deterministic_fa4_mla(
    ctx: &Context,
    by: &str,
    deepseek: bool,
    seen: Option<&str>,
) -> Option<Fired> {
    let v = ctx.version;
    if !deepseek || seen != Some("fa4") || !at_least(v, "0.5.18") {
        return None;
    }
    let bad = ctx.gpus_where(|(m, _)| m != 10 && m != 11);
    if bad.is_empty() {
        return None;
    }
    Some(
        Fired::new(format!(
            "{}; {} with fa4 for {}: SGLang {v} runs deterministic fa4 for absorbed-MLA models on SM100/SM110 only and refuses the line at start-up",
            Context::describe(&bad),
            by,
            ctx.model_arch().unwrap_or("this model")
        ))
        .with_fix(set_arg(opt::ATTENTION_BACKEND, deterministic_fix(ctx, true))),
    )
}

/// ATTN015: trtllm_mha prefill on SM120 with an FP8 E4M3 KV cache (or the skip-softmax prefill
/// threshold), which SGLang's TRT-LLM FMHAv2 prefill path there does not take (0.5.19+).
pub(crate) fn trtllm_mha_sm120_fp8_kv(ctx: &Context) -> Vec<Fired> {
    let sm120 = ctx.gpus_where(|(m, _)| m == 12);
    let mut uses: Vec<&str> = roles(ctx, "trtllm_mha")
        .into_iter()
        .filter(|(_, role)| *role != "decode")
        .map(|(o, _)| o)
        .collect();
    uses.extend(sglang_pick(ctx, "trtllm_mha"));
    let fp8 = ctx.kv_cache_dtype() == Some("fp8_e4m3");
    let skip_softmax = ctx
        .env
        .get("SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .is_some_and(|v| v > 0.0);
    if sm120.is_empty() || uses.is_empty() || !(fp8 || skip_softmax) {
        return vec![];
    }
    let what = if fp8 {
        format!("{} fp8_e4m3", opt::KV_CACHE_DTYPE)
    } else {
        "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR above 0".to_owned()
    };
    vec![Fired::new(format!(
        "{}; {} trtllm_mha for prefill with {what}: SGLang {} refuses it, as its TRT-LLM FMHAv2 prefill on SM120 does not take it; use another prefill backend or a bf16 KV cache",
        Context::describe(&sm120),
        uses.join(", "),
        ctx.version
    ))]
}

/// The attention backends Gemma 4's start-up assertion takes, by release (0.5.13+).
fn gemma4_allowed(version: &str) -> &'static [&'static str] {
    if at_least(version, "0.5.22") {
        &[
            "trtllm_mha",
            "triton",
            "fa4",
            "ascend",
            "intel_xpu",
            "intel_amx",
            "aiter",
        ]
    } else if at_least(version, "0.5.20") {
        &[
            "trtllm_mha",
            "triton",
            "ascend",
            "intel_xpu",
            "intel_amx",
            "aiter",
        ]
    } else if at_least(version, "0.5.18") {
        &["trtllm_mha", "triton", "ascend", "intel_xpu", "intel_amx"]
    } else {
        &["trtllm_mha", "triton", "intel_xpu"]
    }
}

/// ATTN019: Gemma 4 with a prefill or decode attention backend its assertion refuses, after
/// SGLang's own pick has filled the main backend.
pub(crate) fn gemma4_backend(ctx: &Context) -> Vec<Fired> {
    let Some(arch) = ctx
        .model_arch()
        .filter(|a| crate::resolve::attention::GEMMA4.contains(a))
    else {
        return vec![];
    };
    let allowed = gemma4_allowed(ctx.version);
    let b = &ctx.server.backends;
    let bad: Vec<String> = [("prefill", b.prefill()), ("decode", b.decode())]
        .into_iter()
        .filter_map(|(role, c)| {
            c.filter(|c| !allowed.contains(&c.value.as_str()))
                .map(|c| format!("{role} {}", c.value))
        })
        .collect();
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{arch} with {}: SGLang {} asserts at start-up that Gemma 4's prefill and decode attention backends are among {} ('Gemma4 only supports ...'); name one of them, or leave the backends to SGLang",
        bad.join(" and "),
        ctx.version,
        allowed.join(", ")
    ))]
}

/// What SGLang's DSA backend check (0.5.17+) refuses on a CUDA GPU of compute capability `cc`,
/// for the backends after its own defaults (`None`: unset, SGLang's pick, never tilelang or
/// triton there) and the KV cache dtype in effect.
fn dsa_backend_refusal(
    version: &str,
    (prefill, decode): (Option<&str>, Option<&str>),
    fp8: bool,
    (cc, dcp, hisparse): ((u32, u32), i64, bool),
) -> Option<&'static str> {
    let chosen = [prefill, decode];
    if at_least(version, "0.5.20") && chosen.contains(&Some("triton")) {
        return Some("the triton DSA backend is ROCm-only");
    }
    if !fp8 || !chosen.contains(&Some("tilelang")) {
        return None;
    }
    if !at_least(version, "0.5.22") {
        return Some(
            "tilelang's DSA kernels take an FP8 KV cache on ROCm only; on CUDA they need bfloat16",
        );
    }
    if hisparse && at_least(version, "0.5.23") {
        Some("CUDA TileLang FP8 KV does not support HiSparse")
    } else if chosen != [Some("tilelang"); 2] {
        Some("CUDA TileLang FP8 KV needs both DSA backends to be tilelang")
    } else if dcp > 1 {
        Some("CUDA TileLang FP8 KV does not support --dcp-size above 1")
    } else if cc < (8, 9) {
        Some("CUDA TileLang FP8 KV needs SM89 or newer")
    } else {
        None
    }
}

/// ATTN020: a DeepSeek sparse-attention model with DSA backends and a KV cache dtype SGLang's
/// backend check refuses on CUDA (0.5.17+).
pub(crate) fn dsa_backend_kv(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx.model.filter(|m| m.is_dsa(ctx.version)) else {
        return vec![];
    };
    let [prefill, decode] = ctx.dsa_backends().map(|b| b.map(|(_, v)| v));
    let Some(cc) = ctx.used().first().and_then(|g| g.cc()) else {
        return vec![];
    };
    let kv = ctx.kv_cache_dtype().unwrap_or("auto");
    let fp8 = kv == "fp8_e4m3";
    let hisparse = ctx.user().flag(opt::ENABLE_HISPARSE);
    // GLM-5 with an FP8 cache on SM12x takes its own backend branch, and before 0.5.20 HiSparse
    // returns before the check.
    let glm_sm12 = m.architecture.as_deref() == Some("GlmMoeDsaForCausalLM") && cc.0 == 12 && fp8;
    if glm_sm12 || hisparse && !at_least(ctx.version, "0.5.20") {
        return vec![];
    }
    let dcp = ctx.user().int(opt::DCP_SIZE).unwrap_or(1);
    let pair = (prefill.as_deref(), decode.as_deref());
    let Some(why) = dsa_backend_refusal(ctx.version, pair, fp8, (cc, dcp, hisparse)) else {
        return vec![];
    };
    let named = |role: &str, b: &Option<String>| b.as_ref().map(|b| format!("{role} {b}"));
    let given: Vec<String> = [named("prefill", &prefill), named("decode", &decode)]
        .into_iter()
        .flatten()
        .collect();
    vec![Fired::new(format!(
        "{} with DSA backends {} and a {kv} KV cache: SGLang {} refuses it at start-up ({why}); on CUDA use --kv-cache-dtype bfloat16 with tilelang, or an FP8-capable DSA backend (flashmla_kv on Hopper, trtllm on Blackwell)",
        m.architecture
            .as_deref()
            .unwrap_or("a DeepSeek sparse-attention model"),
        given.join(" and "),
        ctx.version,
    ))]
}

/// The hybrids whose branch in SGLang's argument handling refuses the triton attention backend
/// (their first layer may not be an attention layer), with the releases it does (first, first
/// without; `None`: still in the newest).
const NO_TRITON: &[(&str, &str, Option<&str>)] = &[
    ("NemotronHForCausalLM", "0.5.7", Some("0.5.19")),
    ("NemotronHPuzzleForCausalLM", "0.5.13", Some("0.5.19")),
    ("Lfm2ForCausalLM", "0.5.9", None),
    ("Lfm2MoeForCausalLM", "0.5.17", None),
];

/// ATTN021: `--attention-backend triton` on a hybrid of [`NO_TRITON`].
pub(crate) fn hybrid_triton(ctx: &Context) -> Vec<Fired> {
    let v = ctx.version;
    let Some(arch) = ctx.model_arch() else {
        return vec![];
    };
    let refused = NO_TRITON
        .iter()
        .any(|&(a, from, until)| a == arch && within(v, from, until));
    if !refused || ctx.user().sval(opt::ATTENTION_BACKEND).as_deref() != Some("triton") {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} triton on {arch}: SGLang {v}'s argument handling refuses the triton attention backend for this model, whose first layer may not be an attention layer ('{arch} does not support triton attention backend'); name another backend or leave it to SGLang",
        opt::ATTENTION_BACKEND
    ))]
}

/// ATTN022: FlashInfer's GDN kernels keep a bfloat16 Mamba state on SM100 and later; from 0.5.10
/// SGLang refuses its decode backend there (0.5.17+: its verify backend too, which follows the
/// decode one unless named) without `--mamba-ssm-dtype bfloat16`, whatever the model
/// (tests/evidence/ATTN022.jsonl).
pub(crate) fn linear_flashinfer_state(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let decode = linear_backend(ctx, opt::LINEAR_ATTN_DECODE_BACKEND);
    let verify = u
        .sval(opt::LINEAR_ATTN_VERIFY_BACKEND)
        .filter(|_| at_least(ctx.version, "0.5.17"))
        .or_else(|| decode.clone());
    let state = u.sval(opt::MAMBA_SSM_DTYPE);
    let major = ctx.majors().last().copied().unwrap_or(0);
    let Some(role) = [("decode", decode), ("verify", verify)]
        .into_iter()
        .find_map(|(role, b)| (b.as_deref() == Some("flashinfer")).then_some(role))
    else {
        return vec![];
    };
    if major < 10 || state.as_deref() == Some("bfloat16") {
        return vec![];
    }
    let got = state.unwrap_or_else(|| "unset".into());
    vec![Fired::new(format!(
        "FlashInfer as the linear-attention {role} backend on compute capability {major}.x with the Mamba state {got}: SGLang {} refuses it while resolving its arguments (its kernels there keep a bfloat16 state); add --mamba-ssm-dtype bfloat16, or use the triton linear-attention backend",
        ctx.version
    ))]
}

/// The linear-attention backend a role (`--linear-attn-decode-backend`, `…-prefill-backend`) runs
/// as the user gave it: its own option, else the shared `--linear-attn-backend`.
fn linear_backend(ctx: &Context, role: &str) -> Option<String> {
    let u = ctx.user();
    u.sval(role).or_else(|| u.sval(opt::LINEAR_ATTN_BACKEND))
}

/// ATTN023: FlashKDA is a prefill kernel only; from 0.5.15, its first release, SGLang refuses it
/// named for decode, whatever the model or GPU (tests/evidence/ATTN023.jsonl). Inherited from
/// `--linear-attn-backend`, decode falls back to triton.
pub(crate) fn linear_flashkda_decode(ctx: &Context) -> Vec<Fired> {
    if ctx.user().str(opt::LINEAR_ATTN_DECODE_BACKEND) != Some("flashkda") {
        return vec![];
    }
    vec![Fired::new(format!(
        "--linear-attn-decode-backend flashkda: FlashKDA has no decode kernel and SGLang {} refuses it while resolving its arguments; use --linear-attn-prefill-backend flashkda (decode stays on triton)",
        ctx.version
    ))]
}

/// ATTN024: FlashInfer's GDN prefill on SM100 and later is a CuTe DSL kernel built for CUDA 13:
/// from 0.5.13 SGLang refuses it when torch is built for an older CUDA
/// (tests/evidence/ATTN024.jsonl). Quiet where the install is unknown.
pub(crate) fn linear_flashinfer_prefill_cuda(ctx: &Context) -> Vec<Fired> {
    let prefill = linear_backend(ctx, opt::LINEAR_ATTN_PREFILL_BACKEND);
    let Some(cuda) = ctx.packages.and_then(|p| p.torch_cuda()) else {
        return vec![];
    };
    let major = ctx.majors().last().copied().unwrap_or(0);
    if prefill.as_deref() != Some("flashinfer") || cuda.0 >= 13 || major < 10 {
        return vec![];
    }
    vec![Fired::new(format!(
        "FlashInfer as the linear-attention prefill backend on compute capability {major}.x with torch built for CUDA {cuda}: SGLang {} refuses it while resolving its arguments (its GDN prefill kernel there needs CUDA 13); install a CUDA 13 build of torch, or run prefill on triton (--linear-attn-prefill-backend triton)",
        ctx.version
    ))]
}
