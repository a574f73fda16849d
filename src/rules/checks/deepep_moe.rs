//! Which MoE layers DeepEP's layer class can run: from 0.5.4.post2 it keeps expert paths only for
//! block FP8 (through JIT DeepGEMM), W4AFP8, NVFP4 with the CuTe DSL runner and, later, BF16 and
//! MXFP4 on the DeepGEMM runner; any other layer reaches a removed kernel path. The class is built
//! for Mooncake's, NIXL's and pplx's all-to-all too, which hand it DeepEP's low-latency format.

use super::*;
use crate::resolve::DraftSource;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// Architectures whose MoE blocks take their layer class from SGLang's MoE-implementation
/// chooser in every release from 0.5.4.post2 that has them (so `--moe-a2a-backend deepep` builds
/// DeepEP's); Qwen3-Next, Qwen3-VL-MoE and Qwen3.5-MoE through Qwen2/Qwen3-MoE's blocks, GLM-5
/// and Mistral Large 3 as DeepSeek-V2/V3 subclasses.
const DEEPEP_CLASS_ARCHS: [&str; 22] = [
    "BailingMoEForCausalLM",
    "BailingMoeForCausalLM",
    "BailingMoeV2ForCausalLM",
    "DeepseekV2ForCausalLM",
    "DeepseekV32ForCausalLM",
    "DeepseekV3ForCausalLM",
    "Ernie4_5_ForCausalLM",
    "Ernie4_5_MoeForCausalLM",
    "Glm4MoeForCausalLM",
    "Glm4MoeLiteForCausalLM",
    "GlmMoeDsaForCausalLM",
    "GptOssForCausalLM",
    "LongcatFlashForCausalLM",
    "MiniMaxM2ForCausalLM",
    "MistralLarge3ForCausalLM",
    "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM",
    "Qwen3NextForCausalLM",
    "Qwen3VLMoeForConditionalGeneration",
    "Qwen3_5MoeForCausalLM",
    "Qwen3_5MoeForConditionalGeneration",
    "Step3VLForConditionalGeneration",
];

/// The all-to-all backends SGLang builds DeepEP's layer class for, wherever the release offers
/// them (DeepEP v2's layers always take the modern path, and AMD's MORI is passed through).
const DEEPEP_CLASS_A2A: [&str; 4] = ["deepep", "mooncake", "nixl", "pplx"];

/// Whether `a2a` builds DeepEP's layer class.
fn builds_deepep_class(a2a: &str) -> bool {
    DEEPEP_CLASS_A2A.contains(&a2a)
}

/// Turns FP8 dispatch off for BF16 layers, which then take the modern path (0.5.12+, with JIT
/// DeepGEMM).
const BF16_DISPATCH_ENV: &str = "SGLANG_DEEPEP_BF16_DISPATCH";

/// Makes a DeepSeek NVFP4 checkpoint's BF16 NextN experts FP8 when the draft runs DeepGEMM.
const NEXTN_FP8_ENV: &str = "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE";

/// Unquantized MoE layers the line builds on DeepEP's layer class: whose they are, the
/// all-to-all and the option that puts them there, and the runner they run on.
struct Layers {
    whose: String,
    a2a: String,
    a2a_by: &'static str,
    runner: String,
}

/// EP035: an unquantized MoE layer on DeepEP's all-to-all with a runner DeepEP's layer class has
/// no BF16 path for: the target's experts of a BF16 checkpoint, or the BF16 NextN experts a
/// DeepSeek NVFP4 checkpoint keeps for its own MTP draft.
pub(crate) fn unquantized_layers(ctx: &Context) -> Vec<Fired> {
    [target_layers(ctx), nextn_draft_layers(ctx)]
        .into_iter()
        .flatten()
        .filter(|l| !runs_bf16(ctx, l))
        .map(|l| fired(ctx, &l))
        .collect()
}

/// The target's architecture and all-to-all, where its experts are built as DeepEP's layer
/// class: a MoE of a listed architecture on an all-to-all that builds that class.
fn deepep_target<'a>(ctx: &'a Context) -> Option<(&'a str, String)> {
    let arch = ctx.model_arch()?;
    let a2a = ctx.moe_a2a().filter(|a| builds_deepep_class(a))?;
    (ctx.model_is_moe() && DEEPEP_CLASS_ARCHS.contains(&arch)).then_some((arch, a2a))
}

