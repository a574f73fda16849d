//! Quantisation formats by architecture.

use super::*;
use crate::facts::model::deepseek_v4::ARCH as V4_ARCH;
use crate::sglang::opt;

fn is_fp8(q: &str) -> bool {
    matches!(q, "fp8" | "w8a8_fp8" | "modelopt_fp8" | "fbgemm_fp8")
}

fn is_nvfp4(q: &str) -> bool {
    matches!(
        q,
        "modelopt_fp4" | "nvfp4" | "modelopt_nvfp4" | "nvfp4_online"
    )
}

pub(super) fn source(ctx: &Context) -> &'static str {
    if ctx.quant_given().is_some() {
        opt::QUANTIZATION
    } else {
        "checkpoint quant_method"
    }
}

/// SGLang serves this FP8 model on SM80–SM88 anyway, running the linear layers weight-only
/// through Marlin. MoE experts have no FP8 Marlin path in any checked release (Fp8MoEMethod's
/// triton fused-MoE kernel needs fp8e4nv), so MoE models never qualify.
fn marlin_fallback(ctx: &Context, q: &str) -> bool {
    use crate::sglang::release::at_least;
    if ctx.model_is_moe() {
        return false;
    }
    let vllm = ctx.packages.is_some_and(|p| p.get("vllm").is_some());
    match q {
        // fp8.py: Fp8LinearMethod sets use_marlin from can_auto_enable_marlin_fp8()
        // (80 <= sm < 89): over vLLM's Marlin ops from 0.5.1 (skipped without vLLM), over
        // SGLang's own from 0.5.6; 0.4.x only on SGLANG_FORCE_FP8_MARLIN.
        "fp8" => at_least(ctx.version, "0.5.6") || (at_least(ctx.version, "0.5.1") && vllm),
        // fpgemm_fp8.py: the same auto-enable over SGLang's own Marlin ops.
        "fbgemm_fp8" => at_least(ctx.version, "0.5.5"),
        _ => false,
    }
}

/// The first release whose loader refusals below the FP8 and NVFP4 methods' minimum capability
/// the goldens record (the check is older; MXFP4's reach back to 0.5.0rc2, the first release
/// with GPT-OSS the goldens run).
const LOADER_MIN_CC_FROM: &str = "0.4.5.post3";

/// The first release whose ModelOpt readers take config.json's flat quantisation block (older
/// ones look for `hf_quant_config.json`'s `quantization` key: QUANT036). From it a ModelOpt FP8
/// checkpoint named there is refused below 8.9; one whose `hf_quant_config.json` holds it is
/// refused below 8.9 from 0.4.5.post3.
const MODELOPT_FLAT_FROM: &str = "0.5.1";

/// The first release with the W4A-FP8 method (9.0 and newer).
const W4AFP8_FROM: &str = "0.4.9.post1";

/// The minimum compute capability SGLang's loader demands of a method (its
/// `get_min_capability`), for the methods and releases the goldens cover.
fn loader_min_cc(ctx: &Context, q: &str) -> Option<(u32, u32)> {
    use crate::sglang::release::at_least;
    let v = ctx.version;
    if q == "mxfp4" {
        return at_least(v, "0.5.0rc0").then_some((8, 0));
    }
    if !at_least(v, LOADER_MIN_CC_FROM) {
        return None;
    }
    match q {
        "fp8" => Some((8, 0)),
        "w8a8_fp8" => Some((8, 9)),
        "w4afp8" if at_least(v, W4AFP8_FROM) => Some((9, 0)),
        "modelopt_fp8" if at_least(v, MODELOPT_FLAT_FROM) || in_hf_quant_config(ctx) => {
            Some((8, 9))
        }
        // ModelOptFp4Config asks for 10.0 until 0.5.13, 8.0 from then.
        "modelopt_fp4" if !nvfp4_read_as_nvfp4(ctx) => None,
        "modelopt_fp4" if at_least(v, "0.5.13") => Some((8, 0)),
        "modelopt_fp4" => Some((10, 0)),
        // The mixed-precision method asks what the NVFP4 one does: a Nemotron-H export's from
        // 0.5.10rc0, any model's from 0.5.15 (goldens on 0.5.10rc0 to 0.5.15 and 0.5.21 to
        // 0.5.23; 0.5.16 to 0.5.20 return the same minimum, read in their wheels).
        "modelopt_mixed" if at_least(v, "0.5.13") => Some((8, 0)),
        "modelopt_mixed" => Some((10, 0)),
        _ => None,
    }
}

/// The checkpoint's quantisation comes from `hf_quant_config.json`. Facts that do not say where
/// the method came from count as config.json's, which older releases read in another layout.
fn in_hf_quant_config(ctx: &Context) -> bool {
    ctx.model
        .is_some_and(|m| m.checkpoint_quant_method.is_some() && m.config_quant_method.is_none())
}

