//! Architecture gates: kernels that exist for some compute capabilities only
//! (FlashInfer all-reduce fusion, trtllm-gen, DeepGEMM, torch symmetric memory).

use super::*;
use crate::rules::Fix;
use crate::sglang::opt;
use crate::sglang::release::at_least;

const FUSION_FLAGS: &[&str] = &[
    opt::ENABLE_FLASHINFER_ALLREDUCE_FUSION,
    opt::FLASHINFER_ALLREDUCE_FUSION_BACKEND,
];

/// The fusion options the user gave (flag on, or a backend chosen).
fn fusion_given(ctx: &Context) -> Vec<&'static str> {
    FUSION_FLAGS
        .iter()
        .copied()
        .filter(|o| {
            if *o == opt::ENABLE_FLASHINFER_ALLREDUCE_FUSION {
                ctx.user().flag(o)
            } else {
                ctx.user().given(o)
            }
        })
        .collect()
}

fn remove_all(opts: &[&str]) -> Fix {
    Fix {
        summary: format!("removed {}", opts.join(", ")),
        args: opts
            .iter()
            .map(|o| crate::rules::ArgEdit::Remove {
                option: (*o).into(),
            })
            .collect(),
        env: vec![],
    }
}

/// Fusion kernels exist for CC 9.x and 10.x only.
fn fusion_unsupported(ctx: &Context) -> Option<(Vec<&'static str>, String)> {
    let given = fusion_given(ctx);
    // Fusion wraps TP all-reduces: nothing runs at TP 1.
    if given.is_empty()
        || ctx.tp() < 2
        || ctx
            .args
            .flag(opt::ENFORCE_DISABLE_FLASHINFER_ALLREDUCE_FUSION)
    {
        return None;
    }
    let bad = ctx.gpus_where(|(m, _)| m != 9 && m != 10);
    if bad.is_empty() {
        return None;
    }
    Some((given, Context::describe(&bad)))
}

/// The releases whose fusion auto-enable gate let SM12x through, per model: GPT-OSS's tested
/// `is_blackwell_supported()` (SM10x and SM12x) from 0.5.4.post2; 0.5.7's shared gate did so
/// for all four models; 0.5.8 tests SM90/SM100 only. DeepSeek's own gate before 0.5.7 was SM100.
fn fusion_auto_on_sm12x_in(arch: &str, version: &str) -> bool {
    let range = match arch {
        "GptOssForCausalLM" => ">=0.5.4.post2,<0.5.8",
        "DeepseekV3ForCausalLM" | "Glm4MoeForCausalLM" | "Qwen3MoeForCausalLM" => ">=0.5.7,<0.5.8",
        _ => return false,
    };
    crate::rules::versions::version_matches(range, version)
}

fn fusion_auto_on_sm12x(ctx: &Context) -> Option<String> {
    let arch = ctx
        .model_arch()
        .filter(|a| fusion_auto_on_sm12x_in(a, ctx.version))?;
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    let auto = !sm12.is_empty()
        && ctx.tp() > 1
        && ctx.nnodes() == 1
        && !ctx.dp_attention()
        && ctx.moe_a2a().is_none()
        && !ctx.user().flag(opt::ENABLE_FLASHINFER_ALLREDUCE_FUSION)
        && !ctx
            .args
            .flag(opt::ENFORCE_DISABLE_FLASHINFER_ALLREDUCE_FUSION);
    auto.then(|| {
        format!(
            "{}; SGLang {} auto-enables FlashInfer all-reduce fusion for {arch}, and its kernels exist for compute capability 9.x and 10.x only: 'No supported CUDA architectures found for major versions [9, 10]' at CUDA-graph capture",
            Context::describe(&sm12),
            ctx.version
        )
    })
}

pub(crate) fn fusion_arch(ctx: &Context) -> Vec<Fired> {
    if let Some(msg) = fusion_auto_on_sm12x(ctx) {
        let f = Fired::new(msg);
        let opt = opt::ENFORCE_DISABLE_FLASHINFER_ALLREDUCE_FUSION;
        return vec![if ctx.user().knows(opt) {
            f.with_fix(add_flag(opt))
        } else {
            f
        }];
    }
    let Some((given, gpus)) = fusion_unsupported(ctx) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{gpus}; FlashInfer all-reduce fusion ({}) has kernels for compute capability 9.x and 10.x only: 'No supported CUDA architectures found for major versions [9, 10]'",
        given.join(", ")
    ))
    .with_fix(remove_all(&given))]
}

