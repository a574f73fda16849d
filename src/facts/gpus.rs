//! Which topology GPUs the server will use: `CUDA_VISIBLE_DEVICES` (indices or UUIDs, honouring
//! `CUDA_DEVICE_ORDER`), then SGLang's `--base-gpu-id` / `--gpu-id-step` over the visible list.
//!
//! CUDA behaviour modelled here (CUDA C Programming Guide, "CUDA Environment Variables"; the same
//! rules PyTorch mirrors when it counts devices without initialising CUDA):
//! * `CUDA_DEVICE_ORDER=PCI_BUS_ID` numbers devices by PCI bus id (NVML's order). The default,
//!   `FASTEST_FIRST`, puts the fastest device first; the topology has no clock or SM counts, so
//!   "fastest" is approximated by compute capability (higher first, unknown last), ties in PCI bus
//!   order. On a machine of identical GPUs both orders agree. Any other value is treated as the
//!   default, as CUDA does.
//! * `CUDA_VISIBLE_DEVICES` unset: every device. Set: a comma list read left to right; the first
//!   entry decides the form (`GPU-…` UUIDs, `MIG-…`, or ordinals). Reading stops at the first
//!   invalid entry (not a number, negative, out of range, a UUID that matches nothing, an entry of
//!   another form), keeping what came before. The empty string therefore hides every GPU. A
//!   repeated device, or a UUID prefix matching several GPUs, hides every GPU.
//! * UUID entries may be abbreviated to any prefix that identifies one GPU.
//! * `MIG-…`: CUDA enumerates a single MIG instance, so only the first entry counts. The legacy
//!   form `MIG-GPU-<uuid>/<gi>/<ci>` is mapped to its parent GPU; a MIG instance's own UUID cannot
//!   be matched to a topology that lists whole GPUs, and is reported as such.
//!
//! SGLang (entrypoints/engine.py and managers/data_parallel_controller.py) gives the scheduler
//! of local pipeline rank `p` and tensor rank `t` the CUDA ordinal
//! `base_gpu_id + p * tp_per_node + t * gpu_id_step`; data-parallel replicas that run as separate
//! process groups (DP without DP attention) start `tp * pp * gpu_id_step` ordinals apart
//! (`tp * gpu_id_step` before 0.5.3).

use crate::sglang::opt;
use std::cmp::Ordering;

use super::Env;
use super::topology::Topology;
use crate::sglang::{Parallel, SglangArgs};

/// How CUDA numbers the devices before `CUDA_VISIBLE_DEVICES` applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeviceOrder {
    FastestFirst,
    PciBusId,
}

impl DeviceOrder {
    pub(crate) fn from_env(env: &Env) -> DeviceOrder {
        match env.get("CUDA_DEVICE_ORDER").map(str::trim) {
            Some("PCI_BUS_ID") => DeviceOrder::PciBusId,
            _ => DeviceOrder::FastestFirst,
        }
    }
}

/// Why CUDA stopped reading `CUDA_VISIBLE_DEVICES` early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Not a non-negative number (or empty): this entry and the rest are ignored.
    NotAnOrdinal(String),
    /// An ordinal at or beyond the number of devices.
    OutOfRange { entry: String, devices: usize },
    /// A `GPU-` entry that is no prefix of any GPU's UUID.
    NoMatch(String),
    /// An entry of a different form from the first one (UUID among ordinals or vice versa).
    MixedForm(String),
    /// A MIG instance UUID, which the topology (whole GPUs) cannot resolve.
    MigInstance(String),
    /// A device named twice: CUDA then hides every device.
    Repeated(String),
    /// A UUID prefix matching several GPUs: CUDA then hides every device.
    Ambiguous { entry: String, matches: Vec<String> },
}

impl Stop {
    /// Whether this stop hides every device rather than truncating the list.
    pub(crate) fn hides_all(&self) -> bool {
        matches!(self, Stop::Repeated(_) | Stop::Ambiguous { .. })
    }

    /// One clause for messages: what is wrong with the entry and what CUDA does about it.
    pub(crate) fn describe(&self) -> String {
        let rest = "so CUDA ignores it and every entry after it";
        let all = "so CUDA hides every GPU";
        match self {
            Stop::NotAnOrdinal(e) if e.trim().is_empty() => {
                format!("CUDA_VISIBLE_DEVICES has an empty entry, {rest}")
            }
            Stop::NotAnOrdinal(e) => {
                format!("CUDA_VISIBLE_DEVICES entry {e:?} is not a GPU ordinal, {rest}")
            }
            Stop::OutOfRange { entry, devices } => format!(
                "CUDA_VISIBLE_DEVICES entry {entry} is out of range (the topology has {devices} \
                 GPUs, ordinals 0-{}), {rest}",
                devices.saturating_sub(1)
            ),
            Stop::NoMatch(e) => {
                format!("CUDA_VISIBLE_DEVICES entry {e} matches no GPU in the topology, {rest}")
            }
            Stop::MixedForm(e) => format!(
                "CUDA_VISIBLE_DEVICES entry {e} is not of the same form as the first entry \
                 (ordinals and UUIDs cannot be mixed), {rest}"
            ),
            Stop::MigInstance(e) => format!(
                "CUDA_VISIBLE_DEVICES entry {e} names a MIG instance, which the topology (whole \
                 GPUs) cannot resolve; use the legacy MIG-GPU-<uuid>/<gi>/<ci> form or a GPU \
                 UUID"
            ),
            Stop::Repeated(e) => {
                format!("CUDA_VISIBLE_DEVICES names {e} more than once, {all}")
            }
            Stop::Ambiguous { entry, matches } => format!(
                "CUDA_VISIBLE_DEVICES entry {entry} matches several GPU UUIDs ({}), {all}",
                matches.join(", ")
            ),
        }
    }
}

