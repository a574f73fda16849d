//! Reads the topology through NVML (`libnvidia-ml.so.1`, loaded at run time by nvml-wrapper).
//!
//! What NVML gives and how it maps onto the topology format:
//! * GPUs in NVML index order (PCI bus order); name, UUID, PCI bus id, memory total/used in MiB
//!   (bytes / 2^20, rounded down, as nvidia-smi prints memory.total/memory.used; NVML's separate
//!   `reserved` memory is not counted as used). Failing to read one of these is an error.
//! * Optional facts become `None` (or `false` for MIG) when NVML cannot give them (NotSupported,
//!   or a symbol an older driver lacks): NUMA node, current PCIe gen/width, MIG mode. A compute
//!   capability NVML cannot give is written as `"unknown"`.
//! * Per pair: `nvlink` is the NVLink P2P status being OK (what SGLang's `is_full_nvlink`
//!   checks), `p2p` the P2P read status. `path` is `NV<n>` with n the active NVLinks between the
//!   two (links whose remote end is the other GPU; on NVSwitch systems, where every link ends at a
//!   switch, the smaller of the two GPUs' switch-link counts when NVLink P2P is OK — what
//!   `nvidia-smi topo -m` prints there), `NV` when NVLink P2P is OK but no link can be counted,
//!   else the PCIe common-ancestor level. A pair whose level NVML cannot give and that has no
//!   NVLink is left out: the format reads a missing pair as unknown.
//! * `hostname` comes from the kernel, `source` is `"nvml"`.

use std::path::{Path, PathBuf};

use nvml_wrapper::Device;
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{P2pCapabilitiesIndex, P2pStatus, TopologyLevel};
use nvml_wrapper::error::NvmlError as Raw;

use super::gpus::parse_bus_id;
use super::topology::{CC_UNKNOWN, Gpu, Link, SCHEMA, Topology};

/// A PCI address: domain, bus, device, function.
type BusId = (u32, u32, u32, u32);

/// Environment variable naming the NVML library to load instead of `libnvidia-ml.so.1`.
pub const LIB_ENV: &str = "SGLANG_LAUNCH_NVML_LIB";

/// The library nvml-wrapper loads when no path is given (found through the loader's search path).
pub(crate) const DEFAULT_LIB: &str = "libnvidia-ml.so.1";

/// NVLink links per GPU in the NVML 12/13 headers (`NVML_NVLINK_MAX_LINKS`).
const MAX_NVLINKS: u32 = 18;

/// Why the GPUs could not be read. Display is one line ending in what to do.
#[derive(Debug, thiserror::Error)]
pub enum NvmlError {
    #[error(
        "cannot load the NVIDIA management library {lib} ({detail}); install the NVIDIA driver, \
         point {LIB_ENV} at libnvidia-ml.so.1, or describe the GPUs with --topology FILE"
    )]
    NoLibrary { lib: String, detail: String },
    #[error(
        "{lib} does not export {symbol} (a driver too old for sglang-launch, or not \
         libnvidia-ml); update the NVIDIA driver or use --topology FILE"
    )]
    MissingSymbol { lib: String, symbol: String },
    #[error(
        "the NVIDIA driver is not loaded (NVML from {lib} could not start); load the kernel \
         module (`nvidia-smi` must work) or use --topology FILE"
    )]
    DriverNotLoaded { lib: String },
    #[error(
        "NVML ({lib}) and the loaded NVIDIA kernel module are different versions (a driver \
         upgrade without a reboot?); reboot or reload the driver, or use --topology FILE"
    )]
    VersionMismatch { lib: String },
    #[error(
        "NVML ({lib}) has no permission to talk to the GPUs (in a container, is the NVIDIA \
         container toolkit set up?); fix the device permissions or use --topology FILE"
    )]
    NoPermission { lib: String },
    #[error("NVML ({lib}) could not {what}: {detail}; use --topology FILE")]
    Failed {
        lib: String,
        what: String,
        detail: String,
    },
}

