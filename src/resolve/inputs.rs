//! What SGLang's start-up resolution reads, gathered once per round of fixes from the facts:
//! the backend choices, the switches and every formula generation of the defaults read this,
//! and the decided values ([`Decided`]) start here.

use super::Facts;
use super::args::{bounded, flag_of, int_arg, int_list, int_of, speculative_algorithm, str_of};
use super::choice::text;
use super::decided::Decided;
use crate::facts::Env;
use crate::facts::model::ModelFacts;
use crate::sglang::{Parallel, SglangArgs, opt};

/// `--disaggregation-mode` when the server runs one role of a prefill/decode split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disagg {
    Prefill,
    Decode,
    /// A value no release accepts (a rejected line's best-effort parse): split, role unknown.
    Other,
}

/// The inputs of SGLang's start-up choices.
pub(crate) struct Inputs<'a> {
    pub(crate) version: &'a str,
    pub(crate) args: &'a SglangArgs,
    pub(crate) env: &'a Env,
    pub(crate) model: Option<&'a ModelFacts>,
    /// `architectures[0]` of the model's config.
    pub(crate) arch: Option<&'a str>,
    pub(crate) mla: bool,
    pub(crate) multimodal: bool,
    /// K and V rows of different widths (not MLA).
    pub(crate) asymmetric_kv: bool,
    /// The model's attention has sinks (GPT-OSS).
    pub(crate) attention_sinks: bool,
    /// Compute capability (major, minor) of the first GPU the server uses (SGLang asks
    /// device 0).
    pub(crate) cc: Option<(u32, u32)>,
    /// GPU capacity SGLang reads, MiB (`None`: unknown).
    pub(crate) g: Option<f64>,
    /// Parallel sizes, bounded for the arithmetic.
    pub(crate) tp: i64,
    pub(crate) pp: i64,
    pub(crate) attn_dp: i64,
    /// `--dp-size` as given.
    pub(crate) dp: i64,
    /// The speculative algorithm after SGLang's renames (NEXTN → EAGLE).
    pub(crate) spec: Option<String>,
    /// `--speculative-eagle-topk` as given.
    pub(crate) user_topk: Option<i64>,
    /// The MoE all-to-all backend named (`none` as `None`): what the defaults read, before
    /// Waterfill or Mega MoE's variable replace it.
    pub(crate) a2a: Option<String>,
    /// The all-to-all backend SGLang puts over the named one (Waterfill, Mega MoE's variable).
    pub(crate) forced_a2a: Option<&'static str>,
    /// DeepEP: as the all-to-all backend, or 0.4.x/0.5.2's `--enable-deepep-moe`.
    pub(crate) deepep: bool,
    pub(crate) disagg: Option<Disagg>,
    pub(crate) model_path: &'a str,
    pub(crate) user_mrr: Option<i64>,
    pub(crate) max_prefill_tokens: i64,
    pub(crate) max_total_tokens: Option<i64>,
    pub(crate) no_padding: bool,
    pub(crate) disable_cuda_graph: bool,
    pub(crate) user_decode_max: Option<i64>,
    pub(crate) user_decode_bs: Option<Vec<i64>>,
    pub(crate) user_cps: Option<i64>,
    /// The values decided once (quantisation, context, KV dtype, fraction, ranks per node).
    pub(crate) decided: Decided,
}

impl<'a> Inputs<'a> {
    /// The compute-capability major of the first GPU the server uses.
    pub(crate) fn cc_major(&self) -> Option<u32> {
        self.cc.map(|c| c.0)
    }

