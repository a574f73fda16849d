//! The MoE runner and all-to-all backends SGLang settles on. The runner stays `auto` (picked
//! per layer when the model loads) except where a model-specific rule names one.

use super::choice::{ChoiceSource, Chosen, sglang, user_text};
use super::inputs::Inputs;
use crate::facts::Env;
use crate::facts::model::ModelFacts;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// The all-to-all backend: the one SGLang forces ([`super::a2a::forced`]), else the user's (or
/// 0.4.x/0.5.2's `--enable-deepep-moe`), else none.
pub(crate) fn a2a(i: &Inputs) -> Option<Chosen> {
    if !i.args.knows(opt::MOE_A2A_BACKEND) && !i.args.knows(opt::ENABLE_DEEPEP_MOE) {
        return None;
    }
    if let Some(forced) = i.forced_a2a {
        return Some(sglang(forced));
    }
    if let Some(u) = user_text(i.args, opt::MOE_A2A_BACKEND) {
        return Some(u);
    }
    if i.flag(opt::ENABLE_DEEPEP_MOE) {
        return Some(Chosen {
            value: "deepep".into(),
            source: ChoiceSource::User,
        });
    }
    // The release's default: "none" from 0.5.x, unset (null) in 0.4.x.
    super::choice::text(i.args, opt::MOE_A2A_BACKEND).map(|v| sglang(&v))
}

/// The MoE runner; `None` for a release without `--moe-runner-backend` or a model without
/// experts.
pub(crate) fn runner(i: &Inputs, moe_model: bool) -> Option<Chosen> {
    if !i.args.knows(opt::MOE_RUNNER_BACKEND) {
        return None;
    }
    if let Some(forced) = gpt_oss_forced(i).or_else(|| super::nemotron_h::forced_runner(i)) {
        return Some(sglang(forced));
    }
    if let Some(u) = user_text(i.args, opt::MOE_RUNNER_BACKEND).filter(|c| c.value != "auto") {
        return Some(u);
    }
    if !moe_model {
        return None;
    }
    // The model's pick reads the backend named, before Waterfill or Mega MoE's variable
    // replace it.
    let named = super::choice::text(i.args, opt::MOE_A2A_BACKEND);
    let no_a2a = named.is_none_or(|v| v == "none") && !i.flag(opt::ENABLE_DEEPEP_MOE);
    Some(sglang(model_runner(i, no_a2a).unwrap_or("auto")))
}

/// DeepEP's dispatch mode (`None`: DeepEP is not the all-to-all backend): the user's, else
/// `auto`. From 0.5.17 SGLang turns `auto` into `low_latency` for the CuteDSL runner, whose
/// DeepEP entry takes only low-latency dispatch output.
pub(crate) fn deepep_mode(
    i: &Inputs,
    a2a: Option<&Chosen>,
    runner: Option<&Chosen>,
) -> Option<String> {
    if a2a.is_none_or(|a| a.value != "deepep") {
        return None;
    }
    let mode = user_text(i.args, opt::DEEPEP_MODE).map_or_else(|| "auto".into(), |c| c.value);
    let cutedsl = runner.is_some_and(|r| r.value == "flashinfer_cutedsl");
    if mode == "auto" && cutedsl && at_least(i.version, "0.5.17") {
        return Some("low_latency".into());
    }
    Some(mode)
}

