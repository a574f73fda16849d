//! Speculative decoding.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

pub(crate) fn pcie_tp(ctx: &Context) -> Vec<Fired> {
    let algo = ctx.spec_algo().unwrap_or_default();
    if !ctx.spec_eagle() || ctx.tp() < 4 || !ctx.tp_pcie_only() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{algo} speculative decoding at TP {} over PCIe ({}): each verify pass is bound by NCCL all-reduces over PCIe (EAGLE-3 measured 54 tok/s vs 82 without it on 8x RTX PRO 6000); benchmark both, or use lower TP with replicas",
        ctx.tp(),
        ctx.describe_used()
    ))]
}

pub(crate) fn dp_attention_unsupported(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx
        .spec_algo()
        .filter(|a| a == "NGRAM" || a == "STANDALONE")
    else {
        return vec![];
    };
    if !ctx.dp_attention() {
        return vec![];
    }
    vec![Fired::new(format!(
        "--speculative-algorithm {a} with DP attention: SGLang rejects the combination; use EAGLE/EAGLE3/NEXTN or drop DP attention"
    ))]
}

pub(crate) fn eagle_dp_attention(ctx: &Context) -> Vec<Fired> {
    if !ctx.spec_eagle() || !ctx.dp_attention() {
        return vec![];
    }
    // Before 0.4.8 (PR #6081) an idle DP rank runs only the target model while busy ranks run
    // the draft in the global TP group: the collectives can hang (#6296). SPEC023 names the
    // capture that stops outright.
    let v = ctx.version;
    if !crate::sglang::release::at_least(v, "0.4.8") {
        if !nextn_draft_dp_attention(ctx).is_empty() {
            return vec![];
        }
        return vec![Fired::new(format!(
            "{} with DP attention on SGLang {v}: before 0.4.8 an idle DP rank skips the draft model that busy ranks run in the same TP group, and a reported server hung once requests were uneven across ranks; use SGLang 0.4.8 or later, or drop --enable-dp-attention",
            ctx.spec_algo().unwrap_or_default(),
        ))];
    }
    // MTP/EAGLE + DP attention is SGLang's documented DeepSeek recipe from 0.4.8; what remains
    // is the SPEC_V2 accept-length drop (#16274, fixed by #16310): the overlap worker's
    // draft-extend of 0.5.5 has the metadata the fix set, 0.5.10.post1's rewritten worker no
    // longer does. Only SPEC_V2 runs that path.
    let (reg, _) = ctx.env_registry();
    let spec_v2 = reg.knows("SGLANG_ENABLE_SPEC_V2")
        && ctx.env.get("SGLANG_ENABLE_SPEC_V2").is_some_and(env_true);
    if !spec_v2 || crate::sglang::release::at_least(ctx.version, "0.5.10") {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} with DP attention and SGLANG_ENABLE_SPEC_V2=1 on SGLang {}: the overlap worker's draft extend under DP attention cut the accept length by about a third (~2.35 → ~1.48) until a fix in early 2026; benchmark with and without DP attention, or without SPEC_V2",
        ctx.spec_algo().unwrap_or_default(),
        ctx.version
    ))]
}

pub(crate) fn topk_page_size(ctx: &Context) -> Vec<Fired> {
    // The page size in effect: the user's, or the one SGLang's backend choice forces. NGRAM's
    // top-k is its BFS breadth (SGLang overwrites the top-k with it, 10 by default).
    let ngram = ctx.spec_algo().as_deref() == Some("NGRAM");
    let k = if ngram {
        ctx.user()
            .int(opt::SPECULATIVE_NGRAM_MAX_BFS_BREADTH)
            .unwrap_or(1)
    } else {
        // SGLang fills in its own top-k before this check (tests/evidence/SPEC004.jsonl).
        resolved_topk(ctx)
    };
    let page = ctx.server.page_size as i64;
    if ctx.spec_algo().is_none() || k <= 1 || page <= 1 {
        return vec![];
    }
    let page_text = if ctx.user().int(opt::PAGE_SIZE) == Some(page) {
        format!("--page-size {page}")
    } else {
        format!("page size {page} (SGLang's, for its backend)")
    };
    // SGLang checks the main backend only: flashinfer from 0.5.2, fa3 too from 0.5.6, triton
    // too from 0.5.14; NGRAM (0.5.3+) flashinfer only (tests/evidence/SPEC004.jsonl); before
    // 0.5.2 nothing is checked.
    use crate::sglang::release::at_least;
    if !at_least(ctx.version, "0.5.2") {
        return vec![];
    }
    let ok: &[&str] = if ngram {
        &["flashinfer"]
    } else if at_least(ctx.version, "0.5.14") {
        &["flashinfer", "fa3", "triton"]
    } else if at_least(ctx.version, "0.5.6") {
        &["flashinfer", "fa3"]
    } else {
        &["flashinfer"]
    };
    let bad = topk_checked_backend(ctx, ok);
    if bad.is_empty() {
        return vec![];
    }
    let shown = bad.join(", ");
    let k_text = if ngram {
        format!("NGRAM's top-k {k} (its --speculative-ngram-max-bfs-breadth)")
    } else if ctx.user().int(opt::SPECULATIVE_EAGLE_TOPK).is_some() {
        format!("--speculative-eagle-topk {k}")
    } else {
        format!("top-k {k} (SGLang's own for this model: no --speculative-eagle-topk given)")
    };
    vec![Fired::new(format!(
        "{k_text} with {page_text} and {shown}: SGLang {} allows topk > 1 with paged KV only on {}",
        ctx.version,
        ok.join("/")
    ))]
}

