//! The attention backends (main, prefill, decode) and the KV page size SGLang settles on, per
//! release, for a CUDA GPU. Model-specific choices and the default choice are data with version
//! ranges; `tests/it/resolution.rs` replays SGLang's own resolution over a grid of models, GPUs and
//! releases.

use super::choice::{Chosen, sglang, user_text};
use super::inputs::Inputs;
use crate::sglang::opt;
use crate::sglang::release::{at_least, within};

/// MHA architectures that got FA3 by default on Hopper: the release each joined the list and,
/// for two that left it, the first release without them. From 0.5.8 every MHA model does.
const FA3_DEFAULT_ARCHS: &[(&str, &str, Option<&str>)] = &[
    ("LlamaForCausalLM", "0.4.5.post1", None),
    ("Qwen2ForCausalLM", "0.4.5.post1", None),
    ("Llama4ForConditionalGeneration", "0.4.5.post1", None),
    ("MistralForCausalLM", "0.4.5.post1", Some("0.4.6.post5")),
    ("Gemma2ForCausalLM", "0.4.5.post3", None),
    ("Gemma3ForConditionalGeneration", "0.4.6", None),
    ("MixtralForCausalLM", "0.4.6.post1", Some("0.4.6.post4")),
    ("Qwen3ForCausalLM", "0.4.6.post1", None),
    ("Qwen3MoeForCausalLM", "0.4.6.post1", None),
    ("Glm4MoeForCausalLM", "0.4.9.post5", None),
    ("Step3VLForConditionalGeneration", "0.4.10.post1", None),
    ("Glm4vMoeForConditionalGeneration", "0.5.1", None),
    ("Olmo2ForCausalLM", "0.5.4", None),
    ("Glm4vForConditionalGeneration", "0.5.6.post1", None),
    ("Qwen3VLForConditionalGeneration", "0.5.6.post1", None),
    ("Qwen3VLMoeForConditionalGeneration", "0.5.6.post1", None),
];

/// The first release that picks FA3 on Hopper when no attention backend is named.
const FA3_DEFAULT_FIRST: &str = "0.4.5.post1";

/// The three attention backends after SGLang's resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attention {
    pub(crate) main: Option<Chosen>,
    pub(crate) prefill: Option<Chosen>,
    pub(crate) decode: Option<Chosen>,
    /// `main` is the model's own default, set before SGLang's generic choice (which later
    /// checks, such as NVFP4's prefill recipe, read as if it had been given).
    pub(crate) by_model: bool,
}

/// SGLang's attention choice. `main` stays `None` where the launcher does not model the
/// platform (no CUDA GPU known).
pub(crate) fn resolve(i: &Inputs) -> Attention {
    let prefill = user_text(i.args, opt::PREFILL_ATTENTION_BACKEND);
    let mut main = user_text(i.args, opt::ATTENTION_BACKEND);
    let decode = user_text(i.args, opt::DECODE_ATTENTION_BACKEND)
        .or_else(|| (main.is_none() && qwen3_vl_large_hopper(i)).then(|| sglang("flashinfer")));
    // Same prefill and decode backend: SGLang makes it the main one.
    if let (Some(p), Some(d)) = (&prefill, &decode)
        && p.value == d.value
        && at_least(i.version, "0.5.1")
    {
        main = Some(p.clone());
    }
    // DeepSeek-V4 runs its own backend, whatever is named.
    if deepseek_v4(i) {
        main = Some(sglang("dsv4"));
    }
    if let Some(b) = legacy_runner_choice(i, main.as_ref()) {
        main = Some(sglang(b));
    }
    let specific = model_specific(i, prefill.is_none() && decode.is_none());
    // A model's own pick (DeepSeek's trtllm_mla on SM100 or DSA backend, GPT-OSS's, Llama 4's)
    // comes before the deterministic choice, which then refuses it (tests/evidence/ATTN013.jsonl).
    let by_model = main.is_none() && specific.is_some();
    if main.is_none() {
        main = specific.or_else(|| deterministic(i)).map(sglang);
    }
    if main.is_none() {
        main = default_backend(i).map(sglang);
    }
    if let Some(m) = &main
        && m.value == "fa3"
        && i.kv_cache_dtype() == "fp8_e5m2"
        && at_least(i.version, "0.4.6")
    {
        main = Some(sglang("triton"));
    }
    let decode = decode.or_else(|| hicache_decode(i, main.as_ref()).map(sglang));
    Attention {
        main,
        prefill,
        decode,
        by_model,
    }
}