/// The GPUs CUDA will show the server, in CUDA ordinal order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visible {
    /// Topology index of CUDA ordinal 0, 1, ….
    pub(crate) gpus: Vec<u32>,
    /// Set when `CUDA_VISIBLE_DEVICES` was not read to the end (a warning worth showing even
    /// when enough GPUs remain).
    pub(crate) stopped: Option<Stop>,
}

/// Why the server's ranks cannot be placed on the visible GPUs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error(
        "--base-gpu-id {base} / --gpu-id-step {step} are invalid (SGLang requires \
         --base-gpu-id >= 0 and --gpu-id-step >= 1); fix the values"
    )]
    BadLayout { base: i64, step: i64 },
    #[error("{0}")]
    NotEnough(Box<Shortfall>),
    #[error("{}; fix CUDA_VISIBLE_DEVICES", .0.describe())]
    Hidden(Stop),
    #[error("{option} {value} is not a valid size: SGLang needs a positive integer")]
    BadSize { option: &'static str, value: i64 },
}

/// More GPUs asked for than CUDA will show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shortfall {
    /// What asks for the GPUs, e.g. `--tp-size 8` or `--tp-size 4 × --dp-size 2`.
    pub(crate) needed_by: String,
    pub(crate) needed: usize,
    /// The highest CUDA ordinal a rank would use.
    pub(crate) ordinal: i64,
    pub(crate) visible: usize,
    /// `--base-gpu-id`/`--gpu-id-step` when they, not the count, push ranks past the end.
    pub(crate) base: Option<String>,
    pub(crate) stopped: Option<Stop>,
    /// `CUDA_VISIBLE_DEVICES` as set, if set.
    pub(crate) env_value: Option<String>,
}

impl std::fmt::Display for Shortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let are = if self.visible == 1 { "is" } else { "are" };
        let gpus = if self.needed == 1 { "GPU" } else { "GPUs" };
        match &self.base {
            // Enough GPUs, but the offsets push ranks past the end.
            Some(base) => write!(
                f,
                "{} with {base} puts the last rank on CUDA ordinal {}, but only ordinals 0-{} are visible",
                self.needed_by,
                self.ordinal,
                self.visible.saturating_sub(1)
            )?,
            None => write!(
                f,
                "{} needs {} {gpus} but {} {are} visible",
                self.needed_by, self.needed, self.visible
            )?,
        }
        match (&self.stopped, &self.env_value) {
            (Some(stop), _) => write!(f, ": {}", stop.describe())?,
            (None, Some(v)) => write!(f, " (CUDA_VISIBLE_DEVICES={v})")?,
            (None, None) => {}
        }
        if self.base.is_some() {
            write!(f, "; lower --base-gpu-id / --gpu-id-step")
        } else {
            write!(f, "; lower the parallel sizes or make more GPUs visible")
        }
    }
}

/// Topology indices in CUDA ordinal order, before `CUDA_VISIBLE_DEVICES` applies.
pub fn cuda_order(topology: &Topology, env: &Env) -> Vec<u32> {
    let order = DeviceOrder::from_env(env);
    let mut gpus: Vec<&super::Gpu> = topology.gpus.iter().collect();
    gpus.sort_by(|a, b| {
        let by_speed = match order {
            DeviceOrder::PciBusId => Ordering::Equal,
            // Higher capability first; unknown (None) sorts last.
            DeviceOrder::FastestFirst => b.cc().cmp(&a.cc()),
        };
        by_speed
            .then_with(|| cmp_bus_id(&a.pci_bus_id, &b.pci_bus_id))
            .then(a.index.cmp(&b.index))
    });
    gpus.iter().map(|g| g.index).collect()
}

/// `domain:bus:device.function`, all hex (`00000000:18:00.0`; the domain may be 4 digits).
pub(crate) fn parse_bus_id(id: &str) -> Option<(u32, u32, u32, u32)> {
    let mut parts = id.trim().split(':');
    let (domain, bus, rest) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let (device, function) = rest.split_once('.')?;
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    Some((hex(domain)?, hex(bus)?, hex(device)?, hex(function)?))
}