/// The release's loader takes a ModelOpt NVFP4 checkpoint with its NVFP4 method: with
/// `--quantization modelopt_fp4`; kept in `hf_quant_config.json`, by itself from 0.4.8
/// (earlier releases read that file as FP8 only: QUANT026); in config.json, from 0.5.10.post1
/// (the goldens' first release that reads it there).
fn nvfp4_read_as_nvfp4(ctx: &Context) -> bool {
    use crate::sglang::release::at_least;
    if ctx.quant_given().as_deref() == Some("modelopt_fp4") {
        return true;
    }
    let from = if in_hf_quant_config(ctx) {
        "0.4.8"
    } else {
        "0.5.10.post1"
    };
    at_least(ctx.version, from)
}

/// 0.5.1 (the first to read config.json's flat ModelOpt block) to 0.5.9 take a checkpoint whose
/// config.json says `quant_method: modelopt` with the generic method, ModelOpt's FP8 one; from
/// 0.5.4 a `--quantization modelopt` given is moved to the NVFP4 one by its `quant_algo`, and
/// 0.5.10rc0 reparses the checkpoint by it.
fn config_nvfp4_read_as_fp8(ctx: &Context, named: Option<&str>) -> bool {
    use crate::sglang::release::at_least;
    let v = ctx.version;
    let in_config = ctx
        .model
        .is_some_and(|m| m.config_quant_method.as_deref() == Some("modelopt"));
    let generic = named.is_none() || named == Some("modelopt") && !at_least(v, "0.5.4");
    in_config && generic && at_least(v, MODELOPT_FLAT_FROM) && !at_least(v, "0.5.10rc0")
}

/// FP8 in effect on GPUs before SM89 that the loader itself does not refuse (QUANT010's): the
/// quantisation and the GPUs, when any.
fn fp8_on_old_gpus<'c>(ctx: &'c Context) -> Option<(String, Vec<&'c crate::facts::Gpu>)> {
    let q = ctx.quant().filter(|q| is_fp8(q))?;
    let floor = loader_min_cc(ctx, &q);
    let bad = ctx.gpus_where(|cc| cc < (8, 9) && floor.is_none_or(|f| cc >= f));
    (!bad.is_empty()).then_some((q, bad))
}

/// Block FP8 from 0.4.1 (its first release) to 0.5.0rc2: the linear method turns Marlin off for
/// block-quantised weights, and below SM 8.9 only Triton's block kernel is left, which quantises
/// the activations to an FP8 type those GPUs lack. 0.5.1's automatic Marlin takes blocks.
const BLOCK_FP8_MARLIN_FROM: &str = "0.5.1";

/// The SM 8.0–8.8 GPUs a dense block-FP8 checkpoint runs on in a release without Marlin for it.
fn block_fp8_without_marlin<'c>(ctx: &'c Context) -> Option<Vec<&'c crate::facts::Gpu>> {
    use crate::sglang::release::at_least;
    let block = ctx.model.and_then(|m| m.weight_block_size).is_some();
    let early = at_least(ctx.version, "0.4.1") && !at_least(ctx.version, BLOCK_FP8_MARLIN_FROM);
    if !block || !early || ctx.model_is_moe() || ctx.quant().as_deref() != Some("fp8") {
        return None;
    }
    let bad = ctx.gpus_where(|cc| ((8, 0)..(8, 9)).contains(&cc));
    (!bad.is_empty()).then_some(bad)
}

/// QUANT035: a dense block-FP8 checkpoint on SM 8.0–8.8 before 0.5.1.
pub(crate) fn fp8_block_dense_pre_ada(ctx: &Context) -> Vec<Fired> {
    let Some(bad) = block_fp8_without_marlin(ctx) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{}; a block-FP8 checkpoint (weight_block_size): SGLang {} runs its linear layers only \
         through Triton's block-FP8 kernel (no Marlin for blocks before {BLOCK_FP8_MARLIN_FROM}), \
         which needs compute capability 8.9 ('fp8e4nv not supported in this architecture' at the \
         first forward); use SGLang {BLOCK_FP8_MARLIN_FROM} or later, a BF16, AWQ/GPTQ or INT8 \
         checkpoint, or GPUs of compute capability 8.9 or newer",
        Context::describe(&bad),
        ctx.version
    ))]
}