/// HiCache's kernel I/O cannot run beside FA3 decoding: 0.5.4.post1–0.5.13 give decode a
/// backend of its own when none is named (0.5.8 on only where decoding would be FA3).
fn hicache_decode(i: &Inputs, main: Option<&Chosen>) -> Option<&'static str> {
    let v = i.version;
    if !at_least(v, "0.5.4.post1") || at_least(v, "0.5.14") || i.model.is_none() {
        return None;
    }
    let offload =
        at_least(v, "0.5.6.post2") && i.flag(opt::DISAGGREGATION_DECODE_ENABLE_OFFLOAD_KVCACHE);
    let direct_layout = i.args.str(opt::HICACHE_MEM_LAYOUT) == Some("page_first_direct");
    let kernel_io = i
        .args
        .str(opt::HICACHE_IO_BACKEND)
        .is_none_or(|b| b == "kernel");
    let fa3 = main.is_some_and(|m| m.value == "fa3");
    let hicache = i.flag(opt::ENABLE_HIERARCHICAL_CACHE) || offload;
    if !hicache || !kernel_io || direct_layout || (at_least(v, "0.5.8") && !fa3) {
        return None;
    }
    // FlashInfer is there on every CUDA install; MLA has FlashInfer's kernels on SM100 only,
    // and from 0.5.11 a model with attention sinks (GPT-OSS) decodes on triton.
    let mla = i.mla && !i.flag(opt::DISABLE_MLA);
    let sinks = i.attention_sinks && at_least(v, "0.5.11");
    Some(if mla && i.cc_major() != Some(10) || !mla && sinks {
        "triton"
    } else {
        "flashinfer"
    })
}

/// Before 0.4.5.post2 the model runner set the backend itself: `--enable-flashinfer-mla` and
/// `--enable-flashmla` named it, and before 0.4.5 an MLA model got triton (or what those flags
/// name) whatever `--attention-backend` said, unless `--disable-mla`.
fn legacy_runner_choice(i: &Inputs, named: Option<&Chosen>) -> Option<&'static str> {
    let v = i.version;
    if at_least(v, "0.4.5.post2") || i.cc_major().is_none() {
        return None;
    }
    let flashinfer = i.args.flag(opt::ENABLE_FLASHINFER_MLA);
    let flashmla = i.args.flag(opt::ENABLE_FLASHMLA);
    if at_least(v, "0.4.5") {
        return (flashinfer.then_some("flashinfer")).or(flashmla.then_some("flashmla"));
    }
    if !legacy_mla(v, i.arch) || i.args.flag(opt::DISABLE_MLA) {
        return None;
    }
    let fa3_kept = v == "0.4.4.post3" && named.is_some_and(|c| c.value == "fa3");
    Some(if flashinfer && at_least(v, "0.4.3.post3") {
        "flashinfer_mla"
    } else if flashinfer && at_least(v, "0.4.3") {
        "flashinfer"
    } else if flashmla && at_least(v, "0.4.4.post2") {
        "flashmla"
    } else if fa3_kept {
        "fa3"
    } else {
        "triton"
    })
}

/// Before 0.4.5 SGLang's model config counts a model as MLA by its architecture alone (the
/// release each joined): a later MLA model such as DeepSeek-V3.2 gets the MHA path there.
const LEGACY_MLA: &[(&str, &str)] = &[
    ("DeepseekV2ForCausalLM", "0.4.0"),
    ("MiniCPM3ForCausalLM", "0.4.0"),
    ("DeepseekV3ForCausalLM", "0.4.1"),
    ("DeepseekV3ForCausalLMNextN", "0.4.3.post1"),
];

/// The model runner of a release before 0.4.5 picks an MLA model's attention backend itself,
/// over whatever ServerArgs holds (`architectures[0]` as `arch`).
pub fn legacy_mla(version: &str, arch: Option<&str>) -> bool {
    !at_least(version, "0.4.5")
        && LEGACY_MLA
            .iter()
            .any(|(a, since)| Some(*a) == arch && at_least(version, since))
}

