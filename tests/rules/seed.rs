//! The seed story: every lesson of the RTX PRO 6000 session is a rule that fires on that box.

use serde_json::json;
use sglang_launch::rules::{self, RuleSettings, Severity};

use crate::support::{Case, PRO, c, host, moe, world};

#[test]
fn the_seed_story_is_caught_on_the_rtx_pro_6000_box() {
    let base = || c("X").version("0.5.10.post1").on(PRO).tp(8);
    let attempts: Vec<(Case, &str)> = vec![
        (
            base()
                .version("0.5.23")
                .flag("--enable-flashinfer-allreduce-fusion"),
            "ARCH001",
        ),
        (base().env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"), "AR002"),
        (base().flag("--enable-torch-symm-mem"), "ARCH006"),
        (
            base()
                .arg("--ep-size", json!(8))
                .arg("--moe-a2a-backend", json!("flashinfer")),
            "EP001",
        ),
        (
            base()
                .arg("--ep-size", json!(8))
                .arg("--moe-a2a-backend", json!("flashinfer")),
            "EP004",
        ),
        (base(), "CG001"),
        (
            base().arg("--speculative-algorithm", json!("EAGLE3")),
            "SPEC001",
        ),
        (base().env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"), "ENV001"),
        (
            base().env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"),
            "AR002",
        ),
    ];
    for (case, code) in attempts {
        let w = world(&case);
        let hits = w.hits(code);
        assert!(!hits.is_empty(), "{code} did not fire");
        if code == "ARCH001" {
            let m = &hits[0].message;
            assert!(
                m.contains("RTX PRO 6000") && m.contains("12.0") && m.contains("GPUs 0–7"),
                "{m}"
            );
            assert_eq!(
                hits[0].fix.as_ref().unwrap().summary,
                "removed --enable-flashinfer-allreduce-fusion"
            );
        }
    }
    // The ineffective algorithm variable, on NVLink where V2 runs.
    let w = world(&c("X").tp(8).env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"));
    let h = w.hits("AR003");
    assert_eq!(
        h[0].fix.as_ref().unwrap().summary,
        "unset SGLANG_CUSTOM_ALLREDUCE_ALGO"
    );
}

#[test]
fn the_seed_session_command_gets_exactly_these_findings() {
    let case = c("X")
        .version("0.5.10.post1")
        .on(PRO)
        .tp(8)
        .flag("--enable-flashinfer-allreduce-fusion")
        .flag("--enable-torch-symm-mem")
        .arg("--ep-size", json!(8))
        .arg("--moe-a2a-backend", json!("flashinfer"))
        .arg("--speculative-algorithm", json!("EAGLE3"))
        // The session ran EAGLE-3 with its own draft checkpoint.
        .arg(
            "--speculative-draft-model-path",
            json!("/models/eagle3-draft"),
        )
        .env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1")
        .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
        .model(moe())
        .host(host(true, Some(64 << 20)));
    let w = world(&case);
    let got: Vec<(&str, Severity)> = rules::evaluate(&w.ctx(), &RuleSettings::default())
        .into_iter()
        .map(|h| (h.code.as_str(), h.severity))
        .collect();
    use Severity::*;
    assert_eq!(
        got,
        vec![
            ("AR002", Warning),
            ("ARCH002", Warning),
            ("ARCH006", Warning),
            ("CG001", Info),
            ("COMM002", Warning),
            ("ENV001", Warning),
            ("EP001", Error),
            ("EP004", Warning),
            ("SPEC001", Warning),
            ("SPEC007", Info),
            // The draft's files are not on this machine: its memory is not planned.
            ("SPEC011", Info),
        ]
    );
}