/// A compressed-tensors checkpoint with FP8 W8A8 groups (the FP8 and FP8-dynamic presets):
/// SGLang's own compressed-tensors MoE method (0.4.4.post2 on) runs those experts through the
/// same Triton FP8 kernels, with no Marlin path, in every release.
fn ct_fp8_on_old_gpus<'c>(ctx: &'c Context) -> Option<(String, Vec<&'c crate::facts::Gpu>)> {
    use crate::facts::model::quant::CompressedScheme;
    let m = super::quant_ct::compressed_model(ctx)?;
    let own_method = crate::sglang::release::at_least(ctx.version, "0.4.4.post2");
    // An export that leaves the routed experts out of the scheme runs them unquantised.
    let experts_ignored =
        (m.quant_ignored.iter()).any(|p| p.contains("experts") && !p.contains("shared_experts"));
    let fp8 = m.compressed_schemes.contains(&CompressedScheme::Fp8W8a8);
    if !own_method || !fp8 || experts_ignored {
        return None;
    }
    let bad = ctx.gpus_where(|cc| cc < (8, 9));
    (!bad.is_empty()).then(|| ("compressed-tensors (FP8 W8A8)".to_string(), bad))
}

/// QUANT010: the loader's own refusal of a method below its minimum capability.
pub(crate) fn below_loader_min_cc(ctx: &Context) -> Vec<Fired> {
    let Some(q) = ctx.quant() else {
        return vec![];
    };
    let Some(floor) = loader_min_cc(ctx, &q) else {
        return vec![];
    };
    let bad = ctx.gpus_where(|cc| cc < floor);
    let Some((major, minor)) = bad.first().and_then(|g| g.cc()) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{}; {} {q}: SGLang {}'s loader refuses it before loading the weights ('… is not \
         supported for the current GPU. Minimum capability: {}{}. Current capability: \
         {major}{minor}.'); use a BF16, AWQ/GPTQ or INT8 checkpoint",
        Context::describe(&bad),
        source(ctx),
        ctx.version,
        floor.0,
        floor.1,
    ))]
}

/// QUANT026: a ModelOpt NVFP4 checkpoint that keeps its quantisation in `hf_quant_config.json`,
/// without `--quantization modelopt_fp4`, on a release that reads that file with its ModelOpt
/// FP8 method only: the method refuses any other `quant_algo`, on every GPU.
pub(crate) fn nvfp4_read_as_fp8(ctx: &Context) -> Vec<Fired> {
    let nvfp4 = ctx
        .model
        .is_some_and(|m| m.checkpoint_quant_method.as_deref() == Some("modelopt_fp4"));
    // Another method than ModelOpt's named is QUANT009's refusal.
    let named = ctx.quant_given();
    let file = nvfp4 && in_hf_quant_config(ctx) && !nvfp4_read_as_nvfp4(ctx);
    let config = nvfp4 && config_nvfp4_read_as_fp8(ctx, named.as_deref());
    if !(file || config) || named.as_deref().is_some_and(|q| q != "modelopt") {
        return vec![];
    }
    let whose = if file {
        "whose hf_quant_config.json names it"
    } else {
        "whose config.json names it `modelopt`"
    };
    let fired = Fired::new(format!(
        "an NVFP4 checkpoint {whose}, without {q} modelopt_fp4: SGLang {}'s generic ModelOpt \
         method is its FP8 one, which refuses it on every GPU ('ModelOpt only supports static \
         FP8 quantization in SGLang'); name the method with {q} modelopt_fp4",
        ctx.version,
        q = opt::QUANTIZATION,
    ));
    // The user's own --quantization modelopt stays theirs.
    match named {
        Some(_) => vec![fired],
        None => vec![fired.with_fix(set_arg(opt::QUANTIZATION, "modelopt_fp4"))],
    }
}

/// QUANT038: a ModelOpt mixed-precision export kept in `hf_quant_config.json`, before the
/// release that reads it as W4A-FP8: its ModelOpt readers take FP8 or NVFP4 only.
pub(crate) fn modelopt_mixed_read_as_fp8(ctx: &Context) -> Vec<Fired> {
    let mixed = ctx
        .model
        .and_then(|m| m.hf_quant.as_ref())
        .is_some_and(|h| h.mixed_precision());
    // Another method named is QUANT009's refusal.
    let named = ctx.quant_given();
    let modelopt = named.as_deref().is_none_or(|q| q.starts_with("modelopt"));
    if !mixed || !modelopt {
        return vec![];
    }
    vec![Fired::new(format!(
        "a ModelOpt mixed-precision checkpoint (hf_quant_config.json's quant_algo MIXED_PRECISION): \
         SGLang {}'s ModelOpt readers take FP8 or NVFP4 only and stop before loading a weight \
         ('ModelOpt only supports static FP8 quantization in SGLang'); run SGLang 0.4.9.post1 or \
         later, the first that reads it (as W4A-FP8)",
        ctx.version
    ))]
}