/// From 0.5.20 SGLang serves Qwen3-VL on Hopper GPUs of 60 GiB and more with its profiled
/// defaults: flashinfer decodes when no attention backend is named.
fn qwen3_vl_large_hopper(i: &Inputs) -> bool {
    const QWEN3_VL: &[&str] = &[
        "Qwen3VLForConditionalGeneration",
        "Qwen3VLMoeForConditionalGeneration",
    ];
    at_least(i.version, "0.5.20")
        && i.multimodal
        && i.cc_major() == Some(9)
        && i.g.is_some_and(|g| g >= 60.0 * 1024.0)
        && i.arch.is_some_and(|a| QWEN3_VL.contains(&a))
}

/// Deterministic inference picks a backend it can run deterministically, before the default.
/// 0.5.4 picks there too, since it names no default before; it has no DeepSeek branch.
fn deterministic(i: &Inputs) -> Option<&'static str> {
    let early = at_least(i.version, "0.5.4") && !at_least(i.version, "0.5.4.post1");
    if !i.deterministic() || !(early || at_least(i.version, DETERMINISTIC_FIRST)) {
        return None;
    }
    let deepseek = !early && i.arch.is_some_and(|a| DEEPSEEK.contains(&a));
    Some(match i.cc_major()? {
        10 | 12 if deepseek => "triton",
        10 | 12 => "flashinfer",
        _ => "fa3",
    })
}

/// The first release whose deterministic-inference choice runs before the default one.
pub(crate) const DETERMINISTIC_FIRST: &str = "0.5.12";

/// From this release SGLang settles PD disaggregation (a decode server's chunk cache) before the
/// model-specific adjustments (`_handle_pd_disaggregation` moved ahead in `__post_init__`;
/// tests/resolution/0.5.11.jsonl).
const PD_FIRST_FROM: &str = "0.5.11";

const DEEPSEEK: &[&str] = &[
    "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM",
    "DeepseekV32ForCausalLM",
];

/// Architecture-specific defaults, checked before the generic one.
fn model_specific(i: &Inputs, none_given: bool) -> Option<&'static str> {
    let arch = i.arch?;
    let cc = i.cc_major()?;
    if hybrid_linear(arch, i.version) && cc == 10 {
        return Some(hybrid_linear_sm100(i));
    }
    if let Some(b) = super::nemotron_h::attention(i, none_given) {
        return Some(b);
    }
    if let Some(b) = mamba_branch_sm100(arch, i.version).filter(|_| cc == 10) {
        return Some(b);
    }
    // 0.5.7–0.5.8: Falcon-H1's and Jet's own branch picks triton, with the radix cache on.
    let early_pick = at_least(i.version, "0.5.7") && early_mamba_radix(i);
    if cc == 10 && FALCON_JET.contains(&arch) && early_pick {
        return Some("triton");
    }
    if dsa(i) && none_given {
        return Some(if at_least(i.version, "0.5.13") {
            "dsa"
        } else {
            "nsa"
        });
    }
    if arch == "DeepseekV3ForCausalLM"
        && cc == 10
        && none_given
        && at_least(i.version, "0.5.3.post2")
    {
        return Some("trtllm_mla");
    }
    // GPT-OSS: picked when no backend is named (before 0.5.3.post1: no main one).
    let gpt_oss_pick = none_given || !at_least(i.version, "0.5.3.post1");
    if arch == "GptOssForCausalLM" && gpt_oss_pick && at_least(i.version, "0.5.0rc0") {
        // 0.5.0rc0 and rc1 pick triton on every GPU.
        let by_gpu = at_least(i.version, "0.5.0rc2");
        return Some(match cc {
            10 if by_gpu => "trtllm_mha",
            9 if by_gpu => "fa3",
            _ => "triton",
        });
    }
    if arch.starts_with("Llama4") {
        return llama4(i.version, cc);
    }
    gemma4(i, arch, cc, none_given)
}