pub(crate) fn fusion_arch_ignored(ctx: &Context) -> Vec<Fired> {
    let Some((given, gpus)) = fusion_unsupported(ctx) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{gpus}; SGLang {} silently skips FlashInfer all-reduce fusion ({}) off compute capability 9.x/10.x, so the flag does nothing here",
        ctx.version,
        given.join(", ")
    ))
    .with_fix(remove_all(&given))]
}

pub(crate) fn fusion_multinode(ctx: &Context) -> Vec<Fired> {
    let given = fusion_given(ctx);
    if given.is_empty() || ctx.nnodes() < 2 || fusion_unsupported(ctx).is_some() {
        return vec![];
    }
    let backend = ctx.user().sval(opt::FLASHINFER_ALLREDUCE_FUSION_BACKEND);
    // 0.5.23: mnnvl/auto/cutedsl work across nodes on SM10x; trtllm never does.
    let all_sm10 = !ctx.majors().is_empty() && ctx.majors().iter().all(|&m| m == 10);
    if ctx.user().knows(opt::FLASHINFER_ALLREDUCE_FUSION_BACKEND)
        && all_sm10
        && backend.as_deref() != Some("trtllm")
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "--nnodes {} with FlashInfer all-reduce fusion ({}{}): the trtllm fusion backend is single-node only",
        ctx.nnodes(),
        given.join(", "),
        backend.map(|b| format!(" = {b}")).unwrap_or_default()
    ))
    .with_fix(remove_all(&given))]
}

/// ARCH004: trtllm_mla attention, or the trtllm DSA backend (the same trtllm-gen MLA kernels,
/// asked for by name), on SM12x (a version-pinned report shows it failing).
pub(crate) fn trtllm_gen_sm12x(ctx: &Context) -> Vec<Fired> {
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    let mut uses: Vec<String> = ctx.backends_where(|v| v == "trtllm_mla");
    uses.extend(trtllm_dsa_backends(ctx));
    if sm12.is_empty() || uses.is_empty() {
        return vec![];
    }
    let dsa = uses.iter().filter(|u| u.ends_with(" trtllm")).count();
    let advice = [
        (dsa < uses.len()).then_some("use flashinfer or triton attention"),
        (dsa > 0).then_some(
            "use another DSA backend (flashinfer_sparse_mla, or tilelang with a bfloat16 KV cache)",
        ),
    ];
    vec![Fired::new(format!(
        "{}; {} {} FlashInfer trtllm-gen kernels, built for SM100/SM103 only ('Unsupported architecture'); {}",
        Context::describe(&sm12),
        uses.join(", "),
        if uses.len() > 1 { "run" } else { "runs" },
        advice.into_iter().flatten().collect::<Vec<_>>().join("; ")
    ))]
}

/// The DSA backends set to `trtllm`, as `--o trtllm`: they take effect for a sparse-attention
/// model only (or one whose config is not known).
fn trtllm_dsa_backends(ctx: &Context) -> Vec<String> {
    // Only the DSA attention backend (SGLang's pick for such a model when none is named) runs
    // them: under another named backend the model runs without them.
    let other = ctx
        .attention_backends()
        .iter()
        .any(|(_, v)| v != "nsa" && v != "dsa");
    if other || ctx.model.is_some_and(|m| !m.is_dsa(ctx.version)) {
        return vec![];
    }
    ctx.dsa_backends()
        .into_iter()
        .flatten()
        .filter(|(_, v)| v == "trtllm")
        .map(|(o, v)| format!("{o} {v}"))
        .collect()
}