/// QUANT036: config.json names the checkpoint `modelopt`, on a release whose ModelOpt config
/// readers look only for `hf_quant_config.json`'s `quantization` key (before 0.5.1).
pub(crate) fn modelopt_config_block_unread(ctx: &Context) -> Vec<Fired> {
    let in_config = ctx.model.is_some_and(|m| {
        m.config_quant_method.as_deref() == Some("modelopt") && !m.config_quant_nested
    });
    // Another method named is QUANT009's refusal.
    let named = ctx.quant_given();
    let modelopt = named.as_deref().is_none_or(|q| q.starts_with("modelopt"));
    if !in_config || !modelopt {
        return vec![];
    }
    vec![Fired::new(format!(
        "a ModelOpt checkpoint whose config.json names it `modelopt`: SGLang {}'s ModelOpt config \
         readers take only hf_quant_config.json's layout and stop before loading a weight \
         ('Cannot find any of ['quantization'] in the model's quantization config'); run SGLang \
         0.5.1 or later, the first that reads config.json's block",
        ctx.version
    ))]
}

/// QUANT001: FP8 MoE experts on GPUs before SM89 (Triton's fp8e4nv kernels; reports pin it).
pub(crate) fn fp8_pre_ada(ctx: &Context) -> Vec<Fired> {
    let fp8 = fp8_on_old_gpus(ctx).or_else(|| ct_fp8_on_old_gpus(ctx));
    let Some((q, bad)) = fp8.filter(|_| ctx.model_is_moe()) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{}; {} {q} on a MoE model: FP8 MoE experts need FP8 tensor cores ('fp8e4nv not supported in this architecture'); use a BF16, AWQ/GPTQ or INT8 checkpoint",
        Context::describe(&bad),
        source(ctx)
    ))]
}

/// QUANT007: FP8 on a dense (or unknown) model on GPUs before SM89 without a Marlin fallback.
pub(crate) fn fp8_pre_ada_dense(ctx: &Context) -> Vec<Fired> {
    let Some((q, bad)) = fp8_on_old_gpus(ctx).filter(|_| !ctx.model_is_moe()) else {
        return vec![];
    };
    // Dense FP8 runs on Ampere through Marlin where the release has it.
    let marlin_capable = bad.iter().all(|g| g.cc().is_some_and(|c| c >= (8, 0)));
    if (marlin_capable && marlin_fallback(ctx, &q)) || block_fp8_without_marlin(ctx).is_some() {
        return vec![];
    }
    let why = match q.as_str() {
        "w8a8_fp8" | "modelopt_fp8" => {
            "SGLang's loader requires compute capability 8.9 for this method".to_string()
        }
        "fp8" if marlin_capable && !crate::sglang::release::at_least(ctx.version, "0.5.1") => format!(
            "SGLang {} has no automatic Marlin fallback, so FP8 kernels need compute capability 8.9 ('fp8e4nv not supported in this architecture')",
            ctx.version
        ),
        "fp8" if marlin_capable => format!(
            "SGLang {}'s Marlin fallback imports vLLM's kernels, and vllm is {}, so FP8 kernels need compute capability 8.9",
            ctx.version,
            if ctx.packages.is_some() { "not installed" } else { "not known to be installed" }
        ),
        _ => "FP8 kernels need compute capability 8.9 or newer ('fp8e4nv not supported in this architecture')".to_string(),
    };
    vec![Fired::new(format!(
        "{}; {} {q}: {why}; use a BF16, AWQ/GPTQ or INT8 checkpoint",
        Context::describe(&bad),
        source(ctx)
    ))]
}

pub(crate) fn fp4_pre_blackwell(ctx: &Context) -> Vec<Fired> {
    // Where the loader itself refuses the method, QUANT010 says so.
    let Some(q) = ctx
        .quant()
        .filter(|q| is_nvfp4(q) && loader_min_cc(ctx, q).is_none())
    else {
        return vec![];
    };
    let bad = ctx.gpus_where(|(m, _)| m < 10);
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} {q}: NVFP4 GEMMs need Blackwell (compute capability 10.x/12.x) in SGLang {}",
        Context::describe(&bad),
        source(ctx),
        ctx.version
    ))]
}

pub(crate) fn nvfp4_sm12x(ctx: &Context) -> Vec<Fired> {
    let Some(q) = ctx.quant().filter(|q| is_nvfp4(q)) else {
        return vec![];
    };
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    if sm12.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} {q}: FlashInfer's SM120 FP4 GEMM has returned zeros (cutlass) or errors in some releases; run an accuracy smoke test before serving",
        Context::describe(&sm12),
        source(ctx)
    ))]
}

pub(crate) fn fp8_sm12x(ctx: &Context) -> Vec<Fired> {
    let Some(q) = ctx.quant().filter(|q| is_fp8(q) || q == "mxfp8") else {
        return vec![];
    };
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    if sm12.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} {q}: block-scaled FP8 GEMM/MoE paths in SGLang {} cover SM90/SM100 only",
        Context::describe(&sm12),
        source(ctx),
        ctx.version
    ))]
}