    pub(crate) fn of(f: &Facts<'a>, p: &Parallel, gpu_mem_mib: Option<u64>) -> Inputs<'a> {
        let (args, model, version) = (f.args, f.model, f.version);
        let a2a = text(args, opt::MOE_A2A_BACKEND).filter(|v| v != "none");
        let arch = model.and_then(|m| m.architecture.as_deref());
        Inputs {
            version,
            args,
            env: f.env,
            model,
            arch,
            mla: model.is_some_and(ModelFacts::is_mla),
            multimodal: super::multimodal::served(version, args, model),
            asymmetric_kv: model.is_some_and(|m| m.asymmetric_kv().is_some()),
            attention_sinks: arch == Some("GptOssForCausalLM"),
            cc: first_cc(f),
            g: gpu_mem_mib.map(|m| m as f64),
            tp: bounded(p.tp),
            pp: bounded(p.pp),
            attn_dp: bounded(p.attn_dp),
            dp: bounded(p.dp),
            spec: speculative_algorithm(args),
            user_topk: args
                .is_set(opt::SPECULATIVE_EAGLE_TOPK)
                .then(|| args.int(opt::SPECULATIVE_EAGLE_TOPK))
                .flatten(),
            deepep: a2a.as_deref() == Some("deepep") || flag_of(args, &[opt::ENABLE_DEEPEP_MOE]),
            forced_a2a: super::a2a::forced(args, f.env, a2a.as_deref()),
            a2a,
            disagg: disagg(args),
            model_path: args.str(opt::MODEL_PATH).unwrap_or(""),
            user_mrr: int_arg(args, opt::MAX_RUNNING_REQUESTS),
            max_prefill_tokens: int_arg(args, opt::MAX_PREFILL_TOKENS).unwrap_or(16384),
            max_total_tokens: int_arg(args, opt::MAX_TOTAL_TOKENS),
            no_padding: flag_of(args, &[opt::DISABLE_CUDA_GRAPH_PADDING]),
            disable_cuda_graph: flag_of(args, &[opt::DISABLE_CUDA_GRAPH]),
            user_decode_max: int_of(
                args,
                &[opt::CUDA_GRAPH_MAX_BS_DECODE, opt::CUDA_GRAPH_MAX_BS],
            ),
            user_decode_bs: int_list(args, &[opt::CUDA_GRAPH_BS_DECODE, opt::CUDA_GRAPH_BS]),
            user_cps: int_arg(args, opt::CHUNKED_PREFILL_SIZE),
            decided: Decided::of(args, model, p, (version, first_cc(f).map(|c| c.0))),
        }
    }

    /// The quantisation in effect (see [`Decided::quantization`]).
    pub(crate) fn quant(&self) -> Option<&str> {
        self.decided.quantization.as_ref().map(|q| q.value.as_str())
    }

    /// The KV cache dtype in effect (`auto` when the release lacks the option).
    pub(crate) fn kv_cache_dtype(&self) -> &str {
        self.decided
            .kv_cache_dtype
            .as_ref()
            .map_or("auto", |k| k.value.as_str())
    }

    /// SGLang's "no speculative top-k, or top-k 1 with one-token pages" test, on the user's
    /// values (it runs before the speculative defaults are filled in).
    pub(crate) fn spec_topk_one_or_unset(&self) -> bool {
        match self.user_topk {
            None => true,
            Some(1) => self.args.int(opt::PAGE_SIZE).is_none_or(|p| p <= 1),
            Some(_) => false,
        }
    }

    /// An `EnvBool` switch of SGLang's (true/1/yes/y), or `default` when unset.
    pub(crate) fn env_bool(&self, name: &str, default: bool) -> bool {
        (self.env.get(name)).map_or(default, |v| crate::sglang::envs::bool_on(v.trim()))
    }

    /// A boolean switch this release knows and the user turned on.
    pub(crate) fn flag(&self, opt: &str) -> bool {
        self.args.knows(opt) && self.args.flag(opt)
    }

    /// Deterministic inference: asked for, or turned on by an RL on-policy target.
    pub(crate) fn deterministic(&self) -> bool {
        deterministic(self.args)
    }

    /// A PD decode server keeps a chunk cache, not a radix tree, unless asked for one (the
    /// option exists from 0.5.11).
    pub(crate) fn pd_decode_chunk_cache(&self) -> bool {
        self.disagg == Some(Disagg::Decode)
            && !self.flag(opt::DISAGGREGATION_DECODE_ENABLE_RADIX_CACHE)
    }
}

/// The role `--disaggregation-mode` gives (`null`, or a release without it: `None`).
fn disagg(args: &SglangArgs) -> Option<Disagg> {
    let known = args.knows(opt::DISAGGREGATION_MODE);
    match known
        .then(|| args.str(opt::DISAGGREGATION_MODE))
        .flatten()?
    {
        "null" => None,
        "prefill" => Some(Disagg::Prefill),
        "decode" => Some(Disagg::Decode),
        _ => Some(Disagg::Other),
    }
}

fn first_cc(f: &Facts) -> Option<(u32, u32)> {
    f.gpus
        .first()
        .and_then(|&g| f.topology.gpu(g))
        .and_then(|g| g.cc())
}

/// Deterministic inference as SGLang runs it: `--enable-deterministic-inference`, or an RL
/// on-policy target (`--rl-on-policy-target`, 0.5.4.post1+), which turns it on when SGLang
/// handles deterministic inference (after its memory heuristic, which reads the flag alone).
pub(crate) fn deterministic(args: &SglangArgs) -> bool {
    flag_of(args, &[opt::ENABLE_DETERMINISTIC_INFERENCE])
        || str_of(args, &[opt::RL_ON_POLICY_TARGET]).is_some()
}