fn cmp_bus_id(a: &str, b: &str) -> Ordering {
    match (parse_bus_id(a), parse_bus_id(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// The value of a `strtoul`-style read of an ordinal entry: leading digits after optional
/// whitespace and sign (`1gpu` reads as 1); `None` when there are no digits or it is negative.
fn ordinal_of(entry: &str) -> Option<usize> {
    let t = entry.trim_start();
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits
        .bytes()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    let n: u128 = digits[..end].parse().unwrap_or(u128::MAX);
    if negative && n > 0 {
        return None;
    }
    Some(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The GPUs CUDA will enumerate for a process started with `env`.
pub fn visible(topology: &Topology, env: &Env) -> Visible {
    let order = cuda_order(topology, env);
    let Some(value) = env.get("CUDA_VISIBLE_DEVICES") else {
        return Visible {
            gpus: order,
            stopped: None,
        };
    };
    // Set but empty is a deliberate "no GPUs", not a malformed list.
    if value.trim().is_empty() {
        return Visible {
            gpus: Vec::new(),
            stopped: None,
        };
    }
    let first = value.split(',').next().unwrap_or("").trim();
    let mut gpus: Vec<u32> = Vec::new();
    let stop = |gpus: Vec<u32>, s: Stop| {
        let gpus = if s.hides_all() { Vec::new() } else { gpus };
        Visible {
            gpus,
            stopped: Some(s),
        }
    };
    if first.starts_with("MIG-") {
        // CUDA enumerates one MIG instance: only the first entry matters.
        let Some(parent) = first.strip_prefix("MIG-").filter(|r| r.starts_with("GPU-")) else {
            return stop(gpus, Stop::MigInstance(first.to_owned()));
        };
        let uuid = parent.split('/').next().unwrap_or(parent);
        return match match_uuid(topology, uuid) {
            Ok(index) => Visible {
                gpus: vec![index],
                stopped: None,
            },
            Err(s) => stop(gpus, s.with_entry(first)),
        };
    }
    let by_uuid = first.starts_with("GPU-");
    for raw in value.split(',') {
        let entry = raw.trim();
        let index = if by_uuid {
            if !entry.starts_with("GPU-") {
                return stop(gpus, Stop::MixedForm(entry.to_owned()));
            }
            match match_uuid(topology, entry) {
                Ok(index) => index,
                Err(s) => return stop(gpus, s),
            }
        } else {
            if entry.starts_with("GPU-") || entry.starts_with("MIG-") {
                return stop(gpus, Stop::MixedForm(entry.to_owned()));
            }
            let Some(n) = ordinal_of(entry) else {
                return stop(gpus, Stop::NotAnOrdinal(entry.to_owned()));
            };
            match order.get(n) {
                Some(&index) => index,
                None => {
                    return stop(
                        gpus,
                        Stop::OutOfRange {
                            entry: entry.to_owned(),
                            devices: order.len(),
                        },
                    );
                }
            }
        };
        if gpus.contains(&index) {
            return stop(gpus, Stop::Repeated(entry.to_owned()));
        }
        gpus.push(index);
    }
    Visible {
        gpus,
        stopped: None,
    }
}

impl Stop {
    fn with_entry(self, entry: &str) -> Stop {
        match self {
            Stop::NoMatch(_) => Stop::NoMatch(entry.to_owned()),
            Stop::Ambiguous { matches, .. } => Stop::Ambiguous {
                entry: entry.to_owned(),
                matches,
            },
            other => other,
        }
    }
}

/// The GPU whose UUID starts with `prefix` (CUDA accepts any unique prefix).
fn match_uuid(topology: &Topology, prefix: &str) -> Result<u32, Stop> {
    let matches: Vec<&super::Gpu> = topology
        .gpus
        .iter()
        .filter(|g| g.uuid.starts_with(prefix))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.index),
        [] => Err(Stop::NoMatch(prefix.to_owned())),
        many => Err(Stop::Ambiguous {
            entry: prefix.to_owned(),
            matches: many.iter().map(|g| g.uuid.clone()).collect(),
        }),
    }
}

/// The topology indices of the GPUs ranks 0..count use, rank `i` on CUDA ordinal
/// `base_gpu_id + i * gpu_id_step`. For SGLang's exact layout with pipeline and data
/// parallelism, use [`placement`].
#[cfg(test)]
pub(crate) fn select(
    topology: &Topology,
    env: &Env,
    base_gpu_id: i64,
    gpu_id_step: i64,
    count: usize,
) -> Result<Vec<u32>, SelectError> {
    let ordinals: Vec<i64> = (0..count as i64)
        .map(|i| base_gpu_id.saturating_add(i.saturating_mul(gpu_id_step)))
        .collect();
    let needed_by = format!("the server ({count} ranks)");
    resolve(
        topology,
        env,
        base_gpu_id,
        gpu_id_step,
        &ordinals,
        needed_by,
    )
}

fn resolve(
    topology: &Topology,
    env: &Env,
    base: i64,
    step: i64,
    ordinals: &[i64],
    needed_by: String,
) -> Result<Vec<u32>, SelectError> {
    if base < 0 || step < 1 {
        return Err(SelectError::BadLayout { base, step });
    }
    let vis = visible(topology, env);
    if ordinals.is_empty() {
        return Ok(Vec::new());
    }
    if vis.gpus.is_empty()
        && let Some(stop) = vis.stopped.as_ref().filter(|s| s.hides_all())
    {
        return Err(SelectError::Hidden(stop.clone()));
    }
    let highest = ordinals.iter().copied().max().unwrap_or(0);
    if highest >= vis.gpus.len() as i64 {
        let needed = distinct(ordinals);
        let moved = base != 0 || step != 1;
        return Err(SelectError::NotEnough(Box::new(Shortfall {
            needed_by,
            needed,
            ordinal: highest,
            visible: vis.gpus.len(),
            base: (moved && needed <= vis.gpus.len())
                .then(|| format!("--base-gpu-id {base} --gpu-id-step {step}")),
            stopped: vis.stopped,
            env_value: env.get("CUDA_VISIBLE_DEVICES").map(str::to_owned),
        })));
    }
    Ok(ordinals.iter().map(|&o| vis.gpus[o as usize]).collect())
}

fn distinct(ordinals: &[i64]) -> usize {
    let mut v = ordinals.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len()
}

/// SGLang's parallel sizes as they shape one node's processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub(crate) tp: usize,
    pub(crate) pp: usize,
    /// Data-parallel replicas run as separate process groups on this node (1 with DP attention,
    /// which lives inside the TP group).
    pub(crate) replicas: usize,
    pub(crate) nnodes: usize,
    pub(crate) node_rank: usize,
    pub(crate) tp_per_node: usize,
    pub(crate) pp_per_node: usize,
    /// Scheduler processes (one GPU each) this node runs: SGLang's layout's count.
    pub ranks_per_node: usize,
    pub(crate) base_gpu_id: i64,
    pub(crate) gpu_id_step: i64,
    /// Ordinal distance between replicas.
    pub(crate) replica_stride: i64,
}

fn count(v: i64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

impl Layout {
    pub fn from_args(args: &SglangArgs) -> Layout {
        let p = Parallel::of(args);
        let (tp, pp) = (count(p.tp), count(p.pp));
        let (replicas, nnodes, node_rank) =
            (count(p.replicas), count(p.nnodes), count(p.node_rank));
        let (tp_per_node, pp_per_node) = (count(p.tp_per_node()), count(p.pp_per_node()));
        let base_gpu_id = args.int(opt::BASE_GPU_ID).unwrap_or(0);
        let gpu_id_step = args.int(opt::GPU_ID_STEP).unwrap_or(1);
        let span = if crate::sglang::release::at_least(args.flags.release(), "0.5.3") {
            tp.saturating_mul(pp)
        } else {
            tp
        };
        Layout {
            tp,
            pp,
            replicas,
            nnodes,
            node_rank,
            tp_per_node,
            pp_per_node,
            ranks_per_node: count(p.ranks_per_node()),
            base_gpu_id,
            gpu_id_step,
            replica_stride: (span as i64).saturating_mul(gpu_id_step),
        }
    }
}

/// GPUs one node of the server needs: tp×pp per node, times the DP replicas that run as their
/// own process groups (DP without DP attention).
pub(crate) fn gpus_needed(args: &SglangArgs) -> usize {
    Layout::from_args(args).ranks_per_node
}

/// One scheduler process and its GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RankGpu {
    /// Data-parallel replica (0 when DP runs inside TP).
    pub(crate) dp: usize,
    /// Global pipeline and tensor ranks.
    pub(crate) pp: usize,
    pub(crate) tp: usize,
    /// CUDA ordinal SGLang passes the scheduler.
    pub(crate) ordinal: i64,
    /// Topology index of that GPU.
    pub(crate) gpu: u32,
}

/// Where every scheduler of this node runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub(crate) layout: Layout,
    /// In SGLang's launch order: replica, then pipeline rank, then tensor rank.
    pub(crate) ranks: Vec<RankGpu>,
}

impl Placement {
    /// The distinct GPUs in use, in launch order.
    pub fn gpus(&self) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for r in &self.ranks {
            if !out.contains(&r.gpu) {
                out.push(r.gpu);
            }
        }
        out
    }

    /// The GPUs of each TP group on this node (one per replica and pipeline stage): what the
    /// custom all-reduce and P2P checks look at.
    #[cfg(test)]
    pub(crate) fn tp_groups(&self) -> Vec<Vec<u32>> {
        let mut groups: Vec<((usize, usize), Vec<u32>)> = Vec::new();
        for r in &self.ranks {
            match groups.iter_mut().find(|(k, _)| *k == (r.dp, r.pp)) {
                Some((_, g)) => g.push(r.gpu),
                None => groups.push(((r.dp, r.pp), vec![r.gpu])),
            }
        }
        groups.into_iter().map(|(_, g)| g).collect()
    }

    /// Topology GPUs that more than one scheduler would share (possible with `--gpu-id-step`
    /// above 1 and pipeline parallelism, since SGLang does not scale the stage offset by it).
    #[cfg(test)]
    pub(crate) fn shared_gpus(&self) -> Vec<u32> {
        let mut seen = Vec::new();
        let mut shared = Vec::new();
        for r in &self.ranks {
            if seen.contains(&r.gpu) {
                if !shared.contains(&r.gpu) {
                    shared.push(r.gpu);
                }
            } else {
                seen.push(r.gpu);
            }
        }
        shared
    }
}

