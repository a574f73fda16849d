//! The plan/v1 object (documented in docs/plan-v1.md). Field names and order are the contract:
//! fields are only ever added.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::install::select::VersionSource;
use crate::resolve::{
    Backends, CustomAllReduce, Server, SpecParams, Speculative, Switches, TpGroup,
};
use crate::rules::{self, Severity};
use crate::sglang::Parallel;

pub(crate) const SCHEMA: &str = "sglang-launch/plan/v1";

pub use super::verdict::Verdict;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Plan {
    #[schemars(extend("const" = SCHEMA))]
    pub(crate) schema: &'static str,
    pub sglang_version: String,
    pub sglang_version_source: VersionSource,
    pub verdict: Verdict,
    pub(crate) program: String,
    /// Final SGLang arguments (secrets masked when serialised for output).
    pub sglang_args: Vec<String>,
    /// dest → typed value; null when the arguments don't parse.
    pub sglang_parsed: Option<BTreeMap<String, Value>>,
    pub env: EnvChanges,
    pub findings: Vec<Finding>,
    pub gpus: Vec<u32>,
    pub memory: Option<Memory>,
    /// What the launcher believes SGLang will run; null when the arguments don't parse.
    pub resolved: Option<Resolved>,
}

/// The resolved server, as plan/v1 shows it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Resolved {
    pub(crate) parallel: Parallel,
    pub(crate) tp_groups: Vec<TpGroup>,
    pub(crate) speculative: Option<Speculative>,
    pub(crate) moe_a2a_backend: Option<String>,
    pub(crate) quantization: Option<String>,
    pub(crate) custom_all_reduce: CustomAllReduce,
    pub(crate) page_size: u64,
    pub(crate) chunked_prefill_size: i64,
    pub(crate) max_running_requests: Option<i64>,
    pub(crate) cuda_graph: CudaGraph,
    pub(crate) backends: Backends,
    /// Speculative steps, top-k and draft tokens, after SGLang fills them in.
    pub(crate) speculative_params: Option<SpecParams>,
    /// Radix cache, overlap scheduler and CUDA graph after SGLang's own switches.
    pub(crate) switches: Switches,
}

/// The CUDA graphs SGLang captures, as its server arguments hold them (the runner later drops
/// decode sizes above the request pool).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct CudaGraph {
    pub(crate) decode: bool,
    pub(crate) decode_max_bs: Option<i64>,
    pub(crate) decode_bs: Option<Vec<i64>>,
    pub(crate) prefill: bool,
    pub(crate) prefill_bs: Vec<i64>,
}