/// ARCH011: the trtllm-gen MoE and FP4 GEMM runners on SM12x (no version-pinned report).
pub(crate) fn trtllm_gen_moe_sm12x(ctx: &Context) -> Vec<Fired> {
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    if sm12.is_empty() {
        return vec![];
    }
    // Where the release's FlashInfer refuses the MoE runners outright, ARCH020 names them.
    let moe: &[&str] = if jit_refuses_trtllm_moe(ctx.version) {
        &[]
    } else {
        &[opt::MOE_RUNNER_BACKEND, opt::SPECULATIVE_MOE_RUNNER_BACKEND]
    };
    let uses = trtllm_gen_uses(ctx, &[moe, &[opt::FP4_GEMM_BACKEND]].concat());
    if uses.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} run FlashInfer trtllm-gen kernels, built for SM100/SM103 only; use flashinfer_cutlass or triton",
        Context::describe(&sm12),
        uses.join(", ")
    ))]
}

/// The options among `opts` the user set to a FlashInfer trtllm-gen runner, as `--o value`.
fn trtllm_gen_uses(ctx: &Context, opts: &[&str]) -> Vec<String> {
    runner_uses(ctx, opts, |v| v.starts_with("flashinfer_trtllm"))
}

/// The options among `opts` the user set to a value `pred` takes, as `--o value`.
fn runner_uses(ctx: &Context, opts: &[&str], pred: impl Fn(&str) -> bool) -> Vec<String> {
    opts.iter()
        .filter_map(|o| {
            ctx.user()
                .sval(o)
                .filter(|v| pred(v))
                .map(|v| format!("{o} {v}"))
        })
        .collect()
}

/// 0.5.2 to 0.5.9 pin FlashInfer 0.3.1 to 0.6.3, whose trtllm-gen fused-MoE module is built
/// for compute capability 10.x only; 0.5.10's FlashInfer 0.6.7 adds 12.x.
fn jit_refuses_trtllm_moe(version: &str) -> bool {
    at_least(version, "0.5.2") && !at_least(version, "0.5.10rc0")
}

/// ARCH020: the trtllm-gen MoE runner on SM12x where the release's FlashInfer refuses to build
/// it for that GPU.
pub(crate) fn trtllm_moe_jit_sm12x(ctx: &Context) -> Vec<Fired> {
    if !jit_refuses_trtllm_moe(ctx.version) {
        return vec![];
    }
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    let opts = [opt::MOE_RUNNER_BACKEND, opt::SPECULATIVE_MOE_RUNNER_BACKEND];
    let uses = trtllm_gen_uses(ctx, &opts);
    if sm12.is_empty() || uses.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {}: the FlashInfer SGLang {} pins builds its trtllm-gen MoE kernels for compute capability 10.x only and stops at start-up ('No supported CUDA architectures found for major versions [10]'); use --moe-runner-backend flashinfer_cutlass or triton",
        Context::describe(&sm12),
        uses.join(", "),
        ctx.version,
    ))]
}

/// ARCH022: from 0.5.12 the CuteDSL MoE runner without an all-to-all backend goes through
/// FlashInfer's CuteDSL MoE wrapper, whose helper module FlashInfer builds for 10.x only.
pub(crate) fn cutedsl_moe_jit(ctx: &Context) -> Vec<Fired> {
    let other = ctx.gpus_where(|(m, _)| m != 10);
    let uses = runner_uses(ctx, &[opt::MOE_RUNNER_BACKEND], |v| {
        v == "flashinfer_cutedsl"
    });
    // With an all-to-all backend the runner takes another kernel path; a dense model builds none.
    let dense = ctx.model.is_some() && !ctx.model_is_moe();
    if other.is_empty() || uses.is_empty() || ctx.moe_a2a().is_some() || dense {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {}: SGLang {}'s CuteDSL MoE runner uses FlashInfer's CuteDSL MoE wrapper, whose helper kernels FlashInfer builds for compute capability 10.x (B200, B300, GB200, GB300) only, so the first MoE forward stops start-up ('No supported CUDA architectures found for major versions [10]'); use --moe-runner-backend flashinfer_cutlass or triton",
        Context::describe(&other),
        uses.join(", "),
        ctx.version,
    ))]
}

const DEEPGEMM_ARCHS: &[&str] = &["DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM"];