/// The NVML library named by `SGLANG_LAUNCH_NVML_LIB`, if set and not empty.
pub fn default_lib_path() -> Option<PathBuf> {
    std::env::var_os(LIB_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn classify(lib: &str, what: &str, e: Raw) -> NvmlError {
    let lib = lib.to_owned();
    match e {
        Raw::LibloadingError(e) => NvmlError::NoLibrary {
            lib,
            detail: e.to_string(),
        },
        Raw::LibraryNotFound => NvmlError::NoLibrary {
            lib,
            detail: "NVML could not find a library it needs".to_owned(),
        },
        Raw::FailedToLoadSymbol(msg) => NvmlError::MissingSymbol {
            lib,
            symbol: missing_symbol(&msg),
        },
        Raw::DriverNotLoaded => NvmlError::DriverNotLoaded { lib },
        Raw::LibRmVersionMismatch => NvmlError::VersionMismatch { lib },
        Raw::NoPermission => NvmlError::NoPermission { lib },
        other => NvmlError::Failed {
            lib,
            what: what.to_owned(),
            detail: other.to_string(),
        },
    }
}

/// The symbol name in a loader message such as `/x.so: undefined symbol: nvmlDeviceGetUUID`.
fn missing_symbol(msg: &str) -> String {
    msg.rsplit("undefined symbol: ")
        .next()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or(msg)
        .to_owned()
}

/// Read every GPU and GPU pair through NVML. `lib_path` overrides the library to load (the
/// caller passes `--nvml-lib` or [`default_lib_path`]); `None` loads `libnvidia-ml.so.1`.
pub fn detect(lib_path: Option<&Path>) -> Result<Topology, NvmlError> {
    let lib = lib_path.map_or_else(|| DEFAULT_LIB.to_owned(), |p| p.display().to_string());
    let mut builder = Nvml::builder();
    if let Some(path) = lib_path {
        builder.lib_path(path.as_os_str());
    }
    let nvml = builder
        .init()
        .map_err(|e| classify(&lib, "initialise", e))?;
    let fail = |what: &str| {
        let lib = lib.clone();
        let what = what.to_owned();
        move |e: Raw| classify(&lib, &what, e)
    };

    let count = nvml.device_count().map_err(fail("count the GPUs"))?;
    let mut devices: Vec<Device> = Vec::new();
    let mut gpus: Vec<Gpu> = Vec::new();
    // Remote PCI bus ids of each GPU's active NVLinks (`None`: remote not readable).
    let mut nvlinks: Vec<Vec<Option<BusId>>> = Vec::new();
    for index in 0..count {
        let dev = nvml
            .device_by_index(index)
            .map_err(fail(&format!("open GPU {index}")))?;
        let gpu = read_gpu(&dev, index, &lib)?;
        nvlinks.push(active_nvlinks(&dev));
        gpus.push(gpu);
        devices.push(dev);
    }

    let links = read_links(&nvml, &devices, &gpus, &nvlinks);

    Ok(Topology {
        schema: SCHEMA.to_owned(),
        source: "nvml".to_owned(),
        hostname: hostname(),
        driver_version: nvml.sys_driver_version().ok(),
        cuda_driver_version: nvml.sys_cuda_driver_version().ok().map(cuda_version),
        gpus,
        links,
        host: None,
        accelerators: Vec::new(),
    })
}

/// Every pair of GPUs NVML can place: NVLink status, P2P read status and path (see the module
/// documentation for how the path is chosen). `nvlinks`: each GPU's active NVLinks' remote
/// PCI bus ids.
fn read_links(
    nvml: &Nvml,
    devices: &[Device],
    gpus: &[Gpu],
    nvlinks: &[Vec<Option<BusId>>],
) -> Vec<Link> {
    let gpu_buses: Vec<Option<BusId>> = gpus.iter().map(|g| parse_bus_id(&g.pci_bus_id)).collect();
    // Links that end at something other than one of our GPUs: NVSwitch ports.
    let switch_links: Vec<usize> = nvlinks
        .iter()
        .map(|links| {
            links
                .iter()
                .filter(|remote| remote.is_none_or(|r| !gpu_buses.contains(&Some(r))))
                .count()
        })
        .collect();

    let mut links = Vec::new();
    for a in 0..devices.len() {
        for b in a + 1..devices.len() {
            let (da, db) = (&devices[a], &devices[b]);
            let nvlink = matches!(
                da.p2p_status(db, P2pCapabilitiesIndex::NvLink),
                Ok(P2pStatus::Ok)
            );
            let p2p = match da.p2p_status(db, P2pCapabilitiesIndex::Read) {
                Ok(s) => p2p_name(s),
                Err(_) => "unknown",
            };
            let direct = match gpu_buses[b] {
                Some(bus) => nvlinks[a].iter().filter(|r| **r == Some(bus)).count(),
                None => 0,
            };
            let via_switch = switch_links[a].min(switch_links[b]);
            let path = if direct > 0 {
                format!("NV{direct}")
            } else if nvlink && via_switch > 0 {
                format!("NV{via_switch}")
            } else if nvlink {
                "NV".to_owned()
            } else {
                match nvml.topology_common_ancestor(da, db) {
                    Ok(level) => level_name(level).to_owned(),
                    Err(_) => continue,
                }
            };
            links.push(Link {
                gpus: [gpus[a].index, gpus[b].index],
                path,
                nvlink,
                p2p: p2p.to_owned(),
            });
        }
    }
    links
}

/// One GPU's facts; failing to read a required one is an error naming it.
fn read_gpu(dev: &Device, index: u32, lib: &str) -> Result<Gpu, NvmlError> {
    let need = |what: &str| {
        let what = format!("read the {what} of GPU {index}");
        move |e: Raw| classify(lib, &what, e)
    };
    let name = dev.name().map_err(need("name"))?;
    let uuid = dev.uuid().map_err(need("UUID"))?;
    let pci_bus_id = dev.pci_info().map_err(need("PCI bus id"))?.bus_id;
    let memory = dev.memory_info().map_err(need("memory size"))?;
    const MIB: u64 = 1 << 20;
    Ok(Gpu {
        index,
        uuid,
        name,
        pci_bus_id,
        compute_capability: dev.cuda_compute_capability().map_or_else(
            |_| CC_UNKNOWN.to_owned(),
            |c| format!("{}.{}", c.major, c.minor),
        ),
        memory_total_mib: memory.total / MIB,
        memory_used_mib: Some(memory.used / MIB),
        // NVML_DEVICE_MIG_ENABLE = 1; GPUs without MIG answer NotSupported.
        mig_enabled: dev.mig_mode().is_ok_and(|m| m.current == 1),
        numa_node: dev.numa_node_id().ok().map(i64::from),
        pcie_gen: dev.current_pcie_link_gen().ok(),
        pcie_width: dev.current_pcie_link_width().ok(),
    })
}

/// The remote end of every active NVLink of `dev`; empty without NVLink.
fn active_nvlinks(dev: &Device) -> Vec<Option<BusId>> {
    let mut out = Vec::new();
    for link in 0..MAX_NVLINKS {
        let l = dev.link_wrapper_for(link);
        match l.is_active() {
            Ok(true) => out.push(
                l.remote_pci_info()
                    .ok()
                    .and_then(|p| parse_bus_id(&p.bus_id)),
            ),
            Ok(false) => {}
            // InvalidArg past the last link, NotSupported without NVLink.
            Err(_) => break,
        }
    }
    out
}

fn p2p_name(s: P2pStatus) -> &'static str {
    match s {
        P2pStatus::Ok => "ok",
        P2pStatus::ChipsetNotSupported => "chipset_not_supported",
        P2pStatus::GpuNotSupported => "gpu_not_supported",
        P2pStatus::IohTopologyNotSupported => "topology_not_supported",
        P2pStatus::DisabledByRegkey => "disabled_by_regkey",
        P2pStatus::NotSupported => "not_supported",
        P2pStatus::Unknown => "unknown",
    }
}

/// `nvidia-smi topo -m` names; `Internal` (two GPUs on one board) shares a PCIe switch.
fn level_name(level: TopologyLevel) -> &'static str {
    match level {
        TopologyLevel::Internal | TopologyLevel::Single => "PIX",
        TopologyLevel::Multiple => "PXB",
        TopologyLevel::HostBridge => "PHB",
        TopologyLevel::Node => "NODE",
        TopologyLevel::System => "SYS",
    }
}

