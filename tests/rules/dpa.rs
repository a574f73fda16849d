//! DPA: data-parallel attention.

use serde_json::json;

use crate::support::{Case, assert_cases, c, dsa, messages, mla};

/// Every DPA case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    vec![
        // 0.4.4.post1 to 0.5.2rc2 assert a DP size above 1 with DP attention.
        c("DPA005")
            .version("0.5.1")
            .tp(8)
            .flag("--enable-dp-attention"),
        c("DPA005")
            .version("0.4.6.post5")
            .tp(4)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(1)),
        c("DPA005")
            .version("0.5.1")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .no(),
        c("DPA005")
            .version("0.5.2")
            .tp(8)
            .flag("--enable-dp-attention")
            .no(),
        c("DPA005")
            .version("0.4.4")
            .tp(8)
            .flag("--enable-dp-attention")
            .no(),
        c("DPA001")
            .version("0.5.5")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(3)),
        c("DPA001").tp(8).arg("--attn-dp-size", json!(3)),
        c("DPA001")
            .version("0.5.5")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(4))
            .no(),
        // DPA006: the all-to-all LM head needs attention DP over the whole TP group (0.5.18+).
        c("DPA006").tp(8).flag("--enable-tp-lm-head-all-to-all"),
        c("DPA006")
            .tp(8)
            .arg("--attn-dp-size", json!(8))
            .flag("--enable-dp-lm-head")
            .flag("--enable-tp-lm-head-all-to-all"),
        c("DPA006")
            .tp(8)
            .arg("--attn-dp-size", json!(4))
            .flag("--enable-tp-lm-head-all-to-all"),
        c("DPA006")
            .tp(8)
            .arg("--attn-dp-size", json!(8))
            .arg("--attn-cp-size", json!(2))
            .flag("--enable-tp-lm-head-all-to-all"),
        c("DPA006")
            .version("0.5.18")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(4))
            .flag("--enable-tp-lm-head-all-to-all"),
        c("DPA006")
            .version("0.5.18")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .flag("--enable-tp-lm-head-all-to-all")
            .no(),
        c("DPA006")
            .tp(8)
            .arg("--attn-dp-size", json!(8))
            .flag("--enable-tp-lm-head-all-to-all")
            .no(),
        // SGLang's own default: on only where the layout holds.
        c("DPA006").tp(8).no(),
        // Up to 0.5.2 SGLang refuses it; from 0.5.3 a single DP rank drops the flag itself.
        c("DPA002")
            .version("0.5.2")
            .tp(8)
            .flag("--enable-dp-lm-head"),
        c("DPA002").tp(8).flag("--enable-dp-lm-head").no(),
        c("DPA002")
            .version("0.5.5")
            .tp(8)
            .arg("--dp-size", json!(2))
            .flag("--enable-dp-lm-head"),
        c("DPA002")
            .tp(8)
            .flag("--enable-dp-lm-head")
            .arg("--attn-dp-size", json!(8))
            .no(),
        c("DPA003")
            .tp(8)
            .arg("--dp-size", json!(2))
            .arg("--nnodes", json!(2)),
        c("DPA003").tp(8).arg("--dp-size", json!(2)).no(),
        c("DPA003")
            .version("0.5.5")
            .tp(8)
            .arg("--dp-size", json!(2))
            .arg("--nnodes", json!(2))
            .flag("--enable-dp-attention")
            .no(),
        // Up to 0.4.1.post6 DP attention spread over nodes is refused as well.
        c("DPA003")
            .version("0.4.1.post6")
            .tp(16)
            .arg("--dp-size", json!(2))
            .arg("--nnodes", json!(2))
            .flag("--enable-dp-attention"),
        c("DPA003")
            .version("0.4.1.post7")
            .tp(16)
            .arg("--dp-size", json!(2))
            .arg("--nnodes", json!(2))
            .flag("--enable-dp-attention")
            .no(),
        c("DPA004")
            .tp(8)
            .arg("--attn-dp-size", json!(8))
            .arg("--dp-size", json!(2)),
        c("DPA004").tp(8).arg("--attn-dp-size", json!(8)).no(),
    ]
    .into_iter()
    .chain(dpa007())
    .collect()
}

/// DPA007: the indexer top-k capturer wants one GPU per attention group (0.5.12+).
fn dpa007() -> Vec<Case> {
    let glm5 = || dsa("GlmMoeDsaForCausalLM");
    let topk = |v| {
        c("DPA007")
            .version(v)
            .model(glm5())
            .tp(8)
            .flag("--enable-return-indexer-topk")
    };
    let dpa = |v, dp: i64| {
        topk(v)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(dp))
    };
    vec![
        topk("0.5.18"),
        topk("0.5.12"),
        dpa("0.5.23", 4),
        dpa("0.5.18", 8).no(),
        // A model without indexer layers builds no capturer.
        topk("0.5.18").model(mla()).no(),
        topk("0.5.18").arg("--attn-cp-size", json!(8)).no(),
        c("DPA007").version("0.5.18").model(glm5()).tp(8).no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("DPA", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}