pub(crate) fn deepgemm_sm12x(ctx: &Context) -> Vec<Fired> {
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    if sm12.is_empty() {
        return vec![];
    }
    let runners = [opt::MOE_RUNNER_BACKEND, opt::SPECULATIVE_MOE_RUNNER_BACKEND];
    let mut uses = runner_uses(ctx, &runners, |v| v == "deep_gemm");
    if let Some(a) = ctx.moe_a2a().filter(|a| a == "megamoe" || a == "deepep_v2") {
        uses.push(format!("--moe-a2a-backend {a}"));
    }
    let dsa_refused = dsa_indexer_refused(ctx);
    if let Some(a) = ctx
        .model_arch()
        .filter(|a| DEEPGEMM_ARCHS.contains(a) && !dsa_refused)
    {
        uses.push(format!("model {a}"));
    }
    if uses.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} need DeepGEMM, which has no SM120 kernels ('Unsupported architecture')",
        Context::describe(&sm12),
        uses.join(", ")
    ))]
}

/// The first sgl-deep-gemm with SM120 paged-MQA-logits kernels (0.5.17's pin is 0.1.5.post1);
/// before 0.5.12 DeepGEMM came inside sgl-kernel, whose builds have none.
const DEEPGEMM_SM120_MQA: &str = "0.1.5";

/// ARCH016: a DSA model's indexer calls DeepGEMM's paged MQA logits, which the DeepGEMM that
/// 0.5.3 to 0.5.16 pin has for SM90/SM100 only.
pub(crate) fn dsa_indexer_sm12x(ctx: &Context) -> Vec<Fired> {
    if !dsa_indexer_refused(ctx) {
        return vec![];
    }
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    vec![Fired::new(format!(
        "{}; {} uses DeepSeek sparse attention, whose indexer SGLang {} runs on DeepGEMM's paged MQA logits; the DeepGEMM it ships has kernels for SM90 and SM100 only, so start-up stops with 'Unsupported architecture' whatever the DSA prefill/decode backend; another attention backend (triton) runs the model with dense attention and no indexer; SGLang 0.5.17 (sgl-deep-gemm {DEEPGEMM_SM120_MQA}.post1) has SM120 kernels",
        Context::describe(&sm12),
        ctx.model_arch().unwrap_or("the model"),
        ctx.version
    ))]
}

/// The release (ARCH016's versions) runs a DSA model's indexer on DeepGEMM without SM120
/// kernels, and the line puts it on SM12x. Only the DSA attention backend (SGLang's pick when
/// no attention backend is named) gives the indexer its metadata: under any other the indexer
/// returns at once and the model runs dense attention.
fn dsa_indexer_refused(ctx: &Context) -> bool {
    crate::rules::rule(crate::rules::Code::ARCH016).applies_to(ctx.version)
        && ctx.model.is_some_and(|m| m.is_dsa(ctx.version))
        && !ctx
            .effective_backends_where(|b| b == "nsa" || b == "dsa")
            .is_empty()
        && !ctx.gpus_where(|(m, _)| m == 12).is_empty()
        && !deepgemm_has_sm120(ctx)
}

/// An sgl-deep-gemm with SM120 kernels is installed (0.5.12+ import DeepGEMM from it).
fn deepgemm_has_sm120(ctx: &Context) -> bool {
    at_least(ctx.version, "0.5.12")
        && ctx
            .packages
            .and_then(|p| p.get("sgl-deep-gemm"))
            .is_some_and(|p| at_least(p.public(), DEEPGEMM_SM120_MQA))
}

