//! TOP: the GPUs in use (MIG, mixed models, CUDA_VISIBLE_DEVICES).

use crate::support::{Case, assert_cases, c, messages};

/// Every TOP case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    vec![
        c("TOP002").edit(|t| t.gpus[0].mig_enabled = true),
        c("TOP002").no(),
        c("TOP003").edit(|t| {
            t.gpus[1].name = "NVIDIA A100-SXM4-80GB".into();
            t.gpus[1].memory_total_mib = 81920;
        }),
        c("TOP003").no(),
        c("TOP004").env("CUDA_VISIBLE_DEVICES", "0,1,9,3"),
        c("TOP004").env("CUDA_VISIBLE_DEVICES", "GPU-does-not-exist"),
        c("TOP004").env("CUDA_VISIBLE_DEVICES", "0,1,2,3").no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("TOP", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}