/// The main backend SGLang's top-k check sees, when it is not on `ok`. Before 0.5.4.post1 the
/// check runs before SGLang picks a backend (in the model runner), so without
/// `--attention-backend` it sees none and refuses (tests/evidence/SPEC004.jsonl).
fn topk_checked_backend(ctx: &Context, ok: &[&str]) -> Vec<String> {
    let early =
        !crate::sglang::release::at_least(ctx.version, crate::resolve::CHOSEN_IN_SERVER_ARGS);
    if early && !ctx.user().given(opt::ATTENTION_BACKEND) {
        return vec![format!(
            "no {} (SGLang {} checks before it picks one)",
            opt::ATTENTION_BACKEND,
            ctx.version
        )];
    }
    ctx.effective_backends_where(|v| !ok.contains(&v))
        .into_iter()
        .filter(|b| {
            !b.starts_with(opt::PREFILL_ATTENTION_BACKEND)
                && !b.starts_with(opt::DECODE_ATTENTION_BACKEND)
        })
        .collect()
}

/// The top-k SGLang checks: the user's, else the one it fills in for the model.
pub(crate) fn resolved_topk(ctx: &Context) -> i64 {
    match (
        ctx.user().int(opt::SPECULATIVE_EAGLE_TOPK),
        ctx.server.spec_params,
    ) {
        (Some(k), _) => k,
        (None, Some(p)) => p.eagle_topk.value,
        (None, None) => 1,
    }
}

pub(crate) fn topk_trtllm_mha(ctx: &Context) -> Vec<Fired> {
    let k = resolved_topk(ctx);
    // SGLang checks after its own pick: 0.5.6.post1–post2 pick trtllm_mha before filling in
    // the top-k.
    let picked = ctx.server.backends.attention.as_ref().is_some_and(|a| {
        a.source == crate::resolve::ChoiceSource::Sglang && a.value == "trtllm_mha"
    });
    let trtllm = picked
        || ctx
            .attention_backends()
            .iter()
            .any(|(_, v)| v == "trtllm_mha");
    // Before 0.5.1 trtllm_mha refuses speculative decoding at any topk.
    if ctx.spec_algo().is_some()
        && trtllm
        && !crate::sglang::release::at_least(ctx.version, "0.5.1")
    {
        return vec![Fired::new(format!(
            "speculative decoding with the trtllm_mha backend: SGLang {} refuses it",
            ctx.version
        ))];
    }
    if ctx.spec_algo().is_none() || k <= 1 {
        return vec![];
    }
    let mut out = vec![];
    if trtllm {
        let topk = if ctx.user().int(opt::SPECULATIVE_EAGLE_TOPK) == Some(k) {
            format!("--speculative-eagle-topk {k}")
        } else {
            format!("speculative top-k {k} (SGLang's default for this model)")
        };
        let backend = if picked {
            "trtllm_mha, SGLang's own choice (no --attention-backend given)"
        } else {
            "the trtllm_mha backend"
        };
        out.push(Fired::new(format!(
            "{topk} with {backend}: it supports top-k 1 only"
        )));
    }
    // The spec-v2 overlap path is chain-only; 0.5.7–0.5.10 refuse topk > 1 with it (0.5.11+
    // fall back to spec v1 themselves). They check before filling in the parameters, so only
    // a top-k the user gives counts; STANDALONE joined the check in 0.5.8.
    let v = ctx.version;
    let algos: &[&str] = if crate::sglang::release::at_least(v, "0.5.8") {
        &["EAGLE", "EAGLE3", "STANDALONE"]
    } else {
        &["EAGLE", "EAGLE3"]
    };
    let refuses = crate::sglang::release::at_least(v, "0.5.7")
        && !crate::sglang::release::at_least(v, "0.5.11")
        && algos.contains(&ctx.spec_algo().unwrap_or_default().as_str())
        && ctx.user().given(opt::SPECULATIVE_EAGLE_TOPK);
    if refuses && ctx.env.get("SGLANG_ENABLE_SPEC_V2").is_some_and(env_true) {
        out.push(Fired::new(format!(
            "--speculative-eagle-topk {k} with SGLANG_ENABLE_SPEC_V2=1: the spec-v2 overlap path supports topk 1 only"
        )));
    }
    out
}