/// The target's experts, where the checkpoint and the line leave them unquantized.
fn target_layers(ctx: &Context) -> Option<Layers> {
    let (arch, a2a) = deepep_target(ctx).filter(|_| ctx.quant().is_none())?;
    Some(Layers {
        whose: format!("{arch}'s unquantized experts"),
        a2a,
        a2a_by: opt::MOE_A2A_BACKEND,
        runner: super::ep::moe_runner(ctx),
    })
}

/// A DeepSeek NVFP4 checkpoint's own NextN layer as an EAGLE draft: SGLang builds its experts
/// unquantized, on the draft's all-to-all and runner (the target's unless the speculative ones
/// are named). Checked from 0.5.10rc0: 0.5.7 to 0.5.9 moved that draft to Triton without an
/// all-to-all on Blackwell themselves, and older releases are left out.
fn nextn_draft_layers(ctx: &Context) -> Option<Layers> {
    let spec = ctx.server.speculative.as_ref()?;
    let deepseek_fp4 = ctx.model_arch() == Some("DeepseekV3ForCausalLM")
        && ctx.quant().as_deref() == Some("modelopt_fp4");
    let own_nextn = spec.eagle() && spec.draft == DraftSource::Mtp;
    if !(own_nextn && deepseek_fp4 && at_least(ctx.version, "0.5.10rc0")) {
        return None;
    }
    let u = ctx.user();
    let named = u.given_sval(opt::SPECULATIVE_MOE_A2A_BACKEND);
    let a2a_by = match named {
        Some(_) => opt::SPECULATIVE_MOE_A2A_BACKEND,
        None => opt::MOE_A2A_BACKEND,
    };
    let a2a = named.or_else(|| ctx.moe_a2a());
    let runner = (u.given_sval(opt::SPECULATIVE_MOE_RUNNER_BACKEND))
        .unwrap_or_else(|| super::ep::moe_runner(ctx));
    let fp8_experts = ctx.env.get(NEXTN_FP8_ENV).is_some_and(env_true) && runner == "deep_gemm";
    let a2a = a2a.filter(|a| builds_deepep_class(a) && !fp8_experts)?;
    Some(Layers {
        whose: "the BF16 experts of the NVFP4 checkpoint's own NextN draft layer".into(),
        a2a,
        a2a_by,
        runner,
    })
}

/// DeepEP's layer class runs BF16 experts: with FP8 dispatch turned off (0.5.12+), or on the
/// DeepGEMM runner behind DeepEP (0.5.13+; to 0.5.16 only where the mode includes low-latency
/// dispatch) or pplx (every release with it); Mooncake's and NIXL's have no BF16 path.
fn runs_bf16(ctx: &Context, l: &Layers) -> bool {
    let bf16_dispatch = ctx.env.get(BF16_DISPATCH_ENV).is_some_and(env_true);
    if bf16_dispatch && at_least(ctx.version, "0.5.12") {
        return true;
    }
    let low_latency = ctx.deepep_mode() != Some("normal");
    let deepep = l.a2a == "deepep"
        && at_least(ctx.version, "0.5.13")
        && (low_latency || at_least(ctx.version, "0.5.17"));
    l.runner == "deep_gemm" && (deepep || l.a2a == "pplx")
}

/// Whether the first forward reaches the layers through DeepEP's normal dispatch: DeepEP's
/// normal mode, or no decode graphs to capture first; the other all-to-alls deliver only the
/// low-latency format.
fn normal_first(ctx: &Context, a2a: &str) -> bool {
    a2a == "deepep" && (ctx.deepep_mode() == Some("normal") || ctx.cuda_graph_disabled())
}

