//! The topology model and its file format (contract: topology-v1.md).
//!
//! Loading is strict: a typo must not silently drop a fact, so unknown keys, a foreign schema and
//! inconsistent values are errors, each one line naming the file, `line:column`, what is wrong and
//! what to do. Decision on compute capability: the file holds `"major.minor"` or the literal
//! `"unknown"` (what `detect` writes when NVML cannot say); `Gpu::cc()` is `None` for `"unknown"`
//! (and for anything unparsable in a `Topology` built in code), so the rules never see a guess.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const SCHEMA: &str = "sglang-launch/topology/v1";

/// `compute_capability` value for a GPU whose capability is not known.
pub const CC_UNKNOWN: &str = "unknown";

/// NVML P2P read statuses, as the file spells them.
pub const P2P_VALUES: &[&str] = &[
    "ok",
    "not_supported",
    "chipset_not_supported",
    "gpu_not_supported",
    "topology_not_supported",
    "disabled_by_regkey",
    "unknown",
];

/// PCIe levels of `nvidia-smi topo -m` (NVLink paths are `NV` or `NV<n>`).
pub const PCIE_PATHS: &[&str] = &["PIX", "PXB", "PHB", "NODE", "SYS"];

const TOP_KEYS: &[&str] = &[
    "schema",
    "source",
    "hostname",
    "driver_version",
    "cuda_driver_version",
    "gpus",
    "links",
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub pci_bus_id: String,
    /// "major.minor", or "unknown".
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
#[serde(deny_unknown_fields)]
pub struct Link {
    pub gpus: [u32; 2],
    /// As `nvidia-smi topo -m` prints it: NV<n>, PIX, PXB, PHB, NODE, SYS.
    pub path: String,
    pub nvlink: bool,
    /// NVML P2P read status: ok, not_supported, chipset_not_supported, …, unknown.
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
        /// "top-level", "GPU" or "link".
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
    /// A value that parses but makes no sense (duplicate index, link to an absent GPU, …).
    #[error("{origin}:{line}:{column}: {at}: {message}")]
    Invalid {
        origin: String,
        line: usize,
        column: usize,
        /// JSON path of the offending value, e.g. `links[3].gpus`.
        at: String,
        message: String,
    },
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
    /// Parse and validate a topology-v1 document. `origin` names it in errors (usually the path).
    pub fn from_json_str(text: &str, origin: &str) -> Result<Topology, TopologyError> {
        let value: Value = serde_json::from_str(text).map_err(|e| json_error(origin, &e))?;
        let Value::Object(top) = &value else {
            return Err(TopologyError::Json {
                origin: origin.to_owned(),
                line: 1,
                column: 1,
                message: "the document is not a JSON object".to_owned(),
            });
        };
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
        check_keys(text, origin, top, &[], TOP_KEYS, "top-level")?;
        for (list, keys, object) in [("gpus", GPU_KEYS, "GPU"), ("links", LINK_KEYS, "link")] {
            if let Some(Value::Array(items)) = top.get(list) {
                for (i, item) in items.iter().enumerate() {
                    if let Value::Object(map) = item {
                        let path = [Seg::Key(list), Seg::Index(i)];
                        check_keys(text, origin, map, &path, keys, object)?;
                    }
                }
            }
        }
        let topology: Topology = serde_json::from_str(text).map_err(|e| json_error(origin, &e))?;
        if let Some((path, message)) = topology.problem() {
            let (line, column) = locate(text, &path).unwrap_or((1, 1));
            return Err(TopologyError::Invalid {
                origin: origin.to_owned(),
                line,
                column,
                at: path_string(&path),
                message,
            });
        }
        Ok(topology)
    }

    /// Read and validate a topology file.
    pub fn load(path: &Path) -> Result<Topology, TopologyError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TopologyError::Read {
            origin: origin.clone(),
            source,
        })?;
        Topology::from_json_str(&text, &origin)
    }

    /// The topology-v1 document, pretty-printed, with a final newline.
    pub fn to_json_pretty(&self) -> String {
        // Serialising plain structs of strings and numbers cannot fail.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Whether the topology is self-consistent; `Err` carries the same one-line message a file
    /// with these values would get (without a position).
    pub fn validate(&self) -> Result<(), String> {
        match self.problem() {
            None => Ok(()),
            Some((path, message)) => Err(format!("{}: {message}", path_string(&path))),
        }
    }

    /// The first inconsistency, as (where, what and what to do).
    fn problem(&self) -> Option<(Vec<Seg<'static>>, String)> {
        let at = |list: &'static str, i: usize, key: &'static str| {
            vec![Seg::Key(list), Seg::Index(i), Seg::Key(key)]
        };
        for (j, g) in self.gpus.iter().enumerate() {
            if let Some(i) = self.gpus[..j].iter().position(|o| o.index == g.index) {
                return Some((
                    at("gpus", j, "index"),
                    format!(
                        "GPU index {} is also used by gpus[{i}]; give every GPU its own NVML index",
                        g.index
                    ),
                ));
            }
            if !g.uuid.is_empty()
                && let Some(i) = self.gpus[..j].iter().position(|o| o.uuid == g.uuid)
            {
                return Some((
                    at("gpus", j, "uuid"),
                    format!(
                        "UUID {} is also used by gpus[{i}]; UUIDs must be unique \
                             (CUDA_VISIBLE_DEVICES entries are matched against them)",
                        g.uuid
                    ),
                ));
            }
            if g.compute_capability != CC_UNKNOWN && g.cc().is_none() {
                return Some((
                    at("gpus", j, "compute_capability"),
                    format!(
                        "compute capability {:?} is not \"major.minor\"; write it as \
                         `nvidia-smi --query-gpu=compute_cap --format=csv` shows it (e.g. \"9.0\"), \
                         or \"{CC_UNKNOWN}\"",
                        g.compute_capability
                    ),
                ));
            }
            if g.memory_total_mib == 0 {
                return Some((
                    at("gpus", j, "memory_total_mib"),
                    "memory_total_mib is 0; write the total in MiB as \
                     `nvidia-smi --query-gpu=memory.total --format=csv` shows it"
                        .to_owned(),
                ));
            }
            if let Some(used) = g.memory_used_mib.filter(|&u| u > g.memory_total_mib) {
                return Some((
                    at("gpus", j, "memory_used_mib"),
                    format!(
                        "memory_used_mib {used} exceeds memory_total_mib {}; both are MiB as \
                         nvidia-smi shows memory.used and memory.total",
                        g.memory_total_mib
                    ),
                ));
            }
        }
        for (k, l) in self.links.iter().enumerate() {
            let [a, b] = l.gpus;
            if a == b {
                return Some((
                    at("links", k, "gpus"),
                    format!("links GPU {a} to itself; a link names two different GPUs"),
                ));
            }
            for x in [a, b] {
                if self.gpu(x).is_none() {
                    let indices: Vec<String> =
                        self.gpus.iter().map(|g| g.index.to_string()).collect();
                    return Some((
                        at("links", k, "gpus"),
                        format!(
                            "GPU {x} is not in `gpus` (indices: {}); fix the pair or add the GPU",
                            if indices.is_empty() {
                                "none".to_owned()
                            } else {
                                indices.join(", ")
                            }
                        ),
                    ));
                }
            }
            if let Some(first) = self.links[..k]
                .iter()
                .position(|o| o.gpus == [a, b] || o.gpus == [b, a])
            {
                return Some((
                    at("links", k, "gpus"),
                    format!(
                        "the pair ({a}, {b}) is already described by links[{first}]; keep one \
                         entry per unordered pair"
                    ),
                ));
            }
            if !valid_path(&l.path) {
                let hint = suggest(&l.path, PCIE_PATHS)
                    .map(|s| format!("did you mean \"{s}\"? "))
                    .unwrap_or_default();
                return Some((
                    at("links", k, "path"),
                    format!(
                        "path {:?} is not one of NV<n>, {} (as `nvidia-smi topo -m` prints them); \
                         {hint}use one of those",
                        l.path,
                        PCIE_PATHS.join(", ")
                    ),
                ));
            }
            if !P2P_VALUES.contains(&l.p2p.as_str()) {
                let hint = suggest(&l.p2p, P2P_VALUES)
                    .map(|s| format!("did you mean \"{s}\"? "))
                    .unwrap_or_default();
                return Some((
                    at("links", k, "p2p"),
                    format!(
                        "p2p {:?} is not an NVML P2P status; {hint}use one of {}",
                        l.p2p,
                        P2P_VALUES.join(", ")
                    ),
                ));
            }
        }
        None
    }
}