fn model_runner(i: &Inputs, no_a2a: bool) -> Option<&'static str> {
    let arch = i.arch?;
    let cc = i.cc_major()?;
    let q = i.quant();
    let v = i.version;
    // DeepSeek-V3.2 too: releases whose transformers lacks its model type load it as
    // DeepSeek-V3, and from 0.5.12 it is on the list by name (tests/resolution/0.5.10.post1.jsonl).
    // 0.5.4–0.5.5 leave DeepSeek's sparse-attention models out of this branch.
    let dsa_left_out = !at_least(v, "0.5.6") && i.model.is_some_and(|m| m.is_dsa(v));
    let deepseek =
        ["DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"].contains(&arch) && !dsa_left_out;
    if deepseek && cc == 10 && at_least(v, "0.5.4") {
        return deepseek_sm100(i, q, no_a2a);
    }
    if arch == crate::facts::model::deepseek_v4::ARCH {
        return deepseek_v4(i, cc, no_a2a);
    }
    if arch == "GptOssForCausalLM" && at_least(v, "0.5.1") {
        return gpt_oss(v, cc, q == Some("mxfp4"));
    }
    if super::nemotron_h::is(arch, v) {
        return super::nemotron_h::runner(i, cc, no_a2a);
    }
    if arch.starts_with("Llama4") && cc == 10 && at_least(v, "0.5.5") {
        return matches!(q, Some("fp8" | "modelopt_fp8")).then_some("flashinfer_trtllm");
    }
    let qwen = QWEN_MOE.contains(&arch) || super::attention::hybrid_linear(arch, v);
    if qwen && cc == 10 && no_a2a && at_least(v, "0.5.6") {
        let unquantised_too = at_least(v, "0.5.8");
        let ok = match q {
            Some("modelopt_mixed") => at_least(v, "0.5.20"),
            Some(q) => ["fp8", "modelopt_fp4"].contains(&q),
            None => unquantised_too,
        };
        return ok.then_some("flashinfer_trtllm");
    }
    None
}

/// DeepSeek's MoE runner on SM100: for a ModelOpt FP4 method named on the command line (0.5.4),
/// always (0.5.4.post1), without an all-to-all backend (0.5.4.post2), and from 0.5.5 only for the
/// FP8 and ModelOpt methods (DeepSeek's native FP8 when the checkpoint names none).
fn deepseek_sm100(i: &Inputs, q: Option<&str>, no_a2a: bool) -> Option<&'static str> {
    let v = i.version;
    let runner = Some("flashinfer_trtllm");
    if !at_least(v, "0.5.4.post1") {
        let named = user_text(i.args, opt::QUANTIZATION);
        return named.filter(|c| c.value == "modelopt_fp4").and(runner);
    }
    if !at_least(v, "0.5.4.post2") {
        return runner;
    }
    if !no_a2a {
        return None;
    }
    let q = q.unwrap_or("fp8");
    let fits = !at_least(v, "0.5.5") || ["fp8", "modelopt_fp8", "modelopt_fp4"].contains(&q);
    fits.then_some("flashinfer_trtllm")
}

/// 0.5.1–0.5.4.post3 give GPT-OSS's MXFP4 experts FlashInfer's MXFP4 runner on Blackwell
/// whatever `--moe-runner-backend` says (SM100; SM120 too from 0.5.4.post2); 0.5.5 keeps a
/// runner the user names.
fn gpt_oss_forced(i: &Inputs) -> Option<&'static str> {
    let v = i.version;
    let window = at_least(v, "0.5.1") && !at_least(v, "0.5.5");
    let blackwell = match i.cc_major()? {
        10 => true,
        12 => at_least(v, "0.5.4.post2"),
        _ => false,
    };
    let mxfp4 = i.arch == Some("GptOssForCausalLM") && i.quant() == Some("mxfp4");
    (window && blackwell && mxfp4).then_some("flashinfer_mxfp4")
}

/// GPT-OSS with an MXFP4 checkpoint on Blackwell: FlashInfer's MXFP4 kernels; SM120 used the
/// triton_kernels package in 0.5.10rc0–0.5.13.post1 and Marlin in 0.5.14–0.5.16. Elsewhere the
/// triton_kernels fallback needs that package, which a `pip install sglang` does not bring:
/// the runner stays `auto`.
fn gpt_oss(v: &str, cc: u32, mxfp4: bool) -> Option<&'static str> {
    let sm120_triton = at_least(v, "0.5.10rc0") && !at_least(v, "0.5.14");
    let sm120_marlin = at_least(v, "0.5.14") && !at_least(v, "0.5.17");
    match cc {
        _ if !mxfp4 => None,
        10 => Some("flashinfer_mxfp4"),
        12 if sm120_triton => Some("triton_kernel"),
        12 if sm120_marlin => Some("marlin"),
        12 if at_least(v, "0.5.4.post2") => Some("flashinfer_mxfp4"),
        _ => None,
    }
}

