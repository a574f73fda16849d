//! The parallel layout SGLang derives from its arguments: tensor, pipeline, data, attention-data
//! and expert parallel sizes, and the node this process is. Derived here once; GPU placement,
//! the rules and the memory planner all read this.

use serde::Serialize;
use serde_json::Value;

use super::release::at_least;
use super::{SglangArgs, opt};

/// Parallel sizes after SGLang's own rewrites. Sizes are at least 1 (argparse accepts 0 or
/// negative values; those are findings elsewhere, never divisions by zero here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Parallel {
    pub(crate) tp: i64,
    pub(crate) pp: i64,
    /// `--dp-size` as given (or as SGLang sets it for DSA models).
    pub dp: i64,
    /// Attention-DP width (1 when off).
    pub attn_dp: i64,
    /// Attention data parallelism is on (`--enable-dp-attention`, or `--attn-dp-size` above 1).
    pub dp_attention: bool,
    /// Data-parallel replicas run as their own process groups on this node (1 with
    /// `--enable-dp-attention`, whose DP ranks live inside the TP group).
    pub replicas: i64,
    /// Expert-parallel size; `--enable-ep-moe` (0.4.x–0.5.2) and every all-to-all backend
    /// (DeepEP, Mooncake, ...) make it the TP size.
    pub ep: i64,
    /// `--attn-cp-size` (1 when absent): attention context parallelism, which also takes its
    /// share of the TP group from attention TP. Not in plan/v1.
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) attn_cp: i64,
    /// An MoE all-to-all backend (DeepEP, Mooncake, ...) is named. Not in plan/v1: the
    /// backends section names it.
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) a2a: bool,
    /// `--moe-dense-tp-size` when given.
    pub(crate) moe_dense_tp: Option<i64>,
    pub(crate) nnodes: i64,
    pub(crate) node_rank: i64,
}

fn size(args: &SglangArgs, option: &str) -> i64 {
    args.int(option).unwrap_or(1).max(1)
}

/// From 0.5.2 SGLang turns `--enable-dp-attention` off when `--dp-size` is 1 (from 0.5.16 not when
/// an elastic EP rank joins by scaling); before, it ran the DP-attention path with one group.
fn keeps_dp_attention(args: &SglangArgs, dp: i64) -> bool {
    dp > 1
        || !at_least(args.flags.release(), "0.5.2")
        || args.str("--elastic-ep-join-mode") == Some("scale")
}

impl Parallel {
    pub fn of(args: &SglangArgs) -> Parallel {
        let tp = size(args, "--tp-size");
        let enable_dp_attention = args.flag("--enable-dp-attention");
        // 0.4.0 to 0.4.4 set the DP size to the TP size under DP attention, whatever
        // `--dp-size` says; 0.4.4.post1 made the user choose it.
        let dp = if enable_dp_attention && !at_least(args.flags.release(), "0.4.4.post1") {
            tp
        } else {
            size(args, "--dp-size")
        };
        // The deprecated `--dp-size N --enable-dp-attention` becomes attention DP N (0.5.20+
        // rewrites it to `--attn-dp-size N`); before 0.5.20 it was the only spelling.
        let given_attn_dp = args
            .get("--attn-dp-size")
            .and_then(Value::as_i64)
            .filter(|&n| n > 1);
        let attn_dp = match given_attn_dp {
            Some(n) => n,
            None if enable_dp_attention => dp,
            None => 1,
        };
        // Every MoE all-to-all backend SGLang has spans the TP group: it sets EP to TP.
        let a2a = args.str("--moe-a2a-backend").is_some_and(|b| b != "none")
            || args.flag("--enable-deepep-moe");
        let ep = if args.flag("--enable-ep-moe") || a2a {
            tp
        } else {
            size(args, "--ep-size")
        };
        Parallel {
            tp,
            pp: size(args, "--pp-size"),
            dp,
            attn_dp,
            dp_attention: attn_dp > 1 || (enable_dp_attention && keeps_dp_attention(args, dp)),
            replicas: if enable_dp_attention { 1 } else { dp },
            ep,
            attn_cp: size(args, opt::ATTN_CP_SIZE),
            a2a,
            moe_dense_tp: args.get("--moe-dense-tp-size").and_then(Value::as_i64),
            nnodes: size(args, "--nnodes"),
            node_rank: args.int("--node-rank").unwrap_or(0).max(0),
        }
    }