/// NVML's CUDA driver version integer (13000, 12080) as `major.minor` (13.0, 12.8).
pub(crate) fn cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

fn hostname() -> Option<String> {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| crate::fsread::optional_string(Path::new(p), crate::fsread::SYSTEM))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_versions_format_like_nvidia_smi() {
        assert_eq!(cuda_version(13000), "13.0");
        assert_eq!(cuda_version(12080), "12.8");
        assert_eq!(cuda_version(11040), "11.4");
    }

    #[test]
    fn missing_symbol_is_named() {
        assert_eq!(
            missing_symbol("/x/libfoo.so: undefined symbol: nvmlDeviceGetUUID"),
            "nvmlDeviceGetUUID"
        );
        assert_eq!(missing_symbol("weird"), "weird");
    }

    #[test]
    fn nvml_errors_say_what_to_do() {
        let cases = [
            (Raw::DriverNotLoaded, "driver is not loaded"),
            (Raw::LibRmVersionMismatch, "reboot"),
            (Raw::NoPermission, "permission"),
            (Raw::LibraryNotFound, "cannot load"),
            (
                Raw::FailedToLoadSymbol("l.so: undefined symbol: nvmlInit_v2".into()),
                "does not export nvmlInit_v2",
            ),
            (Raw::GpuLost, "could not initialise"),
        ];
        for (raw, want) in cases {
            let msg = classify("l.so", "initialise", raw).to_string();
            assert!(msg.contains(want), "{msg}");
            assert!(msg.ends_with("--topology FILE"), "{msg}");
        }
    }
}
