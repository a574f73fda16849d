//! A stand-in for `libnvidia-ml.so.1` for tests: it serves the topology-v1 file named by
//! `FAKE_NVML_TOPOLOGY` through exactly the NVML functions `sglang-launch detect` calls, so the
//! real NVML code path (dlopen, symbol lookup, struct layouts) runs without a GPU.
//!
//! * `FAKE_NVML_INIT_RC=<n>`: `nvmlInit_v2` returns `n` (9 = driver not loaded, 12 = library not
//!   found, 18 = driver/library version mismatch).
//! * A GPU key absent from the file (or `"compute_capability": "unknown"`) answers
//!   `NVML_ERROR_NOT_SUPPORTED`; a GPU pair absent from `links` has unknown P2P status and no
//!   common ancestor.
//! * NVLinks: a pair with path `NV<n>` gets `n` links whose remote end is the other GPU, unless a
//!   GPU would need more than the 18 links NVML allows: the file then describes an NVSwitch
//!   system, and each such GPU gets `max n` links to a switch (remote PCI id `FFFF:FF:FF.0`).
//! * Memory: total and used are the file's MiB × 2^20, reserved 0.
//!
//! Safety of the exported functions: as NVML's own, they require the pointers NVML's C API
//! documents (valid, writable, buffer lengths as given); null pointers are answered with
//! `NVML_ERROR_INVALID_ARGUMENT`.

#![allow(clippy::missing_safety_doc)] // one contract for all: see above

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};
use std::sync::Mutex;

use serde_json::Value;

type Ret = c_uint;
type Handle = *mut c_void;

const SUCCESS: Ret = 0;
const UNINITIALIZED: Ret = 1;
const INVALID_ARGUMENT: Ret = 2;
const NOT_SUPPORTED: Ret = 3;
const INSUFFICIENT_SIZE: Ret = 7;
const UNKNOWN: Ret = 999;

const MAX_LINKS: usize = 18;
const SWITCH_BUS: &str = "0000FFFF:FF:FF.0";

// nvmlGpuP2PStatus_t
const P2P_OK: c_uint = 0;
const P2P_NOT_SUPPORTED: c_uint = 5;
const P2P_UNKNOWN: c_uint = 6;

struct Gpu {
    uuid: String,
    name: String,
    bus_id: String,
    cc: Option<(c_int, c_int)>,
    total_mib: u64,
    used_mib: u64,
    mig: bool,
    numa: Option<c_uint>,
    pcie_gen: Option<c_uint>,
    pcie_width: Option<c_uint>,
    /// Remote PCI bus id of each NVLink.
    nvlinks: Vec<String>,
}

struct Pair {
    path: String,
    nvlink: bool,
    p2p: String,
}

