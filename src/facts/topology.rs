//! The topology model and its file format: JSON with `"schema": "sglang-launch/topology/v1"`,
//! the keys below, and a missing GPU pair meaning an unknown link.
//!
//! Loading is strict: a typo must not silently drop a fact, so unknown keys, a foreign schema and
//! inconsistent values are errors, each one line naming the file, `line:column`, what is wrong and
//! what to do. Compute capability: the file holds `"major.minor"` or the literal
//! `"unknown"` (what `detect` writes when NVML cannot say); `Gpu::cc()` is `None` for `"unknown"`
//! (and for anything unparsable in a `Topology` built in code), so the rules never see a guess.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::host_record::{HOST_KEYS, HostRecord};

pub const SCHEMA: &str = "sglang-launch/topology/v1";

/// `compute_capability` value for a GPU whose capability is not known.
pub(crate) const CC_UNKNOWN: &str = "unknown";

/// NVML P2P read statuses, as the file spells them.
pub(crate) const P2P_VALUES: &[&str] = &[
    "ok",
    "not_supported",
    "chipset_not_supported",
    "gpu_not_supported",
    "topology_not_supported",
    "disabled_by_regkey",
    "unknown",
];

/// PCIe levels of `nvidia-smi topo -m` (NVLink paths are `NV` or `NV<n>`).
pub(crate) const PCIE_PATHS: &[&str] = &["PIX", "PXB", "PHB", "NODE", "SYS"];

const TOP_KEYS: &[&str] = &[
    "schema",
    "source",
    "hostname",
    "driver_version",
    "cuda_driver_version",
    "gpus",
    "links",
    "host",
    "accelerators",
];
const GPU_KEYS: &[&str] = &[
    "index",
    "uuid",
    "name",
    "pci_bus_id",
    "compute_capability",
    "memory_total_mib",
    "memory_used_mib",
    "mig_enabled",
    "numa_node",
    "pcie_gen",
    "pcie_width",
];
const LINK_KEYS: &[&str] = &["gpus", "path", "nvlink", "p2p"];
const ACCELERATOR_KEYS: &[&str] = &["vendor", "name", "count"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    #[schemars(extend("const" = SCHEMA))]
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
    /// Facts about the host outside the GPUs, as `detect` recorded them (absent: not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostRecord>,
    /// Accelerators that are not NVIDIA GPUs (AMD, Intel, Ascend, …): a host with these and no
    /// NVIDIA GPU runs SGLang on them, which the launcher does not plan.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accelerators: Vec<Accelerator>,
}

/// One kind of accelerator that is not an NVIDIA GPU, and how many the host has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Accelerator {
    /// `amd`, `intel`, `huawei`, `habana`, `mthreads`, `cpu`, …
    pub(crate) vendor: String,
    pub(crate) name: String,
    #[serde(default = "one")]
    pub(crate) count: u32,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub pci_bus_id: String,
    /// "major.minor", or "unknown".
    #[schemars(pattern(r"^(unknown|\s*\+?[0-9]+\s*\.\s*\+?[0-9]+\s*)$"))]
    pub compute_capability: String,
    #[schemars(range(min = 1, max = 16 << 20))]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub gpus: [u32; 2],
    /// As `nvidia-smi topo -m` prints it: NV<n>, PIX, PXB, PHB, NODE, SYS.
    #[schemars(pattern(r"^(NV|NV0*[1-9][0-9]*|PIX|PXB|PHB|NODE|SYS)$"))]
    pub path: String,
    pub nvlink: bool,
    /// NVML P2P read status: ok, not_supported, chipset_not_supported, …, unknown.
    #[schemars(extend("enum" = P2P_VALUES))]
    pub p2p: String,
}

