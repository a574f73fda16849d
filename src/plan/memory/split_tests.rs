//! What each GPU holds beyond an even TP share, against real start-up logs and the releases'
//! model code.

use super::tests::{model, node, run};
use crate::facts::Env;
use crate::facts::model::ModelFacts;
use crate::sglang::{Parallel, SglangArgs, flagset};
use serde_json::{Value, json};

const H200: u64 = 143771;
const GIB: f64 = (1u64 << 30) as f64;

fn weights_gib(version: &str, values: &[(&str, Value)], m: &ModelFacts) -> f64 {
    let topo = node(8, H200, 0, "9.0", true);
    let o = run(version, values, &topo, Some(m));
    o.memory.unwrap().weights_per_gpu_gib.unwrap()
}

/// Qwen3-30B-A3B in BF16: its FP8 release's config without the FP8 quantisation.
fn qwen3_30b_bf16() -> ModelFacts {
    let dir = format!(
        "{}/tests/fixtures/models/Qwen__Qwen3-30B-A3B-FP8/config.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(dir).unwrap()).unwrap();
    config
        .as_object_mut()
        .unwrap()
        .remove("quantization_config");
    let args = SglangArgs::with_values(flagset::get("0.5.23").unwrap(), &[]);
    let text = serde_json::to_vec(&config).unwrap();
    crate::facts::model::load_config_text(&text, &args)
        .facts
        .unwrap()
}

#[test]
fn dp_attention_keeps_the_attention_group_share_of_attention() {
    // A DP4 TP4 EP4 start of a BF16 Qwen3 MoE (sglang PR #17392, 2026): 16.39 GB of weights per
    // rank, and K size 47.12 GB for 1,029,388 tokens, i.e. all 4 KV heads of 48 layers per rank:
    // Qwen3-30B-A3B's shape with attention unsharded.
    let m = qwen3_30b_bf16();
    let tp4 = [("--tp-size", json!(4)), ("--ep-size", json!(4))];
    let mut dpa = tp4.to_vec();
    dpa.extend([
        ("--enable-dp-attention", json!(true)),
        ("--dp-size", json!(4)),
    ]);
    let even = weights_gib("0.5.23", &tp4, &m);
    let held = weights_gib("0.5.23", &dpa, &m);
    assert!(even / 16.39 < 0.9, "{even}");
    assert!((held / 16.39 - 1.0).abs() < 0.03, "{held}");
    // The LM head over attention TP too: then within 0.5%.
    dpa.push(("--enable-dp-lm-head", json!(true)));
    let with_head = weights_gib("0.5.23", &dpa, &m);
    assert!((with_head / 16.39 - 1.0).abs() < 0.005, "{with_head}");
}

#[test]
fn a_deepep_decode_rank_holds_its_replicated_parts_and_redundant_experts() {
    // A one-node DeepSeek-R1 decode server of May 2025 (sglang#6017): 105.59 GB of weights per
    // rank. The flags are the same operator's two-node command of the day before on one node
    // (DP attention, DeepEP low latency, dense MLPs replicated, 32 redundant experts); 0.4.7 is
    // the first release with all of them.
    let m = model("deepseek-ai__DeepSeek-R1");
    let values = [
        ("--tp-size", json!(8)),
        ("--dp-size", json!(8)),
        ("--enable-dp-attention", json!(true)),
        ("--enable-deepep-moe", json!(true)),
        ("--deepep-mode", json!("low_latency")),
        ("--moe-dense-tp-size", json!(1)),
        ("--ep-num-redundant-experts", json!(32)),
    ];
    let held = weights_gib("0.4.7", &values, &m);
    assert!((held / 105.59 - 1.0).abs() < 0.02, "{held}");
    let even = weights_gib("0.4.7", &values[..1], &m);
    assert!(even / 105.59 < 0.8, "{even}");
}

fn extra_gib(version: &str, values: &[(&str, Value)], env: &Env, m: &ModelFacts) -> f64 {
    let args = SglangArgs::with_values(flagset::get(version).unwrap(), values);
    let p = Parallel::of(&args);
    let parts = crate::facts::model::weight_breakdown(m).unwrap().by_part;
    super::split::Split::of(version, &args, env, &p, m).extra_bytes(&parts) / GIB
}

#[test]
fn the_embedding_under_dp_attention_follows_the_release() {
    let dpa = [
        ("--tp-size", json!(8)),
        ("--dp-size", json!(8)),
        ("--enable-dp-attention", json!(true)),
    ];
    let none = Env::default();
    // DeepSeek-V3's 129,280 × 7,168 BF16 embedding: replicated through 0.5.7, over attention TP
    // from 0.5.8. At DP 2 (attention TP 4) that is a quarter instead of all of it.
    let ds = model("deepseek-ai__DeepSeek-V3");
    let embed = 129_280.0 * 7_168.0 * 2.0 / GIB;
    let dp2 = [dpa[0].clone(), ("--dp-size", json!(2)), dpa[2].clone()];
    let step = extra_gib("0.5.7", &dp2, &none, &ds) - extra_gib("0.5.8", &dp2, &none, &ds);
    assert!((step - embed * 3.0 / 4.0).abs() < 0.01, "{step}");
    // At DP 8 attention TP is one rank: the same either way.
    assert_eq!(
        extra_gib("0.5.7", &dpa, &none, &ds),
        extra_gib("0.5.8", &dpa, &none, &ds)
    );
    // The other models moved one release later.
    let q = qwen3_30b_bf16();
    assert_eq!(
        extra_gib("0.5.8", &dp2, &none, &q),
        extra_gib("0.5.7", &dp2, &none, &q)
    );
    assert!(extra_gib("0.5.8", &dp2, &none, &q) > extra_gib("0.5.9", &dp2, &none, &q));
    // SGLANG_ENABLE_EMBED_REPLICATION replicates DeepSeek's in any layout, from 0.5.13.
    let tp8 = &dpa[..1];
    let on = Env::from_pairs([("SGLANG_ENABLE_EMBED_REPLICATION", "1")]);
    assert_eq!(extra_gib("0.5.12", tp8, &on, &ds), 0.0);
    assert!((extra_gib("0.5.13", tp8, &on, &ds) - embed * 7.0 / 8.0).abs() < 0.01);
}

#[test]
fn an_even_layout_holds_nothing_extra() {
    let none = Env::default();
    let ds = model("deepseek-ai__DeepSeek-V3");
    for values in [
        vec![("--tp-size", json!(8))],
        // DP replicas without DP attention each hold an even TP share.
        vec![("--tp-size", json!(4)), ("--dp-size", json!(2))],
    ] {
        assert_eq!(extra_gib("0.5.23", &values, &none, &ds), 0.0);
    }
    // An all-to-all backend replicates the shared experts, DP attention or not.
    let a2a = [
        ("--tp-size", json!(8)),
        ("--moe-a2a-backend", json!("deepep")),
    ];
    let shared = 58.0 * 3.0 * 7_168.0 * 2_048.0 / GIB;
    let got = extra_gib("0.5.23", &a2a, &none, &ds);
    assert!((got / (shared * 7.0 / 8.0) - 1.0).abs() < 0.01, "{got}");
}

#[test]
fn attention_context_parallelism_keeps_the_attention_group_share_too() {
    let none = Env::default();
    let ds = model("deepseek-ai__DeepSeek-V3");
    let tp8 = ("--tp-size", json!(8));
    let cp8 = [tp8.clone(), ("--attn-cp-size", json!(8))];
    let dpa8 = [
        tp8,
        ("--dp-size", json!(8)),
        ("--enable-dp-attention", json!(true)),
    ];
    // Both leave attention TP one rank; only DP attention moves the embedding (from 0.5.8).
    let embed = 129_280.0 * 7_168.0 * 2.0 / GIB * 7.0 / 8.0;
    let cp = extra_gib("0.5.14", &cp8, &none, &ds);
    let dp = extra_gib("0.5.14", &dpa8, &none, &ds);
    assert!(cp > 9.0, "{cp}");
    assert!((dp - cp - embed).abs() < 0.01, "{dp} {cp}");
}

#[test]
fn ktransformers_keeps_only_its_gpu_experts_on_the_gpus() {
    // DeepSeek-R1 on two 32 GB GPUs with KTransformers (flashinfer#2216, 0.5.6): four routed
    // experts per layer on the GPUs, the other 252 on the CPU from their own weights.
    let m = model("deepseek-ai__DeepSeek-R1");
    let tp2 = [("--tp-size", json!(2))];
    let mut kt = tp2.to_vec();
    kt.extend([
        ("--kt-weight-path", json!("/models/KT/INT4")),
        ("--kt-num-gpu-experts", json!(4)),
    ]);
    let all = weights_gib("0.5.6", &tp2, &m);
    let held = weights_gib("0.5.6", &kt, &m);
    let routed = crate::facts::model::weight_breakdown(&m)
        .unwrap()
        .by_part
        .routed_experts
        / GIB;
    let expect = all - routed / 2.0 * (1.0 - 4.0 / 256.0);
    assert!((held - expect).abs() < 0.02, "{held} vs {expect}");
    assert!(held < 20.0, "{held}");
    // Without the weight path KTransformers is off: the count alone changes nothing.
    let mut count_only = tp2.to_vec();
    count_only.push(("--kt-num-gpu-experts", json!(4)));
    assert!((weights_gib("0.5.6", &count_only, &m) - all).abs() < 1e-9);
}
