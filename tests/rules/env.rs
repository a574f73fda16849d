//! ENV: SGLang environment variables (unknown, renamed, not yet read, ineffective, malformed).

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;

use crate::support::{Case, PRO, assert_cases, c, messages, model, world};

/// Every ENV case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    vec![
        c("ENV001").env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"),
        c("ENV001")
            .version("0.5.20")
            .env("SGLANG_ENABLE_JIT_DEEPGEM", "1"),
        c("ENV001")
            .env("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "1")
            .no(),
        c("ENV001").env("SGLANG_ENABLE_SPEC_V2", "1").no(),
        c("ENV001").env("SGL_ENABLE_JIT_DEEPGEMM", "1").no(),
        c("ENV001").env("NCCL_DEBUG", "INFO").no(),
        c("ENV002").env("SGL_ENABLE_JIT_DEEPGEMM", "1"),
        c("ENV002")
            .env("SGL_ENABLE_JIT_DEEPGEMM", "0")
            .env("SGLANG_ENABLE_JIT_DEEPGEMM", "1"),
        c("ENV002").env("SGLANG_USE_TRITON_ROUTER_SUM", "1"),
        c("ENV002").version("0.5.5").env("SGLANG_GC_LOG", "1"),
        c("ENV002").env("SGLANG_ENABLE_JIT_DEEPGEMM", "1").no(),
        c("ENV002").env("SGLANG_SCHEDULER_DECREASE_PREFILL_IDLE", "1"),
        c("ENV003").env("SGLANG_ENABLE_SPEC_V2", "1"),
        c("ENV003").env("SGLANG_ENABLE_CP_V2", "1"),
        c("ENV003")
            .version("0.5.5")
            .env("SGLANG_ENABLE_SPEC_V2", "1")
            .no(),
        c("ENV003")
            .env("SGLANG_SCHEDULER_DECREASE_PREFILL_IDLE", "1")
            .no(),
        c("ENV004").env("SGLANG_USE_AITER", "1"),
        c("ENV004").on(PRO).env("SGLANG_ENABLE_JIT_DEEPGEMM", "1"),
        c("ENV004")
            .tp(8)
            .env("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "1"),
        c("ENV004")
            .on(PRO)
            .tp(8)
            .env("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "1")
            .no(),
        c("ENV004")
            .tp(2)
            .flag("--enable-p2p-check")
            .env("SGLANG_SKIP_P2P_CHECK", "1")
            .no(),
        // Without --enable-p2p-check it swaps the patched "yes" for the driver's answer (review regression).
        c("ENV004").tp(2).env("SGLANG_SKIP_P2P_CHECK", "1").no(),
        c("ENV004").tp(2).env("SGLANG_SKIP_P2P_CHECK", "true"),
        c("ENV004").env("SGLANG_SKIP_P2P_CHECK", "1"),
        c("ENV005").env("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", "on"),
        c("ENV005")
            .env("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", "1")
            .no(),
        c("ENV006")
            .arg("--context-length", json!(131072))
            .model(ModelFacts {
                max_position_embeddings: Some(32768),
                ..model("Qwen2ForCausalLM")
            }),
        c("ENV006")
            .arg("--context-length", json!(131072))
            .model(ModelFacts {
                max_position_embeddings: Some(32768),
                ..model("Qwen2ForCausalLM")
            })
            .env("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")
            .no(),
        // Before 0.5.1: ENV009's (a warning; 0.4.4–0.5.0rc2 allow it by default).
        c("ENV009")
            .version("0.4.10.post2")
            .arg("--context-length", json!(131072))
            .model(ModelFacts {
                max_position_embeddings: Some(32768),
                ..model("Qwen2ForCausalLM")
            }),
        c("ENV009")
            .version("0.4.10.post2")
            .arg("--context-length", json!(32768))
            .model(ModelFacts {
                max_position_embeddings: Some(32768),
                ..model("Qwen2ForCausalLM")
            })
            .no(),
        c("ENV007").tp(8).flag("--enable-deterministic-inference"),
        c("ENV007").flag("--enable-deterministic-inference").no(),
        c("ENV008")
            .env("CUDA_VISIBLE_DEVICES", "0,1")
            .edit(|t| t.gpus[3].name = "NVIDIA A100-SXM4-80GB".into()),
        c("ENV008")
            .env("CUDA_VISIBLE_DEVICES", "0,1")
            .env("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
            .edit(|t| t.gpus[3].name = "NVIDIA A100-SXM4-80GB".into())
            .no(),
        c("ENV008").env("CUDA_VISIBLE_DEVICES", "0,1").no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("ENV", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

#[test]
fn unknown_env_suggests_only_close_names() {
    let msg = |v: &'static str, name: &'static str| {
        let w = world(&c("ENV001").version(v).env(name, "1"));
        w.hits("ENV001")
            .first()
            .map(|h| h.message.clone())
            .unwrap_or_default()
    };
    let m = msg("0.5.23", "SGLANG_ENABLE_JIT_DEEPGEM");
    assert!(
        m.contains("did you mean SGLANG_ENABLE_JIT_DEEPGEMM?"),
        "{m}"
    );
    let m = msg("0.5.23", "SGLANG_FORCE_CUSTOM_AR_PCIE");
    println!("{m}");
    assert!(m.contains("SGLang 0.5.23") && !m.contains("nearest"), "{m}");
    let m = msg("0.5.24", "SGLANG_FORCE_CUSTOM_AR_PCIE");
    assert!(m.contains("nearest to 0.5.24"), "{m}");
    assert_eq!(msg("0.5.23", "SGLANG_LAUNCH_TOPOLOGY"), "");
    let m = msg("0.5.2", "SGLANG_FORCE_CUSTOM_AR_PCIE");
    assert!(m.contains("without a typed registry"), "{m}");
}

#[test]
fn env002_does_not_rename_over_a_different_value() {
    let w = world(
        &c("ENV002")
            .env("SGL_ENABLE_JIT_DEEPGEMM", "0")
            .env("SGLANG_ENABLE_JIT_DEEPGEMM", "1"),
    );
    let hits = w.hits("ENV002");
    assert_eq!(hits.len(), 1);
    assert!(hits[0].fix.is_none(), "{:?}", hits[0].fix);
    assert!(
        hits[0].message.contains("different value")
            && hits[0]
                .message
                .contains("SGL_ENABLE_JIT_DEEPGEMM's value is the one in effect"),
        "{}",
        hits[0].message
    );
    // Same value under both names: the plain rename is safe.
    let w = world(
        &c("ENV002")
            .env("SGL_ENABLE_JIT_DEEPGEMM", "1")
            .env("SGLANG_ENABLE_JIT_DEEPGEMM", "1"),
    );
    assert!(w.hits("ENV002")[0].fix.is_some());
}
