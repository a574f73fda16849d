//! The topology model and its file format (contract: topology-v1.md).

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "sglang-launch/topology/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub schema: String,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_driver_version: Option<String>,
    pub gpus: Vec<Gpu>,
    #[serde(default)]
    pub links: Vec<Link>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub pci_bus_id: String,
    /// "major.minor"
    pub compute_capability: String,
    pub memory_total_mib: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_used_mib: Option<u64>,
    #[serde(default)]
    pub mig_enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_gen: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_width: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub gpus: [u32; 2],
    /// As `nvidia-smi topo -m` prints it: NV<n>, PIX, PXB, PHB, NODE, SYS.
    pub path: String,
    pub nvlink: bool,
    /// NVML P2P read status: ok, not_supported, chipset_not_supported, …, unknown.
    pub p2p: String,
}

impl Gpu {
    /// Compute capability as (major, minor); `None` when the file says something unparsable.
    pub fn cc(&self) -> Option<(u32, u32)> {
        let (a, b) = self.compute_capability.split_once('.')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    }

    /// Memory not held by other processes, in MiB.
    pub fn memory_free_mib(&self) -> u64 {
        self.memory_total_mib
            .saturating_sub(self.memory_used_mib.unwrap_or(0))
    }
}

impl Topology {
    pub fn gpu(&self, index: u32) -> Option<&Gpu> {
        self.gpus.iter().find(|g| g.index == index)
    }

    /// The link between two GPUs, either order. `None` means unknown: treat as PCIe, P2P unknown.
    pub fn link(&self, a: u32, b: u32) -> Option<&Link> {
        self.links
            .iter()
            .find(|l| (l.gpus[0] == a && l.gpus[1] == b) || (l.gpus[0] == b && l.gpus[1] == a))
    }

    /// Whether every pair among `gpus` is NVLink-connected (what SGLang's custom all-reduce checks).
    pub fn fully_nvlinked(&self, gpus: &[u32]) -> bool {
        pairs(gpus).all(|(a, b)| self.link(a, b).is_some_and(|l| l.nvlink))
    }

    /// Pairs among `gpus` whose P2P read status is known and not `ok`.
    pub fn p2p_broken_pairs(&self, gpus: &[u32]) -> Vec<(u32, u32)> {
        pairs(gpus)
            .filter(|&(a, b)| {
                self.link(a, b)
                    .is_some_and(|l| l.p2p != "ok" && l.p2p != "unknown")
            })
            .collect()
    }
}

/// Every unordered pair, in order.
pub fn pairs(gpus: &[u32]) -> impl Iterator<Item = (u32, u32)> + '_ {
    gpus.iter()
        .enumerate()
        .flat_map(move |(i, &a)| gpus[i + 1..].iter().map(move |&b| (a, b)))
}
