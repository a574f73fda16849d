//! Facts derived from the others: what SGLang itself will decide at start-up.

use super::{Env, Topology};
use crate::sglang::SglangArgs;

/// Which custom all-reduce implementation SGLang will run for the TP group, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomAllReduce {
    /// Off: NCCL does every all-reduce. The reason is for reports.
    Off(&'static str),
    /// sgl-kernel's IPC implementation (~24 MiB per GPU).
    Legacy,
    /// 0.5.15+ symmetric-memory implementation (full NVLink only).
    V2,
}

/// Tensor-parallel size as the user gave it (abbreviations resolved by the parser), default 1.
pub fn tp_size(args: &SglangArgs) -> i64 {
    args.int("--tp-size").unwrap_or(1).max(1)
}

/// SGLang's gates (sglang-internals §3.2–3.3), evaluated on the GPUs of one TP group.
pub fn custom_allreduce(
    version: &str,
    args: &SglangArgs,
    env: &Env,
    topology: &Topology,
    tp_gpus: &[u32],
) -> CustomAllReduce {
    let ws = tp_size(args);
    if args.flag("--disable-custom-all-reduce") {
        return CustomAllReduce::Off("--disable-custom-all-reduce");
    }
    if ws == 1 {
        return CustomAllReduce::Off("world size 1");
    }
    if args.flag("--enable-deterministic-inference") {
        return CustomAllReduce::Off("--enable-deterministic-inference");
    }
    if args.int("--nnodes").unwrap_or(1) > 1 {
        return CustomAllReduce::Off("TP group spans nodes");
    }
    if ![2, 4, 6, 8].contains(&ws) {
        return CustomAllReduce::Off("unsupported world size");
    }
    let full_nvlink = topology.fully_nvlinked(tp_gpus);
    if ws > 2 && !full_nvlink {
        return CustomAllReduce::Off("more than two PCIe-only GPUs");
    }
    let v2_default = crate::sglang::version::at_least(version, "0.5.15");
    let v2 = full_nvlink
        && match env.get("SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2") {
            Some(v) => matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true"),
            None => v2_default,
        };
    if v2 {
        CustomAllReduce::V2
    } else {
        CustomAllReduce::Legacy
    }
}
