//! Custom all-reduce: SGLang's IPC and symmetric-memory all-reduce kernels and their gates.

use super::*;
use crate::resolve::CustomAllReduce;
use crate::sglang::opt;

/// SGLang's decision for the first TP group.
fn car(ctx: &Context) -> CustomAllReduce {
    ctx.server.custom_all_reduce
}

/// Variables that try to force custom all-reduce onto PCIe or tune its kernel.
const FORCING: &[&str] = &[
    "SGLANG_FORCE_CUSTOM_AR_PCIE",
    "SGLANG_CUSTOM_AR_ALLOW_PCIE",
    "SGLANG_CUSTOM_ALLREDUCE_ALGO",
];

/// The SGLang release whose pinned kernel reads SGLANG_CUSTOM_ALLREDUCE_ALGO.
fn algo_read(ctx: &Context) -> bool {
    crate::sglang::envs::KERNEL_ENVS.iter().any(|(n, since)| {
        *n == "SGLANG_CUSTOM_ALLREDUCE_ALGO" && crate::sglang::release::at_least(ctx.version, since)
    })
}

fn pcie_tp_over_two(ctx: &Context) -> bool {
    ctx.tp() > 2 && ctx.tp_gpus().len() > 2 && !ctx.tp_nvlinked()
}

pub(crate) fn no_p2p(ctx: &Context) -> Vec<Fired> {
    if matches!(car(ctx), CustomAllReduce::Off(_)) || ctx.user().flag(opt::ENABLE_P2P_CHECK) {
        return vec![];
    }
    let broken = ctx.topology.p2p_broken_pairs(ctx.tp_gpus());
    let Some(&(a, b)) = broken.first() else {
        return vec![];
    };
    let status = ctx
        .topology
        .link(a, b)
        .map(|l| l.p2p.as_str())
        .unwrap_or("unknown");
    // From 0.4.8.post1 a failed setup is caught and NCCL takes over; before, it may stop.
    let then = if crate::sglang::release::at_least(ctx.version, "0.4.8.post1") {
        "its setup fails and SGLang falls back to NCCL after a failed attempt"
    } else {
        "it may fail with 'peer access is not supported'"
    };
    vec![Fired::new(format!(
        "TP {}: GPUs {a} and {b} have no CUDA peer access (NVML P2P status {status}{}), but SGLang's custom all-reduce assumes it: {then}",
        ctx.tp(),
        if broken.len() > 1 { format!(", {} pairs in all", broken.len()) } else { String::new() },
    ))
    .with_fix(add_flag(opt::DISABLE_CUSTOM_ALL_REDUCE))]
}

pub(crate) fn forced_pcie(ctx: &Context) -> Vec<Fired> {
    if !pcie_tp_over_two(ctx) {
        return vec![];
    }
    let set: Vec<&str> = FORCING
        .iter()
        .copied()
        .filter(|n| ctx.env.get(n).is_some())
        .collect();
    if set.is_empty() {
        return vec![];
    }
    // A name no upstream release reads (a fork's or a local patch's) deserves saying so too.
    let (reg, _) = ctx.env_registry();
    let foreign: Vec<&str> = set.iter().copied().filter(|n| !reg.knows(n)).collect();
    let note = if foreign.is_empty() {
        String::new()
    } else {
        format!(
            "; {} is not read by upstream SGLang {}",
            foreign.join(", "),
            ctx.version
        )
    };
    vec![Fired::new(format!(
        "TP {} over PCIe ({}): {} try to force or tune custom all-reduce, which SGLang keeps off on more than two PCIe-only GPUs; forced, it measured 38 vs 82 tok/s with NCCL on 8x RTX PRO 6000{note}",
        ctx.tp(),
        Context::describe(&ctx.used()),
        set.join(", "),
    ))
    .with_fix(unset_env(&set))]
}

pub(crate) fn algo_ineffective(ctx: &Context) -> Vec<Fired> {
    let Some(v) = ctx.env.get("SGLANG_CUSTOM_ALLREDUCE_ALGO") else {
        return vec![];
    };
    if pcie_tp_over_two(ctx) {
        return vec![]; // AR002 reports it with the PCIe story
    }
    let why = if !algo_read(ctx) {
        format!(
            "the sgl-kernel pinned by SGLang {} predates the variable",
            ctx.version
        )
    } else {
        match car(ctx) {
            CustomAllReduce::Legacy => return vec![],
            CustomAllReduce::V2 => "custom all-reduce runs the V2 (symmetric-memory) implementation here, and the variable only affects the legacy C++ kernel".into(),
            CustomAllReduce::Off(r) => format!("custom all-reduce is off here ({r})"),
        }
    };
    vec![
        Fired::new(format!(
            "SGLANG_CUSTOM_ALLREDUCE_ALGO={v} has no effect: {why}"
        ))
        .with_fix(unset_env(&["SGLANG_CUSTOM_ALLREDUCE_ALGO"])),
    ]
}