/// Why a topology file was not accepted. Display is one line: where, what, what to do.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    #[error("cannot read topology file {origin}: {source}; check the path given to --topology")]
    Read {
        origin: String,
        #[source]
        source: std::io::Error,
    },
    /// Not JSON, or a value of the wrong type / a missing required key.
    #[error("{origin}:{line}:{column}: {message}; the file must be topology-v1 JSON")]
    Json {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "{origin}:{line}:{column}: unknown {object} key `{key}`{}",
        match suggestion {
            Some(s) => format!("; did you mean `{s}`?"),
            None => format!("; remove it (known keys: {})", known.join(", ")),
        }
    )]
    UnknownKey {
        origin: String,
        line: usize,
        column: usize,
        /// "top-level", "GPU", "link" or "host".
        object: &'static str,
        key: String,
        suggestion: Option<String>,
        known: &'static [&'static str],
    },
    #[error(
        "{origin}:{line}:{column}: schema is {found}, but this sglang-launch reads only \
         `{SCHEMA}`; re-capture the file with `sglang-launch detect --json` or set \"schema\": \"{SCHEMA}\""
    )]
    Schema {
        origin: String,
        line: usize,
        column: usize,
        /// The value found, JSON-quoted, or "missing".
        found: String,
    },
    #[error(
        "{origin}:{line}:{column}: key `{key}` appears twice in {at}; keep one (JSON readers \
         disagree on which one wins)"
    )]
    DuplicateKey {
        origin: String,
        line: usize,
        column: usize,
        /// JSON path of the object, or "the top level".
        at: String,
        key: String,
    },
    #[error("{origin}:{line}:{column}: {at}: missing required key `{key}`; add it ({hint})")]
    MissingKey {
        origin: String,
        line: usize,
        column: usize,
        /// JSON path of the object, e.g. `gpus[1]`.
        at: String,
        key: String,
        hint: &'static str,
    },
    #[error("{origin}:{line}:{column}: {at}: expected {expected}, found {found}; fix the value")]
    WrongType {
        origin: String,
        line: usize,
        column: usize,
        at: String,
        expected: &'static str,
        /// The value as written (shortened).
        found: String,
    },
    /// A value that parses but makes no sense (duplicate index, link to an absent GPU, …).
    #[error("{origin}:{line}:{column}: {at}: {problem}")]
    Invalid {
        origin: String,
        line: usize,
        column: usize,
        /// JSON path of the offending value, e.g. `links[3].gpus`.
        at: String,
        problem: Inconsistency,
    },
}

/// A self-inconsistent topology (see [`Topology::validate`]): where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {problem}")]
pub struct Inconsistent {
    /// JSON path of the offending value, e.g. `links[3].gpus`.
    pub(crate) at: String,
    pub(crate) problem: Inconsistency,
}

/// A value that parses but makes no sense; Display says what is wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Inconsistency {
    /// A GPU index used before, by `gpus[other]`.
    #[error("GPU index {index} is also used by gpus[{other}]; give every GPU its own NVML index")]
    DuplicateIndex { index: u32, other: usize },
    /// A UUID used before, by `gpus[other]`.
    #[error(
        "UUID {uuid} is also used by gpus[{other}]; UUIDs must be unique \
         (CUDA_VISIBLE_DEVICES entries are matched against them)"
    )]
    DuplicateUuid { uuid: String, other: usize },
    /// A compute capability that is neither `major.minor` nor `unknown`.
    #[error(
        "compute capability {0:?} is not \"major.minor\"; write it as \
         `nvidia-smi --query-gpu=compute_cap --format=csv` shows it (e.g. \"9.0\"), \
         or \"{CC_UNKNOWN}\""
    )]
    ComputeCapability(String),
    /// More than 16 TiB of GPU memory.
    #[error(
        "memory_total_mib {0} is not a GPU's memory in MiB; write the total as \
         `nvidia-smi --query-gpu=memory.total --format=csv` shows it"
    )]
    MemoryTooLarge(u64),
    #[error(
        "memory_total_mib is 0; write the total in MiB as \
         `nvidia-smi --query-gpu=memory.total --format=csv` shows it"
    )]
    MemoryZero,
    #[error(
        "memory_used_mib {used} exceeds memory_total_mib {total}; both are MiB as \
         nvidia-smi shows memory.used and memory.total"
    )]
    UsedExceedsTotal { used: u64, total: u64 },
    /// A link from a GPU to itself.
    #[error("links GPU {0} to itself; a link names two different GPUs")]
    SelfLink(u32),
    /// A link naming a GPU that is not listed (`indices`: the listed ones, or "none").
    #[error("GPU {gpu} is not in `gpus` (indices: {indices}); fix the pair or add the GPU")]
    UnknownGpu { gpu: u32, indices: String },
    /// A pair described before, by `links[first]`.
    #[error(
        "the pair ({a}, {b}) is already described by links[{first}]; keep one \
         entry per unordered pair"
    )]
    DuplicatePair { a: u32, b: u32, first: usize },
    /// A path that is not `NV<n>` or a PCIe level (with the closest level, if any is close).
    #[error(
        "path {path:?} is not one of NV<n>, {} (as `nvidia-smi topo -m` prints them); \
         {}use one of those",
        PCIE_PATHS.join(", "),
        did_you_mean(*.suggestion)
    )]
    Path {
        path: String,
        suggestion: Option<&'static str>,
    },
    /// A P2P status NVML does not have (with the closest one, if any is close).
    #[error(
        "p2p {p2p:?} is not an NVML P2P status; {}use one of {}",
        did_you_mean(*.suggestion),
        P2P_VALUES.join(", ")
    )]
    P2p {
        p2p: String,
        suggestion: Option<&'static str>,
    },
}