pub(crate) fn moe_runner_trtllm(ctx: &Context) -> Vec<Fired> {
    if ctx
        .user()
        .sval(opt::SPECULATIVE_MOE_RUNNER_BACKEND)
        .as_deref()
        != Some("flashinfer_trtllm")
    {
        return vec![];
    }
    vec![Fired::new(
        "--speculative-moe-runner-backend flashinfer_trtllm: SGLang asserts against it for the draft model; leave it unset".to_string(),
    )]
}

/// SPEC019: trtllm_mha with speculative decoding on 0.5.0rc0-0.5.0rc2; on 0.5.0rc2 SGLang's own
/// pick for GPT-OSS on SM100 comes before the check (tests/evidence/SPEC019.jsonl).
pub(crate) fn trtllm_mha_spec(ctx: &Context) -> Vec<Fired> {
    let Some(algo) = ctx.spec_algo() else {
        return vec![];
    };
    let named = ctx.backends_where(|b| b == "trtllm_mha").into_iter().next();
    let b = &ctx.server.backends;
    let picked = crate::sglang::release::at_least(ctx.version, "0.5.0rc2")
        && b.attention_by_model
        && b.attention
            .as_ref()
            .is_some_and(|a| a.value == "trtllm_mha");
    let whose = match (named, picked) {
        (Some(o), _) => o,
        (None, true) => "trtllm_mha (SGLang's own pick for this model)".to_owned(),
        (None, false) => return vec![],
    };
    vec![Fired::new(format!(
        "{whose} with --speculative-algorithm {algo}: SGLang {} refuses it at start-up ('trtllm_mha backend does not support speculative decoding yet'); name another attention backend or use 0.5.1 or later",
        ctx.version
    ))]
}

pub(crate) fn side_effects(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.spec_algo() else {
        return vec![];
    };
    if ctx.user().given(opt::MAX_RUNNING_REQUESTS) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--speculative-algorithm {a}: SGLang caps --max-running-requests at 48 when it is unset and turns mixed chunked prefill off; set it explicitly for high-concurrency serving"
    ))]
}

pub(crate) fn flex_attention(ctx: &Context) -> Vec<Fired> {
    // ServerArgs asserts on the main backend only.
    if ctx.spec_algo().is_none()
        || ctx.user().sval(opt::ATTENTION_BACKEND).as_deref() != Some("flex_attention")
    {
        return vec![];
    }
    vec![Fired::new(
        "flex_attention with speculative decoding: SGLang asserts against the combination"
            .to_string(),
    )]
}

pub(crate) fn lora(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.spec_algo() else {
        return vec![];
    };
    let lora = ctx.lora();
    let ok: &[&str] = if crate::sglang::release::at_least(ctx.version, "0.5.19") {
        &["NGRAM", "EAGLE", "EAGLE3", "DFLASH", "DSPARK"]
    } else {
        &["NGRAM"]
    };
    if !lora || ok.contains(&a.as_str()) {
        return vec![];
    }
    vec![Fired::new(format!(
        "LoRA with --speculative-algorithm {a}: SGLang {} accepts LoRA only with {}",
        ctx.version,
        ok.join(", ")
    ))]
}

/// SPEC020: 0.5.3 to 0.5.5.post2's chunked-SGMV LoRA backend sizes its segments from the extend
/// lengths for every extend mode, and a captured verify batch has none.
pub(crate) fn lora_verify_capture(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.spec_algo() else {
        return vec![];
    };
    let csgmv = ctx.user().str(opt::LORA_BACKEND) == Some("csgmv");
    if !ctx.lora() || !csgmv || ctx.cuda_graph_disabled() {
        return vec![];
    }
    vec![Fired::new(format!(
        "LoRA on the csgmv backend with --speculative-algorithm {a} and CUDA graphs: SGLang {} stops while capturing the verify pass ('NoneType' object cannot be interpreted as an integer); 0.5.5.post3 fixed it",
        ctx.version
    ))]
}

