//! Triton attention reading an FP8 E4M3 KV cache: Triton has the E4M3 float type (`fp8e4nv`)
//! only from compute capability 8.9, so below it the kernels do not compile.

use super::*;
use crate::sglang::opt;

/// ATTN030: Triton attention in effect with `--kv-cache-dtype fp8_e4m3` on a GPU below SM 8.9.
pub(crate) fn triton_e4m3_pre_ada(ctx: &Context) -> Vec<Fired> {
    let old = ctx.gpus_where(|cc| cc < (8, 9));
    let triton = ctx.effective_backends_where(|b| b == "triton");
    if ctx.kv_cache_dtype() != Some("fp8_e4m3") || old.is_empty() || triton.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}; {} with {} fp8_e4m3: Triton's attention kernels load the KV cache as E4M3, a type Triton compiles only from compute capability 8.9, so the first decode (CUDA-graph capture, or the first request) stops ('type fp8e4nv not supported in this architecture'); use {} fp8_e5m2, which Triton has here, or the flashinfer backend",
        Context::describe(&old),
        triton.join(", "),
        opt::KV_CACHE_DTYPE,
        opt::KV_CACHE_DTYPE
    ))]
}
