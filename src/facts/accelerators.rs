//! Accelerators other than NVIDIA GPUs, seen from their device nodes. SGLang's `--device`
//! auto-detection takes CUDA (ROCm builds of torch answer as CUDA too), then Intel XPU, Ascend
//! NPU, Habana HPU; MUSA builds take Moore Threads GPUs. On such a host the launcher has nothing
//! to check, so it steps aside.

use std::path::Path;

/// One accelerator kind found, with the node that shows it (`/dev/kfd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) name: &'static str,
    pub(crate) evidence: String,
    /// The vendor as topology/v1 names it (`amd`, `huawei`, …).
    pub(crate) vendor: &'static str,
    /// How many devices the nodes show (at least 1).
    pub(crate) count: u32,
}

/// One accelerator kind: its name, vendor, the directory under `dev/` and the file-name prefix
/// of the node that only its driver creates, and the prefix of one node per device.
struct Kind {
    name: &'static str,
    vendor: &'static str,
    sub: &'static str,
    marker: &'static str,
    per_device: &'static str,
    /// Render nodes count only with this PCI vendor id (every GPU driver creates them).
    pci_vendor: Option<&'static str>,
}

const KINDS: &[Kind] = &[
    Kind {
        name: "AMD ROCm GPU",
        vendor: "amd",
        sub: "",
        marker: "kfd",
        per_device: "dri/renderD",
        pci_vendor: Some("0x1002"),
    },
    Kind {
        name: "Ascend NPU",
        vendor: "huawei",
        sub: "",
        marker: "davinci",
        per_device: "davinci",
        pci_vendor: None,
    },
    Kind {
        name: "Habana Gaudi HPU",
        vendor: "habana",
        sub: "",
        marker: "hl",
        per_device: "hl",
        pci_vendor: None,
    },
    Kind {
        name: "Moore Threads MUSA GPU",
        vendor: "mthreads",
        sub: "",
        marker: "mtgpu",
        per_device: "mtgpu",
        pci_vendor: None,
    },
    Kind {
        name: "Intel XPU",
        vendor: "intel",
        sub: "dri",
        marker: "renderD",
        per_device: "dri/renderD",
        pci_vendor: Some("0x8086"),
    },
];

/// The accelerators present under `root` (`/` on a real host).
pub(crate) fn other(root: &Path) -> Vec<Found> {
    KINDS
        .iter()
        .filter_map(|k| {
            let dir = root.join("dev").join(k.sub);
            let nodes = nodes(&dir, k.marker);
            // Every GPU driver creates render nodes: only the vendor's count.
            let node = match k.pci_vendor.filter(|_| k.marker == "renderD") {
                Some(v) => nodes.into_iter().find(|n| pci_vendor(root, n) == Some(v))?,
                None => nodes.into_iter().next()?,
            };
            Some(Found {
                name: k.name,
                evidence: format!("/{}", Path::new("dev").join(k.sub).join(&node).display()),
                vendor: k.vendor,
                count: devices(root, k).max(1),
            })
        })
        .collect()
}

/// The devices of one kind: its per-device nodes (of its PCI vendor, for render nodes).
fn devices(root: &Path, k: &Kind) -> u32 {
    let (sub, prefix) = k.per_device.rsplit_once('/').unwrap_or(("", k.per_device));
    let found = nodes(&root.join("dev").join(sub), prefix)
        .into_iter()
        .filter(|n| n.len() > prefix.len())
        .filter(|n| k.pci_vendor.is_none_or(|v| pci_vendor(root, n) == Some(v)))
        .count();
    u32::try_from(found).unwrap_or(u32::MAX)
}

/// The entries of `dir` named `prefix` followed by nothing or a digit, in name order.
fn nodes(dir: &Path, prefix: &str) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| {
            n.strip_prefix(prefix).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_digit())
            })
        })
        .collect();
    names.sort();
    names
}

/// The PCI vendor id of a DRM node (`0x8086`), from sysfs.
fn pci_vendor(root: &Path, node: &str) -> Option<&'static str> {
    let vendor = root.join("sys/class/drm").join(node).join("device/vendor");
    let text = std::fs::read_to_string(vendor).ok()?;
    ["0x1002", "0x8086", "0x10de"]
        .into_iter()
        .find(|v| text.trim() == *v)
}

/// These accelerators as topology/v1 lists them.
pub(crate) fn listed(found: &[Found]) -> Vec<crate::facts::topology::Accelerator> {
    found
        .iter()
        .map(|f| crate::facts::topology::Accelerator {
            vendor: f.vendor.to_owned(),
            name: f.name.to_owned(),
            count: f.count,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn device_nodes_name_the_accelerator() {
        let t = tempfile::tempdir().unwrap();
        assert!(other(t.path()).is_empty());
        touch(t.path(), "dev/kfd", "");
        touch(t.path(), "dev/davinci_manager", "");
        touch(t.path(), "dev/davinci3", "");
        touch(t.path(), "dev/hlx", "");
        let found = other(t.path());
        assert_eq!(
            found,
            [
                Found {
                    name: "AMD ROCm GPU",
                    evidence: "/dev/kfd".into(),
                    vendor: "amd",
                    count: 1,
                },
                Found {
                    name: "Ascend NPU",
                    evidence: "/dev/davinci3".into(),
                    vendor: "huawei",
                    count: 1,
                }
            ]
        );
    }

    #[test]
    fn only_intel_render_nodes_count() {
        let t = tempfile::tempdir().unwrap();
        touch(t.path(), "dev/dri/renderD128", "");
        touch(
            t.path(),
            "sys/class/drm/renderD128/device/vendor",
            "0x10de\n",
        );
        assert!(other(t.path()).is_empty());
        touch(
            t.path(),
            "sys/class/drm/renderD128/device/vendor",
            "0x8086\n",
        );
        assert_eq!(other(t.path())[0].evidence, "/dev/dri/renderD128");
    }

    #[test]
    fn each_device_node_counts_once() {
        let t = tempfile::tempdir().unwrap();
        touch(t.path(), "dev/kfd", "");
        for (n, vendor) in [(128, "0x1002"), (129, "0x1002"), (130, "0x10de")] {
            touch(t.path(), &format!("dev/dri/renderD{n}"), "");
            touch(
                t.path(),
                &format!("sys/class/drm/renderD{n}/device/vendor"),
                &format!("{vendor}\n"),
            );
        }
        let found = other(t.path());
        assert_eq!((found[0].vendor, found[0].count), ("amd", 2));
        let listed = listed(&found);
        assert_eq!(listed[0].name, "AMD ROCm GPU");
    }
}