/// Gemma 4's own pick: triton for the VLM class from 0.5.11 when no backend is named; from
/// 0.5.13 for its three classes, trtllm_mha on SM100 (0.5.13 kept triton for a ModelOpt FP4 MoE
/// checkpoint), also when only a prefill or decode backend is named.
fn gemma4(i: &Inputs, arch: &str, cc: u32, none_given: bool) -> Option<&'static str> {
    if at_least(i.version, "0.5.13") && GEMMA4.contains(&arch) {
        let fp4_moe = !at_least(i.version, "0.5.14")
            && i.model.is_some_and(|m| {
                m.quant_method.as_deref() == Some("modelopt_fp4") && m.num_experts.is_some()
            });
        return Some(if cc == 10 && !fp4_moe {
            "trtllm_mha"
        } else {
            "triton"
        });
    }
    let vlm_only = arch == "Gemma4ForConditionalGeneration" && at_least(i.version, "0.5.11");
    (vlm_only && none_given).then_some("triton")
}

/// The Gemma 4 classes SGLang picks an attention backend for (0.5.13+).
pub(crate) const GEMMA4: &[&str] = &[
    "Gemma4ForConditionalGeneration",
    "Gemma4ForCausalLM",
    "Gemma4UnifiedForConditionalGeneration",
];

/// Qwen's hybrid linear-attention models, with the release SGLang starts serving each on triton
/// on SM100 (and giving it the flashinfer_trtllm MoE runner there).
const HYBRID_LINEAR: &[(&str, &str)] = &[
    ("Qwen3NextForCausalLM", "0.5.6"),
    ("Qwen3_5MoeForConditionalGeneration", "0.5.9"),
    ("Qwen3_5ForConditionalGeneration", "0.5.9"),
];

/// One of Qwen's hybrid linear-attention models, from the release SGLang special-cases it.
pub(crate) fn hybrid_linear(arch: &str, version: &str) -> bool {
    HYBRID_LINEAR
        .iter()
        .any(|&(a, since)| a == arch && at_least(version, since))
}

/// Triton, unless SGLang's default would be trtllm_mha and pages larger than one are needed
/// anyway: the Mamba cache's extra buffer asked for, the radix cache off, or a draft model.
/// Before 0.5.10rc0 always triton.
fn hybrid_linear_sm100(i: &Inputs) -> &'static str {
    if !at_least(i.version, "0.5.10rc0") {
        return "triton";
    }
    if hybrid_paged(i) && default_backend(i) == Some("trtllm_mha") {
        "trtllm_mha"
    } else {
        "triton"
    }
}

/// The Mamba cache of a hybrid linear-attention model can take pages: its extra buffer, no
/// radix cache (the user's flag, or from 0.5.11 a PD decode server's chunk cache, which SGLang
/// settles before the backend), or a draft.
fn hybrid_paged(i: &Inputs) -> bool {
    let extra_buffer = mamba_strategies(i).any(|s| s.starts_with("extra_buffer"));
    let pd_decode = at_least(i.version, PD_FIRST_FROM) && i.pd_decode_chunk_cache();
    extra_buffer || i.flag(opt::DISABLE_RADIX_CACHE) || pd_decode || i.spec.is_some()
}

/// 0.5.9–0.5.13 resolve the Mamba scheduler strategy of Qwen's hybrid linear-attention models
/// to `no_buffer` (the user's `extra_buffer` aside) while the radix cache is on.
pub(crate) fn mamba_no_buffer(i: &Inputs) -> bool {
    let v = i.version;
    let Some(arch) = i.arch else {
        return false;
    };
    let member = no_buffer_family(arch, v);
    let extra = i
        .args
        .str(opt::MAMBA_SCHEDULER_STRATEGY)
        .is_some_and(|s| s.starts_with("extra_buffer"));
    let pd_decode = at_least(v, PD_FIRST_FROM) && i.pd_decode_chunk_cache();
    // NemotronH's own branch turns the overlap scheduler off (and a draft's radix cache) on 0.5.8.
    let from = if super::nemotron_h::is(arch, v) {
        "0.5.8"
    } else {
        "0.5.9"
    };
    member
        && at_least(v, from)
        && !at_least(v, "0.5.14")
        && !extra
        && !i.flag(opt::DISABLE_RADIX_CACHE)
        && !pd_decode
}

/// Falcon-H1 and the Jet models, which share a branch of SGLang's argument handling before 0.5.9.
const FALCON_JET: &[&str] = &[
    "FalconH1ForCausalLM",
    "JetNemotronForCausalLM",
    "JetVLMForConditionalGeneration",
];