pub(crate) fn dsa_kv_dtype(ctx: &Context) -> Vec<Fired> {
    use crate::sglang::release::at_least;
    // GLM-5's DSA architecture joins DeepSeek's sparse-attention defaults at 0.5.9.
    let glm5 = ctx.model_arch() == Some("GlmMoeDsaForCausalLM")
        && ctx.model.is_some_and(|m| m.is_dsa(ctx.version))
        && at_least(ctx.version, "0.5.9");
    if ctx.model_arch() != Some("DeepseekV32ForCausalLM") && !glm5 {
        return vec![];
    }
    let Some(kv) = ctx.kv_cache_dtype() else {
        return vec![];
    };
    if ["auto", "bf16", "bfloat16", "fp8_e4m3"].contains(&kv) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} (sparse DSA attention) with --kv-cache-dtype {kv}: its indexer cache supports bf16 or fp8_e4m3 only",
        if glm5 { "GLM-5" } else { "DeepSeek-V3.2" }
    ))]
}

/// QUANT011: SGLang's argument check holds the FlashInfer CUTLASS MoE runner to ModelOpt FP4
/// (0.4.8 to 0.5.5), then to ModelOpt FP4/FP8 or unquantised weights (0.5.6+).
pub(crate) fn flashinfer_cutlass_moe(ctx: &Context) -> Vec<Fired> {
    use crate::sglang::release::at_least;
    let u = ctx.user();
    let how = if ctx.named_moe_runner().as_deref() == Some("flashinfer_cutlass") {
        format!("{} flashinfer_cutlass", opt::MOE_RUNNER_BACKEND)
    } else if u.flag(opt::ENABLE_FLASHINFER_CUTLASS_MOE) {
        opt::ENABLE_FLASHINFER_CUTLASS_MOE.to_string()
    } else if u.flag(opt::ENABLE_FLASHINFER_MOE) && !at_least(ctx.version, "0.4.10") {
        opt::ENABLE_FLASHINFER_MOE.to_string()
    } else {
        return vec![];
    };
    let q = checked_quantization(ctx);
    // Without the model's facts an unset quantisation says nothing: the checkpoint may be the
    // ModelOpt FP4 one the runner takes.
    if q.is_none() && ctx.model.is_none() {
        return vec![];
    }
    // From 0.5.10rc0 SGLang moves MXFP8 off a runner outside its MXFP8 list, this one included,
    // to the TensorRT-LLM runner before it checks.
    if q.as_deref() == Some("mxfp8") && at_least(ctx.version, "0.5.10rc0") {
        return vec![];
    }
    let (ok, takes) = if at_least(ctx.version, "0.5.6") {
        (
            matches!(
                q.as_deref(),
                None | Some("modelopt_fp4" | "modelopt_fp8" | "modelopt_mixed")
            ),
            "ModelOpt FP4 or FP8 checkpoints, or unquantised weights",
        )
    } else {
        (
            q.as_deref() == Some("modelopt_fp4"),
            "--quantization modelopt_fp4 only",
        )
    };
    if ok {
        return vec![];
    }
    let quant = q.map_or("unquantised weights".to_string(), |q| {
        format!("quantisation {q}")
    });
    vec![Fired::new(format!(
        "{how} with {quant}: SGLang {}'s argument check asserts this MoE runner takes {takes}, before the server starts; use the default MoE runner (or one made for this quantisation)",
        ctx.version
    ))]
}

/// The quantisation SGLang's argument check sees: `--quantization`, else the checkpoint's
/// method only where ServerArgs copies it in, which it does on SM10x GPUs for the architectures
/// it tunes there (DeepSeek-V3 and its kin, the Qwen3 MoE family, GLM-4 MoE); elsewhere the
/// field stays unset and the check passes it.
pub(crate) fn checked_quantization(ctx: &Context) -> Option<String> {
    if let Some(q) = ctx.quant_given() {
        return Some(q);
    }
    if !reads_checkpoint_method(ctx) {
        return None;
    }
    // An unquantised DeepSeek-V3 checkpoint is taken as its native FP8 there, until 0.5.11 looks
    // for FP8 weights in its files (a BF16 one stays unquantised).
    let deepseek = ctx.model_arch() == Some("DeepseekV3ForCausalLM")
        && !crate::sglang::release::at_least(ctx.version, "0.5.11");
    ctx.quant().or_else(|| deepseek.then(|| "fp8".to_owned()))
}

