//! MEM: memory rules the catalogue checks (the planner's own MEM codes are in `pipeline.rs`).

use serde_json::json;

use crate::support::*;

pub fn cases() -> Vec<Case> {
    tied_offload()
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("MEM", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

/// MEM019: the layer offload on a hybrid linear-attention model whose tied parameters the
/// offload's functional_call refuses (0.5.9 to 0.5.20).
fn tied_offload() -> Vec<Case> {
    let qwen35 = || checkpoint("Qwen__Qwen3.5-35B-A3B");
    let offload = |gb: i64| c("MEM019").on(R4090).arg("--cpu-offload-gb", json!(gb));
    vec![
        offload(8).version("0.5.12").model(qwen35()),
        offload(8)
            .version("0.5.9")
            .model(checkpoint("Qwen__Qwen3-Next-80B-A3B-Instruct")),
        offload(8).version("0.5.21").model(qwen35()).no(),
        offload(8).version("0.5.8.post1").model(qwen35()).no(),
        // A budget smaller than one layer may stop before the first layer's tied pair.
        offload(1).version("0.5.12").model(qwen35()).no(),
        // No offload, another architecture, or the model unknown.
        c("MEM019").on(R4090).version("0.5.12").model(qwen35()).no(),
        offload(8)
            .version("0.5.12")
            .model(checkpoint("Qwen__Qwen3-8B"))
            .no(),
        offload(8).version("0.5.12").no(),
    ]
}