/// SGLang's exact rank → GPU layout for this node, resolved against the visible GPUs.
pub fn placement(
    topology: &Topology,
    env: &Env,
    args: &SglangArgs,
) -> Result<Placement, SelectError> {
    for option in [opt::TP_SIZE, opt::PP_SIZE, opt::DP_SIZE, opt::NNODES] {
        if let Some(value) = args
            .is_set(option)
            .then(|| args.int(option))
            .flatten()
            .filter(|&v| v < 1)
        {
            return Err(SelectError::BadSize { option, value });
        }
    }
    let l = Layout::from_args(args);
    // Sizes come from the user: compare with what CUDA shows before building one entry per
    // rank, so `--tp 1000000000` is a finding, not gigabytes of bookkeeping.
    let vis = visible(topology, env);
    let per_node = l.ranks_per_node;
    if per_node > vis.gpus.len() && per_node > topology.gpus.len() {
        return Err(SelectError::NotEnough(Box::new(Shortfall {
            needed_by: needed_by(&l),
            needed: per_node,
            ordinal: i64::try_from(per_node)
                .unwrap_or(i64::MAX)
                .saturating_sub(1),
            visible: vis.gpus.len(),
            base: None,
            stopped: vis.stopped,
            env_value: env.get("CUDA_VISIBLE_DEVICES").map(str::to_owned),
        })));
    }
    let nnodes_per_pp_rank = (l.nnodes / l.pp).max(1);
    let pp_start = l
        .pp_per_node
        .saturating_mul(l.node_rank / nnodes_per_pp_rank);
    let tp_start = l
        .tp_per_node
        .saturating_mul(l.node_rank % nnodes_per_pp_rank);
    let mut ranks = Vec::new();
    let mut ordinals = Vec::new();
    for dp in 0..l.replicas {
        let offset = (dp as i64).saturating_mul(l.replica_stride);
        for pp in pp_start..pp_start.saturating_add(l.pp_per_node) {
            for tp in tp_start..tp_start.saturating_add(l.tp_per_node) {
                let stage = (pp % l.pp_per_node).saturating_mul(l.tp_per_node);
                let ordinal = l
                    .base_gpu_id
                    .saturating_add(offset)
                    .saturating_add(i64::try_from(stage).unwrap_or(i64::MAX))
                    .saturating_add(((tp % l.tp_per_node) as i64).saturating_mul(l.gpu_id_step));
                ranks.push((dp, pp, tp));
                ordinals.push(ordinal);
            }
        }
    }
    let gpus = resolve(
        topology,
        env,
        l.base_gpu_id,
        l.gpu_id_step,
        &ordinals,
        needed_by(&l),
    )?;
    let ranks = ranks
        .into_iter()
        .zip(ordinals.iter().zip(gpus))
        .map(|((dp, pp, tp), (&ordinal, gpu))| RankGpu {
            dp,
            pp,
            tp,
            ordinal,
            gpu,
        })
        .collect();
    Ok(Placement { layout: l, ranks })
}

