//! Facts about the host outside the GPUs, for the rules about the runtime environment
//! (NCCL's shared memory in containers, RDMA). Probed from the filesystem by
//! [`HostFacts::probe`], or read from a topology file's `host` record; tests build them by hand.

use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFacts {
    /// Whether `/dev/shm` exists.
    pub shm_present: bool,
    /// Size of the `/dev/shm` mount in bytes when the mount table says (`size=` of tmpfs).
    pub shm_bytes: Option<u64>,
    /// Running in a container (Docker / Podman / Kubernetes), when it can be told.
    pub in_container: Option<bool>,
    /// The RDMA device names under `/sys/class/infiniband` (InfiniBand / RoCE), sorted; empty
    /// when the class is missing or empty (SGLang refuses either the same way).
    pub ib_devices: Option<Vec<String>>,
}

impl HostFacts {
    /// Reads `/dev/shm`, `/proc/self/mounts` and container markers. Never fails: what cannot be
    /// read is left unknown.
    pub(crate) fn probe() -> Self {
        let mounts =
            crate::fsread::optional_string(Path::new("/proc/self/mounts"), crate::fsread::SYSTEM)
                .unwrap_or_default();
        let in_container = Path::new("/.dockerenv").exists()
            || Path::new("/run/.containerenv").exists()
            || std::env::var_os("KUBERNETES_SERVICE_HOST").is_some();
        HostFacts {
            shm_present: Path::new("/dev/shm").is_dir(),
            shm_bytes: shm_size_from_mounts(&mounts),
            in_container: Some(in_container),
            ib_devices: Some(rdma_devices(Path::new("/sys/class/infiniband"))),
        }
    }

    /// Known to have no RDMA device.
    pub(crate) fn no_rdma(&self) -> bool {
        self.ib_devices.as_ref().is_some_and(Vec::is_empty)
    }
}

/// Names under the RDMA class directory, sorted; none when it does not exist.
pub(crate) fn rdma_devices(class: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(class)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `size=` of the `/dev/shm` tmpfs in a `/proc/mounts` table (k/m/g suffixes, or bytes).
pub(crate) fn shm_size_from_mounts(mounts: &str) -> Option<u64> {
    let line = mounts
        .lines()
        .rfind(|l| l.split_whitespace().nth(1) == Some("/dev/shm"))?;
    let opts = line.split_whitespace().nth(3)?;
    let size = opts.split(',').find_map(|o| o.strip_prefix("size="))?;
    let (num, mult) = match size.char_indices().last()? {
        (i, 'k' | 'K') => (&size[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&size[..i], 1 << 20),
        (i, 'g' | 'G') => (&size[..i], 1 << 30),
        _ => (size, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdma_devices_are_the_class_directory_entries() {
        let d = tempfile::tempdir().unwrap();
        assert!(rdma_devices(&d.path().join("missing")).is_empty());
        for n in ["mlx5_1", "mlx5_0"] {
            std::fs::create_dir(d.path().join(n)).unwrap();
        }
        assert_eq!(rdma_devices(d.path()), ["mlx5_0", "mlx5_1"]);
    }

    #[test]
    fn docker_default_shm_is_64_mib() {
        let m = "overlay / overlay rw 0 0\nshm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n";
        assert_eq!(shm_size_from_mounts(m), Some(64 << 20));
        assert_eq!(
            shm_size_from_mounts("tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n"),
            None
        );
        assert_eq!(shm_size_from_mounts(""), None);
        assert_eq!(shm_size_from_mounts("x /dev/shm tmpfs size=zz 0 0"), None);
    }
}
