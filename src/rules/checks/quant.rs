//! Quantisation formats by architecture.

use super::*;

fn is_fp8(q: &str) -> bool {
    matches!(q, "fp8" | "w8a8_fp8" | "modelopt_fp8" | "fbgemm_fp8")
}

fn is_nvfp4(q: &str) -> bool {
    matches!(
        q,
        "modelopt_fp4" | "nvfp4" | "modelopt_nvfp4" | "nvfp4_online"
    )
}

fn source(ctx: &Context) -> &'static str {
    if ctx.sval("--quantization").is_some() {
        "--quantization"
    } else {
        "checkpoint quant_method"
    }
}

pub fn fp8_pre_ada(ctx: &Context) -> Vec<Fired> {
    let Some(q) = ctx.quant().filter(|q| is_fp8(q)) else {
        return vec![];
    };
    let bad = ctx.gpus_where(|cc| cc < (8, 9));
    if bad.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} {q}: FP8 kernels need compute capability 8.9 or newer ('fp8e4nv not supported in this architecture'); use a BF16, AWQ/GPTQ or INT8 checkpoint",
        Context::describe(&bad),
        source(ctx)
    ))]
}

pub fn fp4_pre_blackwell(ctx: &Context) -> Vec<Fired> {
    let Some(q) = ctx.quant().filter(|q| is_nvfp4(q)) else {
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

pub fn nvfp4_sm12x(ctx: &Context) -> Vec<Fired> {
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

pub fn fp8_sm12x(ctx: &Context) -> Vec<Fired> {
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

pub fn dsa_kv_dtype(ctx: &Context) -> Vec<Fired> {
    if ctx.model_arch() != Some("DeepseekV32ForCausalLM") {
        return vec![];
    }
    let Some(kv) = ctx.sval("--kv-cache-dtype") else {
        return vec![];
    };
    if ["auto", "bf16", "bfloat16", "fp8_e4m3"].contains(&kv.as_str()) {
        return vec![];
    }
    vec![Fired::new(format!(
        "DeepSeek-V3.2 (sparse DSA attention) with --kv-cache-dtype {kv}: its indexer cache supports bf16 or fp8_e4m3 only"
    ))]
}
