//! DeepSeek-V4's memory: its checkpoint, what loading makes of it per MoE runner and release,
//! and its KV pools, against the figures SGLang's own code gives and a real start-up log.

use super::tests::{model, node, run};
use super::*;
use serde_json::{Value, json};

const H200: u64 = 143771;
const B200: u64 = 183359;

fn plan_of(version: &str, extra: &[(&str, Value)], gpu: (u64, &str), name: &str) -> MemoryPlan {
    let m = model(name);
    let topo = node(8, gpu.0, 0, gpu.1, true);
    let mut values = vec![("--tp-size", json!(8))];
    values.extend_from_slice(extra);
    run(version, &values, &topo, Some(&m)).memory.unwrap()
}

const PRO: &str = "deepseek-ai__DeepSeek-V4-Pro";
const FLASH: &str = "deepseek-ai__DeepSeek-V4-Flash";

#[test]
fn the_checkpoint_estimate_is_the_published_size() {
    // deepseek-ai/DeepSeek-V4-Pro: 805.33 GiB in 64 safetensors files.
    let bytes = crate::facts::model::estimate_weight_bytes(&model(PRO)).unwrap() as f64;
    let gib = bytes / (1u64 << 30) as f64;
    assert!((gib / 805.33 - 1.0).abs() < 0.001, "{gib}");
}

#[test]
fn loaded_experts_follow_the_runner_and_release() {
    let marlin = [("--moe-runner-backend", json!("marlin"))];
    let w = |v, extra: &[(&str, Value)], gpu| plan_of(v, extra, gpu, PRO).weights_per_gpu_gib;
    // A real 8× H200 start (0.5.15-era Hopper image) logged 125.65 GB of weights; 0.5.12–0.5.15's
    // Marlin keeps the loader's FP32 expert scales beside its own.
    let logged = w("0.5.15", &marlin, (H200, "9.0")).unwrap();
    assert!((logged / 125.65 - 1.0).abs() < 0.005, "{logged}");
    // The plain 0.5.12 image's start of the same model (a benchmark's debug notes: 125.43 GB).
    let release = w("0.5.12", &marlin, (H200, "9.0")).unwrap();
    assert!((release / 125.43 - 1.0).abs() < 0.005, "{release}");
    // The FP8 method's own layout (runner auto) keeps FP32 scales only.
    assert_eq!(w("0.5.15", &[], (H200, "9.0")), Some(119.8));
    // 0.5.16 frees them; from 0.5.19 SGLang picks FlashInfer's MXFP4 runner itself.
    assert_eq!(w("0.5.16", &marlin, (H200, "9.0")), Some(102.91));
    assert_eq!(w("0.5.19", &[], (H200, "9.0")), Some(102.91));
    // SM100 keeps wo_a in FP8.
    assert_eq!(w("0.5.19", &[], (B200, "10.0")), Some(102.43));
}

#[test]
fn kv_pools_per_full_token_by_release() {
    let bytes = |v| {
        plan_of(v, &[("--tp-size", json!(4))], (H200, "9.0"), FLASH)
            .kv_cache_bytes_per_token
            .unwrap()
    };
    // SGLang's DSV4 configurator: 7,705.45 B until 0.5.20 (a real log prints it), pages padded
    // to 576 bytes from 0.5.21, and the ratio-128 state per token until 0.5.14.
    assert_eq!(bytes("0.5.19"), 7706);
    assert_eq!(bytes("0.5.23"), 7087);
    assert_eq!(bytes("0.5.14"), 15898);
    let pro = plan_of("0.5.23", &[], (H200, "9.0"), PRO);
    assert_eq!(pro.kv_cache_bytes_per_token, Some(10116));
}

#[test]
fn the_fixed_compressor_state_is_taken_before_the_tokens() {
    let at = |extra: &[(&str, Value)]| {
        let mut values = vec![
            ("--tp-size", json!(4)),
            ("--mem-fraction-static", json!(0.85)),
        ];
        values.extend_from_slice(extra);
        plan_of("0.5.23", &values, (H200, "9.0"), FLASH)
    };
    let plain = at(&[]);
    let few = at(&[("--max-running-requests", json!(8))]);
    // 256 request slots hold 2.53 GiB of ratio-128 state on Flash's 20 such layers; 8 hold
    // 0.1 GiB: the difference goes to tokens.
    let (a, b) = (plain.kv_cache_tokens.unwrap(), few.kv_cache_tokens.unwrap());
    let freed = (b - a) as f64 * 7087.0 / (1u64 << 30) as f64;
    assert!((freed - 2.42).abs() < 0.01, "{freed}");
}

#[test]
fn a_fraction_too_low_for_the_weights_blocks_and_for_the_fixed_state_warns() {
    use crate::rules::{Code, Severity};
    let mem004 = |mfs: f64| {
        let m = model(PRO);
        let topo = node(8, H200, 0, "9.0", true);
        let values = [
            ("--tp-size", json!(8)),
            ("--moe-runner-backend", json!("marlin")),
            ("--mem-fraction-static", json!(mfs)),
        ];
        run("0.5.15", &values, &topo, Some(&m))
            .findings
            .into_iter()
            .find(|f| f.code == Code::MEM004)
            .map(|f| f.severity)
    };
    // 0.88 of a real H200's baseline holds less than 0.5.15 Marlin's 125.4 GiB (two real starts
    // failed so); 0.92 holds the weights but not the 3.9 GiB of compressor state; 0.95 holds both.
    assert_eq!(mem004(0.88), Some(Severity::Error));
    assert_eq!(mem004(0.92), Some(Severity::Warning));
    assert_eq!(mem004(0.95), None);
}

/// KTransformers' one-RTX-5090 DeepSeek-V4-Flash setup: one routed expert per layer on the GPU,
/// the rest on the CPU. The GPU holds the other parts and that expert's share, in the runner's
/// layout, and the launcher does not call the weights too big for the pool.
#[test]
fn ktransformers_keeps_v4s_experts_off_the_gpu() {
    let m = model(FLASH);
    let topo = node(1, 32607, 0, "12.0", false);
    let kt = [
        ("--kt-weight-path", json!("/models/DeepSeek-V4-Flash")),
        ("--kt-method", json!("MXFP4")),
        ("--kt-num-gpu-experts", json!(1)),
        ("--mem-fraction-static", json!(0.7)),
    ];
    for v in ["0.5.12", "0.5.16", "0.5.23"] {
        let o = run(v, &kt, &topo, Some(&m));
        let mem = o.memory.as_ref().unwrap();
        let w = mem.weights_per_gpu_gib.unwrap();
        assert!(w < 21.9, "{v}: {w}");
        assert!(!o.findings.iter().any(|f| f.code == Code::MEM004), "{v}");
        // Without KTransformers every routed expert is on the one GPU.
        let all = run(v, &kt[3..], &topo, Some(&m));
        assert!(
            all.memory.unwrap().weights_per_gpu_gib.unwrap() > 140.0,
            "{v}"
        );
    }
}