struct State {
    driver: Option<String>,
    cuda: Option<c_int>,
    gpus: Vec<Gpu>,
    /// Keyed by (lower, higher) position in `gpus`.
    pairs: HashMap<(usize, usize), Pair>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn nv_count(path: &str) -> usize {
    path.strip_prefix("NV")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn load() -> Result<State, String> {
    let path = std::env::var("FAKE_NVML_TOPOLOGY").map_err(|_| "FAKE_NVML_TOPOLOGY is not set")?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let list = doc["gpus"].as_array().ok_or("no gpus array")?;
    let str_of = |g: &Value, k: &str| g[k].as_str().unwrap_or_default().to_owned();
    let uint = |g: &Value, k: &str| g[k].as_u64().map(|v| v as c_uint);
    let mut gpus: Vec<Gpu> = list
        .iter()
        .map(|g| Gpu {
            uuid: str_of(g, "uuid"),
            name: str_of(g, "name"),
            bus_id: str_of(g, "pci_bus_id"),
            cc: g["compute_capability"].as_str().and_then(|s| {
                let (a, b) = s.split_once('.')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            }),
            total_mib: g["memory_total_mib"].as_u64().unwrap_or(0),
            used_mib: g["memory_used_mib"].as_u64().unwrap_or(0),
            mig: g["mig_enabled"].as_bool().unwrap_or(false),
            numa: uint(g, "numa_node"),
            pcie_gen: uint(g, "pcie_gen"),
            pcie_width: uint(g, "pcie_width"),
            nvlinks: Vec::new(),
        })
        .collect();
    let position = |index: u64| list.iter().position(|g| g["index"].as_u64() == Some(index));
    let mut pairs = HashMap::new();
    for l in doc["links"].as_array().into_iter().flatten() {
        let ends = l["gpus"].as_array().ok_or("link without gpus")?;
        let (Some(a), Some(b)) = (
            ends.first().and_then(Value::as_u64).and_then(position),
            ends.get(1).and_then(Value::as_u64).and_then(position),
        ) else {
            return Err("link names an absent GPU".into());
        };
        let key = (a.min(b), a.max(b));
        pairs.insert(
            key,
            Pair {
                path: l["path"].as_str().unwrap_or_default().to_owned(),
                nvlink: l["nvlink"].as_bool().unwrap_or(false),
                p2p: l["p2p"].as_str().unwrap_or("unknown").to_owned(),
            },
        );
    }
    for (p, gpu) in gpus.iter_mut().enumerate() {
        let mut peers: Vec<(usize, usize)> = pairs
            .iter()
            .filter(|((a, b), _)| *a == p || *b == p)
            .map(|((a, b), pair)| (if *a == p { *b } else { *a }, nv_count(&pair.path)))
            .filter(|(_, n)| *n > 0)
            .collect();
        peers.sort();
        let total: usize = peers.iter().map(|(_, n)| n).sum();
        gpu.nvlinks = if total <= MAX_LINKS {
            peers
                .iter()
                .flat_map(|&(peer, n)| std::iter::repeat_n(list_bus(list, peer), n))
                .collect()
        } else {
            let n = peers.iter().map(|(_, n)| *n).max().unwrap_or(0);
            vec![SWITCH_BUS.to_owned(); n]
        };
    }
    let cuda = doc["cuda_driver_version"].as_str().and_then(|s| {
        let (a, b) = s.split_once('.')?;
        Some(a.parse::<c_int>().ok()? * 1000 + b.parse::<c_int>().ok()? * 10)
    });
    Ok(State {
        driver: doc["driver_version"].as_str().map(str::to_owned),
        cuda,
        gpus,
        pairs,
    })
}

fn list_bus(list: &[Value], position: usize) -> String {
    list[position]["pci_bus_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Run `f` on the loaded state, or answer UNINITIALIZED.
fn with<F: FnOnce(&State) -> Ret>(f: F) -> Ret {
    match STATE.lock() {
        Ok(guard) => match guard.as_ref() {
            Some(state) => f(state),
            None => UNINITIALIZED,
        },
        Err(_) => UNKNOWN,
    }
}

fn with_gpu<F: FnOnce(&State, usize, &Gpu) -> Ret>(h: Handle, f: F) -> Ret {
    with(|s| {
        let p = (h as usize).wrapping_sub(1);
        match s.gpus.get(p) {
            Some(g) => f(s, p, g),
            None => INVALID_ARGUMENT,
        }
    })
}

/// Copy `s` NUL-terminated into a C buffer of `len` bytes.
unsafe fn put(dst: *mut c_char, len: c_uint, s: &str) -> Ret {
    let b = s.as_bytes();
    if dst.is_null() || b.len() + 1 > len as usize {
        return INSUFFICIENT_SIZE;
    }
    unsafe {
        std::ptr::copy_nonoverlapping(b.as_ptr(), dst as *mut u8, b.len());
        *dst.add(b.len()) = 0;
    }
    SUCCESS
}

unsafe fn set<T>(dst: *mut T, v: T) -> Ret {
    if dst.is_null() {
        return INVALID_ARGUMENT;
    }
    unsafe { dst.write(v) };
    SUCCESS
}

/// nvmlPciInfo_t (v3 layout).
#[repr(C)]
pub struct PciInfo {
    bus_id_legacy: [c_char; 16],
    domain: c_uint,
    bus: c_uint,
    device: c_uint,
    pci_device_id: c_uint,
    pci_sub_system_id: c_uint,
    bus_id: [c_char; 32],
}

unsafe fn put_pci(dst: *mut PciInfo, bus_id: &str) -> Ret {
    if dst.is_null() {
        return INVALID_ARGUMENT;
    }
    let mut parts = bus_id.split([':', '.']);
    let mut hex = || {
        parts
            .next()
            .and_then(|p| c_uint::from_str_radix(p, 16).ok())
            .unwrap_or(0)
    };
    let (domain, bus, device) = (hex(), hex(), hex());
    let mut info = PciInfo {
        bus_id_legacy: [0; 16],
        domain,
        bus,
        device,
        pci_device_id: 0,
        pci_sub_system_id: 0,
        bus_id: [0; 32],
    };
    unsafe {
        put(info.bus_id.as_mut_ptr(), 32, bus_id);
        dst.write(info);
    }
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn nvmlInit_v2() -> Ret {
    if let Some(rc) = std::env::var("FAKE_NVML_INIT_RC")
        .ok()
        .and_then(|v| v.trim().parse::<Ret>().ok())
        .filter(|&rc| rc != SUCCESS)
    {
        return rc;
    }
    match load() {
        Ok(state) => match STATE.lock() {
            Ok(mut guard) => {
                *guard = Some(state);
                SUCCESS
            }
            Err(_) => UNKNOWN,
        },
        Err(e) => {
            eprintln!("fake-nvml: {e}");
            UNKNOWN
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn nvmlShutdown() -> Ret {
    match STATE.lock() {
        Ok(mut guard) => {
            *guard = None;
            SUCCESS
        }
        Err(_) => UNKNOWN,
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetDriverVersion(v: *mut c_char, n: c_uint) -> Ret {
    with(|s| match &s.driver {
        Some(d) => unsafe { put(v, n, d) },
        None => NOT_SUPPORTED,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlSystemGetCudaDriverVersion_v2(v: *mut c_int) -> Ret {
    with(|s| match s.cuda {
        Some(c) => unsafe { set(v, c) },
        None => NOT_SUPPORTED,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCount_v2(c: *mut c_uint) -> Ret {
    with(|s| unsafe { set(c, s.gpus.len() as c_uint) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetHandleByIndex_v2(i: c_uint, d: *mut Handle) -> Ret {
    with(|s| {
        if i as usize >= s.gpus.len() {
            return INVALID_ARGUMENT;
        }
        unsafe { set(d, (i as usize + 1) as Handle) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetName(d: Handle, v: *mut c_char, n: c_uint) -> Ret {
    with_gpu(d, |_, _, g| unsafe { put(v, n, &g.name) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetUUID(d: Handle, v: *mut c_char, n: c_uint) -> Ret {
    with_gpu(d, |_, _, g| unsafe { put(v, n, &g.uuid) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetPciInfo_v3(d: Handle, p: *mut PciInfo) -> Ret {
    with_gpu(d, |_, _, g| unsafe { put_pci(p, &g.bus_id) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCudaComputeCapability(
    d: Handle,
    major: *mut c_int,
    minor: *mut c_int,
) -> Ret {
    with_gpu(d, |_, _, g| match g.cc {
        Some((a, b)) => unsafe {
            match set(major, a) {
                SUCCESS => set(minor, b),
                rc => rc,
            }
        },
        None => NOT_SUPPORTED,
    })
}

/// nvmlMemory_v2_t.
#[repr(C)]
pub struct Memory2 {
    version: c_uint,
    total: c_ulonglong,
    reserved: c_ulonglong,
    free: c_ulonglong,
    used: c_ulonglong,
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMemoryInfo_v2(d: Handle, m: *mut Memory2) -> Ret {
    with_gpu(d, |_, _, g| {
        if m.is_null() {
            return INVALID_ARGUMENT;
        }
        let total = g.total_mib << 20;
        let used = g.used_mib << 20;
        unsafe {
            (*m).total = total;
            (*m).reserved = 0;
            (*m).used = used;
            (*m).free = total.saturating_sub(used);
        }
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetMigMode(
    d: Handle,
    current: *mut c_uint,
    pending: *mut c_uint,
) -> Ret {
    with_gpu(d, |_, _, g| unsafe {
        match set(current, g.mig as c_uint) {
            SUCCESS => set(pending, g.mig as c_uint),
            rc => rc,
        }
    })
}

unsafe fn opt_uint(dst: *mut c_uint, v: Option<c_uint>) -> Ret {
    match v {
        Some(v) => unsafe { set(dst, v) },
        None => NOT_SUPPORTED,
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNumaNodeId(d: Handle, n: *mut c_uint) -> Ret {
    with_gpu(d, |_, _, g| unsafe { opt_uint(n, g.numa) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkGeneration(d: Handle, n: *mut c_uint) -> Ret {
    with_gpu(d, |_, _, g| unsafe { opt_uint(n, g.pcie_gen) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetCurrPcieLinkWidth(d: Handle, n: *mut c_uint) -> Ret {
    with_gpu(d, |_, _, g| unsafe { opt_uint(n, g.pcie_width) })
}

fn pair_of(s: &State, a: Handle, b: Handle) -> Result<Option<&Pair>, Ret> {
    let (pa, pb) = ((a as usize).wrapping_sub(1), (b as usize).wrapping_sub(1));
    if pa >= s.gpus.len() || pb >= s.gpus.len() || pa == pb {
        return Err(INVALID_ARGUMENT);
    }
    Ok(s.pairs.get(&(pa.min(pb), pa.max(pb))))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetP2PStatus(
    a: Handle,
    b: Handle,
    index: c_uint,
    status: *mut c_uint,
) -> Ret {
    with(|s| {
        let pair = match pair_of(s, a, b) {
            Ok(p) => p,
            Err(rc) => return rc,
        };
        let code = match (pair, index) {
            (None, _) => P2P_UNKNOWN,
            // NVML_P2P_CAPS_INDEX_NVLINK
            (Some(p), 2) => {
                if p.nvlink {
                    P2P_OK
                } else {
                    P2P_NOT_SUPPORTED
                }
            }
            (Some(p), _) => match p.p2p.as_str() {
                "ok" => P2P_OK,
                "chipset_not_supported" => 1,
                "gpu_not_supported" => 2,
                "topology_not_supported" => 3,
                "disabled_by_regkey" => 4,
                "not_supported" => P2P_NOT_SUPPORTED,
                _ => P2P_UNKNOWN,
            },
        };
        unsafe { set(status, code) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetTopologyCommonAncestor(
    a: Handle,
    b: Handle,
    level: *mut c_uint,
) -> Ret {
    with(|s| {
        let pair = match pair_of(s, a, b) {
            Ok(Some(p)) => p,
            Ok(None) => return NOT_SUPPORTED,
            Err(rc) => return rc,
        };
        let code = match pair.path.as_str() {
            "PIX" => 10,
            "PXB" => 20,
            "PHB" => 30,
            "NODE" => 40,
            "SYS" => 50,
            // NVLink pairs: the file does not say the PCIe level; any is fine.
            _ => 50,
        };
        unsafe { set(level, code) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkState(
    d: Handle,
    link: c_uint,
    active: *mut c_uint,
) -> Ret {
    with_gpu(d, |_, _, g| {
        if g.nvlinks.is_empty() {
            return NOT_SUPPORTED;
        }
        if link as usize >= MAX_LINKS {
            return INVALID_ARGUMENT;
        }
        unsafe { set(active, ((link as usize) < g.nvlinks.len()) as c_uint) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvmlDeviceGetNvLinkRemotePciInfo_v2(
    d: Handle,
    link: c_uint,
    p: *mut PciInfo,
) -> Ret {
    with_gpu(d, |_, _, g| match g.nvlinks.get(link as usize) {
        Some(bus) => unsafe { put_pci(p, bus) },
        None => INVALID_ARGUMENT,
    })
}