/// Before 0.5.9 a hybrid's own branch turns the overlap scheduler off while the radix cache is
/// on, a draft or not (and the radix cache off under trtllm_mha): Qwen3-Next on 0.5.5.post2–0.5.7
/// without the extra buffer (0.5.8 misplaces the step), NemotronH on 0.5.7 (0.5.8's is
/// [`mamba_no_buffer`]'s), Falcon-H1 and Jet on 0.5.6.post1–0.5.8 (tests/resolution/0.5.7.jsonl).
pub(crate) fn early_mamba_radix(i: &Inputs) -> bool {
    let Some(arch) = i.arch else {
        return false;
    };
    let (from, until) = match arch {
        "Qwen3NextForCausalLM" => ("0.5.5.post2", "0.5.8"),
        "NemotronHForCausalLM" => ("0.5.7", "0.5.8"),
        a if FALCON_JET.contains(&a) => ("0.5.6.post1", "0.5.9"),
        _ => return false,
    };
    let extra = mamba_strategies(i).any(|s| s.starts_with("extra_buffer"));
    within(i.version, from, Some(until)) && !extra && !i.flag(opt::DISABLE_RADIX_CACHE)
}

/// Whether the hybrid's branch has its trtllm_mha step (the radix cache off, the overlap
/// scheduler kept): every one but 0.5.6's Falcon-H1 / Jet branch.
pub(crate) fn branch_trtllm_step(i: &Inputs) -> bool {
    at_least(i.version, "0.5.7") || !i.arch.is_some_and(|a| FALCON_JET.contains(&a))
}

/// The models 0.5.9–0.5.13 give the `no_buffer` Mamba cache: Qwen's hybrid linear-attention
/// family, Nemotron-H (its own branch does the same on 0.5.8), Falcon-H1, Jet and LFM2, and
/// InternS2-Preview from 0.5.12.
pub(crate) fn no_buffer_family(arch: &str, version: &str) -> bool {
    hybrid_linear(arch, version)
        || super::nemotron_h::is(arch, version)
        || mamba_branch_sm100(arch, version).is_some()
        || (arch == "InternS2PreviewForConditionalGeneration" && at_least(version, "0.5.12"))
}

/// From this release one list names the hybrids that take the Mamba cache's extra buffer; `auto`
/// resolves to `no_buffer` (the overlap scheduler off) for the others while the radix cache is on.
pub(crate) const EXTRA_BUFFER_LIST_FROM: &str = "0.5.14";

/// Hybrids on SGLang's Mamba radix-cache path that no release's extra-buffer list names
/// (0.5.14–0.5.23).
pub(crate) const NEVER_LISTED: &[&str] = &[
    "Lfm2ForCausalLM",
    "JetNemotronForCausalLM",
    "JetVLMForConditionalGeneration",
];

/// The Mamba strategy under its 0.5.14 name and the older one (a release has one or both).
fn mamba_strategies<'a>(i: &'a Inputs) -> impl Iterator<Item = &'a str> {
    [
        opt::MAMBA_RADIX_CACHE_STRATEGY,
        opt::MAMBA_SCHEDULER_STRATEGY,
    ]
    .into_iter()
    .filter_map(|o| i.args.str(o))
}

/// Whether a hybrid on SGLang's Mamba radix-cache path is denied the extra buffer from 0.5.14:
/// off the list, or on a `--linear-attn-backend` other than triton (whose kernels alone keep it).
pub(crate) fn no_extra_buffer(arch: &str, linear_attn_backend: Option<&str>) -> bool {
    NEVER_LISTED.contains(&arch) || linear_attn_backend.is_some_and(|b| b != "triton")
}

/// 0.5.14+: `auto` resolves to `no_buffer` for a model denied the extra buffer, and SGLang turns
/// the overlap scheduler off with it (a draft's included).
pub(crate) fn unlisted_no_buffer(i: &Inputs) -> bool {
    let auto = mamba_strategies(i).all(|s| s == "auto");
    let linear = i.args.str(opt::LINEAR_ATTN_BACKEND);
    i.arch
        .is_some_and(|a| no_buffer_family(a, i.version) && no_extra_buffer(a, linear))
        && at_least(i.version, EXTRA_BUFFER_LIST_FROM)
        && auto
        && !i.flag(opt::DISABLE_RADIX_CACHE)
        && !i.pd_decode_chunk_cache()
}