/// QUANT012: online NVFP4 quantisation, which SGLang runs on SM100 only and with the TRT-LLM
/// MoE runners only.
pub(crate) fn nvfp4_online(ctx: &Context) -> Vec<Fired> {
    if ctx.quant().as_deref() != Some("nvfp4_online") {
        return vec![];
    }
    let v = ctx.version;
    let mut out = vec![];
    let bad = ctx.gpus_where(|(m, _)| m != 10);
    if !bad.is_empty() {
        out.push(Fired::new(format!(
            "{}; {} nvfp4_online: SGLang {v} runs online NVFP4 on SM100/SM103 (B200, B300, GB200) only and refuses the line",
            Context::describe(&bad),
            opt::QUANTIZATION
        )));
    }
    let runner = ctx.user().sval(opt::MOE_RUNNER_BACKEND);
    if let Some(r) = runner.filter(|r| {
        !matches!(
            r.as_str(),
            "auto" | "flashinfer_trtllm" | "flashinfer_trtllm_routed"
        )
    }) {
        out.push(Fired::new(format!(
            "{} nvfp4_online with {} {r}: SGLang {v} takes only flashinfer_trtllm or flashinfer_trtllm_routed with it",
            opt::QUANTIZATION,
            opt::MOE_RUNNER_BACKEND
        )));
    }
    out
}