pub(crate) fn small_gpu(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.spec_algo() else {
        return vec![];
    };
    let Some(mib) = ctx.used().iter().map(|g| g.memory_total_mib).min() else {
        return vec![];
    };
    if mib > 48 * 1024 || ctx.server.user_mem_fraction().is_none() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{a} speculative decoding on {mib} MiB GPUs with a hand-set --mem-fraction-static: the draft model, its KV and its CUDA graphs leave a narrow window where neither start-up OOM nor a KV pool too small to serve happens; free the non-KV side instead (smaller CUDA-graph batch, --chunked-prefill-size 2048–4096, fewer draft tokens)"
    ))]
}

/// The draft model can't be read offline, so the memory plan counts its weights and KV layers
/// as zero. Reads the draft as gathered for the memory planner.
pub(crate) fn draft_unknown(ctx: &Context) -> Vec<Fired> {
    let Some(spec) = ctx.server.speculative.as_ref() else {
        return vec![];
    };
    let (Some(draft), Some(load)) = (spec.separate_draft(), ctx.draft) else {
        return vec![];
    };
    let algo = &spec.algorithm;
    if load
        .facts
        .as_ref()
        .is_some_and(|f| f.weight_bytes.is_some())
    {
        return vec![];
    }
    let why = match &load.problem {
        Some(crate::facts::model::ModelProblem::Unavailable(_)) => {
            "is not a local directory and not in the Hugging Face cache".to_string()
        }
        Some(crate::facts::model::ModelProblem::Hub(_)) => {
            "could not be fetched from the Hugging Face Hub (see the HUB finding)".to_string()
        }
        Some(problem) => format!("could not be read ({problem})"),
        None => "has no weight size the launcher can read or estimate".to_string(),
    };
    vec![Fired::new(format!(
        "{algo} draft model {draft} {why}: the memory plan counts its weights and KV layers as zero, so the KV capacity and fit verdict are optimistic"
    ))]
}

/// SPEC012: 0.4.9.post5–0.5.1.x build a hybrid attention backend when prefill and decode differ,
/// and its model runner asserts speculative decoding is off.
pub(crate) fn hybrid_backends(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.spec_algo() else {
        return vec![];
    };
    let b = &ctx.server.backends;
    let (Some(p), Some(d)) = (b.prefill(), b.decode()) else {
        return vec![];
    };
    if p.value == d.value {
        return vec![];
    }
    vec![Fired::new(format!(
        "--speculative-algorithm {a} with prefill attention {} and decode attention {}: SGLang {} runs them through its hybrid attention backend, which asserts speculative decoding is off; use one backend for both",
        p.value, d.value, ctx.version
    ))]
}

/// SPEC013: the multi-layer EAGLE worker runs a chain; SGLang makes the draft tokens steps + 1
/// only for top-k 1, so a tree (the user's or the model's default) fails when it is built.
pub(crate) fn multi_layer_eagle_tree(ctx: &Context) -> Vec<Fired> {
    let (Some(a), Some(p)) = (ctx.spec_algo(), ctx.server.spec_params) else {
        return vec![];
    };
    let (steps, k, draft) = (
        p.num_steps.value,
        p.eagle_topk.value,
        p.num_draft_tokens.value,
    );
    let chain = steps.saturating_add(1);
    if !ctx.user().flag(opt::ENABLE_MULTI_LAYER_EAGLE) || k <= 1 || draft == chain {
        return vec![];
    }
    vec![Fired::new(format!(
        "--enable-multi-layer-eagle with --speculative-algorithm {a} at {steps} steps, top-k {k} and {draft} draft tokens: SGLang {}'s multi-layer EAGLE worker asserts the draft tokens are the steps plus one when it is built, after the weights load; add --speculative-eagle-topk 1 (SGLang then sets {} draft tokens) or give draft tokens = steps + 1",
        ctx.version, chain
    ))]
}

/// SPEC014: torch_native attention has no draft or verify path.
pub(crate) fn torch_native_attention(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.spec_algo() else {
        return vec![];
    };
    let native = ctx.effective_backends_where(|v| v == "torch_native");
    if native.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "--speculative-algorithm {a} with {}: the torch_native attention backend has no draft or verify path, so SGLang {} loads the weights and then crashes in the first verify pass (the start-up warm-up); use triton, flashinfer or fa3 attention, or drop speculative decoding",
        native.join(", "),
        ctx.version
    ))]
}

