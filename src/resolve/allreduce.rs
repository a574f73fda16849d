//! SGLang's custom all-reduce decision for a TP group.

use crate::sglang::opt;
use serde::Serialize;

use crate::facts::{Env, Topology};
use crate::sglang::{Parallel, SglangArgs};

/// Which custom all-reduce implementation SGLang will run for the TP group, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", content = "reason", rename_all = "snake_case")]
pub(crate) enum CustomAllReduce {
    /// Off: NCCL does every all-reduce. The reason is for reports.
    Off(&'static str),
    /// sgl-kernel's IPC implementation (~24 MiB per GPU).
    Legacy,
    /// 0.5.15+ symmetric-memory implementation (full NVLink only).
    V2,
}

/// SGLang's gates, in SGLang's order, evaluated on the GPUs of one TP group.
pub(crate) fn decide(
    version: &str,
    args: &SglangArgs,
    env: &Env,
    topology: &Topology,
    parallel: &Parallel,
    tp_gpus: &[u32],
) -> CustomAllReduce {
    let ws = parallel.tp;
    if args.flag(opt::DISABLE_CUSTOM_ALL_REDUCE) {
        return CustomAllReduce::Off(opt::DISABLE_CUSTOM_ALL_REDUCE);
    }
    if ws == 1 {
        return CustomAllReduce::Off("world size 1");
    }
    if super::inputs::deterministic(args) {
        return CustomAllReduce::Off(opt::ENABLE_DETERMINISTIC_INFERENCE);
    }
    if parallel.nnodes > 1 {
        return CustomAllReduce::Off("TP group spans nodes");
    }
    if ![2, 4, 6, 8].contains(&ws) {
        return CustomAllReduce::Off("unsupported world size");
    }
    let full_nvlink = topology.fully_nvlinked(tp_gpus);
    if ws > 2 && !full_nvlink {
        return CustomAllReduce::Off("more than two PCIe-only GPUs");
    }
    let v2_default = crate::sglang::release::at_least(version, "0.5.15");
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