/// ARCH017: 0.5.3 to 0.5.9 imported DeepGEMM into its wrapper only when JIT DeepGEMM is on, but
/// the DSA indexer's dual-stream path calls the wrapper's SM-count setter (which uses it) while
/// capturing CUDA graphs: `NameError: name 'deep_gemm' is not defined`.
pub(crate) fn dsa_deepgemm_disabled(ctx: &Context) -> Vec<Fired> {
    let Some((var, value)) = deepgemm_turned_off(ctx) else {
        return vec![];
    };
    let hopper_up = ctx.gpus_where(|(m, _)| m >= 9);
    if !ctx.model.is_some_and(|m| m.is_dsa(ctx.version))
        || hopper_up.is_empty()
        || ctx.decode_graph_max_bs().is_none()
        || !nsa_dual_stream(ctx)
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "{var}={value} with {} (DeepSeek sparse attention) and CUDA graphs: SGLang {} then never imports DeepGEMM into its wrapper, yet the sparse-attention indexer's dual-stream path asks that wrapper to set DeepGEMM's SM count while capturing the graphs, and start-up stops with \"NameError: name 'deep_gemm' is not defined\"; unset {var} (0.5.10 guards the call)",
        ctx.model_arch().unwrap_or("the model"),
        ctx.version
    ))]
}

/// The variable that turns JIT DeepGEMM off (SGLang reads the `SGL_` spelling as an alias), if
/// it is set to a value SGLang's boolean parser reads as false.
pub(super) fn deepgemm_turned_off<'a>(ctx: &'a Context) -> Option<(&'static str, &'a str)> {
    JIT_DEEPGEMM_VARS
        .into_iter()
        .find_map(|v| Some((v, ctx.env.get(v)?)))
        .filter(|(_, value)| env_false(value))
}

/// The variable that turns JIT DeepGEMM on or off, and the older spelling SGLang reads too.
const JIT_DEEPGEMM_VARS: [&str; 2] = ["SGLANG_ENABLE_JIT_DEEPGEMM", "SGL_ENABLE_JIT_DEEPGEMM"];

/// The sgl-deep-gemm 0.5.12 and 0.5.12.post1 pin, whose JIT FP8 GEMM faults on SM 10.3.
const DEEPGEMM_SM103_FAULT: &str = "0.1.0";

/// ARCH018: on SM 10.3 (B300, GB300) sgl-deep-gemm 0.1.0's JIT block-FP8 GEMM faults while
/// SGLang captures CUDA graphs (an illegal address in its TMA descriptor setup); 0.5.11 (the
/// DeepGEMM inside sgl-kernel) and 0.5.13 (sgl-deep-gemm 0.1.2) run the same lines.
pub(crate) fn deepgemm_sm103(ctx: &Context) -> Vec<Fired> {
    let sm103 = ctx.gpus_where(|cc| cc == (10, 3));
    let block_fp8 = ctx.model.is_some_and(|m| m.weight_block_size.is_some());
    let other_runner = ctx
        .user()
        .sval(opt::FP8_GEMM_BACKEND)
        .is_some_and(|b| b != "auto" && b != "deep_gemm");
    let installed = ctx.packages.and_then(|p| p.get("sgl-deep-gemm"));
    if sm103.is_empty()
        || !block_fp8
        || other_runner
        || deepgemm_turned_off(ctx).is_some()
        || installed.is_some_and(|p| p.public() != DEEPGEMM_SM103_FAULT)
    {
        return vec![];
    }
    let fired = Fired::new(format!(
        "{}; block-FP8 {} with JIT DeepGEMM: the sgl-deep-gemm {DEEPGEMM_SM103_FAULT} that SGLang {} pins faults on SM 10.3 while the CUDA graphs are captured ('Capture cuda graph failed: CUDA driver error (…runtime_utils.hpp:143): 700 (CUDA_ERROR_ILLEGAL_ADDRESS …)'); SGLANG_ENABLE_JIT_DEEPGEMM=0 or --fp8-gemm-backend cutlass avoid it, SGLang 0.5.13 (sgl-deep-gemm 0.1.2) does not fail",
        Context::describe(&sm103),
        ctx.model_arch().unwrap_or("model"),
        ctx.version
    ));
    // A value the user set is theirs to change: reported, not edited.
    if JIT_DEEPGEMM_VARS.iter().any(|v| ctx.env.get(v).is_some()) {
        vec![fired]
    } else {
        vec![fired.with_fix(set_env(JIT_DEEPGEMM_VARS[0], "0"))]
    }
}

