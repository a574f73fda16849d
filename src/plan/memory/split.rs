//! What each GPU holds of a checkpoint beyond an even TP share, as the releases' model code
//! builds it:
//!
//! * DP attention and attention CP shard attention over the attention-TP group (TP ÷ attention
//!   DP ÷ attention CP), MLA's absorbed copies too: at TP 8 DP 8 every rank holds all of it. A
//!   model whose attention ignored that group could not run under either at all.
//! * Under DP attention the input embedding is replicated through 0.5.7 (0.4.9's DeepSeek model
//!   excepted), then sharded over attention TP (DeepSeek's model from 0.5.8, the others from
//!   0.5.9); `SGLANG_ENABLE_EMBED_REPLICATION` (0.5.13+) replicates DeepSeek's in any layout.
//! * `--enable-dp-lm-head` shards a separate head over attention TP.
//! * `--moe-dense-tp-size 1` replicates the dense layers' MLPs.
//! * An all-to-all MoE backend replicates DeepSeek's and GLM's shared experts.
//! * `--ep-num-redundant-experts` adds physical copies of routed experts.
//! * KTransformers (`--kt-weight-path`, before 0.5.5.post1 `--kt-amx-weight-path`) keeps
//!   `--kt-num-gpu-experts` routed experts per layer on the GPU and runs the rest on the CPU.

use crate::facts::Env;
use crate::facts::model::{ModelFacts, Parts};
use crate::sglang::release::at_least;
use crate::sglang::{Parallel, SglangArgs, opt};

/// How many ranks share each part (a divisor of its bytes); the TP size where SGLang splits
/// the part like the rest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    tp: f64,
    pp: f64,
    attention: f64,
    embed: f64,
    head: f64,
    dense_mlp: f64,
    shared_experts: f64,
    /// Routed experts held on the GPU per logical one: physical copies, or the share
    /// KTransformers keeps on the GPU.
    routed_copies: f64,
}

impl Split {
    /// An even TP share of everything: no part held beyond it.
    fn even(p: &Parallel) -> Split {
        let tp = p.tp.max(1) as f64;
        Split {
            tp,
            pp: p.pp.max(1) as f64,
            attention: tp,
            embed: tp,
            head: tp,
            dense_mlp: tp,
            shared_experts: tp,
            routed_copies: 1.0,
        }
    }

    /// The split `version` makes of `m` under these arguments.
    pub fn of(version: &str, args: &SglangArgs, env: &Env, p: &Parallel, m: &ModelFacts) -> Split {
        let even = Split::even(p);
        let attn_tp = p.attn_tp() as f64;
        let replicated_by_env = m.is_mla()
            && at_least(version, "0.5.13")
            && env.truthy("SGLANG_ENABLE_EMBED_REPLICATION");
        let embed = match (replicated_by_env, p.dp_attention) {
            (true, _) => 1.0,
            (false, true) if embed_sharded_under_dpa(version, m) => attn_tp,
            (false, true) => 1.0,
            (false, false) => even.tp,
        };
        let experts = m.num_experts.unwrap_or(0).max(1) as f64;
        let redundant = args.int(opt::EP_NUM_REDUNDANT_EXPERTS).unwrap_or(0).max(0) as f64;
        Split {
            attention: attn_tp,
            embed,
            head: if args.flag(opt::ENABLE_DP_LM_HEAD) {
                attn_tp
            } else {
                even.tp
            },
            dense_mlp: if p.moe_dense_tp == Some(1) {
                1.0
            } else {
                even.tp
            },
            shared_experts: if p.a2a && m.n_shared_experts.is_some() {
                1.0
            } else {
                even.tp
            },
            routed_copies: if p.ep > 1 {
                1.0 + redundant / experts
            } else {
                1.0
            } * on_gpu_share(args, experts),
            ..even
        }
    }

    /// Bytes per GPU beyond an even TP × PP share of the parts (0 for an even split; less than
    /// 0 where KTransformers keeps routed experts on the CPU).
    pub(crate) fn extra_bytes(&self, parts: &Parts) -> f64 {
        let beyond = |bytes: f64, ranks: f64| bytes * (1.0 / ranks - 1.0 / self.tp);
        let extra = beyond(parts.attention, self.attention)
            + beyond(parts.embed, self.embed)
            + beyond(parts.head, self.head)
            + beyond(parts.dense_mlp, self.dense_mlp)
            + beyond(parts.shared_experts, self.shared_experts)
            + parts.routed_experts * (self.routed_copies - 1.0) / self.tp;
        let extra = extra / self.pp;
        if extra.is_finite() { extra } else { 0.0 }
    }
}

/// The share of routed experts the GPUs hold: all of them, or under KTransformers
/// `--kt-num-gpu-experts` of them (the rest run on the CPU from their own weights).
pub(crate) fn on_gpu_share(args: &SglangArgs, experts: f64) -> f64 {
    let kt = args.str(opt::KT_WEIGHT_PATH).is_some() || args.str(opt::KT_AMX_WEIGHT_PATH).is_some();
    if !kt {
        return 1.0;
    }
    let on_gpu = args.int(opt::KT_NUM_GPU_EXPERTS).unwrap_or(0).max(0) as f64;
    (on_gpu / experts).min(1.0)
}

/// Whether the release's model shards the input embedding over attention TP under DP attention
/// (else it replicates it).
fn embed_sharded_under_dpa(version: &str, m: &ModelFacts) -> bool {
    // DeepSeek's model (the MLA family here) moved one release before the others.
    let first = if m.is_mla() { "0.5.8" } else { "0.5.9" };
    at_least(version, first)
        || (m.is_mla() && at_least(version, "0.4.9") && !at_least(version, "0.4.10"))
}