/// SPEC015: an EAGLE3 draft is a checkpoint of its own; without one SGLang builds the draft
/// from the target, whose class lacks the EAGLE3 draft's methods.
pub(crate) fn eagle3_without_draft(ctx: &Context) -> Vec<Fired> {
    // Targets SGLang reads the draft from when no path is given.
    const BUNDLED: [&str; 2] = [
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
    ];
    let Some(spec) = ctx.server.speculative.as_ref() else {
        return vec![];
    };
    let Some(arch) = ctx.model_arch() else {
        return vec![];
    };
    if spec.algorithm != "EAGLE3"
        || spec.draft != crate::resolve::DraftSource::None
        || BUNDLED.contains(&arch)
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "--speculative-algorithm EAGLE3 without --speculative-draft-model-path: {arch} bundles no draft, so SGLang builds the draft from the target's own checkpoint and its draft worker calls EAGLE3 methods {arch} does not have (a reported start failed on 'set_embed' after the weights loaded); name the EAGLE3 draft checkpoint"
    ))]
}

/// SPEC024: the steps without top-k: SGLang then picks nothing itself, and its own checks
/// compare the unset top-k with a number before the server starts.
pub(crate) fn steps_without_topk(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.spec_algo() else {
        return vec![];
    };
    let u = ctx.user();
    // IQuest Q1's MTP draft hook (0.5.23) sets top-k 1 itself.
    let own_hook = ctx.model.and_then(|m| m.architecture.as_deref()) == Some("IQuestQ1ForCausalLM");
    if !matches!(a.as_str(), "EAGLE" | "EAGLE3" | "STANDALONE")
        || !u.given(opt::SPECULATIVE_NUM_STEPS)
        || u.given(opt::SPECULATIVE_EAGLE_TOPK)
        || adaptive_may_fill(ctx)
        || own_hook
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "--speculative-algorithm {a} with --speculative-num-steps but no --speculative-eagle-topk: SGLang {} then leaves top-k unset and stops before the server starts (TypeError comparing None with an int); add --speculative-eagle-topk 1 (and --speculative-num-draft-tokens steps + 1), or leave all three to SGLang",
        ctx.version
    ))]
}

/// `--speculative-adaptive` may fill in top-k itself: it is given, and from 0.5.14 the line shows
/// no reason SGLang drops it first.
fn adaptive_may_fill(ctx: &Context) -> bool {
    ctx.user().flag(opt::SPECULATIVE_ADAPTIVE)
        && !(at_least(ctx.version, "0.5.14") && super::spec_adaptive::dropped_by_line(ctx))
}

/// `--speculative-adaptive` as SGLang keeps it (0.5.11+): it turns adaptive off before it fills
/// in the parameters for an algorithm other than EAGLE/EAGLE3 or a top-k other than 1 (and for
/// other reasons not modelled here, where this stays quiet).
fn adaptive_kept(ctx: &Context, algo: &str) -> bool {
    let u = ctx.user();
    let topk = u.given_int(opt::SPECULATIVE_EAGLE_TOPK);
    u.flag(opt::SPECULATIVE_ADAPTIVE) && algo != "STANDALONE" && topk.is_none_or(|k| k == 1)
}

/// SPEC016: SGLang fills in steps, top-k and draft tokens itself only when none of them is
/// given; top-k or draft tokens without the steps trips its assertion.
pub(crate) fn partial_params(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.spec_algo() else {
        return vec![];
    };
    let u = ctx.user();
    if !matches!(a.as_str(), "EAGLE" | "EAGLE3" | "STANDALONE")
        || u.given(opt::SPECULATIVE_NUM_STEPS)
        || adaptive_kept(ctx, &a)
    {
        return vec![];
    }
    let given: Vec<&str> = [
        opt::SPECULATIVE_EAGLE_TOPK,
        opt::SPECULATIVE_NUM_DRAFT_TOKENS,
    ]
    .into_iter()
    .filter(|o| u.given(o))
    .collect();
    if given.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "--speculative-algorithm {a} with {} but no --speculative-num-steps: SGLang {} chooses the three speculative parameters itself only when none is given, and asserts otherwise before the server starts; give --speculative-num-steps too, or drop {}",
        given.join(" and "),
        ctx.version,
        given.join(" and ")
    ))]
}

/// The MoE all-to-all backends SGLang lets DSpark run with attention DP: the built-in TP MoE
/// only until 0.5.17, megamoe from 0.5.18, mori from 0.5.21.
fn dspark_dp_a2a(version: &str) -> &'static [&'static str] {
    use crate::sglang::release::at_least;
    if at_least(version, "0.5.21") {
        &["none", "megamoe", "mori"]
    } else if at_least(version, "0.5.18") {
        &["none", "megamoe"]
    } else {
        &["none"]
    }
}

