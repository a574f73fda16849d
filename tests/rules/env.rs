//! ENV: SGLang environment variables (unknown, renamed, not yet read, ineffective, malformed).

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;
use sglang_launch::rules::EnvEdit;

use crate::support::{Case, PRO, World, assert_cases, c, messages, model, world};

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
        c("ENV010")
            .version("0.5.11")
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--disaggregation-transfer-backend", json!("nixl"))
            .env("SGLANG_DISAGG_STAGING_BUFFER", "1"),
        c("ENV010")
            .version("0.5.12")
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--disaggregation-transfer-backend", json!("nixl"))
            .env("SGLANG_DISAGG_STAGING_BUFFER", "1")
            .no(),
        c("ENV010")
            .version("0.5.11")
            .arg("--disaggregation-mode", json!("decode"))
            .env("SGLANG_DISAGG_STAGING_BUFFER", "1")
            .no(),
        c("ENV010")
            .version("0.5.11")
            .arg("--disaggregation-transfer-backend", json!("nixl"))
            .env("SGLANG_DISAGG_STAGING_BUFFER", "1")
            .no(),
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
        // A YaRN scaling that reaches the length: nothing degrades, and 0.4.10 only warns.
        c("ENV009")
            .version("0.4.10.post2")
            .arg("--context-length", json!(131072))
            .model(ModelFacts {
                max_position_embeddings: Some(40960),
                rope_scaled_length: Some(131072),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        // Before 0.4.4 the release refuses it whatever the scaling.
        c("ENV009")
            .version("0.4.3.post4")
            .arg("--context-length", json!(131072))
            .model(ModelFacts {
                max_position_embeddings: Some(40960),
                rope_scaled_length: Some(131072),
                ..model("Qwen3ForCausalLM")
            }),
        c("ENV007").tp(8).flag("--enable-deterministic-inference"),
        c("ENV007").flag("--enable-deterministic-inference").no(),
        // An RL on-policy target turns deterministic inference on.
        c("ENV007")
            .tp(8)
            .arg("--rl-on-policy-target", json!("fsdp")),
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

/// The variable a fix sets, with its value.
fn set_by(w: &World, code: &str) -> Vec<(String, String)> {
    w.hits(code)
        .iter()
        .filter_map(|h| h.fix.as_ref())
        .flat_map(|f| &f.env)
        .filter_map(|e| match e {
            EnvEdit::Set { name, value } => Some((name.clone(), value.clone())),
            EnvEdit::Unset { .. } => None,
        })
        .collect()
}

#[test]
fn env002_never_renames_the_name_the_release_reads() {
    // 0.5.11 to 0.5.17 read SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK and forward the old
    // SGL_DISABLE_ name into it; the user's opt-out must stay where SGLang reads it.
    for v in ["0.5.11", "0.5.14", "0.5.17", "0.5.23"] {
        let w = world(
            &c("ENV002")
                .version(v)
                .env("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", "0"),
        );
        assert!(w.hits("ENV002").is_empty(), "{v}: {:?}", w.hits("ENV002"));
    }
    for (v, old, new) in [
        (
            "0.5.14",
            "SGLANG_ENABLE_THINKING",
            "SGLANG_DEFAULT_THINKING",
        ),
        ("0.5.14", "SGLANG_GC_LOG", "SGLANG_LOG_GC"),
        ("0.5.10", "SGLANG_GC_LOG", "SGLANG_LOG_GC"),
    ] {
        let w = world(&c("ENV002").version(v).env(old, "1"));
        assert_eq!(
            set_by(&w, "ENV002"),
            [(new.to_owned(), "1".to_owned())],
            "{v}"
        );
    }
}

#[test]
fn env002_converts_the_value_as_sglang_does() {
    let w = world(
        &c("ENV002")
            .version("0.5.18")
            .env("SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK", "1"),
    );
    let want = (
        "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK".to_owned(),
        "0".to_owned(),
    );
    assert_eq!(set_by(&w, "ENV002"), [want]);
    let w = world(
        &c("ENV002")
            .version("0.5.14")
            .env("SGLANG_QUEUED_TIMEOUT_MS", "2500"),
    );
    let want = ("SGLANG_REQ_WAITING_TIMEOUT".to_owned(), "2.5".to_owned());
    assert_eq!(set_by(&w, "ENV002"), [want]);
    // 0.5.7 to 0.5.17 copy SGL_DISABLE_... into SGLANG_ENABLE_... unchanged: say so, rename nothing.
    let w = world(
        &c("ENV002")
            .version("0.5.14")
            .env("SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK", "1"),
    );
    let hits = w.hits("ENV002");
    assert_eq!(hits.len(), 1);
    assert!(hits[0].fix.is_none() && hits[0].message.contains("mean the opposite"));
}