/// `did you mean "X"? ` before the advice, when there is a close name.
fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|s| format!("did you mean \"{s}\"? "))
        .unwrap_or_default()
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
    /// A topology with no NVIDIA GPUs, written by `source`, holding these other accelerators.
    pub(crate) fn without_gpus(source: &str, accelerators: Vec<Accelerator>) -> Topology {
        Topology {
            schema: SCHEMA.to_owned(),
            source: source.to_owned(),
            hostname: None,
            driver_version: None,
            cuda_driver_version: None,
            gpus: Vec::new(),
            links: Vec::new(),
            host: None,
            accelerators,
        }
    }

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
pub(crate) fn pairs(gpus: &[u32]) -> impl Iterator<Item = (u32, u32)> + '_ {
    gpus.iter()
        .enumerate()
        .flat_map(move |(i, &a)| gpus[i + 1..].iter().map(move |&b| (a, b)))
}

/// One step of a JSON path, for locating a value in the file's text.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

fn path_string(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k)
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The closest known name to `given`, if it is close enough to be a likely typo: similar by
/// Jaro-Winkler, or one edit (including a swap of neighbours) away.
fn suggest<'a>(given: &str, known: &[&'a str]) -> Option<&'a str> {
    let given = given.to_ascii_lowercase();
    known
        .iter()
        .map(|k| {
            let k_low = k.to_ascii_lowercase();
            let jw = strsim::jaro_winkler(&given, &k_low);
            let one_edit = given.len() >= 2 && strsim::damerau_levenshtein(&given, &k_low) <= 1;
            (if one_edit { jw.max(0.8) } else { jw }, *k)
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

impl Topology {
    /// Parse and validate a topology document. `origin` names it in errors (usually the path).
    pub fn from_json_str(text: &str, origin: &str) -> Result<Topology, TopologyError> {
        // Editors on some systems save a byte-order mark; it is not part of the JSON.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: Value = serde_json::from_str(text).map_err(|e| json_error(origin, &e))?;
        let Value::Object(top) = &value else {
            return Err(TopologyError::Json {
                origin: origin.to_owned(),
                line: 1,
                column: 1,
                message: "the document is not a JSON object".to_owned(),
            });
        };
        if let Some((at, path, key)) = duplicate_key(text) {
            let (line, column) = Scanner { text, i: 0 }.position(at);
            return Err(TopologyError::DuplicateKey {
                origin: origin.to_owned(),
                line,
                column,
                at: if path.is_empty() {
                    "the top level".to_owned()
                } else {
                    path
                },
                key,
            });
        }
        // Schema first: a later format's new keys must not be reported as typos.
        match top.get("schema") {
            Some(Value::String(s)) if s == SCHEMA => {}
            other => {
                let (line, column) = locate(text, &[Seg::Key("schema")]).unwrap_or((1, 1));
                return Err(TopologyError::Schema {
                    origin: origin.to_owned(),
                    line,
                    column,
                    found: other.map_or_else(|| "missing".to_owned(), Value::to_string),
                });
            }
        }
        check_object(text, origin, top, &[], TOP_KEYS, "top-level")?;
        if let Some(Value::Object(host)) = top.get("host") {
            check_object(text, origin, host, &[Seg::Key("host")], HOST_KEYS, "host")?;
        }
        for (list, keys, object) in [
            ("gpus", GPU_KEYS, "GPU"),
            ("links", LINK_KEYS, "link"),
            ("accelerators", ACCELERATOR_KEYS, "accelerator"),
        ] {
            if let Some(Value::Array(items)) = top.get(list) {
                for (i, item) in items.iter().enumerate() {
                    let path = [Seg::Key(list), Seg::Index(i)];
                    match item {
                        Value::Object(map) => check_object(text, origin, map, &path, keys, object)?,
                        other => return Err(wrong_type(text, origin, &path, "an object", other)),
                    }
                }
            }
        }
        // From the tree already parsed; only a document it does not fit is read again, for the
        // line and column of the problem.
        let topology: Topology = match serde_json::from_value(value) {
            Ok(t) => t,
            Err(_) => serde_json::from_str(text).map_err(|e| json_error(origin, &e))?,
        };
        if let Some((path, problem)) = topology.inconsistency() {
            let (line, column) = locate(text, &path).unwrap_or((1, 1));
            return Err(TopologyError::Invalid {
                origin: origin.to_owned(),
                line,
                column,
                at: path_string(&path),
                problem,
            });
        }
        Ok(topology)
    }

    /// Read and validate a topology file.
    pub fn load(path: &Path) -> Result<Topology, TopologyError> {
        let origin = path.display().to_string();
        let text = crate::fsread::read_string(path, crate::fsread::TOPOLOGY).map_err(|e| {
            TopologyError::Read {
                origin: origin.clone(),
                source: e.problem.into(),
            }
        })?;
        Topology::from_json_str(&text, &origin)
    }

    /// The topology document, pretty-printed, with a final newline.
    pub fn to_json_pretty(&self) -> String {
        // Serialising plain structs of strings and numbers cannot fail.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Whether the topology is self-consistent; `Err` carries the same one-line message a file
    /// with these values would get (without a position).
    pub fn validate(&self) -> Result<(), Inconsistent> {
        match self.inconsistency() {
            None => Ok(()),
            Some((path, problem)) => Err(Inconsistent {
                at: path_string(&path),
                problem,
            }),
        }
    }

    /// The first inconsistency, and where it is: GPUs first, then links. Earlier GPUs and
    /// links are looked up by hash, so a file of n of them takes n steps, not n².
    fn inconsistency(&self) -> Option<(Vec<Seg<'static>>, Inconsistency)> {
        let at = |list: &'static str, i: usize, key: &'static str| {
            vec![Seg::Key(list), Seg::Index(i), Seg::Key(key)]
        };
        let mut earlier = Earlier::default();
        for (j, g) in self.gpus.iter().enumerate() {
            if let Some((key, problem)) = gpu_problem(&earlier, g) {
                return Some((at("gpus", j, key), problem));
            }
            earlier.index.entry(g.index).or_insert(j);
            if !g.uuid.is_empty() {
                earlier.uuid.entry(g.uuid.as_str()).or_insert(j);
            }
        }
        for (k, l) in self.links.iter().enumerate() {
            if let Some((key, problem)) = self.link_problem(&earlier, l) {
                return Some((at("links", k, key), problem));
            }
            let [a, b] = l.gpus;
            earlier.pairs.entry((a.min(b), a.max(b))).or_insert(k);
        }
        None
    }

    /// What is wrong with a link (and under which key), given the GPUs and the links before it.
    fn link_problem(&self, earlier: &Earlier, l: &Link) -> Option<(&'static str, Inconsistency)> {
        let [a, b] = l.gpus;
        if a == b {
            return Some(("gpus", Inconsistency::SelfLink(a)));
        }
        if let Some(gpu) = [a, b].into_iter().find(|x| !earlier.index.contains_key(x)) {
            return Some((
                "gpus",
                Inconsistency::UnknownGpu {
                    gpu,
                    indices: self.listed_indices(),
                },
            ));
        }
        if let Some(&first) = earlier.pairs.get(&(a.min(b), a.max(b))) {
            return Some(("gpus", Inconsistency::DuplicatePair { a, b, first }));
        }
        if !valid_path(&l.path) {
            let suggestion = suggest(&l.path, PCIE_PATHS);
            let path = l.path.clone();
            return Some(("path", Inconsistency::Path { path, suggestion }));
        }
        if !P2P_VALUES.contains(&l.p2p.as_str()) {
            let suggestion = suggest(&l.p2p, P2P_VALUES);
            let p2p = l.p2p.clone();
            return Some(("p2p", Inconsistency::P2p { p2p, suggestion }));
        }
        None
    }

    /// The GPU indices the file lists, for a message: the first 16, then how many in all.
    fn listed_indices(&self) -> String {
        const SHOWN: usize = 16;
        let mut out: Vec<String> = self
            .gpus
            .iter()
            .take(SHOWN)
            .map(|g| g.index.to_string())
            .collect();
        if out.is_empty() {
            return "none".to_owned();
        }
        if self.gpus.len() > SHOWN {
            out.push(format!("… ({} in all)", self.gpus.len()));
        }
        out.join(", ")
    }
}

/// The GPUs and links before the one being checked: GPU index and UUID → first place, and
/// GPU pair (smaller index first) → first link.
#[derive(Default)]
struct Earlier<'t> {
    index: HashMap<u32, usize>,
    uuid: HashMap<&'t str, usize>,
    pairs: HashMap<(u32, u32), usize>,
}

/// What is wrong with a GPU (and under which key), given the GPUs before it.
fn gpu_problem(earlier: &Earlier, g: &Gpu) -> Option<(&'static str, Inconsistency)> {
    if let Some(&other) = earlier.index.get(&g.index) {
        let index = g.index;
        return Some(("index", Inconsistency::DuplicateIndex { index, other }));
    }
    if let Some(&other) = earlier
        .uuid
        .get(g.uuid.as_str())
        .filter(|_| !g.uuid.is_empty())
    {
        let uuid = g.uuid.clone();
        return Some(("uuid", Inconsistency::DuplicateUuid { uuid, other }));
    }
    if g.compute_capability != CC_UNKNOWN && g.cc().is_none() {
        let cc = g.compute_capability.clone();
        return Some(("compute_capability", Inconsistency::ComputeCapability(cc)));
    }
    // 16 TiB: far above any GPU, far below values that break the arithmetic.
    if g.memory_total_mib > 16 << 20 {
        let total = g.memory_total_mib;
        return Some(("memory_total_mib", Inconsistency::MemoryTooLarge(total)));
    }
    if g.memory_total_mib == 0 {
        return Some(("memory_total_mib", Inconsistency::MemoryZero));
    }
    if let Some(used) = g.memory_used_mib.filter(|&u| u > g.memory_total_mib) {
        let total = g.memory_total_mib;
        return Some((
            "memory_used_mib",
            Inconsistency::UsedExceedsTotal { used, total },
        ));
    }
    None
}

/// `NV`, `NV<n>` (n ≥ 1) or one of the PCIe levels.
fn valid_path(path: &str) -> bool {
    match path.strip_prefix("NV") {
        Some("") => true,
        Some(n) => n.bytes().all(|c| c.is_ascii_digit()) && n.parse::<u32>().is_ok_and(|n| n > 0),
        None => PCIE_PATHS.contains(&path),
    }
}

/// JSON shapes of the format's values.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Str,
    U32,
    U64,
    I64,
    Bool,
    /// Two GPU indices.
    Pair,
    List,
    Object,
}

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::U32 => "a whole number from 0 to 4294967295",
            Kind::U64 => "a whole number of 0 or more",
            Kind::I64 => "a whole number",
            Kind::Bool => "true or false",
            Kind::Pair => "two GPU indices, e.g. [0, 1]",
            Kind::List => "a list",
            Kind::Object => "an object",
        }
    }

    fn matches(self, v: &Value) -> bool {
        let u32_of = |v: &Value| v.as_u64().is_some_and(|n| n <= u64::from(u32::MAX));
        match self {
            Kind::Str => v.is_string(),
            Kind::U32 => u32_of(v),
            Kind::U64 => v.is_u64(),
            Kind::I64 => v.is_i64(),
            Kind::Bool => v.is_boolean(),
            Kind::Pair => v
                .as_array()
                .is_some_and(|a| a.len() == 2 && a.iter().all(u32_of)),
            Kind::List => v.is_array(),
            Kind::Object => v.is_object(),
        }
    }
}