/// `NV`, `NV<n>` (n ≥ 1) or one of the PCIe levels.
fn valid_path(path: &str) -> bool {
    match path.strip_prefix("NV") {
        Some("") => true,
        Some(n) => n.bytes().all(|c| c.is_ascii_digit()) && n.parse::<u32>().is_ok_and(|n| n > 0),
        None => PCIE_PATHS.contains(&path),
    }
}

/// Reject the first key of `map` that is not in `known`.
fn check_keys(
    text: &str,
    origin: &str,
    map: &serde_json::Map<String, Value>,
    path: &[Seg],
    known: &'static [&'static str],
    object: &'static str,
) -> Result<(), TopologyError> {
    let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) else {
        return Ok(());
    };
    let mut full = path.to_vec();
    full.push(Seg::Key(key));
    let (line, column) = locate(text, &full).unwrap_or((1, 1));
    Err(TopologyError::UnknownKey {
        origin: origin.to_owned(),
        line,
        column,
        object,
        key: key.clone(),
        suggestion: suggest(key, known).map(str::to_owned),
        known,
    })
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

/// Just enough of a JSON reader to walk an already-valid document.
struct Scanner<'a> {
    text: &'a str,
    i: usize,
}

impl Scanner<'_> {
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

    /// A string token, decoded.
    fn string(&mut self) -> Option<String> {
        let start = self.i;
        self.eat(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    break;
                }
                _ => self.i += 1,
            }
        }
        serde_json::from_str(self.text.get(start..self.i)?).ok()
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