/// The indexer's dual stream: on unless `SGLANG_NSA_DUAL_STREAM` reads false (0.5.3 to 0.5.7
/// read it as "true"/"1"); 0.5.8 dropped the switch.
fn nsa_dual_stream(ctx: &Context) -> bool {
    at_least(ctx.version, "0.5.8")
        || ctx
            .env
            .get("SGLANG_NSA_DUAL_STREAM")
            .is_none_or(|v| ["true", "1"].contains(&v.to_ascii_lowercase().as_str()))
}

/// Before the clean fallback (0.5.15 at the latest), a CC major above 10 is a KeyError in
/// SGLang's size table; below 9 it was always a logged no-op.
fn symm_mem_crashes(ctx: &Context) -> bool {
    !at_least(ctx.version, "0.5.15")
}

pub(crate) fn torch_symm_mem_arch(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_TORCH_SYMM_MEM) || ctx.tp() < 2 || !symm_mem_crashes(ctx) {
        return vec![];
    }
    let bad = ctx.gpus_where(|(m, _)| m > 10);
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; --enable-torch-symm-mem: SGLang {}'s torch symmetric-memory size table has entries for compute capability 9 and 10 only, so start-up fails with a KeyError",
        Context::describe(&bad),
        ctx.version
    ))
    .with_fix(remove(opt::ENABLE_TORCH_SYMM_MEM))]
}

pub(crate) fn torch_symm_mem_ineffective(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_TORCH_SYMM_MEM) || ctx.tp() < 2 || ctx.majors().is_empty() {
        return vec![];
    }
    let tp = ctx.tp();
    let unsupported = ctx.gpus_where(|(m, _)| m < 9 || (m > 10 && !symm_mem_crashes(ctx)));
    let why = if !unsupported.is_empty() {
        format!(
            "{} is not compute capability 9.x or 10.x",
            Context::describe(&unsupported)
        )
    } else if ctx.majors().iter().any(|&m| m > 10) {
        return vec![]; // ARCH006: it crashes
    } else if ![2, 4, 6, 8].contains(&tp) {
        format!("TP {tp} is not 2, 4, 6 or 8")
    } else if !ctx.tp_nvlinked() {
        format!(
            "the TP group ({}) is not fully NVLinked, so there is no multicast",
            ctx.describe_used()
        )
    } else {
        return vec![];
    };
    vec![Fired::new(format!(
        "--enable-torch-symm-mem does nothing here: {why}; SGLang logs it and keeps the previous all-reduce path"
    ))
    .with_fix(remove(opt::ENABLE_TORCH_SYMM_MEM))]
}

pub(crate) fn gpt_oss_sm12x(ctx: &Context) -> Vec<Fired> {
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    if sm12.is_empty() || ctx.model_arch() != Some("GptOssForCausalLM") {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; GPT-OSS (MXFP4) in SGLang {} auto-selects the triton_kernels MoE, whose PTX targets SM90/SM100 only",
        Context::describe(&sm12),
        ctx.version
    ))]
}

pub(crate) fn megamoe_arch(ctx: &Context) -> Vec<Fired> {
    if ctx.moe_a2a().as_deref() != Some("flashinfer_megamoe") {
        return vec![];
    }
    let bad = ctx.gpus_where(|(m, _)| m != 10);
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; --moe-a2a-backend flashinfer_megamoe requires SM100-class GPUs",
        Context::describe(&bad)
    ))]
}

pub(crate) fn h20_fusion(ctx: &Context) -> Vec<Fired> {
    if fusion_given(ctx).is_empty() || ctx.tp() < 2 {
        return vec![];
    }
    let h20: Vec<_> = ctx
        .used()
        .into_iter()
        .filter(|g| g.name.contains("H20") && !g.name.contains("H200"))
        .collect();
    if h20.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; SGLang {} keeps FlashInfer all-reduce fusion off on H20 because of a FlashInfer bug there (flashinfer#2204); forcing it can fail to compile",
        Context::describe(&h20),
        ctx.version
    ))]
}