/// A key's kind, whether it must be present, and whether `null` stands for absent; plus what
/// to write for a missing required key.
fn field(object: &str, key: &str) -> Option<(Kind, bool, bool, &'static str)> {
    Some(match (object, key) {
        ("top-level", "schema") => (Kind::Str, true, false, SCHEMA),
        ("top-level", "source") => (Kind::Str, true, false, "\"nvml\" or who wrote the file"),
        ("top-level", "hostname" | "driver_version" | "cuda_driver_version") => {
            (Kind::Str, false, true, "")
        }
        ("top-level", "gpus") => (Kind::List, true, false, "the list of GPUs"),
        ("top-level", "links") => (Kind::List, false, false, ""),
        ("top-level", "host") => (Kind::Object, false, true, ""),
        ("top-level", "accelerators") => (Kind::List, false, false, ""),
        ("accelerator", "vendor") => (Kind::Str, true, false, "amd, intel, huawei, habana, …"),
        ("accelerator", "name") => (Kind::Str, true, false, "the product name"),
        ("accelerator", "count") => (Kind::U32, false, false, ""),
        ("host", "shm_present" | "in_container") => (Kind::Bool, false, true, ""),
        ("host", "shm_bytes") => (Kind::U64, false, true, ""),
        ("host", "rdma_devices") => (Kind::List, false, true, ""),
        ("host", "packages") => (Kind::Object, false, true, ""),
        ("host", "torch_build" | "nvcc_version") => (Kind::Str, false, true, ""),
        ("GPU", "index") => (
            Kind::U32,
            true,
            false,
            "the NVML index, as nvidia-smi numbers GPUs",
        ),
        ("GPU", "uuid") => (
            Kind::Str,
            true,
            false,
            "the GPU UUID as `nvidia-smi -L` shows it",
        ),
        ("GPU", "name") => (
            Kind::Str,
            true,
            false,
            "the product name, e.g. \"NVIDIA H100 80GB HBM3\"",
        ),
        ("GPU", "pci_bus_id") => (Kind::Str, true, false, "e.g. \"00000000:18:00.0\""),
        ("GPU", "compute_capability") => (
            Kind::Str,
            true,
            false,
            "\"major.minor\", e.g. \"9.0\", or \"unknown\"",
        ),
        ("GPU", "memory_total_mib") => (
            Kind::U64,
            true,
            false,
            "MiB, as nvidia-smi shows memory.total",
        ),
        ("GPU", "memory_used_mib") => (Kind::U64, false, true, ""),
        ("GPU", "mig_enabled") => (Kind::Bool, false, false, ""),
        ("GPU", "numa_node") => (Kind::I64, false, true, ""),
        ("GPU", "pcie_gen" | "pcie_width") => (Kind::U32, false, true, ""),
        ("link", "gpus") => (Kind::Pair, true, false, "the two GPU indices, e.g. [0, 1]"),
        ("link", "path") => (Kind::Str, true, false, "NV<n>, PIX, PXB, PHB, NODE or SYS"),
        ("link", "nvlink") => (Kind::Bool, true, false, "true when NVLink P2P is OK"),
        ("link", "p2p") => (Kind::Str, true, false, "the P2P read status, e.g. \"ok\""),
        _ => return None,
    })
}

