//! Whether the plan says what the record's outcome says: an OOM is flagged, a server that
//! worked is not.

use super::evidence::Evidence;
use super::record::Record;
use super::run::Runs;

/// Judged OOM records whose cause no term of the plan models, and why.
pub const UNMODELLED: &[(&str, &str)] = &[
    (
        "sglang-4895-gemma3-27b-awq-4090",
        "weights: with the BF16 embeddings and the vision tower counted, the log's 18.82 GiB \
         is still 3.0 GiB above our estimate (a part of the AWQ checkpoint its config does not \
         describe), and with it the pool holds less than the 4096-token context",
    ),
    (
        "sglang-6027-dsv3-0324-2x8xh100-dpattn",
        "the record contradicts its release: its KV line (274,934 tokens at the default 0.79) \
         and OOM message (71.19 GiB held, 17.99 of it KV and 3.63 graph pools) leave at most \
         44.5 GiB for weights, but 0.4.6.post2's DeepSeek model keeps the whole attention on \
         each of 16 DP-attention ranks (at least 49.4 GiB); the command recorded may not be \
         the one that ran, and its run-time transient (2.63 GiB of one 64k-token request) is \
         not modelled",
    ),
];

/// Findings that say the launch will fail for memory.
const BLOCKING: [&str; 3] = ["MEM003", "MEM004", "MEM005"];

#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// What the plan says against the launch as it ran: `fits: no` and the blocking findings.
    pub flags: Vec<String>,
    /// Run at SGLang's default fraction: our planned one is lower and leaves what the run needed.
    pub averted: bool,
    /// The term that exhausts what the launch left outside the static pool: `weights` when they
    /// do not fit, else the first of graphs, activations, margin whose running sum exceeds it.
    pub term: Option<&'static str>,
    pub graphs_gib: f64,
    pub activations_gib: f64,
    /// B·(1 − the fraction the record ran with, or SGLang's default), GiB.
    pub slack_gib: f64,
}

impl Verdict {
    /// The plan calls the launch unsafe (or would have launched it differently, safely).
    pub fn flagged(&self) -> bool {
        !self.flags.is_empty() || self.averted
    }
}

pub fn judge(r: &Record, runs: &Runs, ev: &Evidence) -> Verdict {
    let o = &runs.as_run;
    let Some(m) = o.memory.as_ref() else {
        return Verdict::default();
    };
    let mut flags: Vec<String> = o
        .findings
        .iter()
        .map(|h| h.code.as_str())
        .filter(|c| BLOCKING.contains(c))
        .map(str::to_owned)
        .collect();
    if m.fits == Some(false) {
        flags.insert(0, "fits: no".into());
    }
    let ran = r
        .f("mem_fraction_static")
        .or(m.sglang_default_mem_fraction_static)
        .unwrap_or(m.mem_fraction_static);
    let res = &m.v1().reserved_mib;
    let (graphs, act, margin) = (
        res.cuda_graphs as f64 / 1024.0,
        res.activations as f64 / 1024.0,
        res.margin as f64 / 1024.0,
    );
    let slack = o.baseline_mib * (1.0 - ran) / 1024.0;
    let lower = ev
        .planned_mfs
        .zip(ev.sglang_default_mfs)
        .is_some_and(|(p, d)| p < d);
    let averted =
        r.f("mem_fraction_static").is_none() && lower && ev.planned_covers_need() == Some(true);
    let flagged = !flags.is_empty() || averted;
    let term = if !flagged {
        None
    } else if m.fits == Some(false) || flags.iter().any(|f| f == "MEM004") {
        Some("weights")
    } else {
        [("graphs", graphs), ("activations", act), ("margin", margin)]
            .iter()
            .scan(0.0, |sum, (name, gib)| {
                *sum += gib;
                Some((*name, *sum))
            })
            .find(|(_, sum)| *sum > slack)
            .map(|(name, _)| name)
    };
    Verdict {
        flags,
        averted,
        term,
        graphs_gib: graphs,
        activations_gib: act,
        slack_gib: slack,
    }
}
