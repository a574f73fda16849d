//! Accelerators other than NVIDIA GPUs, seen from their device nodes. SGLang's `--device`
//! auto-detection takes CUDA (ROCm builds of torch answer as CUDA too), then Intel XPU, Ascend
//! NPU, Habana HPU; MUSA builds take Moore Threads GPUs. On such a host the launcher has nothing
//! to check, so it steps aside.

use std::path::Path;

/// One accelerator kind found, with the node that shows it (`/dev/kfd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub name: &'static str,
    pub evidence: String,
}

/// Device nodes (file-name prefixes under `dev/`) that only these accelerators' drivers create.
const NODES: &[(&str, &str, &str)] = &[
    ("AMD ROCm GPU", "", "kfd"),
    ("Ascend NPU", "", "davinci"),
    ("Habana Gaudi HPU", "", "hl"),
    ("Moore Threads MUSA GPU", "", "mtgpu"),
    ("Intel XPU", "dri", "renderD"),
];

/// The accelerators present under `root` (`/` on a real host).
pub fn other(root: &Path) -> Vec<Found> {
    NODES
        .iter()
        .filter_map(|(name, sub, prefix)| {
            let dir = root.join("dev").join(sub);
            let node = first_node(&dir, prefix)?;
            // Every GPU driver creates render nodes: only Intel's (PCI vendor 0x8086) count.
            if *prefix == "renderD" && !intel_render_node(root, &node) {
                return None;
            }
            Some(Found {
                name,
                evidence: format!("/{}", Path::new("dev").join(sub).join(&node).display()),
            })
        })
        .collect()
}

/// The first entry of `dir` named `prefix` followed by nothing or a digit, in name order.
fn first_node(dir: &Path, prefix: &str) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| {
            n.strip_prefix(prefix).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_digit())
            })
        })
        .collect();
    names.sort();
    names.into_iter().next()
}

fn intel_render_node(root: &Path, node: &str) -> bool {
    let vendor = root.join("sys/class/drm").join(node).join("device/vendor");
    std::fs::read_to_string(vendor).is_ok_and(|v| v.trim() == "0x8086")
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
                    evidence: "/dev/kfd".into()
                },
                Found {
                    name: "Ascend NPU",
                    evidence: "/dev/davinci3".into()
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
}
