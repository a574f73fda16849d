//! The memory plan inside the program: the figures the planner settles, and the terms every
//! MiB of the GPU goes to, each with the label the report's table shows. plan/v1's `memory`
//! object is projected from it (`v1.rs`): a new term is a [`Role`], its computation and its
//! place in the terms (`lines.rs`), never the contract or the report.

use crate::observe::Observation;
use crate::plan::v1::{MfsSource, ObservedUse};
use serde::Serialize;

/// Where a term sits in SGLang's arithmetic: set aside before the weights (SGLang's baseline
/// is what is left), inside the static pool (`--mem-fraction-static` of the baseline), or
/// outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Group {
    SetAside,
    StaticPool,
    Outside,
}

/// What a term is: how the projection and the report's sentences find it, and its key in
/// plan/v1's `memory.terms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Role {
    OtherProcesses,
    CudaContext,
    Nccl,
    CustomAllReduce,
    /// The target's, draft's and encoders' weights (the line: the target's own).
    Weights,
    DraftWeights,
    EncoderWeights,
    Lora,
    MambaState,
    /// The whole KV pool (the line: the target's layers, its sliding-window pool apart).
    KvCache,
    SwaKvCache,
    DraftKvCache,
    /// The weights, or the KV cache, when they are not sized.
    NotSized,
    /// What the static pool leaves over (or lacks).
    Unallocated,
    CudaGraphs,
    Activations,
    /// DeepEP's dispatch and combine buffers.
    DeepepBuffers,
    /// FlashAttention-3's decode page tables, sized by the context.
    AttentionPageTables,
    Margin,
    /// What is left outside the static pool after its reserve (or what the reserve lacks).
    LeftFree,
}

impl Role {
    pub(crate) fn group(self) -> Group {
        use Role::*;
        match self {
            OtherProcesses | CudaContext | Nccl | CustomAllReduce => Group::SetAside,
            CudaGraphs | Activations | DeepepBuffers | AttentionPageTables | Margin | LeftFree => {
                Group::Outside
            }
            _ => Group::StaticPool,
        }
    }
}

/// One term, per GPU (the GPU with least free memory).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Term {
    pub(crate) role: Role,
    /// As the table names it.
    pub(crate) label: String,
    /// The term's size, MiB; a weights or KV term counts its parts (the terms after it). Wide
    /// enough for any figure a topology file gives.
    pub(crate) mib: i128,
    /// Its own line in the table, MiB (`None`: not shown, being zero or not sized). The lines
    /// add up to the GPU's capacity.
    pub(crate) line: Option<i64>,
    /// Stands on a start of the line on this machine.
    pub(crate) observed: bool,
}

/// The memory plan of one line.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryPlan {
    pub(crate) gpu_memory_mib: u64,
    pub mem_fraction_static: f64,
    pub(crate) mem_fraction_static_source: MfsSource,
    pub sglang_default_mem_fraction_static: Option<f64>,
    pub sglang_default_chunked_prefill_size: Option<i64>,
    pub(crate) sglang_default_cuda_graph_max_bs: Option<i64>,
    pub(crate) weights_per_gpu_gib: Option<f64>,
    pub(crate) kv_cache_bytes_per_token: Option<u64>,
    pub(crate) kv_cache_tokens: Option<u64>,
    pub max_running_requests: Option<u64>,
    pub fits: Option<bool>,
    pub(crate) swa_kv_cache_tokens: Option<u64>,
    pub(crate) mamba_cache_size: Option<u64>,
    pub(crate) load_peak_per_gpu_gib: Option<f64>,
    /// SGLang's baseline on the GPU with least free memory, MiB.
    pub(crate) baseline_mib: i64,
    /// What the first use needs outside the static pool, MiB.
    pub(crate) first_use_mib: u64,
    pub(crate) observed: Option<Observation>,
    pub(crate) observed_use: Option<ObservedUse>,
    /// Every term, in table order.
    pub(crate) terms: Vec<Term>,
}

impl MemoryPlan {
    pub(crate) fn term(&self, role: Role) -> Option<&Term> {
        self.terms.iter().find(|t| t.role == role)
    }

    /// A term's size, MiB, where the plan has it.
    pub(crate) fn mib(&self, role: Role) -> Option<i128> {
        self.term(role).map(|t| t.mib)
    }

    /// The graph memory SGLang reports for the server (`memory_usage.graph`, capture's before
    /// and after), MiB: the graph pools and the buffers a backend makes while capturing.
    pub(crate) fn captured_mib(&self) -> u64 {
        let sum: i128 = [
            Role::CudaGraphs,
            Role::DeepepBuffers,
            Role::AttentionPageTables,
        ]
        .into_iter()
        .filter_map(|r| self.mib(r))
        .sum();
        u64::try_from(sum).unwrap_or(0)
    }

    /// The table's lines of one group, in order.
    pub(crate) fn lines(&self, group: Group) -> impl Iterator<Item = (&Term, i64)> {
        self.terms
            .iter()
            .filter(move |t| t.role.group() == group)
            .filter_map(|t| Some((t, t.line?)))
    }

    /// The sum of one group's lines.
    pub(crate) fn total(&self, group: Group) -> i64 {
        sum(self.terms.iter().filter(|t| t.role.group() == group))
    }

    /// The plan stands on a start of the line: what it took from it marks the terms.
    pub(crate) fn stand_on(&mut self, observation: Observation, used: ObservedUse) {
        let kv = used.started && self.kv_cache_tokens.is_some();
        for t in &mut self.terms {
            t.observed = match t.role {
                Role::Weights => used.weights,
                Role::CudaGraphs => used.cuda_graphs,
                Role::KvCache | Role::SwaKvCache | Role::DraftKvCache => kv,
                _ => false,
            };
            if t.role == Role::Unallocated {
                t.label = unallocated_label(t.mib, kv).to_owned();
            }
        }
        self.observed = Some(observation);
        self.observed_use = Some(used);
    }
}

/// The sum of the terms' lines; an absurd figure (a fraction of 1e308) saturates, never panics.
pub(crate) fn sum<'t>(terms: impl Iterator<Item = &'t Term>) -> i64 {
    terms
        .filter_map(|t| t.line)
        .fold(0, |a: i64, b| a.saturating_add(b))
}

/// The static pool's balance, as the table names it.
pub(crate) fn unallocated_label(left: i128, observed_kv: bool) -> &'static str {
    match (left >= 0, observed_kv) {
        (true, _) => "left unallocated",
        // SGLang measured more free memory than the baseline planned.
        (false, true) => "observed pool beyond the planned baseline",
        (false, false) => "short: the lines above exceed the pool",
    }
}
