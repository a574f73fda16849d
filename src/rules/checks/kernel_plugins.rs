//! Whole-model kernel plugins (0.5.23): each replaces the model's forward for one vendor's GPUs.

use super::*;
use crate::sglang::opt;

/// ARCH021: the AMD monokernel on NVIDIA GPUs. Its plugin registers specs for AMD ISAs only, so
/// SGLang finds none for the GPU and refuses the line while it resolves the arguments (with the
/// NVIDIA megakernel too, it also names the pair).
pub(crate) fn amd_monokernel(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let gpus = ctx.used();
    if !u.flag(opt::ENABLE_AMD_MONOKERNEL) || gpus.is_empty() {
        return vec![];
    }
    let why = format!(
        "{} on {}: the AMD monokernel has kernels for AMD GPUs only",
        opt::ENABLE_AMD_MONOKERNEL,
        Context::describe(&gpus)
    );
    refused_at_start(ctx, vec![why])
}
