//! [`Server`]: the parallel layout, GPU groups, speculative decoding, MoE and all-reduce
//! choices, SGLang's defaults and the backends, as SGLang will resolve them.

use crate::sglang::opt;
use serde::Serialize;

use super::Facts;
use super::allreduce::{self, CustomAllReduce};
pub use super::choice::Chosen;
pub(crate) use super::choice::{ChoiceSource, text};
use super::decided::{Decided, Sourced};
use super::defaults::{self, SglangDefaults};
use super::inputs::Inputs;
use super::specparams::{self, SpecParams};
use super::switches::{self, Switches};
use super::{attention, graphs, moe, vision};
use crate::facts::model::ModelFacts;
use crate::sglang::release::at_least;
use crate::sglang::{Parallel, SglangArgs};

/// One tensor-parallel group on this node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub(crate) struct TpGroup {
    /// Topology indices, in rank order.
    pub(crate) gpus: Vec<u32>,
    /// Every pair of the group is NVLink-connected (false for a one-GPU group).
    pub(crate) nvlink: bool,
}

/// Where the draft's weights come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DraftSource {
    /// No draft weights of its own (the target has no MTP layers).
    None,
    /// The target's own MTP / NextN layers.
    Mtp,
    /// A separate checkpoint (`--speculative-draft-model-path`).
    Model,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Speculative {
    /// Upper-cased, `NEXTN` as `EAGLE` (SGLang renames it the same way).
    pub(crate) algorithm: String,
    pub(crate) draft: DraftSource,
    /// `--speculative-draft-model-path` when it names a separate checkpoint.
    pub(crate) draft_model_path: Option<String>,
}

impl Speculative {
    /// The EAGLE family (EAGLE, EAGLE3, NEXTN/MTP).
    pub(crate) fn eagle(&self) -> bool {
        self.algorithm == "EAGLE" || self.algorithm == "EAGLE3"
    }

    /// NGRAM looks draft tokens up: no draft model runs, whatever the arguments name.
    pub(crate) fn uses_draft_model(&self) -> bool {
        self.algorithm != "NGRAM"
    }

    /// The separate draft checkpoint the server loads, if any.
    pub fn separate_draft(&self) -> Option<&str> {
        self.draft_model_path
            .as_deref()
            .filter(|_| self.uses_draft_model())
    }
}

/// Kernel backends: the user's, or SGLang's own choice. `None`: not applicable (no vision
/// tower, no experts, an option this release lacks) or not modelled (no CUDA GPU known).
/// Prefill and decode attention are `None` unless given (or, for decode, set by a model's
/// profiled defaults): they then follow `attention`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Backends {
    pub attention: Option<Chosen>,
    pub prefill_attention: Option<Chosen>,
    pub decode_attention: Option<Chosen>,
    pub multimodal_attention: Option<Chosen>,
    pub sampling: Option<Chosen>,
    pub moe_runner: Option<Chosen>,
    pub moe_a2a: Option<Chosen>,
    /// DeepEP's dispatch mode in effect (`None`: DeepEP is not the all-to-all backend).
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) deepep_mode: Option<String>,
    /// The main attention backend is the model's own default (see `Attention::by_model`).
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) attention_by_model: bool,
}

impl Backends {
    /// The backend prefill runs: its own, else the main one.
    pub(crate) fn prefill(&self) -> Option<&Chosen> {
        self.prefill_attention.as_ref().or(self.attention.as_ref())
    }

    /// The backend decode runs: its own, else the main one.
    pub(crate) fn decode(&self) -> Option<&Chosen> {
        self.decode_attention.as_ref().or(self.attention.as_ref())
    }
}

/// The server SGLang will run.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub parallel: Parallel,
    /// Topology indices this node's ranks use, in launch order.
    pub(crate) gpus: Vec<u32>,
    /// The TP groups on this node, one per replica and pipeline stage.
    pub(crate) tp_groups: Vec<TpGroup>,
    pub(crate) speculative: Option<Speculative>,
    /// The MoE all-to-all backend (`None`: none); 0.4.x/0.5.2 spelled DeepEP `--enable-deepep-moe`.
    pub(crate) moe_a2a: Option<String>,
    /// Quantisation, context length, KV cache dtype, the user's fraction and the ranks per
    /// node, each with where it came from (read them through the accessors below).
    pub(crate) decided: Decided,
    /// SGLang's custom all-reduce decision for the first TP group.
    pub(crate) custom_all_reduce: CustomAllReduce,
    /// The KV page size SGLang ends up with.
    pub page_size: u64,
    /// What SGLang reads as "GPU memory": the smallest total over every GPU on the node, MiB.
    pub(crate) gpu_memory_mib: Option<u64>,
    /// SGLang's start-up arithmetic: memory fraction, chunked prefill, CUDA-graph batch sizes.
    pub defaults: SglangDefaults,
    pub backends: Backends,
    /// Speculative steps / top-k / draft tokens after SGLang fills them in.
    pub spec_params: Option<SpecParams>,
    /// Radix cache, overlap scheduler and CUDA graph, after SGLang's own switches.
    pub switches: Switches,
    /// Deterministic inference as SGLang runs it (an RL on-policy target turns it on).
    pub(crate) deterministic: bool,
    /// The fraction SGLang sets over any given (DSA models on 0.5.3rc2 and 0.5.3).
    pub(crate) fixed_fraction: Option<f64>,
}

