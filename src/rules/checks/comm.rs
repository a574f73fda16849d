//! NCCL environment and communication topology.

use super::*;
use crate::sglang::opt;

pub(crate) fn nccl_p2p_disable_nvlink(ctx: &Context) -> Vec<Fired> {
    let Some(v) = ctx.env.get("NCCL_P2P_DISABLE") else {
        return vec![];
    };
    let g = ctx.tp_gpus();
    let nv = crate::facts::topology::pairs(g)
        .filter(|&(a, b)| ctx.topology.link(a, b).is_some_and(|l| l.nvlink))
        .count();
    if !nccl_on(v) || nv == 0 || ctx.tp() < 2 {
        return vec![];
    }
    vec![Fired::new(format!(
        "NCCL_P2P_DISABLE={v} on NVLinked GPUs ({}; {nv} NVLink pairs in the TP group): NCCL will route every collective through host memory instead of NVLink",
        ctx.describe_used()
    ))]
}

const GIB: u64 = 1 << 30;

pub(crate) fn shm(ctx: &Context) -> Vec<Fired> {
    let Some(h) = ctx.host else { return vec![] };
    // NCCL groups span TP × PP ranks; DP replicas do not talk through NCCL.
    let world = ctx.tp() * ctx.pp();
    if world < 2 || ctx.env.get("NCCL_SHM_DISABLE").is_some_and(nccl_on) {
        return vec![];
    }
    if !h.shm_present {
        return vec![Fired::new(format!(
            "/dev/shm does not exist and {world} GPU processes need it: NCCL fails with 'Error while creating shared memory segment'; mount one (docker --ipc=host or --shm-size, a Kubernetes emptyDir with medium: Memory)"
        ))];
    }
    match h.shm_bytes {
        Some(b) if b < GIB => vec![Fired::new(format!(
            "/dev/shm is {} MiB{}: too small for NCCL with {world} GPU processes (Docker's default is 64 MiB); use --ipc=host or --shm-size 16g",
            b >> 20,
            if h.in_container == Some(true) {
                " in this container"
            } else {
                ""
            }
        ))],
        _ => vec![],
    }
}

pub(crate) fn nvls_without_nvswitch(ctx: &Context) -> Vec<Fired> {
    let flag = ctx.user().flag(opt::ENABLE_NCCL_NVLS);
    let env = ctx.env.get("NCCL_NVLS_ENABLE").is_some_and(nccl_on);
    if !(flag || env) || ctx.tp() < 2 || ctx.tp_nvlinked() {
        return vec![];
    }
    let what = match (flag, env) {
        (true, true) => "--enable-nccl-nvls and NCCL_NVLS_ENABLE=1",
        (true, false) => opt::ENABLE_NCCL_NVLS,
        _ => "NCCL_NVLS_ENABLE=1",
    };
    let f = Fired::new(format!(
        "{what} on GPUs without full NVLink ({}): NVLink SHARP needs NVSwitch multicast; NCCL init can fail",
        ctx.describe_used()
    ));
    vec![if flag {
        f.with_fix(remove(opt::ENABLE_NCCL_NVLS))
    } else {
        f
    }]
}

pub(crate) fn multinode_ifname(ctx: &Context) -> Vec<Fired> {
    if ctx.nnodes() < 2 {
        return vec![];
    }
    let missing: Vec<&str> = ["NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"]
        .into_iter()
        .filter(|n| ctx.env.get(n).is_none())
        .collect();
    if missing.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "--nnodes {} without {}: NCCL/Gloo pick an interface themselves, and on hosts with several (docker0, a veth, IPv6) multi-node start-up can hang; if it does, export the data NIC on every node",
        ctx.nnodes(),
        missing.join(" and ")
    ))]
}

pub(crate) fn multinode_timeout(ctx: &Context) -> Vec<Fired> {
    if ctx.nnodes() < 2 || ctx.user().given(opt::DIST_TIMEOUT) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--nnodes {} without --dist-timeout: the NCCL watchdog's 600 s default has killed long multi-node runs; --dist-timeout 3600 is the usual remedy",
        ctx.nnodes()
    ))]
}