/// Check one object's keys and value shapes: unknown keys, missing required keys, wrong types.
fn check_object(
    text: &str,
    origin: &str,
    map: &serde_json::Map<String, Value>,
    path: &[Seg],
    known: &'static [&'static str],
    object: &'static str,
) -> Result<(), TopologyError> {
    if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
        let mut full = path.to_vec();
        full.push(Seg::Key(key));
        let (line, column) = locate(text, &full).unwrap_or((1, 1));
        return Err(TopologyError::UnknownKey {
            origin: origin.to_owned(),
            line,
            column,
            object,
            // A key may hold any character, newlines and terminal escapes included: the
            // message shows it escaped, on one line.
            key: key.escape_debug().to_string(),
            suggestion: suggest(key, known).map(str::to_owned),
            known,
        });
    }
    for &key in known {
        let Some((kind, required, nullable, hint)) = field(object, key) else {
            continue;
        };
        match map.get(key) {
            None if required => {
                let (line, column) = locate(text, path).unwrap_or((1, 1));
                return Err(TopologyError::MissingKey {
                    origin: origin.to_owned(),
                    line,
                    column,
                    at: if path.is_empty() {
                        "top level".to_owned()
                    } else {
                        path_string(path)
                    },
                    key: key.to_owned(),
                    hint,
                });
            }
            None => {}
            Some(Value::Null) if nullable => {}
            Some(v) if kind.matches(v) => {}
            Some(v) => {
                let mut full = path.to_vec();
                full.push(Seg::Key(key));
                return Err(wrong_type(text, origin, &full, kind.describe(), v));
            }
        }
    }
    Ok(())
}

