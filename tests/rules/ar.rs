//! AR: custom all-reduce (SGLang's own all-reduce kernels, P2P, PCIe, the algorithm variables).

use crate::support::{A100, Case, PRO, R4090, assert_cases, c, messages};

/// Every AR case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    vec![
        c("AR001").on(R4090).tp(2),
        c("AR001")
            .on(R4090)
            .tp(2)
            .flag("--disable-custom-all-reduce")
            .no(),
        c("AR001").on(R4090).tp(2).flag("--enable-p2p-check").no(),
        c("AR001").tp(8).no(),
        c("AR002")
            .on(PRO)
            .tp(8)
            .env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1")
            .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"),
        c("AR002")
            .tp(8)
            .env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1")
            .no(),
        c("AR002")
            .on(PRO)
            .tp(2)
            .env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1")
            .no(),
        c("AR003")
            .tp(8)
            .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"),
        c("AR003")
            .version("0.5.5")
            .on(R4090)
            .tp(2)
            .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"),
        c("AR003")
            .on(R4090)
            .tp(2)
            .flag("--enable-p2p-check")
            .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
            .no(),
        c("AR003")
            .on(PRO)
            .tp(8)
            .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
            .no(),
        c("AR004")
            .on(R4090)
            .tp(2)
            .flag("--enable-p2p-check")
            .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "one-stage"),
        c("AR004")
            .on(R4090)
            .tp(2)
            .flag("--enable-p2p-check")
            .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "2stage")
            .no(),
        c("AR005").tp(3),
        c("AR005").tp(4).no(),
        c("AR006").on(PRO).tp(8),
        c("AR006").tp(8).no(),
        c("AR006").on(PRO).tp(2).no(),
        c("AR007").tp(2).gpus(&[0, 1]).uuids(&[0, 1]),
        c("AR007").tp(2).gpus(&[4, 5]).uuids(&[4, 5]),
        // Custom all-reduce is off anyway: the UUIDs break nothing (QA regression).
        c("AR007")
            .tp(2)
            .gpus(&[4, 5])
            .uuids(&[4, 5])
            .flag("--disable-custom-all-reduce")
            .no(),
        c("AR007").tp(3).gpus(&[0, 1, 2]).uuids(&[0, 1, 2]).no(),
        c("AR007")
            .on(PRO)
            .tp(8)
            .uuids(&[0, 1, 2, 3, 4, 5, 6, 7])
            .no(),
        c("AR007")
            .tp(2)
            .gpus(&[0, 1])
            .env("CUDA_VISIBLE_DEVICES", "0,1")
            .no(),
        c("AR008").on(R4090).tp(2),
        c("AR008").tp(2).no(),
        c("AR009").on(A100).tp(8).edit(|t| {
            t.gpus
                .iter_mut()
                .for_each(|g| g.name = "NVIDIA A800-SXM4-80GB".into())
        }),
        c("AR009").on(A100).tp(8).no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("AR", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}
