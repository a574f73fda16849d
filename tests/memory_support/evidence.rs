//! What the real server had and used outside SGLang's static pool, and what our plan leaves.

use sglang_launch::facts::model::ModelFacts;
use sglang_launch::plan::memory;
use sglang_launch::sglang::{Parallel, SglangArgs};

use super::record::{self, Record};

/// Non-static memory (outside SGLang's static pool) per GPU, GiB: what the real server had and
/// used, and what our plan would reserve and leave on the same GPU.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub oom: bool,
    /// The free memory SGLang's fraction applied to (`Load weight begin. avail mem`, or derived).
    pub baseline_gib: Option<f64>,
    /// What the real server had outside the static pool: `Memory pool end. avail mem`, else
    /// B·(1 − mfs) for the fraction it ran with.
    pub real_slack_gib: Option<f64>,
    /// What start-up took out of it: pool end → graph end (backend workspaces + graph capture),
    /// else the graph `mem usage`; for a run-time OOM, what PyTorch held outside the static pool
    /// plus the allocation that failed.
    pub real_used_gib: Option<f64>,
    /// Free after capture: what was left for the first prefill.
    pub real_left_gib: Option<f64>,
    /// Needed = real_used + the largest prefill chunk's activations, decode logits, workspaces
    /// and (where the log gives its size) the req-to-token table, without any fragmentation
    /// allowance: logs never show the run-time peak, so it is computed from the shape.
    pub needed_gib: Option<f64>,
    /// Our reserve: graphs + activations (with fragmentation) + margin.
    pub reserve_gib: Option<f64>,
    pub sglang_default_mfs: Option<f64>,
    pub physics_mfs: Option<f64>,
    pub planned_mfs: Option<f64>,
    /// The plan raised the fraction above SGLang's default because that default leaves less
    /// than one request at the context length (MEM016).
    pub raised_for_one_request: bool,
    /// B·(1 − planned): what our plan would leave outside the static pool on this GPU.
    pub planned_slack_gib: Option<f64>,
    /// B·(1 − physics): what our reserve terms alone (without the cap) would leave.
    pub physics_slack_gib: Option<f64>,
}

impl Evidence {
    /// Our plan leaves at least what the run needed (None: the log lacks the numbers).
    pub fn planned_covers_need(&self) -> Option<bool> {
        Some(self.planned_slack_gib? >= self.needed_gib?)
    }
    /// The same for the uncapped fraction from our reserve terms alone.
    pub fn physics_covers_need(&self) -> Option<bool> {
        Some(self.physics_slack_gib? >= self.needed_gib?)
    }
}

/// The evidence columns for one log; `planned` is the planner run without a user fraction.
pub fn evidence(
    r: &Record,
    planned: Option<&memory::MemoryOutcome>,
    weights_gib: Option<f64>,
    facts: &ModelFacts,
    args: &SglangArgs,
) -> Evidence {
    let baseline = record::baseline_gib(r);
    let mfs = r.f("mem_fraction_static");
    let pool_end = r.f("mem_pool_end_avail_gb");
    let real_slack = pool_end.or_else(|| Some(baseline? * (1.0 - mfs?)));
    let graph_end = r.f("graph_end_avail_gb");
    // A run-time OOM message gives what PyTorch held: minus the static pool (our weights, the
    // logged KV size) it is the non-static memory in use, plus the allocation that failed.
    // Activations in flight are already in it.
    let oom_in_use = (|| {
        let (held, tried) = record::oom_message(r)?;
        let kv = r
            .f("kv_size_gb")
            .or_else(|| Some(r.f("k_size_gb")? + r.f("v_size_gb")?))?;
        Some(held - weights_gib? - kv + tried)
    })();
    let real_used = match (pool_end, graph_end) {
        (Some(p), Some(e)) => Some(p - e),
        _ => r.f("graph_mem_usage_gb").map(|g| {
            g + pool_end
                .zip(r.f("graph_begin_avail_gb"))
                .map_or(0.0, |(p, b)| p - b)
        }),
    }
    .or(oom_in_use);
    let mut ev = Evidence {
        oom: r.oom(),
        baseline_gib: baseline,
        real_slack_gib: real_slack,
        real_used_gib: real_used,
        real_left_gib: graph_end,
        ..Evidence::default()
    };
    let Some(o) = planned else { return ev };
    let Some(m) = o.memory.as_ref() else {
        return ev;
    };
    let res = &m.v1().reserved_mib;
    ev.reserve_gib = Some((res.cuda_graphs + res.activations + res.margin) as f64 / 1024.0);
    ev.sglang_default_mfs = m.sglang_default_mem_fraction_static;
    ev.physics_mfs = Some(o.physics_mem_fraction_static);
    ev.planned_mfs = o.planned_mem_fraction_static;
    ev.raised_for_one_request = o.findings.iter().any(|f| f.code.as_str() == "MEM016");
    // Judged only where our plan models the run (weights fit): otherwise the fraction says
    // nothing about the non-static memory.
    ev.planned_slack_gib = o
        .planned_mem_fraction_static
        .filter(|_| m.fits == Some(true))
        .map(|p| o.baseline_mib * (1.0 - p) / 1024.0);
    ev.physics_slack_gib = ev
        .planned_slack_gib
        .map(|_| o.baseline_mib * (1.0 - o.physics_mem_fraction_static) / 1024.0);
    // The run's own activations (no fragmentation allowance), at the chunk and requests it ran.
    let tp = args.int("--tp-size").unwrap_or(1);
    let local = m
        .sglang_default_chunked_prefill_size
        .filter(|c| *c > 0)
        .unwrap_or(8192);
    // attention DP: the MLP/MoE layers run on the chunk gathered from every DP rank
    let chunk = memory::ChunkTokens::of(local, Parallel::of(args).attn_dp);
    // The req-to-token table is counted only where the log prints the run's request pool and
    // context (its size is then known); elsewhere the run's context length is unknown (a 1M-token
    // config default alone would add 8 GiB the run may never have had).
    let logged_pool = r
        .i("context_len_log")
        .zip(r.i("max_running_requests"))
        .map(|(c, m)| (c.max(0) as u64, m.max(0) as u64));
    let (mrr, ctx) = match logged_pool {
        Some((ctx, mrr)) => (mrr, ctx),
        None => (m.max_running_requests.unwrap_or(2048), 0),
    };
    let ep = Parallel::of(args).ep;
    let act = memory::activations(Some(facts), chunk, (tp, ep), mrr, ctx).needed_mib() / 1024.0;
    ev.needed_gib = match oom_in_use {
        Some(u) => Some(u),
        None => real_used.map(|u| u + act),
    };
    ev
}