fn wrong_type(
    text: &str,
    origin: &str,
    path: &[Seg],
    expected: &'static str,
    found: &Value,
) -> TopologyError {
    let (line, column) = locate(text, path).unwrap_or((1, 1));
    let mut found = found.to_string();
    if found.chars().count() > 40 {
        found = found.chars().take(37).collect::<String>() + "...";
    }
    TopologyError::WrongType {
        origin: origin.to_owned(),
        line,
        column,
        at: path_string(path),
        expected,
        found,
    }
}

fn json_error(origin: &str, e: &serde_json::Error) -> TopologyError {
    // serde_json appends the position to its message; it goes in front instead.
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    TopologyError::Json {
        origin: origin.to_owned(),
        line: e.line().max(1),
        column: e.column().max(1),
        message,
    }
}

/// 1-based line and column (in characters) of the value at `path` in `text` (of the key itself
/// when the path ends with a key). `None` if the text does not contain the path.
fn locate(text: &str, path: &[Seg]) -> Option<(usize, usize)> {
    let mut s = Scanner { text, i: 0 };
    s.ws();
    for (n, seg) in path.iter().enumerate() {
        let last = n + 1 == path.len();
        match *seg {
            Seg::Key(want) => {
                s.eat(b'{')?;
                loop {
                    s.ws();
                    let at = s.i;
                    let key = s.string()?;
                    s.ws();
                    s.eat(b':')?;
                    s.ws();
                    if key == want {
                        if last {
                            return Some(s.position(at));
                        }
                        break;
                    }
                    s.skip_value()?;
                    s.ws();
                    s.eat(b',')?;
                }
            }
            Seg::Index(want) => {
                s.eat(b'[')?;
                let mut i = 0;
                loop {
                    s.ws();
                    if i == want {
                        if last {
                            return Some(s.position(s.i));
                        }
                        break;
                    }
                    s.skip_value()?;
                    s.ws();
                    s.eat(b',')?;
                    i += 1;
                }
            }
        }
    }
    Some(s.position(s.i))
}