/// 0.5.3–0.5.7 turn DP attention on for DeepSeek's sparse-attention models on CUDA GPUs:
/// 0.5.3–0.5.5 also set DP to TP; 0.5.6–0.5.7 keep the DP given, so DP 1 leaves it off.
fn dsa_dp_attention(version: &str, model: Option<&ModelFacts>, mut p: Parallel) -> Parallel {
    if !dsa_sets_parallel(version, model) {
        return p;
    }
    if !at_least(version, "0.5.6") {
        p.dp = p.tp;
    }
    if p.dp > 1 {
        p.attn_dp = p.dp;
        p.dp_attention = true;
        p.replicas = 1;
    }
    p
}

fn dsa_sets_parallel(version: &str, model: Option<&ModelFacts>) -> bool {
    attention::dsa_served(version, model) && !at_least(version, "0.5.8")
}

/// 0.5.3–0.5.7 size memory (fraction, graph batches) before their model adjustments turn DP
/// attention on for DSA models, and split the chunk over the DP ranks after.
fn memory_before_dsa(
    f: &Facts,
    before: &Parallel,
    gpu_memory_mib: Option<u64>,
    after: SglangDefaults,
) -> SglangDefaults {
    let mut early = defaults::of(&Inputs::of(f, before, gpu_memory_mib));
    early.chunked_prefill_size = after.chunked_prefill_size;
    early.attn_dp_size = after.attn_dp_size;
    if let Some(fixed) = dsa_fixed_fraction(f.version, f.model) {
        early.mem_fraction_static = fixed;
    }
    early
}

/// 0.5.3rc2 and 0.5.3 set a DSA model's fraction to 0.8, whatever is given.
fn dsa_fixed_fraction(version: &str, model: Option<&ModelFacts>) -> Option<f64> {
    let fixed = dsa_sets_parallel(version, model) && !at_least(version, "0.5.3.post1");
    fixed.then_some(0.8)
}

/// DWDP over the whole TP group (0.5.17+; any other size SGLang refuses) runs attention DP over
/// every rank, EP over them too, MoE dense TP 1 and no plain DP.
fn dwdp_dp_attention(version: &str, args: &SglangArgs, mut p: Parallel) -> Parallel {
    let dwdp = args.int(opt::DWDP_SIZE).unwrap_or(1);
    if !at_least(version, "0.5.17") || dwdp <= 1 || dwdp != p.tp {
        return p;
    }
    p.attn_dp = dwdp;
    p.dp_attention = true;
    p.dp = 1;
    p.replicas = 1;
    p.ep = dwdp;
    p.moe_dense_tp = Some(1);
    p
}

/// An all-to-all backend SGLang forces (Waterfill, Mega MoE's variable) spans the TP group as a
/// named one does.
fn forced_a2a(f: &Facts, mut p: Parallel) -> Parallel {
    let named = super::choice::text(f.args, opt::MOE_A2A_BACKEND);
    if super::a2a::forced(f.args, f.env, named.as_deref()).is_some() {
        p.a2a = true;
        p.ep = p.tp;
    }
    p
}