/// SPEC017: what SGLang's DSpark set-up refuses: attention DP without `--enable-dp-lm-head` or
/// with another MoE all-to-all, and no draft path for a checkpoint without a bundled DSpark head.
pub(crate) fn dspark_setup(ctx: &Context) -> Vec<Fired> {
    if ctx.spec_algo().as_deref() != Some("DSPARK") {
        return vec![];
    }
    let v = ctx.version;
    let mut out = vec![];
    if ctx.dp_attention() && !ctx.user().flag(opt::ENABLE_DP_LM_HEAD) {
        out.push(Fired::new(format!(
            "DSpark with attention DP: SGLang {v} requires {} and refuses the line before loading the model",
            opt::ENABLE_DP_LM_HEAD
        )));
    }
    let a2a = ctx.moe_a2a().unwrap_or_else(|| "none".into());
    let allowed = dspark_dp_a2a(v);
    if ctx.dp_attention() && !allowed.contains(&a2a.as_str()) {
        out.push(Fired::new(format!(
            "DSpark with attention DP and {} {a2a}: SGLang {v} takes only {} there",
            opt::MOE_A2A_BACKEND,
            allowed.join(", ")
        )));
    }
    out.extend(
        dspark_dp_layout(ctx)
            .into_iter()
            .chain(dspark_block(ctx))
            .map(|why| {
                Fired::new(format!(
                    "DSpark {why}: SGLang {v} refuses it before loading the model"
                ))
            }),
    );
    let no_path = !ctx.user().given(opt::SPECULATIVE_DRAFT_MODEL_PATH);
    if no_path && ctx.model.is_some_and(|m| !m.bundles_dspark_draft) {
        out.push(Fired::new(format!(
            "DSpark without {}: the checkpoint has no bundled DSpark draft head (no dspark_* keys in its config.json), and SGLang {v} refuses the line; name the DSpark draft checkpoint",
            opt::SPECULATIVE_DRAFT_MODEL_PATH
        )));
    }
    out
}

/// Under attention DP, DSpark takes no attention CP and no draft all-to-all other than the
/// target's (0.5.16+).
fn dspark_dp_layout(ctx: &Context) -> Vec<String> {
    let u = ctx.user();
    if !ctx.dp_attention() {
        return vec![];
    }
    let a2a = ctx.moe_a2a().unwrap_or_else(|| "none".into());
    let draft_a2a = u.given_sval(opt::SPECULATIVE_MOE_A2A_BACKEND);
    holding([
        (
            u.int(opt::ATTN_CP_SIZE).is_some_and(|c| c > 1),
            "with attention DP and attention CP".to_owned(),
        ),
        (
            draft_a2a.as_ref().is_some_and(|d| *d != a2a),
            format!(
                "with attention DP and {} {} other than the target's {a2a}",
                opt::SPECULATIVE_MOE_A2A_BACKEND,
                draft_a2a.clone().unwrap_or_default()
            ),
        ),
    ])
    .collect()
}

/// DSpark's block size (0.5.16+): positive, and the draft tokens, where given, one more.
fn dspark_block(ctx: &Context) -> Option<String> {
    let u = ctx.user();
    let block = u.given_int(opt::SPECULATIVE_DSPARK_BLOCK_SIZE)?;
    let name = opt::SPECULATIVE_DSPARK_BLOCK_SIZE;
    if block <= 0 {
        return Some(format!("with {name} {block}, not positive"));
    }
    let tokens = u
        .given_int(opt::SPECULATIVE_NUM_DRAFT_TOKENS)
        .filter(|t| *t != block + 1)?;
    Some(format!(
        "with {name} {block} and {} {tokens}: the draft tokens must be the block size + 1 ({})",
        opt::SPECULATIVE_NUM_DRAFT_TOKENS,
        block + 1
    ))
}