/// Hybrids whose own branch in SGLang's argument handling takes the Mamba cache path and, on
/// SM100 with no attention backend named, picks one first (first release, backend).
const MAMBA_BRANCH_SM100: &[(&str, &str, &str)] = &[
    ("FalconH1ForCausalLM", "0.5.9", "triton"),
    ("JetNemotronForCausalLM", "0.5.9", "triton"),
    ("JetVLMForConditionalGeneration", "0.5.9", "triton"),
    ("Lfm2ForCausalLM", "0.5.9", "flashinfer"),
];

/// The SM100 backend of a hybrid of [`MAMBA_BRANCH_SM100`] in this release.
fn mamba_branch_sm100(arch: &str, version: &str) -> Option<&'static str> {
    MAMBA_BRANCH_SM100
        .iter()
        .find(|&&(a, from, _)| a == arch && at_least(version, from))
        .map(|&(_, _, b)| b)
}

/// Llama 4: TRT-LLM MHA on SM100 from 0.5.5, and a pick for every GPU from 0.5.6.
fn llama4(version: &str, cc: u32) -> Option<&'static str> {
    match cc {
        10 if at_least(version, "0.5.5") => Some("trtllm_mha"),
        _ if !at_least(version, "0.5.6") => None,
        9 => Some("fa3"),
        _ => Some("triton"),
    }
}

/// SGLang's generic default: by MLA or not, compute capability and release. Without the model's
/// facts it is not known (MLA and the architecture decide it).
fn default_backend(i: &Inputs) -> Option<&'static str> {
    i.model?;
    let cc = i.cc_major()?;
    // Before 0.4.5 the runner's MLA choice (`legacy_runner_choice`) is the only other path.
    if !at_least(i.version, "0.4.5") {
        return Some("flashinfer");
    }
    if !at_least(i.version, FA3_DEFAULT_FIRST) {
        return Some(if i.mla { "triton" } else { "flashinfer" });
    }
    if i.mla {
        // 0.4.5.post1–post3 keep MLA off FA3 under a speculative top-k above 1.
        let fa3_ok = at_least(i.version, "0.4.6") || spec_topk_one_when_chosen(i);
        return Some(match cc {
            9 if fa3_ok => "fa3",
            10 if at_least(i.version, "0.4.10") => "flashinfer",
            _ => "triton",
        });
    }
    let spec_ok = spec_topk_one_when_chosen(i);
    if cc == 9 && spec_ok && fa3_arch(i) {
        return Some("fa3");
    }
    // 0.5.6.post1–0.5.6.post2 test `is_blackwell()` (SM10x and SM12x) and pick trtllm_mha
    // before the speculative top-k is filled in.
    let early_trtllm = at_least(i.version, "0.5.6.post1") && !at_least(i.version, "0.5.7");
    if early_trtllm && super::blackwell_majors(i.version).contains(&cc) && spec_ok {
        return Some("trtllm_mha");
    }
    let topk_known = i.spec.is_none() || i.user_topk.is_some();
    if cc == 10 && spec_ok && topk_known && at_least(i.version, "0.5.6.post1") {
        return Some(if i.asymmetric_kv && at_least(i.version, "0.5.19") {
            "fa4"
        } else {
            "trtllm_mha"
        });
    }
    // FlashInfer has no attention sinks (GPT-OSS): triton instead, from 0.5.12.
    if i.attention_sinks && at_least(i.version, "0.5.12") {
        return Some("triton");
    }
    Some("flashinfer")
}

/// SGLang's "no speculative top-k, or top-k 1 with one-token pages" test where it makes its
/// generic choice: in `ServerArgs` from 0.5.4.post2, before it fills the speculative defaults
/// (the user's top-k); earlier in the model runner, after them (the filled-in top-k).
fn spec_topk_one_when_chosen(i: &Inputs) -> bool {
    if at_least(i.version, CHOSEN_IN_SERVER_ARGS) {
        return i.spec_topk_one_or_unset();
    }
    match super::specparams::resolve(i) {
        None => true,
        Some(p) => p.eagle_topk.value == 1 && i.args.int(opt::PAGE_SIZE).is_none_or(|p| p <= 1),
    }
}

/// The first release whose generic attention choice runs in `ServerArgs`.
pub(crate) const CHOSEN_IN_SERVER_ARGS: &str = "0.5.4.post1";