/// `--tp-size 8`, `--tp-size 4 × --pp-size 2 × --dp-size 2`, with "per node" when split.
fn needed_by(l: &Layout) -> String {
    let mut parts = vec![format!("--tp-size {}", l.tp)];
    if l.pp > 1 {
        parts.push(format!("--pp-size {}", l.pp));
    }
    if l.replicas > 1 {
        parts.push(format!("--dp-size {}", l.replicas));
    }
    let mut s = parts.join(" × ");
    if l.nnodes > 1 {
        s.push_str(&format!(
            " over --nnodes {} (node {})",
            l.nnodes, l.node_rank
        ));
    }
    s
}

#[cfg(test)]
#[allow(clippy::type_complexity)] // the case tables
mod tests {
    use super::*;

    #[test]
    fn ordinals_read_like_strtoul() {
        let cases = [
            ("0", Some(0)),
            ("12", Some(12)),
            (" 3", Some(3)),
            ("+2", Some(2)),
            ("1gpu", Some(1)),
            ("-1", None),
            ("-0", Some(0)),
            ("", None),
            ("x1", None),
            ("GPU-1", None),
        ];
        for (s, want) in cases {
            assert_eq!(ordinal_of(s), want, "{s:?}");
        }
    }

    #[test]
    fn bus_ids_parse_with_either_domain_width() {
        assert_eq!(parse_bus_id("00000000:18:00.0"), Some((0, 0x18, 0, 0)));
        assert_eq!(parse_bus_id("0001:AF:1f.7"), Some((1, 0xaf, 0x1f, 7)));
        assert_eq!(parse_bus_id("garbage"), None);
        assert_eq!(parse_bus_id("0:1:2:3.0"), None);
    }

    use crate::facts::topology::Gpu;
    use crate::sglang::flagset;
    use serde_json::json;

    fn fixture(name: &str) -> Topology {
        let path = format!(
            "{}/tests/fixtures/topologies/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        Topology::load(std::path::Path::new(&path)).unwrap()
    }

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_pairs(pairs.iter().copied())
    }

    fn gpu(index: u32, cc: &str, bus: &str, uuid: &str) -> Gpu {
        Gpu {
            index,
            uuid: uuid.to_owned(),
            name: "test".to_owned(),
            pci_bus_id: bus.to_owned(),
            compute_capability: cc.to_owned(),
            memory_total_mib: 1024,
            memory_used_mib: None,
            mig_enabled: false,
            numa_node: None,
            pcie_gen: None,
            pcie_width: None,
        }
    }

    /// A mixed box: NVML index 1 is the fastest, index 3 has an unknown capability.
    fn mixed() -> Topology {
        Topology {
            schema: crate::facts::topology::SCHEMA.to_owned(),
            source: "test".to_owned(),
            hostname: None,
            driver_version: None,
            cuda_driver_version: None,
            gpus: vec![
                gpu(0, "8.6", "00000000:18:00.0", "GPU-aaaa1111"),
                gpu(1, "9.0", "00000000:28:00.0", "GPU-aaaa2222"),
                gpu(2, "8.6", "00000000:38:00.0", "GPU-bbbb0000"),
                gpu(3, "unknown", "00000000:08:00.0", "GPU-cccc0000"),
            ],
            links: vec![],
            host: None,
            accelerators: Vec::new(),
        }
    }

