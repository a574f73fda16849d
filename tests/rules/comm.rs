//! COMM: NCCL and the collective-communication environment (P2P, /dev/shm, NVLS, multi-node).

use serde_json::json;

use crate::support::{Case, PRO, assert_cases, c, host, messages};

/// Every COMM case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    vec![
        c("COMM001").tp(8).env("NCCL_P2P_DISABLE", "1"),
        c("COMM001").on(PRO).tp(8).env("NCCL_P2P_DISABLE", "1").no(),
        c("COMM001").tp(8).env("NCCL_P2P_DISABLE", "0").no(),
        c("COMM002").tp(2).host(host(false, None)),
        c("COMM002").tp(2).host(host(true, Some(64 << 20))),
        c("COMM002").tp(2).host(host(true, Some(16 << 30))).no(),
        c("COMM002").tp(2).no(),
        c("COMM002").tp(1).host(host(false, None)).no(),
        c("COMM003").on(PRO).tp(8).flag("--enable-nccl-nvls"),
        c("COMM003").on(PRO).tp(8).env("NCCL_NVLS_ENABLE", "1"),
        c("COMM003").tp(8).flag("--enable-nccl-nvls").no(),
        c("COMM004").tp(16).arg("--nnodes", json!(2)),
        c("COMM004")
            .tp(16)
            .arg("--nnodes", json!(2))
            .env("NCCL_SOCKET_IFNAME", "eth0")
            .env("GLOO_SOCKET_IFNAME", "eth0")
            .no(),
        c("COMM005").tp(16).arg("--nnodes", json!(2)),
        c("COMM005")
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--dist-timeout", json!(3600))
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("COMM", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}