/// ARCH012: SGLang's model runner refuses compute capability below 7.5 before loading weights.
/// Its test is `major < 8 and minor < 5`, reproduced as written (so 7.0, 6.x and 5.x stop,
/// while 7.5 passes).
pub(crate) fn below_sm75(ctx: &Context) -> Vec<Fired> {
    if ctx.user().str(opt::DEVICE).is_some_and(|d| d != "cuda") {
        return vec![];
    }
    let bad = ctx.gpus_where(|(m, n)| m < 8 && n < 5);
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; SGLang {} stops before loading the weights: 'SGLang only supports sm75 and above.' \
         (its model runner refuses compute capability below 7.5); use T4/RTX 20xx-class or newer GPUs",
        Context::describe(&bad),
        ctx.version
    ))]
}

/// The FlashInfer SGLang pins in the releases whose SM12x DSpark draft meets FlashInfer's DSV4
/// decode table without a top-k 192 instance; 0.6.18 (SGLang 0.5.19's pin) adds it.
const DSPARK_SM120_PINS: &[(&str, &str)] = &[
    ("0.5.16", "0.6.14"),
    ("0.5.17", "0.6.15.post1"),
    ("0.5.18", "0.6.17"),
];
const FLASHINFER_DSV4_TOPK192: &str = "0.6.18";

/// ARCH013: DSpark on SM12x. Its draft's sliding-window attention asks FlashInfer's SM120
/// sparse-MLA decode for top-k 192; FlashInfer before 0.6.18 has no such instance and falls
/// through to the prefill kernel, which refuses decode-sized calls during graph capture.
pub(crate) fn dspark_sm120_topk(ctx: &Context) -> Vec<Fired> {
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    // DSpark also drafts for Qwen3 targets, whose attention never reaches this kernel: an
    // unread model proves nothing.
    let target = ctx.model_arch() == Some("DeepseekV4ForCausalLM");
    let flashinfer_path = ctx
        .env
        .get("SGLANG_SM120_FLASHMLA_BACKEND")
        .is_none_or(|b| b == "flashinfer");
    if sm12.is_empty()
        || ctx.spec_algo().as_deref() != Some("DSPARK")
        || !target
        || !flashinfer_path
    {
        return vec![];
    }
    let installed = ctx
        .packages
        .and_then(|p| p.get("flashinfer-python"))
        .map(|p| p.public().to_owned());
    if installed
        .as_deref()
        .is_some_and(|v| at_least(v, FLASHINFER_DSV4_TOPK192))
    {
        return vec![];
    }
    let flashinfer = match installed {
        Some(v) => format!("FlashInfer {v} (installed)"),
        None => DSPARK_SM120_PINS
            .iter()
            .find(|(release, _)| crate::sglang::release::cmp(ctx.version, release).is_eq())
            .map_or("the FlashInfer it pins".to_owned(), |(_, pin)| {
                format!("FlashInfer {pin} (its pin)")
            }),
    };
    vec![Fired::new(format!(
        "{}; {} DSPARK with SGLang {}: the DSpark draft's sliding-window attention asks FlashInfer's SM120 sparse-MLA decode for top-k 192 (the 128-token window plus the draft block, padded to 64), which {flashinfer} does not instantiate, so the call falls through to the prefill kernel and CUDA-graph capture stops ('Check failed: num_tokens > 64'); FlashInfer {FLASHINFER_DSV4_TOPK192} (SGLang 0.5.19's pin) has the instance",
        Context::describe(&sm12),
        opt::SPECULATIVE_ALGORITHM,
        ctx.version
    ))]
}

/// Shared memory (bytes) SGLang's batch-invariant float16 matmul tile asks of a block: the
/// 128×256×64, three-stage Triton config every release from 0.5.3rc2 ships.
const DETERMINISTIC_FP16_SMEM: u32 = 106_496;

/// The most shared memory one block may use, by compute capability, where it is below
/// [`DETERMINISTIC_FP16_SMEM`]. SM12x (also 99 KB) is left out: no report shows it failing.
fn smem_per_block((major, minor): (u32, u32)) -> Option<u32> {
    match (major, minor) {
        (7, 0) => Some(98_304),
        (7, 5) => Some(65_536),
        (8, 6) | (8, 9) => Some(101_376),
        _ => None,
    }
}