impl Server {
    pub(crate) fn resolve(f: &Facts) -> Server {
        let args = f.args;
        let before_model = dwdp_dp_attention(f.version, args, forced_a2a(f, Parallel::of(args)));
        let parallel = dsa_dp_attention(f.version, f.model, before_model);
        let tp_groups = tp_groups(f, &parallel);
        let first_group = tp_groups.first().map_or(&[][..], |g| g.gpus.as_slice());
        let custom_all_reduce =
            allreduce::decide(f.version, args, f.env, f.topology, &parallel, first_group);
        let gpu_memory_mib = node_memory(f);
        let inputs = Inputs::of(f, &parallel, gpu_memory_mib);
        let attn = attention::resolve(&inputs);
        let backends = backends(&inputs, attn.clone(), f.model);
        let main = backends.attention.as_ref().map(|c| c.value.as_str());
        let mut defaults = defaults::of(&inputs);
        if dsa_sets_parallel(f.version, f.model) {
            defaults = memory_before_dsa(f, &before_model, gpu_memory_mib, defaults);
        }
        if graphs::prefill_dropped(f.version, args, inputs.arch, &backends).is_some() {
            defaults.prefill_graph = false;
        }
        let switches = switches::resolve(&inputs, main, parallel.pp, defaults.prefill_graph);
        if switches::mis(&inputs) {
            // After its memory heuristic read the chunk.
            defaults.chunked_prefill_size = -1;
        }
        // What SGLang turns off itself (a PD prefill server, the eager backends) captures no
        // decode graph: the plan's graph entry and memory reserve follow its switch.
        defaults.decode_graph &= switches.cuda_graph.on;
        Server {
            switches,
            spec_params: specparams::resolve(&inputs),
            speculative: Speculative::of(args, f.model),
            moe_a2a: moe_a2a(&inputs),
            custom_all_reduce,
            deterministic: super::inputs::deterministic(args),
            fixed_fraction: dsa_fixed_fraction(f.version, f.model),
            page_size: attention::page_size(&inputs, &attn),
            gpu_memory_mib,
            defaults,
            backends,
            gpus: f.gpus.to_vec(),
            tp_groups,
            parallel,
            decided: inputs.decided,
        }
    }

    /// Marks the given values a fix set (option names, any spelling) as [`Source::Fix`](super::Source::Fix).
    pub(crate) fn fixed_by(mut self, args: &SglangArgs, fixed: &[String]) -> Server {
        self.decided.fixed_by(args, fixed);
        self
    }

    /// The quantisation method in effect, lower-case.
    pub(crate) fn quantization(&self) -> Option<&str> {
        self.decided.quantization.as_ref().map(|q| q.value.as_str())
    }

    /// The quantisation in effect and where it came from.
    pub(crate) fn quantization_sourced(&self) -> Option<&Sourced<String>> {
        self.decided.quantization.as_ref()
    }

    /// The context length SGLang serves (`None`: the model is unknown).
    pub(crate) fn context_length(&self) -> Option<u64> {
        self.decided.context_length.as_ref().map(|c| c.value)
    }

    /// The KV cache dtype in effect (`None`: the release lacks the option).
    pub fn kv_cache_dtype(&self) -> Option<&str> {
        self.decided
            .kv_cache_dtype
            .as_ref()
            .map(|k| k.value.as_str())
    }

    /// The fraction the server runs at: one SGLang fixes, else the one given, else its default.
    pub fn mem_fraction_in_effect(&self) -> f64 {
        self.fixed_fraction
            .or(self.user_mem_fraction())
            .unwrap_or(self.defaults.mem_fraction_static)
    }

    /// The fraction SGLang sets over any given, if it does.
    pub(crate) fn fixed_fraction(&self) -> Option<f64> {
        self.fixed_fraction
    }

    /// `--mem-fraction-static` when given (the user's or a fix's).
    pub(crate) fn user_mem_fraction(&self) -> Option<f64> {
        self.decided.mem_fraction_static.as_ref().map(|f| f.value)
    }

    /// The first TP group's GPUs (what SGLang's all-reduce gates look at).
    pub(crate) fn tp_gpus(&self) -> &[u32] {
        self.tp_groups.first().map_or(&[], |g| &g.gpus)
    }
}

/// The used GPUs cut into TP groups of this node's TP width, in launch order.
fn tp_groups(f: &Facts, p: &Parallel) -> Vec<TpGroup> {
    let width = usize::try_from(p.tp_per_node())
        .unwrap_or(usize::MAX)
        .max(1);
    f.gpus
        .chunks(width)
        .map(|g| TpGroup {
            gpus: g.to_vec(),
            nvlink: g.len() > 1 && f.topology.fully_nvlinked(g),
        })
        .collect()
}

/// SGLang sizes its reserve from the smallest total capacity on the node, whichever GPUs the
/// server uses (`CUDA_VISIBLE_DEVICES` does not enter).
fn node_memory(f: &Facts) -> Option<u64> {
    let node_min = f.topology.gpus.iter().map(|g| g.memory_total_mib).min();
    node_min.or_else(|| {
        f.gpus
            .iter()
            .filter_map(|&i| f.topology.gpu(i))
            .map(|g| g.memory_total_mib)
            .min()
    })
}