    /// The attention-TP width: what attention DP and attention CP leave of the TP group.
    pub(crate) fn attn_tp(&self) -> i64 {
        (self.tp / self.attn_dp.max(1) / self.attn_cp.max(1)).max(1)
    }

    /// Pipeline stages on this node (a stage may span nodes, then this is 1).
    pub(crate) fn pp_per_node(&self) -> i64 {
        (self.pp / self.nnodes).max(1)
    }

    /// Tensor ranks of one TP group on this node.
    pub(crate) fn tp_per_node(&self) -> i64 {
        let nodes_per_stage = (self.nnodes / self.pp).max(1);
        (self.tp / nodes_per_stage).max(1)
    }

    /// Scheduler processes (one GPU each) this node runs.
    pub fn ranks_per_node(&self) -> i64 {
        self.replicas
            .saturating_mul(self.pp_per_node())
            .saturating_mul(self.tp_per_node())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::flagset;
    use serde_json::json;

    fn of(version: &str, values: &[(&str, Value)]) -> Parallel {
        Parallel::of(&SglangArgs::with_values(
            flagset::get(version).unwrap(),
            values,
        ))
    }

    #[test]
    fn deprecated_dp_attention_wins_over_a_default_attn_dp_size() {
        let p = of(
            "0.5.23",
            &[
                ("--attn-dp-size", json!(1)),
                ("--enable-dp-attention", json!(true)),
                ("--dp-size", json!(4)),
            ],
        );
        assert_eq!((p.attn_dp, p.dp_attention, p.replicas), (4, true, 1));
        let p = of(
            "0.5.23",
            &[("--attn-dp-size", json!(4)), ("--tp-size", json!(8))],
        );
        assert_eq!((p.attn_dp, p.dp_attention, p.replicas), (4, true, 1));
        let p = of("0.5.23", &[("--dp-size", json!(2))]);
        assert_eq!((p.attn_dp, p.dp_attention, p.replicas), (1, false, 2));
    }

    /// 0.4.0 to 0.4.4 make the DP size the TP size under DP attention (server_args.py's
    /// `self.dp_size = self.tp_size`); 0.4.4.post1 on take `--dp-size` as given.
    #[test]
    fn dp_attention_takes_the_tp_size_before_0_4_4_post1() {
        let line = [
            ("--enable-dp-attention", json!(true)),
            ("--tp-size", json!(8)),
            ("--dp-size", json!(2)),
        ];
        let p = of("0.4.1.post4", &line);
        assert_eq!((p.dp, p.attn_dp, p.attn_tp(), p.replicas), (8, 8, 1, 1));
        let p = of("0.4.4.post1", &line);
        assert_eq!((p.dp, p.attn_dp, p.attn_tp()), (2, 2, 4));
    }

    /// `--enable-dp-attention` with one DP rank: off from 0.5.2 (tests/evidence/SPEC002.jsonl,
    /// EP005.jsonl), kept for an elastic EP rank joining by scaling, on before 0.5.2.
    #[test]
    fn dp_attention_with_one_rank_is_off_from_0_5_2() {
        let on = [("--enable-dp-attention", json!(true))];
        assert!(!of("0.5.5", &on).dp_attention);
        assert!(!of("0.5.23", &on).dp_attention);
        assert!(of("0.5.1", &on).dp_attention);
        let scale = [
            ("--enable-dp-attention", json!(true)),
            ("--elastic-ep-join-mode", json!("scale")),
        ];
        assert!(of("0.5.20", &scale).dp_attention);
        let two = [
            ("--enable-dp-attention", json!(true)),
            ("--dp-size", json!(2)),
        ];
        assert!(of("0.5.5", &two).dp_attention);
    }

    #[test]
    fn per_node_shares_follow_nodes_and_stages() {
        let p = of(
            "0.5.23",
            &[("--tp-size", json!(16)), ("--nnodes", json!(2))],
        );
        assert_eq!(
            (p.tp_per_node(), p.pp_per_node(), p.ranks_per_node()),
            (8, 1, 8)
        );
        let p = of(
            "0.5.23",
            &[
                ("--tp-size", json!(8)),
                ("--pp-size", json!(2)),
                ("--nnodes", json!(2)),
            ],
        );
        assert_eq!(
            (p.tp_per_node(), p.pp_per_node(), p.ranks_per_node()),
            (8, 1, 8)
        );
        let p = of(
            "0.4.10.post2",
            &[("--tp-size", json!(4)), ("--enable-ep-moe", json!(true))],
        );
        assert_eq!(p.ep, 4);
    }
}