/// ARCH014: deterministic inference routes every matmul through one Triton tile; in float16
/// that tile needs more shared memory than GPUs with 99 KB (or less) per block have.
pub(crate) fn deterministic_fp16_smem(ctx: &Context) -> Vec<Fired> {
    let Some(by) = ctx.deterministic_by().filter(|_| runs_float16(ctx)) else {
        return vec![];
    };
    let small =
        ctx.gpus_where(|cc| smem_per_block(cc).is_some_and(|b| b < DETERMINISTIC_FP16_SMEM));
    let Some(limit) = small
        .iter()
        .filter_map(|g| g.cc())
        .filter_map(smem_per_block)
        .max()
    else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{}; {} with float16 weights: SGLang {} sends every matmul through its batch-invariant Triton kernel, whose float16 tile needs {DETERMINISTIC_FP16_SMEM} bytes of shared memory per block, more than the {limit} this GPU allows, so the first forward pass stops ('OutOfResources: out of resource: shared memory'); bfloat16 (`{} bfloat16`) takes a smaller tile that fits",
        Context::describe(&small),
        by,
        ctx.version,
        opt::DTYPE,
    ))]
}

/// The model runs in float16: `--dtype half|float16`, or `auto` (the default) with a float16
/// checkpoint.
fn runs_float16(ctx: &Context) -> bool {
    match ctx.user().sval(opt::DTYPE).as_deref() {
        Some("half" | "float16") => true,
        None | Some("auto") => ctx.model.and_then(|m| m.dtype.as_deref()) == Some("float16"),
        Some(_) => false,
    }
}

/// ARCH015: the DeepGEMM MegaMoE all-to-all, which SGLang (0.5.21+) runs on SM90 (block-FP8
/// experts) or SM100 (FP4 experts) only, and without two- or single-batch overlap.
pub(crate) fn megamoe(ctx: &Context) -> Vec<Fired> {
    if ctx.moe_a2a().as_deref() != Some("megamoe") {
        return vec![];
    }
    let v = ctx.version;
    let mut out = vec![];
    let bad = ctx.gpus_where(|(m, _)| m != 9 && m != 10);
    if !bad.is_empty() {
        out.push(Fired::new(format!(
            "{}; {} megamoe: SGLang {v} runs it on SM90 or SM100-class GPUs only (DeepGEMM kernels over CUDA symmetric memory) and refuses the line",
            Context::describe(&bad),
            opt::MOE_A2A_BACKEND
        )));
    }
    let overlap: Vec<&str> = [
        opt::ENABLE_TWO_BATCH_OVERLAP,
        opt::ENABLE_SINGLE_BATCH_OVERLAP,
    ]
    .into_iter()
    .filter(|o| ctx.user().flag(o))
    .collect();
    if !overlap.is_empty() {
        out.push(Fired::new(format!(
            "{} megamoe with {}: SGLang {v}'s fused MegaMoE kernel has no overlap split and refuses the line",
            opt::MOE_A2A_BACKEND,
            overlap.join(" and ")
        )));
    }
    out
}

/// ARCH019: 0.5.14–0.5.18 switch DeepSeek-V4's NVFP4 exports to the trtllm-gen routed MoE
/// runner whatever the GPU; on SM12x its kernels do not exist.
pub(crate) fn dsv4_nvfp4_trtllm_pick(ctx: &Context) -> Vec<Fired> {
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    let nvfp4_v4 = ctx
        .model
        .and_then(|m| m.deepseek_v4.as_ref())
        .is_some_and(|l| l.nvfp4_experts);
    let auto = ctx
        .user()
        .sval(opt::MOE_RUNNER_BACKEND)
        .is_none_or(|r| r == "auto");
    if sm12.is_empty() || !nvfp4_v4 || !auto {
        return vec![];
    }
    vec![
        Fired::new(format!(
            "{}; DeepSeek-V4 with NVFP4 experts and the MoE runner left to SGLang: SGLang {} picks flashinfer_trtllm_routed for it whatever the GPU, whose trtllm-gen kernels are built for SM100/SM103 only, so the warmup's first MoE GEMM fails; flashinfer_cutlass runs it",
            Context::describe(&sm12),
            ctx.version
        ))
        .with_fix(set_arg(opt::MOE_RUNNER_BACKEND, "flashinfer_cutlass")),
    ]
}