impl From<&Server> for Resolved {
    fn from(s: &Server) -> Resolved {
        let d = &s.defaults;
        Resolved {
            parallel: s.parallel,
            tp_groups: s.tp_groups.clone(),
            speculative: s.speculative.clone(),
            moe_a2a_backend: s.moe_a2a.clone(),
            quantization: s.quantization().map(str::to_owned),
            custom_all_reduce: s.custom_all_reduce,
            page_size: s.page_size,
            chunked_prefill_size: d.chunked_prefill_size,
            max_running_requests: d.max_running_requests,
            cuda_graph: CudaGraph {
                decode: d.decode_graph,
                decode_max_bs: d.decode_max_bs,
                decode_bs: d.decode_bs.clone(),
                prefill: d.prefill_graph,
                prefill_bs: d.prefill_bs.clone(),
            },
            backends: s.backends.clone(),
            speculative_params: s.spec_params,
            switches: s.switches,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct EnvChanges {
    pub set: BTreeMap<String, String>,
    pub unset: Vec<String>,
}

impl EnvChanges {
    /// As printed: secret variables' values as `***`.
    pub(crate) fn masked(&self) -> EnvChanges {
        let shown = |(k, v): (&String, &String)| {
            let v = if crate::secrets::is_secret_env(k) {
                crate::out::MASK.to_owned()
            } else {
                v.clone()
            };
            (k.clone(), v)
        };
        EnvChanges {
            set: self.set.iter().map(shown).collect(),
            unset: self.unset.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    pub code: String,
    pub(crate) name: String,
    pub severity: Severity,
    pub message: String,
    pub fixed: bool,
    pub fix: Option<String>,
}

/// The projection of a finding: its code and name as text, the fix only where it was made.
impl From<&rules::Finding> for Finding {
    fn from(f: &rules::Finding) -> Finding {
        Finding {
            code: f.code.as_str().to_owned(),
            name: f.name().to_owned(),
            severity: f.severity,
            message: f.message.clone(),
            fixed: f.fixed,
            fix: f.applied().map(str::to_owned),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MfsSource {
    User,
    Planned,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Memory {
    pub gpu_memory_mib: u64,
    pub mem_fraction_static: f64,
    pub(crate) mem_fraction_static_source: MfsSource,
    pub(crate) sglang_default_mem_fraction_static: Option<f64>,
    pub(crate) sglang_default_chunked_prefill_size: Option<i64>,
    pub(crate) sglang_default_cuda_graph_max_bs: Option<i64>,
    pub(crate) weights_per_gpu_gib: Option<f64>,
    pub(crate) kv_cache_bytes_per_token: Option<u64>,
    pub(crate) kv_cache_tokens: Option<u64>,
    pub(crate) max_running_requests: Option<u64>,
    pub reserved_mib: Reserved,
    pub(crate) fits: Option<bool>,
    /// Terms inside the static pool, MiB (additive to v1).
    pub(crate) static_mib: StaticTerms,
    /// Tokens of the sliding-window layers' own pool; null when every layer keeps full KV.
    pub(crate) swa_kv_cache_tokens: Option<u64>,
    /// Hybrids: request slots of the Mamba / linear-attention state pool.
    pub(crate) mamba_cache_size: Option<u64>,
    /// Online quantisation: weights per GPU at the loading peak, before quantising, GiB.
    pub(crate) load_peak_per_gpu_gib: Option<f64>,
    /// Free memory before the weights on the GPU with least of it (SGLang's baseline, to which
    /// the fraction applies), MiB; negative when the set-aside terms exceed the free memory.
    pub baseline_mib: i64,
    /// Weights per GPU (target, draft, encoders), whole MiB.
    pub weights_per_gpu_mib: Option<u64>,
    /// The whole KV pool (target and draft layers, sliding-window pool), whole MiB.
    pub kv_cache_mib: Option<u64>,
    /// What the static pool leaves unallocated (page rounding, `--max-total-tokens`), whole MiB;
    /// negative when weights, LoRA and state pools exceed it.
    pub(crate) static_unallocated_mib: Option<i64>,
    /// What the first use needs outside the static pool (CUDA graphs, the buffers a backend
    /// makes at its first forward pass, one prefill chunk's and the largest captured batch's
    /// activations), MiB: below it the launch is expected to fail.
    pub(crate) first_use_mib: u64,
    /// The graph memory SGLang will report (graph pools and what capture makes beside them),
    /// MiB: what a start is measured against. Not written out.
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) captured_mib: u64,
    /// What a start of this same line on this machine really allocated, next to what was
    /// planned for it (`run`, then `wait-ready --pid`); null when there is none (additive to v1).
    pub(crate) observed: Option<crate::observe::Observation>,
    /// Which of the figures above stand on `observed` rather than on the planner's estimates,
    /// and what the planner alone gives; null when no start is used (additive to v1).
    pub(crate) observed_use: Option<ObservedUse>,
    /// The memory table's lines in order (additive to v1): every term with a line of its own,
    /// the ones the fields above name and those they do not (a backend's buffers).
    pub(crate) terms: Vec<TermLine>,
}

/// One line of the memory table, per GPU.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct TermLine {
    /// What the line holds (`weights`, `kv_cache`, `deepep_buffers`, …).
    pub(crate) term: String,
    /// Where it sits: `set_aside` before the weights, `static_pool`, or `outside` it.
    pub(crate) group: String,
    /// As the human report's table names it.
    pub(crate) label: String,
    /// Its size, MiB: the lines of a group add up to the group, and all of them to
    /// `gpu_memory_mib`; negative for what the pool or the reserve lacks.
    pub(crate) mib: i64,
    /// It stands on a start of this line on this machine (`observed`).
    pub(crate) observed: bool,
}

/// The figures of the plan that stand on a start of the line on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct ObservedUse {
    /// When that start was, Unix seconds.
    pub(crate) at: u64,
    /// `weights_per_gpu_gib` (and `weights_per_gpu_mib`) hold the weights the start loaded.
    pub(crate) weights: bool,
    /// `reserved_mib.cuda_graphs` holds the graph memory the start captured.
    pub(crate) cuda_graphs: bool,
    /// The line runs at the fraction it started with: `kv_cache_tokens` (and what follows from
    /// it) is what the start got, and `fits` stands on the start.
    pub(crate) started: bool,
    /// What the planner alone gives the line.
    pub(crate) predicted: Predicted,
}

/// The planner's own figures for a line whose plan stands on a start.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct Predicted {
    /// The fraction the planner alone would give the server.
    pub(crate) mem_fraction_static: f64,
    /// The weights per GPU as estimated, GiB.
    pub(crate) weights_per_gpu_gib: Option<f64>,
    /// The captured CUDA graphs as estimated, MiB.
    pub(crate) cuda_graphs_mib: u64,
    /// The KV tokens as estimated, at the fraction the server gets.
    pub(crate) kv_cache_tokens: Option<u64>,
    /// The fit as estimated, at the fraction the server gets.
    pub(crate) fits: Option<bool>,
}

/// What the static pool holds besides the target's weights and the KV cache, MiB. `encoder_weights`
/// and `draft_weights` are part of `weights_per_gpu_gib`, `swa_kv_cache` of the KV cache; `lora`
/// and `mamba_state` come out of what is left for the KV cache.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct StaticTerms {
    pub(crate) encoder_weights: u64,
    pub(crate) draft_weights: u64,
    pub(crate) lora: u64,
    pub(crate) mamba_state: u64,
    pub(crate) swa_kv_cache: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Reserved {
    pub cuda_context: u64,
    pub nccl: u64,
    pub custom_allreduce: u64,
    pub cuda_graphs: u64,
    pub activations: u64,
    pub(crate) other_processes: u64,
    pub margin: u64,
}