/// The first key that appears twice in one object: (byte offset of the second, JSON path of the
/// object, key). `text` must be valid JSON.
fn duplicate_key(text: &str) -> Option<(usize, String, String)> {
    fn walk<'a>(s: &mut Scanner<'a>, path: &mut String) -> Result<(), (usize, String, String)> {
        s.ws();
        match s.peek() {
            Some(b'{') => {
                s.i += 1;
                let mut keys = Keys::default();
                loop {
                    s.ws();
                    if s.eat(b'}').is_some() {
                        return Ok(());
                    }
                    let at = s.i;
                    let Some(key) = s.string() else { return Ok(()) };
                    if keys.seen(&key) {
                        return Err((at, path.clone(), key.into_owned()));
                    }
                    s.ws();
                    s.eat(b':');
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&key);
                    walk(s, path)?;
                    path.truncate(len);
                    keys.insert(key);
                    s.ws();
                    s.eat(b',');
                }
            }
            Some(b'[') => {
                s.i += 1;
                let mut n = 0;
                loop {
                    s.ws();
                    if s.eat(b']').is_some() || s.peek().is_none() {
                        return Ok(());
                    }
                    let len = path.len();
                    let _ = write!(path, "[{n}]");
                    walk(s, path)?;
                    path.truncate(len);
                    n += 1;
                    s.ws();
                    s.eat(b',');
                }
            }
            _ => {
                s.skip_value();
                Ok(())
            }
        }
    }
    walk(&mut Scanner { text, i: 0 }, &mut String::new()).err()
}

/// One object's keys so far. Objects are small (a GPU record, a link): a list is cheapest
/// there; a long one is hashed, so an object of n keys still takes n steps, not n².
#[derive(Default)]
struct Keys<'a> {
    few: Vec<Cow<'a, str>>,
    many: HashSet<Cow<'a, str>>,
}

impl<'a> Keys<'a> {
    const FEW: usize = 16;

    fn seen(&self, key: &str) -> bool {
        self.few.iter().any(|k| k == key) || self.many.contains(key)
    }

    fn insert(&mut self, key: Cow<'a, str>) {
        if self.few.len() < Self::FEW {
            self.few.push(key);
        } else {
            self.many.insert(key);
        }
    }
}

