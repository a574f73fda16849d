//! MIX: features SGLang rejects or breaks together, per release (`data/matrix.json`).

use serde_json::json;

use crate::support::{B200, Case, assert_cases, c, messages};

/// Every MIX case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [pdmux(), rejected(), pd_decode_radix(), breaks()].concat()
}

/// PD-multiplexing with its five incompatibilities (MIX001).
fn pdmux() -> Vec<Case> {
    let ready = |v| {
        c("MIX001")
            .version(v)
            .flag("--enable-pdmux")
            .flag("--disable-overlap-schedule")
            .arg("--chunked-prefill-size", json!(-1))
    };
    vec![
        // The defaults alone: overlap scheduler and chunked prefill are both on (two fixes).
        c("MIX001").version("0.5.5").flag("--enable-pdmux"),
        ready("0.5.5").no(),
        ready("0.5.5").arg("--pp-size", json!(2)),
        ready("0.5.5").arg("--disaggregation-mode", json!("prefill")),
        // A chunked-prefill size the user chose is theirs: reported, not rewritten.
        c("MIX001")
            .version("0.5.23")
            .flag("--enable-pdmux")
            .flag("--disable-overlap-schedule")
            .arg("--chunked-prefill-size", json!(8192)),
        // Speculative decoding turns the overlap scheduler off on its own.
        c("MIX001")
            .version("0.5.23")
            .flag("--enable-pdmux")
            .arg("--chunked-prefill-size", json!(-1))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
        // Green-context SM split: no table entry past Hopper, unless the config divides by hand
        // (a run-time failure: MIX011, a warning).
        ready("0.5.10.post1").on(B200).no(),
        ready("0.5.10.post1").code("MIX011").on(B200),
        ready("0.5.10.post1")
            .code("MIX011")
            .on(B200)
            .arg("--pdmux-config-path", json!("pdmux.yaml"))
            .no(),
        ready("0.5.4").code("MIX011").on(B200).no(),
        // Before 0.5.3.post2 the flag was accepted and nothing checked it.
        c("MIX001").version("0.5.2").flag("--enable-pdmux").no(),
    ]
}

/// Start-up rejections of one release range each (MIX002–MIX006).
fn rejected() -> Vec<Case> {
    let dpa8 = |code, v| {
        c(code)
            .version(v)
            .tp(8)
            .arg("--dp-size", json!(8))
            .flag("--enable-dp-attention")
    };
    let pp_spec = || {
        c("MIX006")
            .tp(8)
            .arg("--pp-size", json!(2))
            .arg("--dp-size", json!(8))
            .flag("--enable-dp-attention")
            .arg("--speculative-algorithm", json!("EAGLE"))
    };
    vec![
        dpa8("MIX002", "0.4.6.post5").flag("--enable-deepep-moe"),
        dpa8("MIX002", "0.4.6.post5")
            .flag("--enable-deepep-moe")
            .arg("--deepep-mode", json!("low_latency"))
            .no(),
        dpa8("MIX002", "0.4.10.post2")
            .flag("--enable-deepep-moe")
            .no(),
        c("MIX003")
            .version("0.4.10.post2")
            .on(B200)
            .arg("--attention-backend", json!("trtllm_mla"))
            .arg("--speculative-algorithm", json!("EAGLE")),
        c("MIX003")
            .version("0.5.2")
            .on(B200)
            .arg("--attention-backend", json!("trtllm_mla"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
        c("MIX004")
            .flag("--enable-two-batch-overlap")
            .arg("--moe-a2a-backend", json!("deepep_v2")),
        c("MIX004")
            .flag("--enable-single-batch-overlap")
            .arg("--moe-a2a-backend", json!("megamoe")),
        c("MIX004")
            .flag("--enable-two-batch-overlap")
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        c("MIX004")
            .version("0.5.20")
            .flag("--enable-two-batch-overlap")
            .arg("--moe-a2a-backend", json!("megamoe"))
            .no(),
        dpa8("MIX005", "0.5.15").arg("--speculative-algorithm", json!("DFLASH")),
        c("MIX005")
            .tp(8)
            .arg("--attn-dp-size", json!(8))
            .arg("--speculative-algorithm", json!("DFLASH")),
        c("MIX005")
            .tp(8)
            .arg("--attn-dp-size", json!(8))
            .arg("--speculative-algorithm", json!("DFLASH"))
            .flag("--enable-dp-lm-head")
            .no(),
        dpa8("MIX005", "0.5.10.post1")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
        pp_spec().env("SGLANG_ENABLE_PP_SPEC", "1"),
        // Without the variable PAR004 reports PP with speculative decoding instead.
        pp_spec().no(),
        // 0.5.21 refuses it too (its own checks, recorded in tests/evidence/MIX006.jsonl).
        pp_spec()
            .version("0.5.21")
            .env("SGLANG_ENABLE_PP_SPEC", "1"),
        pp_spec()
            .version("0.5.20")
            .env("SGLANG_ENABLE_PP_SPEC", "1")
            .no(),
    ]
}

/// A PD decode server's radix cache with speculative decoding, per release (MIX012).
fn pd_decode_radix() -> Vec<Case> {
    let radix = |v| {
        c("MIX012")
            .version(v)
            .arg("--disaggregation-mode", json!("decode"))
            .flag("--disaggregation-decode-enable-radix-cache")
            .arg("--disaggregation-transfer-backend", json!("nixl"))
    };
    let spec = |v, algo| radix(v).arg("--speculative-algorithm", json!(algo));
    vec![
        spec("0.5.15", "NEXTN"),
        radix("0.5.15").no(),
        spec("0.5.21", "EAGLE3"),
        spec("0.5.21", "DSPARK").no(),
        spec("0.5.23", "NGRAM"),
        spec("0.5.23", "EAGLE").no(),
        // A prefill server keeps its radix cache with speculative decoding.
        c("MIX012")
            .version("0.5.15")
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
    ]
}

/// Combinations that start and then break, by public reports (MIX007–MIX010).
fn breaks() -> Vec<Case> {
    vec![
        c("MIX007")
            .tp(4)
            .arg("--pp-size", json!(2))
            .arg("--attn-dp-size", json!(4)),
        c("MIX007").tp(4).arg("--attn-dp-size", json!(4)).no(),
        c("MIX008")
            .tp(4)
            .arg("--pp-size", json!(2))
            .arg("--moe-a2a-backend", json!("deepep")),
        c("MIX008")
            .version("0.4.10.post2")
            .tp(4)
            .arg("--pp-size", json!(2))
            .flag("--enable-deepep-moe"),
        c("MIX008").tp(4).arg("--pp-size", json!(2)).no(),
        c("MIX009")
            .tp(2)
            .arg("--attn-dp-size", json!(2))
            .arg("--ep-size", json!(2)),
        c("MIX009")
            .tp(2)
            .arg("--attn-dp-size", json!(2))
            .arg("--ep-size", json!(2))
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        c("MIX009")
            .version("0.5.5")
            .tp(2)
            .arg("--dp-size", json!(2))
            .flag("--enable-dp-attention")
            .arg("--ep-size", json!(2))
            .no(),
        c("MIX010")
            .version("0.4.6.post5")
            .tp(8)
            .arg("--dp-size", json!(8))
            .flag("--enable-dp-attention")
            .arg("--speculative-algorithm", json!("NEXTN")),
        c("MIX010")
            .version("0.4.8")
            .tp(8)
            .arg("--dp-size", json!(8))
            .flag("--enable-dp-attention")
            .arg("--speculative-algorithm", json!("NEXTN"))
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("MIX", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}
