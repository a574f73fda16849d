//! Architecture gates: kernels that exist for some compute capabilities only
//! (FlashInfer all-reduce fusion, trtllm-gen, DeepGEMM, torch symmetric memory).

use super::*;
use crate::rules::Fix;
use crate::sglang::version::at_least;

const FUSION_FLAGS: &[&str] = &[
    "--enable-flashinfer-allreduce-fusion",
    "--flashinfer-allreduce-fusion-backend",
];

/// The fusion options the user gave (flag on, or a backend chosen).
fn fusion_given(ctx: &Context) -> Vec<&'static str> {
    FUSION_FLAGS
        .iter()
        .copied()
        .filter(|o| {
            if *o == "--enable-flashinfer-allreduce-fusion" {
                ctx.args.flag(o)
            } else {
                ctx.given(o)
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
            .flag("--enforce-disable-flashinfer-allreduce-fusion")
    {
        return None;
    }
    let bad = ctx.gpus_where(|(m, _)| m != 9 && m != 10);
    if bad.is_empty() {
        return None;
    }
    Some((given, Context::describe(&bad)))
}

pub fn fusion_arch(ctx: &Context) -> Vec<Fired> {
    let Some((given, gpus)) = fusion_unsupported(ctx) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{gpus}; FlashInfer all-reduce fusion ({}) has kernels for compute capability 9.x and 10.x only: 'No supported CUDA architectures found for major versions [9, 10]'",
        given.join(", ")
    ))
    .with_fix(remove_all(&given))]
}

pub fn fusion_arch_ignored(ctx: &Context) -> Vec<Fired> {
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

pub fn fusion_multinode(ctx: &Context) -> Vec<Fired> {
    let given = fusion_given(ctx);
    if given.is_empty() || ctx.nnodes() < 2 || fusion_unsupported(ctx).is_some() {
        return vec![];
    }
    let backend = ctx.sval("--flashinfer-allreduce-fusion-backend");
    // 0.5.23: mnnvl/auto/cutedsl work across nodes on SM10x; trtllm never does.
    let all_sm10 = !ctx.majors().is_empty() && ctx.majors().iter().all(|&m| m == 10);
    if ctx.args.knows("--flashinfer-allreduce-fusion-backend")
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

pub fn trtllm_gen_sm12x(ctx: &Context) -> Vec<Fired> {
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    if sm12.is_empty() {
        return vec![];
    }
    let mut uses: Vec<String> = ctx
        .attention_backends()
        .into_iter()
        .filter(|(_, v)| v == "trtllm_mla")
        .map(|(o, v)| format!("{o} {v}"))
        .collect();
    for o in [
        "--moe-runner-backend",
        "--fp4-gemm-backend",
        "--speculative-moe-runner-backend",
    ] {
        if let Some(v) = ctx.sval(o).filter(|v| v.starts_with("flashinfer_trtllm")) {
            uses.push(format!("{o} {v}"));
        }
    }
    if uses.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} run FlashInfer trtllm-gen kernels, built for SM100/SM103 only ('Unsupported architecture'); use flashinfer/triton attention and flashinfer_cutlass/triton MoE",
        Context::describe(&sm12),
        uses.join(", ")
    ))]
}

const DEEPGEMM_ARCHS: &[&str] = &["DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM"];

pub fn deepgemm_sm12x(ctx: &Context) -> Vec<Fired> {
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    if sm12.is_empty() {
        return vec![];
    }
    let mut uses = Vec::new();
    for o in ["--moe-runner-backend", "--speculative-moe-runner-backend"] {
        if ctx.sval(o).as_deref() == Some("deep_gemm") {
            uses.push(format!("{o} deep_gemm"));
        }
    }
    if let Some(a) = ctx.moe_a2a().filter(|a| a == "megamoe" || a == "deepep_v2") {
        uses.push(format!("--moe-a2a-backend {a}"));
    }
    if let Some(a) = ctx.model_arch().filter(|a| DEEPGEMM_ARCHS.contains(a)) {
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

pub fn torch_symm_mem_arch(ctx: &Context) -> Vec<Fired> {
    if !ctx.args.flag("--enable-torch-symm-mem") || ctx.tp() < 2 {
        return vec![];
    }
    let bad = ctx.gpus_where(|(m, _)| m != 9 && m != 10);
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; --enable-torch-symm-mem: SGLang's torch symmetric-memory size table has entries for compute capability 9 and 10 only",
        Context::describe(&bad)
    ))
    .with_fix(remove("--enable-torch-symm-mem"))]
}

pub fn torch_symm_mem_topology(ctx: &Context) -> Vec<Fired> {
    if !ctx.args.flag("--enable-torch-symm-mem")
        || ctx.majors().is_empty()
        || !ctx.majors().iter().all(|&m| m == 9 || m == 10)
    {
        return vec![];
    }
    let tp = ctx.tp();
    let why = if ![2, 4, 6, 8].contains(&tp) {
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
        "--enable-torch-symm-mem does nothing here: {why}; SGLang silently keeps the previous all-reduce path"
    ))
    .with_fix(remove("--enable-torch-symm-mem"))]
}

pub fn gpt_oss_sm12x(ctx: &Context) -> Vec<Fired> {
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

pub fn megamoe_arch(ctx: &Context) -> Vec<Fired> {
    if ctx.moe_a2a().as_deref() != Some("flashinfer_megamoe") {
        return vec![];
    }
    let bad = ctx.gpus_where(|(m, _)| m != 10);
    if bad.is_empty() || !at_least(ctx.version, "0.5.20") {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; --moe-a2a-backend flashinfer_megamoe requires SM100-class GPUs",
        Context::describe(&bad)
    ))]
}