/// SPEC018: DeepSeek-V4's start-up hook takes only EAGLE (and DSPARK from 0.5.16), and EAGLE
/// only with a top-k given as 1: it runs before SGLang folds the algorithm's case, reads NEXTN
/// as EAGLE or fills the draft's values in, so it judges the algorithm as written.
pub(crate) fn deepseek_v4_draft(ctx: &Context) -> Vec<Fired> {
    // As written: the hook runs before SGLang folds the case, too.
    let Some(algo) = ctx.user().sval(opt::SPECULATIVE_ALGORITHM) else {
        return vec![];
    };
    if ctx.model_arch() != Some(crate::facts::model::deepseek_v4::ARCH) {
        return vec![];
    }
    let v = ctx.version;
    let dspark = crate::sglang::release::at_least(v, "0.5.16");
    let allowed: &[&str] = if dspark {
        &["EAGLE", "DSPARK"]
    } else {
        &["EAGLE"]
    };
    if !allowed.contains(&algo.as_str()) {
        return vec![Fired::new(format!(
            "--speculative-algorithm {algo} for DeepseekV4ForCausalLM: SGLang {v}'s DeepSeek-V4 hook takes only {} and refuses the line before loading the model; use EAGLE with --speculative-eagle-topk 1",
            allowed.join(" or ")
        ))];
    }
    let topk = ctx.user().int(opt::SPECULATIVE_EAGLE_TOPK);
    if algo != "EAGLE" || topk == Some(1) {
        return vec![];
    }
    let given = topk.map_or("not given".to_owned(), |k| format!("{k}"));
    vec![Fired::new(format!(
        "--speculative-algorithm EAGLE for DeepseekV4ForCausalLM with --speculative-eagle-topk {given}: SGLang {v}'s DeepSeek-V4 hook asserts a top-k of 1 before it fills in the draft's values, and refuses the line; add --speculative-eagle-topk 1 --speculative-num-steps 3 --speculative-num-draft-tokens 4"
    ))]
}

/// SPEC021: FlashInfer MLA's multi-step draft backend (and flashmla's and trtllm_mla's, built
/// on it) takes top-k 1 only; 0.4.3.post3–post4's flashinfer_mla serves no speculation at all.
pub(crate) fn mla_draft_topk(ctx: &Context) -> Vec<Fired> {
    let Some(spec) = ctx.server.speculative.as_ref() else {
        return vec![];
    };
    let mla = ctx.model.is_some_and(|m| m.is_mla()) && !ctx.user().flag(opt::DISABLE_MLA);
    let drafted = spec.eagle() || spec.algorithm == "STANDALONE";
    let Some(backend) = draft_backend(ctx).filter(|_| mla && drafted) else {
        return vec![];
    };
    let v = ctx.version;
    if !at_least(v, "0.4.4") {
        return (backend == "flashinfer_mla")
            .then(|| Fired::new(format!(
                "--speculative-algorithm {} with the flashinfer_mla backend (--enable-flashinfer-mla): SGLang {v}'s FlashInfer MLA backend has no target-verify pass (CUDA-graph capture raises 'Invalid mode: forward_mode=TARGET_VERIFY') and its draft worker no such backend; 0.4.4 added both",
                spec.algorithm
            )))
            .into_iter()
            .collect();
    }
    let k = resolved_topk(ctx);
    let steps = ctx.server.spec_params.map_or(1, |p| p.num_steps.value);
    let built_on_it = match backend.as_str() {
        "flashinfer" | "flashinfer_mla" => true,
        "flashmla" => at_least(v, "0.4.6.post5") && !at_least(v, "0.5.2"),
        "trtllm_mla" => at_least(v, "0.5.1") && !at_least(v, "0.5.2"),
        _ => false,
    };
    let one_step = steps <= 1 && at_least(v, "0.5.3.post2");
    if k <= 1 || !built_on_it || one_step {
        return vec![];
    }
    let says = if backend == "flashmla" {
        "FlashMLA"
    } else {
        "Flashinfer MLA"
    };
    vec![Fired::new(format!(
        "speculative top-k {k} with the {backend} draft backend for an MLA model: SGLang {v}'s draft worker raises 'Currently {says} only supports topk=1 for speculative decoding' after the weights load; use --speculative-eagle-topk 1 or another attention backend"
    ))]
}

/// The backend SGLang's draft worker decodes with: `--speculative-draft-attention-backend`,
/// else the decode backend, else the main one, as resolved.
fn draft_backend(ctx: &Context) -> Option<String> {
    let b = &ctx.server.backends;
    ctx.user()
        .sval(opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND)
        .or_else(|| b.decode_attention.as_ref().map(|c| c.value.clone()))
        .or_else(|| b.attention.as_ref().map(|c| c.value.clone()))
}