/// What stops: the decode graphs' capture runs DeepEP's low-latency dispatch first; without
/// graphs (normal mode turns them off) the first prefill runs its normal dispatch.
fn fired(ctx: &Context, l: &Layers) -> Fired {
    let normal = l.a2a == "deepep" && ctx.deepep_mode() == Some("normal");
    let new_paths = at_least(ctx.version, "0.5.13");
    let error = match (normal_first(ctx, &l.a2a), new_paths) {
        // Before 0.5.13 the layer asks for the CuTe DSL runner's NVFP4 config when it is built
        // for low-latency dispatch, and these layers have none.
        (_, false) if l.runner == "flashinfer_cutedsl" && !normal => {
            "AttributeError: 'NoneType' object has no attribute 'get_name'"
        }
        (false, _) => "AssertionError: forward_deepgemm_masked is deprecated",
        (true, false) => "AssertionError: forward_deepgemm_contiguous is deprecated",
        (true, true) => {
            "NotImplementedError: Unquantized DeepEP MoE currently supports low_latency mode only"
        }
    };
    let remedy = match (l.a2a.as_str(), new_paths) {
        ("deepep", true) => {
            "run them on --moe-runner-backend deep_gemm (with --deepep-mode auto or low_latency before 0.5.17), use an FP8 checkpoint, or leave the all-to-all at none"
        }
        ("pplx", _) => {
            "run them on --moe-runner-backend deep_gemm, use an FP8 checkpoint, or leave the all-to-all at none"
        }
        ("deepep", false) => {
            "use an FP8 checkpoint, or leave the all-to-all at none (SGLang 0.5.13 added a BF16 path on the DeepGEMM runner)"
        }
        _ => "use an FP8 checkpoint, or leave the all-to-all at none",
    };
    Fired::new(format!(
        "{} {} with {} on the {} MoE runner: SGLang {}'s DeepEP layer class, which it builds for this all-to-all, has no kernel path left for them, and the first MoE forward stops ('{error}'); {remedy}",
        l.a2a_by, l.a2a, l.whose, l.runner, ctx.version
    ))
}

/// EP036: the target's experts quantised by a method DeepEP's layer class has no path for, or
/// whose path needs a runner (or JIT DeepGEMM) the line does not give it.
pub(crate) fn quantized_layers(ctx: &Context) -> Vec<Fired> {
    let (Some((arch, a2a)), Some(method)) = (deepep_target(ctx), ctx.quant()) else {
        return vec![];
    };
    let runner = super::ep::moe_runner(ctx);
    let Some(lacks) = quant_path_lacks(ctx, &method, &runner) else {
        return vec![];
    };
    let kernel = if normal_first(ctx, &a2a) {
        "contiguous"
    } else {
        "masked"
    };
    vec![Fired::new(format!(
        "--moe-a2a-backend {a2a} with {arch}'s {method} experts on the {runner} MoE runner: SGLang {}'s DeepEP layer class, which it builds for this all-to-all, runs them only {lacks}, and start-up stops once the layers are built or, at the latest, at their first forward ('AssertionError: forward_deepgemm_{kernel} is deprecated'); leave --moe-a2a-backend at none, or serve a block-FP8 checkpoint",
        ctx.version
    ))]
}

/// What the method's path in DeepEP's layer class needs and the line lacks (`None`: it runs).
/// The Humming runner (0.5.16+) takes every method.
fn quant_path_lacks(ctx: &Context, method: &str, runner: &str) -> Option<&'static str> {
    let v = ctx.version;
    if runner == "humming" && at_least(v, "0.5.16") {
        return None;
    }
    match method {
        // `nvfp4_online`'s path (0.5.17 only) is left unjudged.
        "w4afp8" | "nvfp4_online" => None,
        "fp8" => super::arch::deepgemm_turned_off(ctx)
            .map(|_| "with JIT DeepGEMM, which the line turns off"),
        "modelopt_fp4" | "modelopt_mixed" => {
            let mixed_ok = method == "modelopt_fp4" || at_least(v, "0.5.16");
            (runner != "flashinfer_cutedsl" || !mixed_ok).then_some(
                "on the flashinfer_cutedsl runner (ModelOpt mixed precision from 0.5.16)",
            )
        }
        "mxfp4" => (runner != "deep_gemm" || !at_least(v, "0.5.17"))
            .then_some("on the deep_gemm runner, from 0.5.17"),
        _ => Some("when they are block FP8, W4AFP8, NVFP4 or, later, MXFP4 or BF16"),
    }
}