impl Speculative {
    /// Speculative decoding as the arguments ask for it (`None`: off).
    pub fn of(args: &SglangArgs, model: Option<&ModelFacts>) -> Option<Speculative> {
        let algorithm = super::args::speculative_algorithm(args)?;
        let path = args
            .str(opt::SPECULATIVE_DRAFT_MODEL_PATH)
            .map(str::to_owned);
        let own_layers = path.is_none() || path.as_deref() == args.str(opt::MODEL_PATH);
        let mtp = own_layers && model.is_some_and(|m| m.num_nextn_predict_layers.unwrap_or(0) > 0);
        let draft = if mtp {
            DraftSource::Mtp
        } else if own_layers {
            DraftSource::None
        } else {
            DraftSource::Model
        };
        Some(Speculative {
            draft_model_path: path.filter(|_| draft == DraftSource::Model),
            algorithm,
            draft,
        })
    }
}

/// The all-to-all backend in effect: the one SGLang forces, else the one named, else DeepEP
/// under 0.4.x/0.5.2's `--enable-deepep-moe`.
fn moe_a2a(i: &Inputs) -> Option<String> {
    (i.forced_a2a.map(str::to_owned))
        .or_else(|| i.a2a.clone())
        .or_else(|| i.deepep.then(|| "deepep".to_string()))
}

/// Every backend after SGLang's resolution.
fn backends(i: &Inputs, a: attention::Attention, model: Option<&ModelFacts>) -> Backends {
    let moe_a2a = moe::a2a(i);
    let moe_model = model.is_some_and(|m| m.num_experts.is_some_and(|n| n > 1));
    let moe_runner = moe::runner(i, moe_model);
    Backends {
        deepep_mode: moe::deepep_mode(i, moe_a2a.as_ref(), moe_runner.as_ref()),
        moe_runner,
        moe_a2a,
        attention_by_model: a.by_model,
        attention: a.main,
        prefill_attention: a.prefill,
        decode_attention: a.decode,
        multimodal_attention: vision::resolve(i),
        sampling: switches::sampling(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Env, Topology};
    use crate::resolve::Context;
    use crate::sglang::flagset;
    use serde_json::json;

    fn h100() -> Topology {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/topologies/8x-h100-sxm-nvlink.json"
        );
        Topology::load(std::path::Path::new(path)).unwrap()
    }

    /// The rules and the memory planner read one layout: with the deprecated
    /// `--enable-dp-attention --dp-size 4` next to a default `--attn-dp-size 1`, both see
    /// attention DP 4 (they used to disagree: 1 for the rules, 4 for the planner).
    #[test]
    fn rules_and_memory_agree_on_attention_dp() {
        let args = SglangArgs::with_values(
            flagset::get("0.5.23").unwrap(),
            &[
                ("--tp-size", json!(8)),
                ("--attn-dp-size", json!(1)),
                ("--enable-dp-attention", json!(true)),
                ("--dp-size", json!(4)),
            ],
        );
        let topology = h100();
        let gpus: Vec<u32> = (0..8).collect();
        let env = Env::default();
        let ctx = Context::new(Facts {
            version: "0.5.23",
            args: &args,
            env: &env,
            topology: &topology,
            gpus: &gpus,
            model: None,
            draft: None,
            host: None,
            packages: None,
        });
        assert_eq!(ctx.attn_dp(), 4);
        assert!(ctx.dp_attention());
        assert_eq!(ctx.server.defaults.attn_dp_size, 4);
        assert_eq!(ctx.server.tp_groups.len(), 1);
        assert!(ctx.server.tp_groups[0].nvlink);
    }

    /// DWDP over the whole TP group runs attention DP over every rank (0.5.17+); a DWDP size
    /// SGLang refuses, or an older release, leaves the layout as given.
    #[test]
    fn dwdp_runs_attention_dp_over_the_tp_group() {
        let resolve = |v: &str, dwdp: i64| {
            let args = SglangArgs::with_values(
                flagset::get(v).unwrap(),
                &[("--tp-size", json!(4)), ("--dwdp-size", json!(dwdp))],
            );
            dwdp_dp_attention(v, &args, Parallel::of(&args))
        };
        let p = resolve("0.5.23", 4);
        assert!(p.dp_attention);
        assert_eq!((p.attn_dp, p.ep, p.dp, p.moe_dense_tp), (4, 4, 1, Some(1)));
        assert!(!resolve("0.5.23", 2).dp_attention);
        assert!(!resolve("0.5.23", 1).dp_attention);
    }
}
