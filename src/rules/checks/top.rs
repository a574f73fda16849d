//! The GPUs in use.

use super::*;

pub(crate) fn mig(ctx: &Context) -> Vec<Fired> {
    let mig: Vec<_> = ctx.used().into_iter().filter(|g| g.mig_enabled).collect();
    if mig.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}: MIG is enabled; NCCL fails with 'operation not supported' on MIG slices (even at TP 1) and SGLang cannot read their memory through nvidia-smi; run on full GPUs",
        Context::describe(&mig)
    ))]
}

pub(crate) fn mixed(ctx: &Context) -> Vec<Fired> {
    let used = ctx.used();
    let Some(first) = used.first() else {
        return vec![];
    };
    if used
        .iter()
        .all(|g| g.name == first.name && g.memory_total_mib == first.memory_total_mib)
    {
        return vec![];
    }
    let min = used.iter().map(|g| g.memory_total_mib).min().unwrap_or(0);
    vec![Fired::new(format!(
        "Mixed GPUs in one server ({}): SGLang shards evenly and sizes memory by the smallest ({min} MiB), and the slowest GPU sets the pace",
        Context::describe(&used)
    ))]
}

/// CUDA stops reading `CUDA_VISIBLE_DEVICES` at the first entry it can't use.
pub(crate) fn visible_devices_ignored(ctx: &Context) -> Vec<Fired> {
    let Some(stop) = crate::facts::gpus::visible(ctx.topology, ctx.env).stopped else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{}; CUDA_VISIBLE_DEVICES={}",
        stop.describe(),
        ctx.env.get("CUDA_VISIBLE_DEVICES").unwrap_or_default()
    ))]
}