/// Just enough of a JSON reader to walk an already-valid document.
struct Scanner<'a> {
    text: &'a str,
    i: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string token, decoded (borrowed unless it has escapes: most keys and values have none).
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.i;
        self.eat(b'"')?;
        let mut escaped = false;
        loop {
            match self.peek()? {
                b'\\' => {
                    escaped = true;
                    self.i += 2;
                }
                b'"' => {
                    self.i += 1;
                    break;
                }
                _ => self.i += 1,
            }
        }
        let token = self.text.get(start..self.i)?;
        if escaped {
            serde_json::from_str::<String>(token).ok().map(Cow::Owned)
        } else {
            token.get(1..token.len() - 1).map(Cow::Borrowed)
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                self.ws();
                if self.eat(close).is_some() {
                    return Some(());
                }
                loop {
                    self.ws();
                    if open == b'{' {
                        self.string()?;
                        self.ws();
                        self.eat(b':')?;
                        self.ws();
                    }
                    self.skip_value()?;
                    self.ws();
                    if self.eat(close).is_some() {
                        return Some(());
                    }
                    self.eat(b',')?;
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.i += 1;
                }
                Some(())
            }
        }
    }

    fn position(&self, at: usize) -> (usize, usize) {
        let before = self.text.get(..at).unwrap_or(self.text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_key_has_a_shape() {
        for (object, keys) in [
            ("top-level", TOP_KEYS),
            ("GPU", GPU_KEYS),
            ("link", LINK_KEYS),
            ("accelerator", ACCELERATOR_KEYS),
        ] {
            for key in keys {
                assert!(field(object, key).is_some(), "{object} {key}");
            }
        }
    }

    #[test]
    fn locate_finds_keys_and_elements() {
        let text = "{\n  \"a\": [1, {\"b\\\"\": 2}],\n  \"c\": {\"d\": [ [], {} ]}\n}";
        type Case<'a> = (&'a [Seg<'a>], Option<(usize, usize)>);
        let cases: &[Case] = &[
            (&[], Some((1, 1))),
            (&[Seg::Key("a")], Some((2, 3))),
            (&[Seg::Key("a"), Seg::Index(1)], Some((2, 12))),
            (
                &[Seg::Key("a"), Seg::Index(1), Seg::Key("b\"")],
                Some((2, 13)),
            ),
            (
                &[Seg::Key("c"), Seg::Key("d"), Seg::Index(1)],
                Some((3, 20)),
            ),
            (&[Seg::Key("zz")], None),
            (&[Seg::Key("a"), Seg::Index(5)], None),
        ];
        for (path, want) in cases {
            assert_eq!(locate(text, path), *want, "{path:?}");
        }
    }

    #[test]
    fn duplicate_keys_are_found_at_any_depth() {
        assert_eq!(duplicate_key(r#"{"a": 1, "b": {"a": 2}}"#), None);
        assert_eq!(
            duplicate_key(r#"{"a": [{}, {"x": 1, "x": 2}]}"#),
            Some((20, "a[1]".to_owned(), "x".to_owned()))
        );
        assert_eq!(
            duplicate_key(r#"{"a": 1, "a": 1}"#),
            Some((9, String::new(), "a".to_owned()))
        );
        // Past the short list: a repeat of an early key, and of a late one.
        let keys: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        for repeat in ["k3", "k39"] {
            let text = format!("{{\"x\": [{{{}, \"{repeat}\": 0}}]}}", keys.join(", "));
            let found = duplicate_key(&text).map(|(_, path, key)| (path, key));
            assert_eq!(found, Some(("x[0]".to_owned(), repeat.to_owned())));
        }
        assert_eq!(duplicate_key(&format!("{{{}}}", keys.join(", "))), None);
    }

    #[test]
    fn suggestions_catch_typos_only() {
        assert_eq!(
            suggest("memory_total_mb", GPU_KEYS),
            Some("memory_total_mib")
        );
        assert_eq!(suggest("PBH", PCIE_PATHS), Some("PHB"));
        assert_eq!(suggest("OK", P2P_VALUES), Some("ok"));
        assert_eq!(suggest("bandwidth", LINK_KEYS), None);
    }

    /// The messages of the inconsistencies no file test reaches.
    #[test]
    fn inconsistencies_say_what_to_do() {
        let one: Topology = serde_json::from_str(ONE).unwrap();
        let with = |f: &dyn Fn(&mut Topology)| {
            let mut t = one.clone();
            f(&mut t);
            t.validate().unwrap_err().to_string()
        };
        assert_eq!(
            with(&|t| {
                let mut g = t.gpus[0].clone();
                g.index = 1;
                t.gpus.push(g);
            }),
            "gpus[1].uuid: UUID GPU-a is also used by gpus[0]; UUIDs must be unique \
             (CUDA_VISIBLE_DEVICES entries are matched against them)"
        );
        assert_eq!(
            with(&|t| t.gpus[0].memory_total_mib = 1 << 40),
            "gpus[0].memory_total_mib: memory_total_mib 1099511627776 is not a GPU's memory in \
             MiB; write the total as `nvidia-smi --query-gpu=memory.total --format=csv` shows it"
        );
        assert_eq!(
            with(&|t| t.gpus[0].memory_total_mib = 0),
            "gpus[0].memory_total_mib: memory_total_mib is 0; write the total in MiB as \
             `nvidia-smi --query-gpu=memory.total --format=csv` shows it"
        );
        assert_eq!(
            with(&|t| t.gpus[0].compute_capability = "9".into()),
            "gpus[0].compute_capability: compute capability \"9\" is not \"major.minor\"; \
             write it as `nvidia-smi --query-gpu=compute_cap --format=csv` shows it \
             (e.g. \"9.0\"), or \"unknown\""
        );
        assert_eq!(one.validate(), Ok(()));
    }

    const ONE: &str = r#"{"schema": "sglang-launch/topology/v1", "source": "x", "gpus": [
        {"index": 0, "uuid": "GPU-a", "name": "n", "pci_bus_id": "00000000:01:00.0",
         "compute_capability": "9.0", "memory_total_mib": 100}],
        "links": []}"#;

    #[test]
    fn an_unknown_key_with_a_newline_is_named_on_one_line() {
        let text = ONE.replacen("\"links\"", "\"li\\nks\"", 1);
        let e = Topology::from_json_str(&text, "f.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`li\\nks`") && !e.contains('\n'), "{e}");
    }

    proptest! {
        /// Whatever the damage to a file, loading returns (never panics) and errors are one line.
        #[test]
        fn damaged_files_never_panic(at in 0usize..ONE.len(), cut in 0usize..8, insert in ".{0,6}") {
            let mut text = ONE.to_owned();
            let at = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            let end = (at..=(at + cut).min(text.len()))
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(at);
            text.replace_range(at..end, &insert);
            if let Err(e) = Topology::from_json_str(&text, "f.json") {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("f.json:"));
                prop_assert!(!msg.contains('\n') || insert.contains('\n'));
            }
        }
    }
}