    #[test]
    fn cuda_order_follows_cuda_device_order() {
        let t = mixed();
        let cases: &[(&[(&str, &str)], &[u32])] = &[
            (&[], &[1, 0, 2, 3]),
            (&[("CUDA_DEVICE_ORDER", "FASTEST_FIRST")], &[1, 0, 2, 3]),
            (&[("CUDA_DEVICE_ORDER", "bogus")], &[1, 0, 2, 3]),
            (&[("CUDA_DEVICE_ORDER", "PCI_BUS_ID")], &[3, 0, 1, 2]),
        ];
        for (vars, want) in cases {
            assert_eq!(cuda_order(&t, &env(vars)), *want, "{vars:?}");
        }
        // Identical GPUs: both orders are PCI order.
        let h = fixture("8x-h100-sxm-nvlink.json");
        assert_eq!(cuda_order(&h, &env(&[])), (0..8).collect::<Vec<u32>>());
    }

    /// (topology, environment, the GPUs CUDA shows in order, why it stopped reading the list)
    type VisibleCase<'a> = (
        &'a Topology,
        &'a [(&'a str, &'a str)],
        Vec<u32>,
        Option<Stop>,
    );

    fn check_visible(cases: Vec<VisibleCase>) {
        for (t, vars, gpus, stopped) in cases {
            let v = visible(t, &env(vars));
            assert_eq!(v, Visible { gpus, stopped }, "{vars:?}");
        }
    }

    #[test]
    fn cuda_visible_devices_ordinals_like_cuda() {
        let h = fixture("8x-h100-sxm-nvlink.json");
        let not_ord = |e: &str| Some(Stop::NotAnOrdinal(e.to_owned()));
        let repeated = |e: &str| Some(Stop::Repeated(e.to_owned()));
        check_visible(vec![
            (&h, &[], (0..8).collect(), None),
            (&h, &[("CUDA_VISIBLE_DEVICES", "")], vec![], None),
            (&h, &[("CUDA_VISIBLE_DEVICES", "2,1")], vec![2, 1], None),
            (
                &h,
                &[("CUDA_VISIBLE_DEVICES", "0,2,-1,1")],
                vec![0, 2],
                not_ord("-1"),
            ),
            (
                &h,
                &[("CUDA_VISIBLE_DEVICES", "0,8,1")],
                vec![0],
                Some(Stop::OutOfRange {
                    entry: "8".into(),
                    devices: 8,
                }),
            ),
            (
                &h,
                &[("CUDA_VISIBLE_DEVICES", "1,1")],
                vec![],
                repeated("1"),
            ),
            (&h, &[("CUDA_VISIBLE_DEVICES", "1gpu,2")], vec![1, 2], None),
            (&h, &[("CUDA_VISIBLE_DEVICES", " 3 , 4")], vec![3, 4], None),
            (
                &h,
                &[("CUDA_VISIBLE_DEVICES", "0,,1")],
                vec![0],
                not_ord(""),
            ),
        ]);
    }

    #[test]
    fn cuda_visible_devices_uuids_and_mig_like_cuda() {
        let h = fixture("8x-h100-sxm-nvlink.json");
        let no_match = |e: &str| Some(Stop::NoMatch(e.to_owned()));
        let mixed_form = |e: &str| Some(Stop::MixedForm(e.to_owned()));
        let repeated = |e: &str| Some(Stop::Repeated(e.to_owned()));
        check_visible(vec![
            (
                &h,
                &[(
                    "CUDA_VISIBLE_DEVICES",
                    "GPU-00000003,GPU-00000001-0000-4000-8000-000000000001",
                )],
                vec![3, 1],
                None,
            ),
            (
                &h,
                &[("CUDA_VISIBLE_DEVICES", "GPU-00000003,GPU-dead,GPU-00000001")],
                vec![3],
                no_match("GPU-dead"),
            ),
            (
                &h,
                &[("CUDA_VISIBLE_DEVICES", "GPU-00000003,1")],
                vec![3],
                mixed_form("1"),
            ),
            (
                &h,
                &[("CUDA_VISIBLE_DEVICES", "0,GPU-00000003")],
                vec![0],
                mixed_form("GPU-00000003"),
            ),
            (
                &h,
                &[("CUDA_VISIBLE_DEVICES", "GPU-00000003,GPU-00000003-0000")],
                vec![],
                repeated("GPU-00000003-0000"),
            ),
            (
                &h,
                &[(
                    "CUDA_VISIBLE_DEVICES",
                    "MIG-GPU-00000005-0000-4000-8000-000000000005/1/0,2",
                )],
                vec![5],
                None,
            ),
            (
                &h,
                &[(
                    "CUDA_VISIBLE_DEVICES",
                    "MIG-5e0f31a2-0000-4000-8000-000000000000",
                )],
                vec![],
                Some(Stop::MigInstance(
                    "MIG-5e0f31a2-0000-4000-8000-000000000000".into(),
                )),
            ),
        ]);
    }

    #[test]
    fn cuda_visible_devices_follow_cuda_device_order() {
        let m = mixed();
        check_visible(vec![
            // Ordinals are CUDA ordinals: FASTEST_FIRST by default.
            (&m, &[("CUDA_VISIBLE_DEVICES", "0")], vec![1], None),
            (
                &m,
                &[
                    ("CUDA_VISIBLE_DEVICES", "0"),
                    ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
                ],
                vec![3],
                None,
            ),
            (&m, &[("CUDA_VISIBLE_DEVICES", "3,0")], vec![3, 1], None),
            // UUIDs do not depend on the order.
            (&m, &[("CUDA_VISIBLE_DEVICES", "GPU-bb")], vec![2], None),
            (
                &m,
                &[("CUDA_VISIBLE_DEVICES", "GPU-cccc,GPU-aaaa2")],
                vec![3, 1],
                None,
            ),
        ]);
        let v = visible(&m, &env(&[("CUDA_VISIBLE_DEVICES", "GPU-aaaa")]));
        assert!(v.gpus.is_empty());
        assert!(matches!(&v.stopped, Some(Stop::Ambiguous { matches, .. }) if matches.len() == 2));
    }

    #[test]
    fn absurd_or_invalid_sizes_are_findings_not_allocations() {
        let h = fixture("8x-h100-sxm-nvlink.json");
        let flags = crate::sglang::flagset::get("0.5.23").unwrap();
        let e = env(&[]);
        for (opt, v, want) in [
            (
                "--tp-size",
                9_223_372_036_854_775_807_i64,
                "needs 9223372036854775807 GPUs but 8 are visible",
            ),
            ("--dp-size", 4_611_686_018_427_387_904, "but 8 are visible"),
            ("--tp-size", 0, "--tp-size 0 is not a valid size"),
            ("--pp-size", -2, "--pp-size -2 is not a valid size"),
        ] {
            let args = SglangArgs::with_values(flags, &[(opt, serde_json::json!(v))]);
            let msg = placement(&h, &e, &args).unwrap_err().to_string();
            assert!(msg.contains(want), "{msg}");
        }
        let args = SglangArgs::with_values(
            flags,
            &[
                (
                    "--pp-size",
                    serde_json::json!(4_611_686_018_427_387_904_i64),
                ),
                ("--nnodes", serde_json::json!(2)),
                ("--node-rank", serde_json::json!(9)),
            ],
        );
        assert!(placement(&h, &e, &args).is_err());
    }

    #[test]
    fn select_places_ranks_on_visible_ordinals() {
        let h = fixture("8x-h100-sxm-nvlink.json");
        let cvd = |v: &str| env(&[("CUDA_VISIBLE_DEVICES", v)]);
        let ok: &[(Env, i64, i64, usize, &[u32])] = &[
            (env(&[]), 0, 1, 8, &[0, 1, 2, 3, 4, 5, 6, 7]),
            (env(&[]), 4, 1, 4, &[4, 5, 6, 7]),
            (env(&[]), 0, 2, 4, &[0, 2, 4, 6]),
            (env(&[]), 0, 1, 0, &[]),
            (cvd("4,5,6,7"), 0, 1, 4, &[4, 5, 6, 7]),
            (cvd("7,6"), 1, 1, 1, &[6]),
        ];
        for (e, base, step, count, want) in ok {
            assert_eq!(
                select(&h, e, *base, *step, *count).unwrap(),
                *want,
                "{e:?} {base} {step}"
            );
        }
        let bad: &[(Env, i64, i64, usize, &[&str])] = &[
            (
                cvd("0,1,2,3"),
                0,
                1,
                8,
                &[
                    "needs 8 GPUs but 4 are visible",
                    "(CUDA_VISIBLE_DEVICES=0,1,2,3)",
                ],
            ),
            (
                env(&[]),
                6,
                1,
                4,
                &[
                    "--base-gpu-id 6 --gpu-id-step 1 puts the last rank on CUDA ordinal 9",
                    "only ordinals 0-7 are visible",
                ],
            ),
            (
                cvd("GPU-1234"),
                0,
                1,
                1,
                &[
                    "needs 1 GPU but 0 are visible",
                    "entry GPU-1234 matches no GPU in the topology",
                ],
            ),
            (
                cvd("1,1"),
                0,
                1,
                1,
                &[
                    "names 1 more than once",
                    "hides every GPU",
                    "fix CUDA_VISIBLE_DEVICES",
                ],
            ),
            (env(&[]), -1, 1, 1, &["--base-gpu-id -1"]),
            (env(&[]), 0, 0, 1, &["--gpu-id-step 0"]),
        ];
        for (e, base, step, count, wants) in bad {
            let msg = select(&h, e, *base, *step, *count).unwrap_err().to_string();
            for w in *wants {
                assert!(msg.contains(w), "{msg:?} lacks {w:?}");
            }
        }
    }

    fn args(version: &str, values: &[(&str, serde_json::Value)]) -> SglangArgs {
        SglangArgs::with_values(flagset::get(version).unwrap(), values)
    }

    #[test]
    fn gpus_needed_counts_per_node_processes() {
        let cases: &[(&str, Vec<(&str, serde_json::Value)>, usize)] = &[
            ("0.5.23", vec![], 1),
            ("0.5.23", vec![("--tp-size", json!(8))], 8),
            (
                "0.5.23",
                vec![("--tp-size", json!(4)), ("--dp-size", json!(2))],
                8,
            ),
            (
                "0.5.23",
                vec![("--tp-size", json!(4)), ("--pp-size", json!(2))],
                8,
            ),
            (
                "0.5.23",
                vec![
                    ("--tp-size", json!(8)),
                    ("--dp-size", json!(8)),
                    ("--enable-dp-attention", json!(true)),
                ],
                8,
            ),
            (
                "0.5.23",
                vec![("--tp-size", json!(8)), ("--attn-dp-size", json!(4))],
                8,
            ),
            (
                "0.5.23",
                vec![("--tp-size", json!(16)), ("--nnodes", json!(2))],
                8,
            ),
            (
                "0.5.23",
                vec![
                    ("--tp-size", json!(8)),
                    ("--pp-size", json!(2)),
                    ("--nnodes", json!(2)),
                ],
                8,
            ),
            (
                "0.4.10.post2",
                vec![("--tp-size", json!(2)), ("--dp-size", json!(2))],
                4,
            ),
        ];
        for (v, values, want) in cases {
            assert_eq!(gpus_needed(&args(v, values)), *want, "{v} {values:?}");
        }
    }

    /// (version, args, GPUs in launch order, TP groups, GPUs shared by two ranks)
    type LayoutCase<'a> = (
        &'a str,
        Vec<(&'a str, serde_json::Value)>,
        Vec<u32>,
        Vec<Vec<u32>>,
        Vec<u32>,
    );

    /// Placement on an 8-GPU box matches SGLang's layout.
    fn check_layout(cases: &[LayoutCase]) {
        let h = fixture("8x-h100-sxm-nvlink.json");
        for (v, values, gpus, groups, shared) in cases {
            let p = placement(&h, &env(&[]), &args(v, values)).unwrap();
            assert_eq!(p.gpus(), *gpus, "{v} {values:?}");
            assert_eq!(p.tp_groups(), *groups, "{v} {values:?}");
            assert_eq!(p.shared_gpus(), *shared, "{v} {values:?}");
        }
    }

    #[test]
    fn placement_of_tensor_and_data_parallel_ranks() {
        check_layout(&[
            (
                "0.5.23",
                vec![("--tp-size", json!(8))],
                (0..8).collect(),
                vec![(0..8).collect()],
                vec![],
            ),
            (
                "0.5.23",
                vec![("--tp-size", json!(4)), ("--dp-size", json!(2))],
                (0..8).collect(),
                vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]],
                vec![],
            ),
            (
                "0.5.23",
                vec![
                    ("--tp-size", json!(2)),
                    ("--dp-size", json!(2)),
                    ("--gpu-id-step", json!(2)),
                ],
                vec![0, 2, 4, 6],
                vec![vec![0, 2], vec![4, 6]],
                vec![],
            ),
        ]);
    }

    #[test]
    fn placement_of_pipeline_stages() {
        check_layout(&[
            (
                "0.5.23",
                vec![
                    ("--tp-size", json!(2)),
                    ("--pp-size", json!(2)),
                    ("--gpu-id-step", json!(2)),
                ],
                vec![0, 2, 4],
                vec![vec![0, 2], vec![2, 4]],
                vec![2],
            ),
            (
                "0.5.23",
                vec![
                    ("--tp-size", json!(2)),
                    ("--pp-size", json!(2)),
                    ("--dp-size", json!(2)),
                ],
                (0..8).collect(),
                vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]],
                vec![],
            ),
            // Before 0.5.3 replicas were tp (not tp×pp) ordinals apart.
            (
                "0.5.2",
                vec![
                    ("--tp-size", json!(2)),
                    ("--pp-size", json!(2)),
                    ("--dp-size", json!(2)),
                ],
                vec![0, 1, 2, 3, 4, 5],
                vec![vec![0, 1], vec![2, 3], vec![2, 3], vec![4, 5]],
                vec![2, 3],
            ),
        ]);
    }

    #[test]
    fn placement_from_a_base_gpu_and_on_other_nodes() {
        check_layout(&[
            (
                "0.5.23",
                vec![("--tp-size", json!(4)), ("--base-gpu-id", json!(4))],
                vec![4, 5, 6, 7],
                vec![vec![4, 5, 6, 7]],
                vec![],
            ),
            (
                "0.5.23",
                vec![
                    ("--tp-size", json!(16)),
                    ("--nnodes", json!(2)),
                    ("--node-rank", json!(1)),
                ],
                (0..8).collect(),
                vec![(0..8).collect()],
                vec![],
            ),
        ]);
        let h = fixture("8x-h100-sxm-nvlink.json");
        let none = env(&[]);
        // Global ranks on node 1 of a 2-node TP 16 group.
        let p = placement(
            &h,
            &none,
            &args(
                "0.5.23",
                &[
                    ("--tp-size", json!(16)),
                    ("--nnodes", json!(2)),
                    ("--node-rank", json!(1)),
                ],
            ),
        )
        .unwrap();
        assert_eq!(p.ranks.first().map(|r| (r.tp, r.ordinal)), Some((8, 0)));
        assert_eq!(p.ranks.last().map(|r| (r.tp, r.ordinal)), Some((15, 7)));
    }

    #[test]
    fn placement_errors_name_the_flags() {
        let a100 = fixture("4x-a100-pcie-40gb-nvlink-pairs.json");
        let cases: &[(Vec<(&str, serde_json::Value)>, &[(&str, &str)], &str)] = &[
            (
                vec![("--tp-size", json!(8))],
                &[],
                "--tp-size 8 needs 8 GPUs but 4 are visible",
            ),
            (
                vec![("--tp-size", json!(2)), ("--dp-size", json!(2))],
                &[("CUDA_VISIBLE_DEVICES", "0,1,2")],
                "--tp-size 2 × --dp-size 2 needs 4 GPUs but 3 are visible (CUDA_VISIBLE_DEVICES=0,1,2)",
            ),
            (
                vec![("--tp-size", json!(2))],
                &[("CUDA_VISIBLE_DEVICES", "GPU-1234")],
                "--tp-size 2 needs 2 GPUs but 0 are visible: CUDA_VISIBLE_DEVICES entry GPU-1234 matches no GPU in the topology",
            ),
        ];
        for (values, vars, want) in cases {
            let e = placement(&a100, &env(vars), &args("0.5.23", values)).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains(want), "{msg:?} lacks {want:?}");
        }
    }
}