/// The quantisations SGLang's argument check lets the FlashInfer TRT-LLM MoE runner take, by
/// release (`None` in the list: unquantised weights); `None`: the release has no such check.
fn trtllm_moe_takes(version: &str) -> Option<Vec<Option<&'static str>>> {
    use crate::sglang::release::at_least;
    if !at_least(version, "0.5.2") {
        return None;
    }
    let mut takes = vec![Some("modelopt_fp4"), Some("fp8")];
    let added: [(&str, &[Option<&'static str>]); 4] = [
        ("0.5.4.post2", &[Some("modelopt_fp8")]),
        ("0.5.7", &[Some("compressed-tensors"), None]),
        ("0.5.10rc0", &[Some("mxfp8"), Some("modelopt_mixed")]),
        ("0.5.14", &[Some("nvfp4_online")]),
    ];
    for (since, more) in added {
        if at_least(version, since) {
            takes.extend_from_slice(more);
        }
    }
    Some(takes)
}

/// The model families whose checkpoint method SGLang copies into `--quantization` on SM100
/// before its MoE checks: DeepSeek-V3 from 0.5.5, the DeepSeek-style and Qwen3 MoE families
/// from 0.5.6, GLM-4 MoE from 0.5.8 (tests/evidence/QUANT013.jsonl, QUANT011.jsonl, EP009.jsonl).
fn reads_checkpoint_method(ctx: &Context) -> bool {
    const FAMILIES: &[&str] = &[
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "KimiK25ForConditionalGeneration",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "GlmMoeDsaForCausalLM",
        "Qwen3MoeForCausalLM",
        "Qwen3VLMoeForConditionalGeneration",
        "Qwen3NextForCausalLM",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration",
    ];
    let majors = ctx.majors();
    let arch = ctx.model_arch();
    // GLM-4 MoE, served since 0.4.9.post5, gets the copy from 0.5.8.
    let from = match arch {
        Some("DeepseekV3ForCausalLM") => "0.5.5",
        Some("Glm4MoeForCausalLM") => "0.5.8",
        _ => "0.5.6",
    };
    let family = arch.is_some_and(|a| a == "Glm4MoeForCausalLM" || FAMILIES.contains(&a));
    !majors.is_empty()
        && majors.iter().all(|&m| m == 10)
        && family
        && crate::sglang::release::at_least(ctx.version, from)
}

/// QUANT013: the FlashInfer TRT-LLM MoE runner with a quantisation the release's argument check
/// does not take. Before 0.5.6 the check sees only `--quantization`; from 0.5.6 the checkpoint's
/// own method too.
pub(crate) fn flashinfer_trtllm_moe(ctx: &Context) -> Vec<Fired> {
    use crate::sglang::release::at_least;
    let v = ctx.version;
    let runner = ctx.named_moe_runner();
    let named = match runner.as_deref() {
        Some(r @ "flashinfer_trtllm") => r.to_owned(),
        Some(r @ "experimental_sgl_trtllm") if at_least(v, "0.5.13") => r.to_owned(),
        _ => return vec![],
    };
    let Some(takes) = trtllm_moe_takes(v) else {
        return vec![];
    };
    let sourced = ctx.server.quantization_sourced();
    // Without --quantization SGLang reads the checkpoint's method only for the model families
    // it tunes on SM100; elsewhere the check sees none (an FP8 DeepSeek on H100 or L40S is
    // refused on 0.5.6.post2, which does not yet take unquantised weights).
    let checked = checked_quantization(ctx);
    let q = checked.as_deref();
    // Unknown model, no option: the checkpoint may be one the runner takes (from 0.5.6).
    if q.is_none() && ctx.model.is_none() && at_least(v, "0.5.6") {
        return vec![];
    }
    if takes.contains(&q) {
        return vec![];
    }
    let listed: Vec<&str> = takes.iter().map(|t| t.unwrap_or("bfloat16")).collect();
    let unread = sourced
        .filter(|s| q.is_none() && !s.given())
        .map(|s| s.value.as_str());
    let quant = match (q, unread) {
        (Some(q), _) => format!("quantisation {q}"),
        (None, Some(m)) if takes.contains(&Some(m)) => format!(
            "no {}: SGLang {v} checks it before reading the checkpoint's {m}, so add {} {m}",
            opt::QUANTIZATION,
            opt::QUANTIZATION
        ),
        (None, Some(m)) => format!("the checkpoint's {m}"),
        (None, None) => "unquantised weights".to_owned(),
    };
    vec![Fired::new(format!(
        "{} {named} with {quant}; SGLang {v}'s argument check takes only {} there and refuses the line before the server starts",
        opt::MOE_RUNNER_BACKEND,
        listed.join(", ")
    ))]
}

/// QUANT014: DeepSeek-V4's hook takes fp8_e4m3 (and bfloat16 from 0.5.14) as written; `auto`
/// becomes fp8_e4m3.
pub(crate) fn deepseek_v4_kv_dtype(ctx: &Context) -> Vec<Fired> {
    if ctx.model_arch() != Some(V4_ARCH) {
        return vec![];
    }
    let Some(kv) = ctx.kv_cache_dtype() else {
        return vec![];
    };
    let allowed: &[&str] = if crate::sglang::release::at_least(ctx.version, "0.5.14") {
        &["auto", "fp8_e4m3", "bfloat16"]
    } else {
        &["auto", "fp8_e4m3"]
    };
    if allowed.contains(&kv) {
        return vec![];
    }
    vec![Fired::new(format!(
        "DeepseekV4ForCausalLM with --kv-cache-dtype {kv}: SGLang {}'s DeepSeek-V4 hook takes only {} (as written) and refuses the line before loading the model; leave it unset (SGLang picks fp8_e4m3)",
        ctx.version,
        allowed[1..].join(" or ")
    ))]
}

/// QUANT015: before 0.5.19 DeepSeek-V4's packed FP4 experts reach the Triton MoE kernel on
/// GPUs without DeepGEMM's UE8M0 path; the fix names Marlin when no runner was given.
pub(crate) fn deepseek_v4_triton_experts(ctx: &Context) -> Vec<Fired> {
    let official = ctx
        .model
        .is_some_and(|m| m.deepseek_v4_official().is_some());
    let runner = ctx.server.backends.moe_runner.as_ref();
    let runner_value = runner.map_or("auto", |c| c.value.as_str());
    let a2a = ctx.moe_a2a().is_some_and(|a| a != "none");
    if !official || a2a || !matches!(runner_value, "auto" | "triton") {
        return vec![];
    }
    if ctx.env.truthy("SGLANG_DSV4_FP4_DEQUANT") {
        return vec![];
    }
    let gpus = ctx.gpus_where(|(major, _)| major == 8 || major == 9);
    if gpus.is_empty() {
        return vec![];
    }
    let fired = Fired::new(format!(
        "DeepSeek-V4's MXFP4 experts with MoE runner {runner_value} on {}: SGLang {} hands the packed experts to the Triton MoE kernel, which stops at the first forward pass (a reported 0.5.12 start failed without Marlin and started with it); use --moe-runner-backend marlin",
        Context::describe(&gpus),
        ctx.version
    ));
    if ctx.user().given(opt::MOE_RUNNER_BACKEND) {
        return vec![fired];
    }
    vec![fired.with_fix(set_arg(opt::MOE_RUNNER_BACKEND, "marlin"))]
}

/// QUANT016: DeepGEMM's packed-FP4 grouped GEMM is SM100-only; DeepSeek-V4's MXFP4 experts reach
/// it on Hopper through the deep_gemm runner or `auto` with DeepEP, Mooncake or NIXL.
pub(crate) fn deepseek_v4_deepgemm_sm90(ctx: &Context) -> Vec<Fired> {
    let official = ctx
        .model
        .is_some_and(|m| m.deepseek_v4_official().is_some());
    if !official || ctx.env.truthy("SGLANG_DSV4_FP4_DEQUANT") {
        return vec![];
    }
    let runner = ctx.server.backends.moe_runner.as_ref();
    let runner_value = runner.map_or("auto", |c| c.value.as_str());
    let a2a = ctx.moe_a2a().unwrap_or_default();
    let jit_off = ctx
        .env
        .get("SGLANG_ENABLE_JIT_DEEPGEMM")
        .is_some_and(|v| !env_true(v));
    let deepgemm = runner_value == "deep_gemm"
        || (runner_value == "auto"
            && ["deepep", "mooncake", "nixl"].contains(&a2a.as_str())
            && !jit_off);
    let gpus = ctx.gpus_where(|(major, _)| major == 9);
    if !deepgemm || gpus.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "DeepSeek-V4's MXFP4 experts through DeepGEMM (MoE runner {runner_value}, all-to-all {a2a}) on {}: SGLang {} hands the packed FP4 experts to DeepGEMM's grouped GEMM, which asserts an SM100 GPU, and the start fails at CUDA-graph capture; drop the all-to-all backend and use --moe-runner-backend marlin",
        Context::describe(&gpus),
        ctx.version
    ))]
}

