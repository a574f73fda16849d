//! No rule panics on odd facts, for every version.

use std::ffi::OsString;

use serde_json::{Value, json};
use sglang_launch::facts::model::ModelFacts;
use sglang_launch::facts::{Env, Packages, Topology};
use sglang_launch::rules::{self, RuleSettings};
use sglang_launch::sglang::SglangArgs;
use sglang_launch::sglang::flagset::KNOWN_VERSIONS;

use crate::support::{H100, L4, PRO, R4090, World, flags_for, host, topo};

fn odd_topologies() -> Vec<(Topology, Vec<u32>)> {
    let mut out = Vec::new();
    let mut empty = topo(L4);
    empty.gpus.clear();
    out.push((empty, vec![]));
    let mut unknown = topo(H100);
    unknown
        .gpus
        .iter_mut()
        .for_each(|g| g.compute_capability = "unknown".into());
    unknown.links.clear();
    out.push((unknown, (0..8).collect()));
    let mut partial = topo(PRO);
    partial.links.truncate(3);
    partial.gpus[3].compute_capability = "12".into();
    partial.gpus[4].memory_total_mib = 0;
    out.push((partial, vec![7, 3, 99, 4]));
    out.push((topo(R4090), vec![5, 6]));
    out
}

fn odd_args(v: &str) -> Vec<SglangArgs> {
    let f = flags_for(v);
    let mut out = vec![SglangArgs::with_values(f, &[])];
    let mut vals: Vec<(&str, Value)> = Vec::new();
    for (o, val) in [
        ("--tp-size", json!(0)),
        ("--pp-size", json!(-3)),
        ("--dp-size", json!(0)),
        ("--nnodes", json!(0)),
        ("--node-rank", json!(-1)),
        ("--ep-size", json!(7)),
        ("--page-size", json!(0)),
        ("--chunked-prefill-size", json!(-1)),
        ("--cuda-graph-max-bs", json!(i64::MAX)),
        ("--cuda-graph-max-bs-decode", json!(i64::MAX)),
        ("--speculative-algorithm", json!("eagle3")),
        ("--speculative-eagle-topk", json!(9)),
        ("--speculative-num-draft-tokens", json!(i64::MAX)),
        ("--attention-backend", json!("fa3")),
        ("--moe-a2a-backend", json!("deepep")),
        ("--moe-runner-backend", json!("flashinfer_cutlass")),
        ("--attn-dp-size", json!(0)),
        ("--context-length", json!(-5)),
        ("--enable-dp-attention", json!(true)),
        ("--enable-torch-symm-mem", json!(true)),
        ("--enable-flashinfer-allreduce-fusion", json!(true)),
        ("--quantization", json!("modelopt_fp4")),
    ] {
        if f.action(o).is_some() {
            vals.push((o, val));
        }
    }
    out.push(SglangArgs::with_values(f, &vals));
    let mut tok = SglangArgs::with_values(f, &[]);
    tok.tokens = [
        "--",
        "--=",
        "---x",
        "--cuda-graph-max-bs",
        "--stream-output=1",
        "-x",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    tok.tokens.insert(0, OsString::from("--cuda-graph-bs"));
    out.push(tok);
    out
}

#[test]
fn no_rule_panics_on_odd_facts_for_any_version() {
    let env = Env::from_pairs([
        ("CUDA_VISIBLE_DEVICES", "GPU-nope,,MIG-x"),
        ("SGLANG_CUSTOM_ALLREDUCE_ALGO", ""),
        ("SGL_", "1"),
        ("SGLANG_", ""),
        ("SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK", "x"),
        ("NCCL_P2P_DISABLE", "yes"),
        ("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", "\u{fffd}"),
    ]);
    let zero = ModelFacts {
        num_attention_heads: Some(0),
        num_key_value_heads: Some(0),
        kv_lora_rank: None,
        max_position_embeddings: Some(0),
        num_experts: Some(0),
        ..Default::default()
    };
    let hosts = [None, Some(host(false, None)), Some(host(true, Some(0)))];
    // Odd package facts: unparsable versions and labels, overflowing CUDA labels, empty names.
    let odd_pkgs = [
        Some(Packages::from_versions(&[
            ("torch", "2.9.1+cu99999999999999999999"),
            ("sglang-kernel", ""),
            ("nvidia-nccl-cu12", "2.26.2"),
            ("nvidia-cudnn-cu12", "x.y"),
            ("flashinfer-python", "0.6.3"),
            ("", "1"),
        ])),
        Some(Packages::from_versions(&[
            ("torch", "+cpu"),
            ("sgl-kernel", "garbage+cu1"),
            ("nvidia-nccl-cu13", "2.26.2.post1"),
            ("nvidia-cudnn-cu13", "9"),
        ])),
    ];
    // Every 10th embedded release (the oldest and newest included) keeps the run short; the
    // flag sets between them differ by a few options each.
    let mut versions: Vec<&str> = KNOWN_VERSIONS.iter().copied().step_by(10).collect();
    versions.extend([
        KNOWN_VERSIONS[KNOWN_VERSIONS.len() - 1],
        "0.5.2",
        "0.5.10.post1",
    ]);
    versions.extend(["0.0.1", "9.9.9", "garbage"]);
    let mut runs = 0;
    for v in versions {
        for args in odd_args(v) {
            for (t, gpus) in odd_topologies() {
                for ((m, h), pk) in [None, Some(&zero)]
                    .into_iter()
                    .zip(hosts.iter())
                    .zip(odd_pkgs.iter())
                {
                    let w = World {
                        version: v,
                        args: args.clone(),
                        env: env.clone(),
                        topo: t.clone(),
                        gpus: gpus.clone(),
                        model: m.cloned(),
                        host: h.clone(),
                        packages: pk.clone(),
                        draft: None,
                    };
                    let ctx = w.ctx();
                    // Every check, whatever its version range.
                    for r in rules::all() {
                        if let Some(check) = r.check {
                            for f in check(&ctx) {
                                assert!(!f.message.is_empty(), "{}", r.code);
                            }
                        }
                    }
                    rules::evaluate(&ctx, &RuleSettings::default());
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 50);
}
