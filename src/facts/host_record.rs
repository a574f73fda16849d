//! The host facts a topology file records (topology/v1 `host`, an additive optional object):
//! `/dev/shm`, the container, the RDMA devices and the kernel-deciding Python packages of the
//! interpreter SGLang would run. `detect --json` writes them; with `--topology` the pipeline
//! reads them from the file, so the COMM, EP and PKG rules run for a machine that is not this one.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::host::{HostFacts, shm_size_from_mounts};
use super::packages::{Cuda, Packages, Toolkit, TorchBuild};

/// The object's keys, for the strict reader.
pub(crate) const HOST_KEYS: &[&str] = &[
    "shm_present",
    "shm_bytes",
    "in_container",
    "rdma_devices",
    "packages",
    "torch_build",
    "nvcc_version",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostRecord {
    /// `/dev/shm` exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_present: Option<bool>,
    /// Size of the `/dev/shm` mount in bytes (`size=` of its tmpfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shm_bytes: Option<u64>,
    /// Running in a container (Docker, Podman, Kubernetes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) in_container: Option<bool>,
    /// RDMA device names under `/sys/class/infiniband` (`mlx5_0`, …); empty: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma_devices: Option<Vec<String>>,
    /// Installed distributions that decide SGLang's kernels: normalised name → version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packages: Option<BTreeMap<String, String>>,
    /// What torch was built for: `cuda 12.8`, `rocm 6.2`, `cpu` or `xpu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch_build: Option<String>,
    /// The CUDA release of the `nvcc` FlashInfer would compile with (`major.minor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nvcc_version: Option<String>,
}

impl HostRecord {
    /// This machine's host facts and the given packages, as `detect` records them.
    pub(crate) fn probe(packages: Option<&Packages>) -> HostRecord {
        let mounts =
            crate::fsread::optional_string(Path::new("/proc/self/mounts"), crate::fsread::SYSTEM)
                .unwrap_or_default();
        let facts = HostFacts::probe();
        let mut record = HostRecord {
            shm_present: Some(facts.shm_present),
            shm_bytes: shm_size_from_mounts(&mounts),
            in_container: facts.in_container,
            rdma_devices: Some(super::host::rdma_devices(Path::new(
                "/sys/class/infiniband",
            ))),
            ..HostRecord::default()
        };
        if let Some(p) = packages {
            record.set_packages(p);
        }
        record
    }

    /// Records `p`: every distribution found, torch's build and the toolkit's nvcc.
    pub(crate) fn set_packages(&mut self, p: &Packages) {
        let versions = p
            .packages
            .values()
            .map(|d| (d.name.clone(), d.version.clone()));
        self.packages = Some(versions.collect());
        self.torch_build = p.torch_build.as_ref().map(|b| match b {
            TorchBuild::Cuda(c) => format!("cuda {c}"),
            TorchBuild::Rocm(h) => format!("rocm {h}"),
            TorchBuild::Cpu => "cpu".into(),
            TorchBuild::Xpu => "xpu".into(),
        });
        self.nvcc_version = p
            .cuda_toolkit
            .as_ref()
            .filter(|t| t.nvcc)
            .and_then(|t| t.version)
            .map(|v| v.to_string());
    }

    /// The facts the rules read, when the record says anything about `/dev/shm` or RDMA. An
    /// unrecorded `/dev/shm` counts as present: absence is never guessed.
    pub fn host_facts(&self) -> Option<HostFacts> {
        if self.shm_present.is_none() && self.shm_bytes.is_none() && self.rdma_devices.is_none() {
            return None;
        }
        Some(HostFacts {
            shm_present: self.shm_present.unwrap_or(true),
            shm_bytes: self.shm_bytes,
            in_container: self.in_container,
            ib_devices: self.rdma_devices.clone(),
        })
    }

    /// The recorded packages, when recorded.
    pub fn installed(&self) -> Option<Packages> {
        let map = self.packages.as_ref()?;
        let pairs: Vec<(&str, &str)> = map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut p = Packages::from_versions(&pairs);
        if let Some(b) = self.torch_build.as_deref().and_then(torch_build) {
            p.torch_build = Some(b);
        }
        p.cuda_toolkit = self.nvcc_version.as_deref().map(|v| Toolkit {
            home: "(recorded by detect)".into(),
            nvcc: true,
            version: cuda(v),
        });
        Some(p)
    }
}

fn cuda(v: &str) -> Option<Cuda> {
    let (a, b) = v.split_once('.')?;
    Some(Cuda(a.parse().ok()?, b.parse().ok()?))
}

fn torch_build(s: &str) -> Option<TorchBuild> {
    match s.split_once(' ') {
        Some(("cuda", v)) => cuda(v).map(TorchBuild::Cuda),
        Some(("rocm", v)) => Some(TorchBuild::Rocm(v.to_owned())),
        _ => match s {
            "cpu" => Some(TorchBuild::Cpu),
            "xpu" => Some(TorchBuild::Xpu),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_round_trip_through_the_record() {
        let mut p = Packages::from_versions(&[
            ("torch", "2.9.1"),
            ("nvidia-nccl-cu12", "2.26.2"),
            ("sgl-kernel", "0.3.16.post5"),
        ]);
        p.torch_build = Some(TorchBuild::Cuda(Cuda(12, 8)));
        p.cuda_toolkit = Some(Toolkit {
            home: "/usr/local/cuda".into(),
            nvcc: true,
            version: Some(Cuda(12, 9)),
        });
        let mut r = HostRecord::default();
        r.set_packages(&p);
        assert_eq!(r.torch_build.as_deref(), Some("cuda 12.8"));
        assert_eq!(r.nvcc_version.as_deref(), Some("12.9"));
        let back = r.installed().unwrap();
        assert_eq!(back.torch_cuda(), Some(Cuda(12, 8)));
        assert_eq!(back.nccl().unwrap().version, "2.26.2");
        assert_eq!(back.sgl_kernel().unwrap().version, "0.3.16.post5");
        assert_eq!(back.cuda_toolkit.unwrap().version, Some(Cuda(12, 9)));
        assert_eq!(HostRecord::default().installed(), None);
    }

    #[test]
    fn host_facts_never_guess_an_absent_shm() {
        assert_eq!(HostRecord::default().host_facts(), None);
        let r = HostRecord {
            rdma_devices: Some(vec![]),
            ..Default::default()
        };
        let f = r.host_facts().unwrap();
        assert!(f.shm_present);
        assert_eq!((f.ib_devices, f.shm_bytes), (Some(vec![]), None));
        for (s, want) in [
            ("rocm 6.2", Some(TorchBuild::Rocm("6.2".into()))),
            ("cpu", Some(TorchBuild::Cpu)),
            ("cuda x", None),
            ("", None),
        ] {
            assert_eq!(torch_build(s), want, "{s}");
        }
    }
}
