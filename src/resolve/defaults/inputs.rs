//! What every formula generation reads, gathered once.

use super::args::{bounded, flag_of, int_arg, int_list, int_of, str_of};
use super::tiers::tier;
use super::{Family, speculative_algorithm};
use crate::facts::Env;
use crate::facts::model::ModelFacts;
use crate::sglang::opt;
use crate::sglang::{Parallel, SglangArgs};

/// What every formula generation reads: the arguments and facts `resolve` gathers once.
pub(super) struct Inputs<'a> {
    pub(super) family: Family,
    pub(super) version: &'a str,
    pub(super) args: &'a SglangArgs,
    pub(super) env: &'a Env,
    pub(super) model: Option<&'a ModelFacts>,
    /// GPU capacity in MiB (`None`: unknown).
    pub(super) g: Option<f64>,
    pub(super) tp: i64,
    pub(super) pp: i64,
    /// The speculative algorithm after renames.
    pub(super) spec: Option<String>,
    pub(super) attn_dp: i64,
    pub(super) model_path: &'a str,
    pub(super) mla: bool,
    pub(super) multimodal: bool,
    pub(super) a2a: String,
    pub(super) deepep: bool,
    pub(super) disagg: String,
    pub(super) user_mrr: Option<i64>,
    pub(super) max_prefill_tokens: i64,
    pub(super) max_total_tokens: Option<i64>,
    pub(super) no_padding: bool,
    pub(super) disable_cuda_graph: bool,
    pub(super) user_decode_max: Option<i64>,
    pub(super) user_decode_bs: Option<Vec<i64>>,
    /// The tier's decode `max_bs` for this TP size.
    pub(super) tier_bs: i64,
    /// Chunked prefill size before the DP-attention split (user's, else the tier's).
    pub(super) cps0: i64,
}

pub(super) fn inputs<'a>(
    version: &'a str,
    args: &'a SglangArgs,
    env: &'a Env,
    p: &Parallel,
    gpu_mem_mib: Option<u64>,
    model: Option<&'a ModelFacts>,
) -> Inputs<'a> {
    let family = Family::of(version);
    let g = gpu_mem_mib.map(|m| m as f64);
    let tp = bounded(p.tp);
    let a2a = str_of(args, &[opt::MOE_A2A_BACKEND])
        .unwrap_or("none")
        .to_owned();
    let deepep = a2a == "deepep" || flag_of(args, &[opt::ENABLE_DEEPEP_MOE]);
    let disagg = str_of(args, &[opt::DISAGGREGATION_MODE]).unwrap_or("null");
    let (t_cps, t_bs_small, t_bs_large) = tier(family, version, g, disagg != "null");
    Inputs {
        family,
        version,
        args,
        env,
        model,
        g,
        tp,
        pp: bounded(p.pp),
        spec: speculative_algorithm(args),
        attn_dp: bounded(p.attn_dp),
        model_path: args.str(opt::MODEL_PATH).unwrap_or(""),
        mla: model.is_some_and(ModelFacts::is_mla),
        multimodal: crate::resolve::multimodal::served(version, args, model),
        a2a,
        deepep,
        disagg: disagg.to_owned(),
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
        tier_bs: if tp < 4 { t_bs_small } else { t_bs_large },
        cps0: int_arg(args, opt::CHUNKED_PREFILL_SIZE).unwrap_or(t_cps),
    }
}
