//! `detect` for people: one line per GPU, then the link matrix as `nvidia-smi topo -m` shows it.

use std::fmt::Write;

use crate::facts::Topology;
use crate::facts::host_record::HostRecord;
use crate::out::escape;

pub fn topology(t: &Topology) -> String {
    let mut out = String::new();
    // Every string here comes from a file or the driver: one line each, no terminal controls.
    let host = escape(t.hostname.as_deref().unwrap_or("this machine"));
    let driver = t
        .driver_version
        .as_deref()
        .map(|d| format!(", driver {}", escape(d)))
        .unwrap_or_default();
    let cuda = t
        .cuda_driver_version
        .as_deref()
        .map(|c| format!(", CUDA {}", escape(c)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{host}: {} GPU{}{driver}{cuda}",
        t.gpus.len(),
        if t.gpus.len() == 1 { "" } else { "s" }
    );
    for g in &t.gpus {
        let used = g
            .memory_used_mib
            .map(|u| format!(", {u} MiB in use"))
            .unwrap_or_default();
        let pcie = match (g.pcie_gen, g.pcie_width) {
            (Some(gen_), Some(w)) => format!(", PCIe {gen_}.0 x{w}"),
            _ => String::new(),
        };
        let numa = g
            .numa_node
            .map(|n| format!(", NUMA {n}"))
            .unwrap_or_default();
        let mig = if g.mig_enabled { ", MIG on" } else { "" };
        let _ = writeln!(
            out,
            "  GPU {}: {} (cc {}, {} MiB{used}{pcie}{numa}{mig}) {} {}",
            g.index,
            escape(&g.name),
            escape(&g.compute_capability),
            g.memory_total_mib,
            escape(&g.pci_bus_id),
            escape(&g.uuid)
        );
    }
    if t.gpus.len() > 1 {
        let _ = write!(out, "\n      ");
        for g in &t.gpus {
            let _ = write!(out, "{:>6}", format!("GPU{}", g.index));
        }
        let _ = writeln!(out);
        for a in &t.gpus {
            let _ = write!(out, "{:<6}", format!("GPU{}", a.index));
            for b in &t.gpus {
                let cell = if a.index == b.index {
                    "X".to_owned()
                } else {
                    match t.link(a.index, b.index) {
                        Some(l) if l.p2p != "ok" => format!("{}*", l.path),
                        Some(l) => l.path.clone(),
                        None => "?".to_owned(),
                    }
                };
                let _ = write!(out, "{cell:>6}");
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(out, "  (* = no P2P read access; ? = link unknown)");
    }
    if let Some(h) = &t.host {
        out.push_str(&host_lines(h));
    }
    out
}

/// The recorded host facts, one line each: `/dev/shm` and RDMA, then the packages.
fn host_lines(h: &HostRecord) -> String {
    let shm = match (h.shm_present, h.shm_bytes) {
        (Some(false), _) => "no /dev/shm".to_owned(),
        (_, Some(b)) => format!("/dev/shm {} MiB", b >> 20),
        _ => "/dev/shm size unknown".to_owned(),
    };
    let container = match h.in_container {
        Some(true) => " (in a container)",
        _ => "",
    };
    let rdma = match h.rdma_devices.as_deref() {
        Some([]) => "no RDMA devices".to_owned(),
        Some(d) => format!("RDMA {}", d.join(", ")),
        None => "RDMA unknown".to_owned(),
    };
    let mut s = format!("\nhost: {shm}{container}; {rdma}\n");
    if let Some(p) = h.installed() {
        let summary = p.summary();
        if !summary.is_empty() {
            s.push_str(&format!("packages: {summary}\n"));
        }
    }
    s
}
