//! The full planner on a node like the record's: its GPU, and the free memory before the weights
//! that the record logged.

use sglang_launch::facts::model::ModelFacts;
use sglang_launch::facts::{Env, Gpu, Topology};
use sglang_launch::plan::memory::{self, MemoryOutcome};
use sglang_launch::resolve::{Context, Facts};
use sglang_launch::sglang::SglangArgs;

use super::record::{self, Record};

/// `n` identical GPUs with no link facts: what a log tells about a box.
pub fn uniform_node(n: u32, name: &str, cc: &str, total_mib: u64, used_mib: u64) -> Topology {
    Topology {
        schema: "sglang-launch/topology/v1".into(),
        source: "test".into(),
        hostname: None,
        driver_version: None,
        cuda_driver_version: None,
        gpus: (0..n)
            .map(|i| Gpu {
                index: i,
                uuid: format!("GPU-{i}"),
                name: name.to_owned(),
                pci_bus_id: format!("0000:{i:02x}:00.0"),
                compute_capability: cc.into(),
                memory_total_mib: total_mib,
                memory_used_mib: Some(used_mib),
                mig_enabled: false,
                numa_node: None,
                pcie_gen: None,
                pcie_width: None,
            })
            .collect(),
        links: Vec::new(),
        host: None,
        accelerators: Vec::new(),
    }
}

/// The plan without the record's fraction (what we would choose) and with it (what we would say
/// about the launch as it ran).
pub struct Runs {
    pub planned: MemoryOutcome,
    pub as_run: MemoryOutcome,
}

/// Compute capability from the GPU's name: Hopper, Blackwell, else Ampere/Ada-like.
fn cc(name: &str) -> &'static str {
    let has = |list: &[&str]| list.iter().any(|h| name.contains(h));
    if has(&["H100", "H800", "H20", "H200"]) {
        "9.0"
    } else if has(&["B200", "GB10"]) {
        "10.0"
    } else if has(&["5090", "5080"]) {
        "12.0"
    } else {
        "8.0"
    }
}

/// Both plans on `tp` GPUs like the record's, sized so that the free memory before the weights
/// is the logged one (overheads from a first pass), else empty GPUs of the logged capacity.
pub fn plan_like_log(
    r: &Record,
    version: &str,
    [planned_args, args]: [&SglangArgs; 2],
    facts: &ModelFacts,
) -> Runs {
    let n = r.tp() as u32;
    let name = r.gpu_name();
    let gpus: Vec<u32> = (0..n).collect();
    let env = Env::default();
    let node = |total: u64, used: u64| uniform_node(n, name, cc(name), total, used);
    let run = |topo: &Topology, a: &SglangArgs| {
        memory::plan(&Context::new(Facts {
            version,
            args: a,
            env: &env,
            topology: topo,
            gpus: &gpus,
            model: Some(facts),
            draft: None,
            host: None,
            packages: None,
        }))
    };
    let baseline = record::baseline_gib(r);
    let total_gib = r.f("gpu_mem_total_gb").or(baseline.map(|b| b + 1.5));
    let total_mib = (total_gib.unwrap_or(0.0) * 1024.0) as u64;
    let first = run(&node(total_mib, 0), planned_args);
    let topo = match (baseline, first.memory.as_ref()) {
        (Some(b), Some(m)) => {
            let res = &m.v1().reserved_mib;
            let want_free =
                (b * 1024.0) as u64 + res.cuda_context + res.nccl + res.custom_allreduce;
            let total = total_mib.max(want_free);
            node(total, total - want_free)
        }
        _ => node(total_mib, 0),
    };
    Runs {
        planned: run(&topo, planned_args),
        as_run: run(&topo, args),
    }
}