fn fa3_arch(i: &Inputs) -> bool {
    if at_least(i.version, "0.5.8") {
        return true;
    }
    i.arch.is_some_and(|a| {
        FA3_DEFAULT_ARCHS.iter().any(|(name, since, until)| {
            *name == a
                && at_least(i.version, since)
                && until.is_none_or(|u| !at_least(i.version, u))
        })
    })
}

/// The page sizes a backend takes and the one SGLang forces otherwise (`None`: any).
pub(crate) fn accepted_pages(version: &str, backend: &str) -> Option<(&'static [u64], u64)> {
    Some(match backend {
        "flashmla" => (&[64], 64),
        "cutlass_mla" => (&[128], 128),
        "trtllm_mla" => (&[32, 64], 64),
        // Larger pages run on FlashInfer's dynamic tokens-per-page kernels from 0.5.17.
        "trtllm_mha" if at_least(version, "0.5.17") => (&[16, 32, 64, 128], 64),
        "trtllm_mha" => (&[16, 32, 64], 64),
        _ => return None,
    })
}

/// DeepSeek sparse attention (DeepSeek-V3.2, GLM-5), which SGLang serves from 0.5.3rc2.
fn dsa(i: &Inputs) -> bool {
    dsa_served(i.version, i.model)
}

/// A DeepSeek sparse attention model in a release that serves it as such (0.5.3rc2+).
pub(crate) fn dsa_served(version: &str, model: Option<&crate::facts::model::ModelFacts>) -> bool {
    model.is_some_and(|m| m.is_dsa(version))
}

/// DeepSeek-V4, which SGLang serves from 0.5.12 on its own attention backend with 256-token
/// pages, whatever is given.
pub(crate) fn deepseek_v4(i: &Inputs) -> bool {
    i.arch == Some(crate::facts::model::deepseek_v4::ARCH) && at_least(i.version, "0.5.12")
}

/// The KV page size: the user's (else 1; 64 for DeepSeek sparse attention and 256 for
/// DeepSeek-V4, whatever is given), snapped to what the attention backends accept.
pub(crate) fn page_size(i: &Inputs, a: &Attention) -> u64 {
    let given = i
        .args
        .get(opt::PAGE_SIZE)
        .and_then(serde_json::Value::as_i64);
    let mut page = given.map_or(1, |p| p.max(1) as u64);
    if dsa(i) {
        page = 64;
    }
    if deepseek_v4(i) {
        return 256;
    }
    let name = |c: &Option<Chosen>| c.as_ref().map(|c| c.value.clone());
    let (main, prefill, decode) = (name(&a.main), name(&a.prefill), name(&a.decode));
    for backend in ["flashmla", "cutlass_mla", "trtllm_mla", "trtllm_mha"] {
        let on = |b: &Option<String>| b.as_deref() == Some(backend);
        let used = on(&main) || on(&decode) || (backend == "trtllm_mha" && on(&prefill));
        if let Some((ok, forced)) = accepted_pages(i.version, backend)
            && used
            && !ok.contains(&page)
        {
            page = forced;
        }
    }
    if fa4_forces_page(i, [&main, &prefill, &decode]) {
        page = 128;
    }
    // The Mamba cache without its extra buffer runs one-token pages on 0.5.11–0.5.13, whatever
    // `--page-size` says; from 0.5.14 so does the triton fallback a hybrid model gets on SM100
    // for its radix cache.
    let no_buffer = at_least(i.version, "0.5.11") && mamba_no_buffer(i);
    let hybrid_radix = i.arch.is_some_and(|a| hybrid_linear(a, i.version))
        && i.cc_major() == Some(10)
        && at_least(i.version, "0.5.14")
        && !hybrid_paged(i)
        && a.main
            .as_ref()
            .is_some_and(|m| m.value == "triton" && m.source == super::ChoiceSource::Sglang);
    if no_buffer || hybrid_radix {
        page = 1;
    }
    page
}