/// SPEC022: HiSparse with a DeepSeek sparse-attention model's own MTP layers as the draft
/// (0.5.10rc0–0.5.21): the draft worker builds a HiSparse KV pool too, but only the target's
/// allocator registers the pool's index mapping, so the draft's first forward stops.
pub(crate) fn hisparse_mtp_draft(ctx: &Context) -> Vec<Fired> {
    use crate::resolve::DraftSource;
    let Some(spec) = ctx.server.speculative.as_ref() else {
        return vec![];
    };
    let own_layers = spec.draft == DraftSource::Mtp;
    let dsa = ctx.model.is_some_and(|m| m.is_dsa(ctx.version));
    if !(ctx.user().flag(opt::ENABLE_HISPARSE) && own_layers && dsa) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--enable-hisparse with --speculative-algorithm {} on the model's own MTP layers: SGLang {} builds the draft's sparse-attention KV pool as a HiSparse one that is never given its index mapping, and the draft model stops at start-up ('... object has no attribute 'full_to_hisparse_device_index_mapping''); drop the speculative options, or use SGLang 0.5.22 or later, whose draft worker keeps a plain pool",
        spec.algorithm, ctx.version
    ))]
}

/// SPEC023: a DeepSeek NextN draft with DP attention before 0.4.8: the draft's CUDA-graph
/// runner builds its batches without DP attention's gather buffer and token counts, and the
/// draft's decoder layers read them during capture.
pub(crate) fn nextn_draft_dp_attention(ctx: &Context) -> Vec<Fired> {
    use crate::resolve::DraftSource;
    use crate::sglang::release::at_least;
    let Some(spec) = ctx.server.speculative.as_ref() else {
        return vec![];
    };
    let v = ctx.version;
    let u = ctx.user();
    let as_written = u.sval(opt::SPECULATIVE_ALGORITHM).unwrap_or_default();
    let nextn_draft = spec.draft == DraftSource::Mtp || as_written.eq_ignore_ascii_case("NEXTN");
    let deepseek = ctx.model_arch() == Some("DeepseekV3ForCausalLM");
    let dp = ctx.server.defaults.attn_dp_size;
    // SGLang's own step counts for these releases are 3 or 5.
    let steps = u
        .int(opt::SPECULATIVE_NUM_STEPS)
        .or(ctx.server.spec_params.map(|p| p.num_steps.value))
        .unwrap_or(3);
    if !(deepseek && nextn_draft && dp >= 2 && steps >= 2) || ctx.cuda_graph_disabled() {
        return vec![];
    }
    // Paths that never reach the gather buffer in the draft's layers.
    let post5 = v == "0.4.6.post5";
    let deepep = ctx.moe_a2a().as_deref() == Some("deepep");
    let scattered = deepep && at_least(v, "0.4.4.post2") && !post5;
    let dense_local = v == "0.4.6.post4" && u.int(opt::MOE_DENSE_TP_SIZE) == Some(1);
    let no_mla = u.flag(opt::DISABLE_MLA) && !at_least(v, "0.4.4.post1");
    if scattered || dense_local || no_mla {
        return vec![];
    }
    vec![Fired::new(format!(
        "--speculative-algorithm {} drafting with DeepSeek's NextN layers ({steps} steps) and DP attention (DP {dp}): SGLang {v}'s draft CUDA-graph runner gives the draft no DP-attention gather buffer or token counts, and the capture stops in the draft's first DP gather (support came in 0.4.8); use SGLang 0.4.8 or later, --disable-cuda-graph, or drop --enable-dp-attention",
        spec.algorithm
    ))]
}

/// SPEC025: the spec-v2 overlap worker of 0.5.5.post3–0.5.6.post2 drafts a chain: its draft
/// extend after verification reads steps + 1 tokens a request while a tree verifies the draft
/// tokens, and the tensors disagree at the first decode step. 0.5.7 refuses the line instead
/// (SPEC005).
pub(crate) fn spec_v2_tree(ctx: &Context) -> Vec<Fired> {
    use crate::sglang::release::at_least;
    let v = ctx.version;
    let (Some(a), Some(p)) = (ctx.spec_algo(), ctx.server.spec_params) else {
        return vec![];
    };
    let v2 = ctx.env.get("SGLANG_ENABLE_SPEC_V2").is_some_and(env_true);
    let steps = p.num_steps.value;
    let draft = p.num_draft_tokens.value;
    if !at_least(v, "0.5.5.post3")
        || at_least(v, "0.5.7")
        || !matches!(a.as_str(), "EAGLE" | "EAGLE3")
        || !v2
        || !ctx.server.switches.overlap_schedule.on
        || draft == steps.saturating_add(1)
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "{a} with SGLANG_ENABLE_SPEC_V2=1, top-k {} and {draft} draft tokens for {steps} steps: SGLang {v}'s spec-v2 overlap worker drafts chains only, and its draft extend fails on the first decode step (the start-up warmup) with mismatched tensor sizes; use --speculative-eagle-topk 1 with --speculative-num-draft-tokens {}, or leave SGLANG_ENABLE_SPEC_V2 unset",
        p.eagle_topk.value,
        steps.saturating_add(1)
    ))]
}