/// DeepSeek-V4: NVIDIA's FP8+NVFP4 exports take the routed TRT-LLM runner on every GPU from
/// 0.5.14, whatever the all-to-all backend. Any other checkpoint on SM120: Marlin in
/// 0.5.13–0.5.15, FlashInfer's MXFP4 runner in 0.5.16–0.5.18. From 0.5.19 the official checkpoint
/// (MXFP4 experts) takes FlashInfer's MXFP4 runner on SM90, SM100 and SM120 without an
/// all-to-all backend or `SGLANG_DSV4_FP4_DEQUANT`. Elsewhere `auto`.
fn deepseek_v4(i: &Inputs, cc: u32, no_a2a: bool) -> Option<&'static str> {
    let v = i.version;
    if let Some(runner) = deepseek_v4_nvfp4_runner(i.model, v) {
        return Some(runner);
    }
    let official = i.model.is_some_and(|m| m.deepseek_v4_official().is_some());
    let mxfp4 = official && no_a2a && !i.env.truthy("SGLANG_DSV4_FP4_DEQUANT");
    match cc {
        9 | 10 | 12 if at_least(v, "0.5.19") => mxfp4.then_some("flashinfer_mxfp4"),
        12 if at_least(v, "0.5.16") => Some("flashinfer_mxfp4"),
        12 if at_least(v, "0.5.13") => Some("marlin"),
        _ => None,
    }
}

/// The runner SGLang's DeepSeek-V4 arguments pick, when none is named, for NVIDIA's FP8+NVFP4
/// exports (their NVFP4 MoE metadata): the routed TRT-LLM runner from 0.5.14.
fn deepseek_v4_nvfp4_runner(model: Option<&ModelFacts>, version: &str) -> Option<&'static str> {
    (deepseek_v4_nvfp4(model) && at_least(version, "0.5.14")).then_some("flashinfer_trtllm_routed")
}

/// NVIDIA's DeepSeek-V4 export: NVFP4 experts in a block-FP8 config.
pub(crate) fn deepseek_v4_nvfp4(model: Option<&ModelFacts>) -> bool {
    model.is_some_and(|m| {
        m.architecture.as_deref() == Some(crate::facts::model::deepseek_v4::ARCH)
            && m.deepseek_v4.as_ref().is_some_and(|l| l.nvfp4_experts)
    })
}

const QWEN_MOE: &[&str] = &["Qwen3MoeForCausalLM", "Qwen3VLMoeForConditionalGeneration"];

/// The variable that sets DeepEP's low-latency dispatch budget, tokens per rank.
pub(crate) const DEEPEP_DISPATCH_VAR: &str = "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK";

/// DeepEP's low-latency dispatch budget as SGLang reads it: the variable, else 128.
pub(crate) fn deepep_dispatch_tokens(env: &Env) -> i64 {
    env.get(DEEPEP_DISPATCH_VAR)
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or(128)
}

/// DeepEP's default normal-mode configs (its `Buffer.get_dispatch_config` and
/// `get_combine_config`), by group size: NVLink receive tokens per channel, and the RDMA send
/// tokens of dispatch and of combine. DeepEP asserts on any other group size.
pub(crate) const DEEPEP_NORMAL_CONFIGS: [(u64, f64, f64, f64); 10] = [
    (2, 256.0, 6.0, 6.0),
    (4, 256.0, 6.0, 6.0),
    (8, 256.0, 6.0, 6.0),
    (16, 288.0, 20.0, 28.0),
    (24, 288.0, 32.0, 20.0),
    (32, 288.0, 32.0, 20.0),
    (64, 288.0, 28.0, 20.0),
    (128, 560.0, 32.0, 12.0),
    (144, 720.0, 12.0, 8.0),
    (160, 720.0, 12.0, 8.0),
];

/// The default normal-mode config for this group size, if DeepEP has one.
pub(crate) fn deepep_normal_config(ranks: u64) -> Option<(f64, f64, f64)> {
    DEEPEP_NORMAL_CONFIGS
        .iter()
        .find(|c| c.0 == ranks)
        .map(|&(_, nvl, d, c)| (nvl, d, c))
}