/// QUANT018: 0.4.4.post2 to 0.5.3rc1 pick compressed-tensors' W8A8-INT8 scheme by a class name
/// they never import.
pub(crate) fn compressed_int8_unimported(ctx: &Context) -> Vec<Fired> {
    if !compressed_int8(ctx) {
        return vec![];
    }
    vec![Fired::new(format!(
        "a compressed-tensors W8A8-INT8 checkpoint: SGLang {} builds its scheme from a class it never imports (NameError: name 'CompressedTensorsW8A8Int8' is not defined) while loading the model; 0.5.3rc2 imports it",
        ctx.version
    ))]
}

/// QUANT019: 0.5.3rc2 to 0.5.6 ask compressed-tensors' W8A8-INT8 scheme for compute capability
/// 8.9, which its INT8 kernels do not need (0.5.7 asks for 8.0).
pub(crate) fn compressed_int8_pre_ada(ctx: &Context) -> Vec<Fired> {
    let bad = ctx.gpus_where(|cc| cc < (8, 9));
    if !compressed_int8(ctx) || bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; a compressed-tensors W8A8-INT8 checkpoint: SGLang {} asks its scheme for compute capability 8.9 ('Min capability: 89') while loading the model; 0.5.7 asks for 8.0",
        Context::describe(&bad),
        ctx.version
    ))]
}

/// The checkpoint is compressed-tensors W8A8-INT8 and is loaded as such.
fn compressed_int8(ctx: &Context) -> bool {
    ctx.model.is_some_and(|m| m.compressed_w8a8_int8)
        && ctx.quant().as_deref() == Some("compressed-tensors")
}

/// QUANT020: a ROCm build of the release refuses a method outside its own list.
pub(crate) fn rocm_refused(ctx: &Context) -> Vec<Fired> {
    let amd = ctx.topology.accelerators.iter().any(|a| a.vendor == "amd");
    let Some(q) = ctx.quant().filter(|_| amd && ctx.topology.gpus.is_empty()) else {
        return vec![];
    };
    if !crate::sglang::quant_compat::rocm_refuses(ctx.version, &q) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} on an AMD GPU host: SGLang {}'s model config refuses it on ROCm ('{q} quantization is currently not supported in ROCm') while it resolves its arguments",
        source_of(ctx, &q),
        ctx.version
    ))]
}

/// How the method came to be in effect, for the message.
fn source_of(ctx: &Context, q: &str) -> String {
    match ctx.quant_given() {
        Some(_) => format!("--quantization {q}"),
        None => format!("the checkpoint's quantisation {q}"),
    }
}

/// QUANT023: the FlashInfer CuteDSL MoE runner takes NVFP4 MoE weights only, and the release's
/// argument check reads the quantisation field as `checked_quantization` does: 0.5.11 takes
/// `modelopt_fp4`; 0.5.15 also a hybrid FP8 + NVFP4 checkpoint, 0.5.16 `modelopt_mixed`, 0.5.18
/// `nvfp4_online` (tests/evidence/QUANT023.jsonl).
pub(crate) fn flashinfer_cutedsl_moe(ctx: &Context) -> Vec<Fired> {
    use crate::sglang::release::at_least;
    let v = ctx.version;
    if ctx.user().sval(opt::MOE_RUNNER_BACKEND).as_deref() != Some("flashinfer_cutedsl") {
        return vec![];
    }
    if ctx.model.is_some_and(|m| m.nvfp4_moe_hybrid) && at_least(v, "0.5.15") {
        return vec![];
    }
    let q = checked_quantization(ctx);
    // An unset field says nothing without the model's facts, or for an NVFP4 checkpoint (the
    // copy into the field may reach it by a path not modelled here).
    let nvfp4_checkpoint = matches!(
        ctx.quant().as_deref(),
        Some("modelopt_fp4" | "modelopt_mixed")
    );
    if q.is_none() && (ctx.model.is_none() || nvfp4_checkpoint) {
        return vec![];
    }
    let mut takes = vec!["modelopt_fp4"];
    if at_least(v, "0.5.16") {
        takes.push("modelopt_mixed");
    }
    if at_least(v, "0.5.18") {
        takes.push("nvfp4_online");
    }
    if q.as_deref().is_some_and(|q| takes.contains(&q)) {
        return vec![];
    }
    let quant = q.map_or("unquantised weights".to_string(), |q| {
        format!("quantisation {q}")
    });
    vec![Fired::new(format!(
        "--moe-runner-backend flashinfer_cutedsl with {quant}: SGLang {v}'s argument check asserts this MoE runner takes {} only ('Invalid quantization'), before the server starts; use an NVFP4 (ModelOpt) checkpoint with it, or leave the MoE runner to SGLang",
        takes.join(", ")
    ))]
}