/// SGLang sets page size 128 for FA4: from 0.5.4 for FA4 prefill, from 0.5.6 only for a model
/// without MLA, from 0.5.10 only on SM100; from 0.5.15 FA4 in any role counts, and a tree draft
/// the user asks for (`--speculative-eagle-topk` > 1) keeps the page size (its own top-k is
/// filled in later).
fn fa4_forces_page(i: &Inputs, [main, prefill, decode]: [&Option<String>; 3]) -> bool {
    let v = i.version;
    let fa4 = |b: &Option<String>| b.as_deref() == Some("fa4");
    if !at_least(v, "0.5.4") || (at_least(v, "0.5.6") && i.mla) {
        return false;
    }
    if at_least(v, "0.5.10") && i.cc_major() != Some(10) {
        return false;
    }
    if !at_least(v, "0.5.15") {
        return fa4(prefill);
    }
    (fa4(main) || fa4(prefill) || fa4(decode)) && i.user_topk.unwrap_or(0) <= 1
}

#[cfg(test)]
mod gemma4_tests {
    use crate::facts::model::ModelFacts;
    use crate::facts::{Env, Topology};
    use crate::resolve::{Context, Facts};
    use crate::sglang::{SglangArgs, flagset};
    use serde_json::{Value, json};

    /// SGLang's main attention backend for a Gemma 4 class on a fixture box.
    fn main(version: &str, arch: &str, topo: &str, values: &[(&str, Value)]) -> Option<String> {
        let path = format!(
            "{}/tests/fixtures/topologies/{topo}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let topology = Topology::load(std::path::Path::new(&path)).unwrap();
        let args = SglangArgs::with_values(flagset::get(version).unwrap(), values);
        let env = Env::default();
        let model = ModelFacts {
            architecture: Some(arch.into()),
            num_attention_heads: Some(16),
            num_key_value_heads: Some(8),
            ..Default::default()
        };
        let ctx = Context::new(Facts {
            version,
            args: &args,
            env: &env,
            topology: &topology,
            gpus: &[0],
            model: Some(&model),
            draft: None,
            host: None,
            packages: None,
        });
        ctx.server
            .backends
            .attention
            .as_ref()
            .map(|c| c.value.clone())
    }

    /// Read in the wheels: 0.5.11–0.5.12.post1 give Gemma 4's VLM class triton when no backend
    /// is named; from 0.5.13 its classes get trtllm_mha on SM100 and triton elsewhere, also when
    /// only a split backend is named.
    #[test]
    fn gemma4_picks_its_own_backend() {
        let vlm = "Gemma4ForConditionalGeneration";
        let (h100, b200) = ("8x-h100-sxm-nvlink", "8x-b200-nvlink");
        assert_eq!(main("0.5.11", vlm, b200, &[]).as_deref(), Some("triton"));
        assert_eq!(
            main("0.5.13", vlm, b200, &[]).as_deref(),
            Some("trtllm_mha")
        );
        assert_eq!(main("0.5.23", vlm, h100, &[]).as_deref(), Some("triton"));
        let text = "Gemma4ForCausalLM";
        assert_eq!(
            main("0.5.18", text, b200, &[]).as_deref(),
            Some("trtllm_mha")
        );
        let split = [("--prefill-attention-backend", json!("flashinfer"))];
        assert_eq!(main("0.5.18", vlm, h100, &split).as_deref(), Some("triton"));
        // Before 0.5.13 a named split backend leaves the main one to SGLang's generic choice.
        assert_ne!(main("0.5.12", vlm, h100, &split).as_deref(), Some("triton"));
    }

    /// Before 0.4.5 the model runner gives triton to the architectures the release counts as
    /// MLA (read in the wheels), whatever `--attention-backend` says; any other model keeps
    /// ServerArgs' FlashInfer (the resolution goldens record ServerArgs only).
    #[test]
    fn early_runner_picks_mla_backend_by_architecture() {
        let h100 = "8x-h100-sxm-nvlink";
        let v3 = "DeepseekV3ForCausalLM";
        assert_eq!(
            main("0.4.2.post4", v3, h100, &[]).as_deref(),
            Some("triton")
        );
        let named = [("--attention-backend", json!("flashinfer"))];
        assert_eq!(
            main("0.4.4.post1", v3, h100, &named).as_deref(),
            Some("triton")
        );
        // DeepSeek-V3 joined the list in 0.4.1; V3.2 never did before 0.4.5.
        assert_eq!(main("0.4.0", v3, h100, &[]).as_deref(), Some("flashinfer"));
        let v32 = "DeepseekV32ForCausalLM";
        assert_eq!(
            main("0.4.4.post1", v32, h100, &[]).as_deref(),
            Some("flashinfer")
        );
    }
}