pub(crate) fn algo_invalid(ctx: &Context) -> Vec<Fired> {
    let Some(v) = ctx.env.get("SGLANG_CUSTOM_ALLREDUCE_ALGO") else {
        return vec![];
    };
    if ["1stage", "oneshot", "2stage", "twoshot"].contains(&v)
        || !algo_read(ctx)
        || car(ctx) != CustomAllReduce::Legacy
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "SGLANG_CUSTOM_ALLREDUCE_ALGO={v:?} is not one of 1stage, oneshot, 2stage, twoshot; the legacy custom all-reduce kernel throws on the first all-reduce"
    ))
    .with_fix(unset_env(&["SGLANG_CUSTOM_ALLREDUCE_ALGO"]))]
}

pub(crate) fn world_size(ctx: &Context) -> Vec<Fired> {
    let tp = ctx.tp();
    if [1, 2, 4, 6, 8].contains(&tp)
        || ctx.nnodes() > 1
        || ctx.user().flag(opt::DISABLE_CUSTOM_ALL_REDUCE)
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "TP {tp} is not 2, 4, 6 or 8: SGLang turns custom all-reduce off and every all-reduce goes through NCCL"
    ))]
}

pub(crate) fn pcie_nccl(ctx: &Context) -> Vec<Fired> {
    if !pcie_tp_over_two(ctx)
        || ctx.user().flag(opt::DISABLE_CUSTOM_ALL_REDUCE)
        || ![4, 6, 8].contains(&ctx.tp())
        || ctx.nnodes() > 1
        || FORCING.iter().any(|n| ctx.env.get(n).is_some())
    {
        return vec![];
    }
    let ipc = if crate::sglang::release::at_least(ctx.version, "0.5.22")
        && [4, 8].contains(&ctx.tp())
        && ctx
            .env
            .get("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE")
            .is_none_or(|v| !env_true(v))
    {
        "; SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1 opts into FlashInfer's PCIe all-reduce (bf16 only)"
    } else {
        ""
    };
    vec![Fired::new(format!(
        "TP {} over PCIe without full NVLink ({}): SGLang keeps custom all-reduce off and uses NCCL, as it should{ipc}",
        ctx.tp(),
        ctx.describe_used(),
    ))]
}

pub(crate) fn uuid_visible_devices(ctx: &Context) -> Vec<Fired> {
    let Some(cvd) = ctx.env.get("CUDA_VISIBLE_DEVICES") else {
        return vec![];
    };
    let items: Vec<&str> = cvd
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if !items
        .iter()
        .any(|s| s.starts_with("GPU-") || s.starts_with("MIG-"))
    {
        return vec![];
    }
    // Only custom all-reduce's setup parses the variable; when SGLang keeps it off anyway
    // (flag, TP 1, unsupported world size, PCIe, multi-node) the UUIDs change nothing.
    let kind = match car(ctx) {
        CustomAllReduce::Off(_) => return vec![],
        CustomAllReduce::Legacy => "custom all-reduce",
        CustomAllReduce::V2 => "custom all-reduce (V2)",
    };
    let msg = format!(
        "CUDA_VISIBLE_DEVICES={cvd} names GPUs by UUID; TP {} would use SGLang's {kind}, whose setup parses the variable with int(), fails and falls back to NCCL",
        ctx.tp()
    );
    // Translate to topology (NVML, PCI-bus-order) indices when every UUID is known.
    let idx: Option<Vec<String>> = items
        .iter()
        .map(|s| {
            ctx.topology
                .gpus
                .iter()
                .find(|g| g.uuid == *s || (s.len() >= 8 && g.uuid.starts_with(s)))
                .map(|g| g.index.to_string())
        })
        .collect();
    let mut f = Fired::new(msg);
    if let Some(idx) = idx {
        let list = idx.join(",");
        f = f.with_fix(crate::rules::Fix {
            summary: format!("set CUDA_VISIBLE_DEVICES={list} and CUDA_DEVICE_ORDER=PCI_BUS_ID (same GPUs, by index)"),
            args: vec![],
            env: vec![
                crate::rules::EnvEdit::Set { name: "CUDA_VISIBLE_DEVICES".into(), value: list },
                crate::rules::EnvEdit::Set { name: "CUDA_DEVICE_ORDER".into(), value: "PCI_BUS_ID".into() },
            ],
        });
    }
    vec![f]
}

pub(crate) fn two_gpu_no_p2p_slow(ctx: &Context) -> Vec<Fired> {
    if ctx.tp() != 2 || ctx.topology.p2p_broken_pairs(ctx.tp_gpus()).is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "TP 2 on {} without CUDA peer access: NCCL stages every all-reduce through host shared memory, so long prompts spend much of prefill in all-reduce",
        ctx.describe_used()
    ))]
}

pub(crate) fn a800(ctx: &Context) -> Vec<Fired> {
    let a800: Vec<_> = ctx
        .used()
        .into_iter()
        .filter(|g| g.name.contains("A800"))
        .collect();
    if a800.is_empty() || matches!(car(ctx), CustomAllReduce::Off(_)) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{}: custom all-reduce on A800 (reduced NVLink) has caused NCCL timeouts; --disable-custom-all-reduce was added for this case",
        Context::describe(&a800)
    ))]
}
