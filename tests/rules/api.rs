//! The API the planning pipeline uses: lookup, settings, evaluation order, listings, hits made elsewhere.

use std::collections::BTreeMap;

use serde_json::Value;
use sglang_launch::rules::{self, RuleSettings, Severity};

use crate::support::{PRO, c, world};

#[test]
fn lookup_by_code_name_and_case() {
    assert_eq!(
        rules::lookup("AR001").unwrap().name,
        "custom-allreduce-no-p2p"
    );
    assert_eq!(rules::lookup("ar001").unwrap().code, "AR001");
    assert_eq!(
        rules::lookup("custom-allreduce-pcie").unwrap().code,
        "AR002"
    );
    let e = rules::lookup("AR0001").unwrap_err();
    assert!(e.to_string().contains("did you mean"), "{e}");
    let e = rules::lookup("custom-allreduce-no-pp2").unwrap_err();
    assert_eq!(
        e.suggestion.as_deref(),
        Some("`AR001` (custom-allreduce-no-p2p)")
    );
    let e = rules::lookup("zzzzzzzzzzzzzzzzzzzz").unwrap_err();
    assert!(e.suggestion.is_none());
}

#[test]
fn settings_allow_deny_and_validate() {
    let w = world(
        &c("X")
            .on(PRO)
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion"),
    );
    let ctx = w.ctx();
    // The plan applies the settings to every finding it collected, the checks' included.
    let codes = |s: &RuleSettings| -> BTreeMap<&'static str, Severity> {
        s.apply(rules::evaluate(&ctx, s))
            .into_iter()
            .map(|h| (h.code.as_str(), h.severity))
            .collect()
    };
    let base = codes(&RuleSettings::default());
    assert_eq!(base.get("ARCH001"), Some(&Severity::Warning));
    assert_eq!(base.get("CG001"), Some(&Severity::Info));
    let allow = RuleSettings {
        allow: vec!["ARCH001".into(), "cuda-graph-max-bs-default-large".into()],
        ..Default::default()
    };
    let a = codes(&allow);
    assert!(!a.contains_key("ARCH001") && !a.contains_key("CG001"));
    let deny = RuleSettings {
        deny: vec!["CG".into()],
        ..Default::default()
    };
    assert_eq!(codes(&deny).get("CG001"), Some(&Severity::Error));
    let both = RuleSettings {
        allow: vec!["CG001".into()],
        deny: vec!["CG001".into()],
        ..Default::default()
    };
    assert_eq!(codes(&both).get("CG001"), Some(&Severity::Error));
    assert!(allow.validate().is_ok() && deny.validate().is_ok());
    let bad = RuleSettings {
        deny: vec!["ARCH01".into()],
        ..Default::default()
    };
    let e = bad.validate().unwrap_err();
    assert!(e.to_string().contains("ARCH01"));
    let allow_mem = RuleSettings {
        allow: vec!["MEM".into()],
        ..Default::default()
    };
    assert!(
        allow_mem
            .apply(vec![rules::Finding::new(rules::Code::MEM005, "x")])
            .is_empty()
    );
}

#[test]
fn evaluate_honours_version_ranges_and_keeps_code_order() {
    // ARCH002 applies below 0.5.6 only, ARCH001 from 0.5.6.
    let w = world(
        &c("X")
            .version("0.5.5")
            .on(PRO)
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion"),
    );
    let hits = rules::evaluate(&w.ctx(), &RuleSettings::default());
    assert!(
        hits.iter().any(|h| h.code.as_str() == "ARCH002")
            && !hits.iter().any(|h| h.code.as_str() == "ARCH001")
    );
    let order: Vec<usize> = hits
        .iter()
        .map(|h| rules::all().iter().position(|r| r.id == h.code).unwrap())
        .collect();
    assert!(order.windows(2).all(|p| p[0] <= p[1]));
    assert_eq!(hits, rules::evaluate(&w.ctx(), &RuleSettings::default()));
}

#[test]
fn list_and_explain_render() {
    let text = rules::render_list(false);
    assert_eq!(text.lines().count(), rules::all().len());
    assert!(text.lines().any(|l| l.starts_with("AR001")
        && l.contains("custom-allreduce-no-p2p")
        && l.contains("warning")));
    assert!(
        text.lines()
            .any(|l| l.starts_with("ARG001") && l.contains("error"))
    );
    let json: Value = serde_json::from_str(&rules::render_list(true)).unwrap();
    let arr = json.as_array().unwrap();
    assert_eq!(arr.len(), rules::all().len());
    let ar2 = arr.iter().find(|e| e["code"] == "AR002").unwrap();
    assert_eq!(ar2["severity"], "warning");
    assert_eq!(ar2["emitted_by"], "check");
    assert_eq!(
        arr.iter().find(|e| e["code"] == "ARG001").unwrap()["emitted_by"],
        "pipeline"
    );
    let md = rules::render_explain(rules::lookup("ARCH001").unwrap());
    assert!(md.starts_with("# flashinfer-allreduce-fusion-arch (ARCH001)"));
    assert!(md.contains("https://github.com/sgl-project/sglang/issues/15650"));
    assert!(md.contains("## Why"));
    let md = rules::render_explain(rules::lookup("ARG001").unwrap());
    assert!(md.contains("Emitted by the launcher's pipeline"));
}

#[test]
fn source_counts_by_family() {
    // Not an assertion on exact numbers: the report quotes them; this keeps them computable.
    let mut by: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in rules::all() {
        let e = by.entry(r.family()).or_default();
        e.0 += 1;
        e.1 += usize::from(!r.sources().is_empty());
    }
    let with_url: usize = by.values().map(|v| v.1).sum();
    assert!(
        with_url * 2 > rules::all().len(),
        "most rules cite a URL ({with_url})"
    );
}

#[test]
fn findings_made_outside_evaluate_get_names_and_settings() {
    let h = rules::Finding::new(rules::Code::MEM005, "does not fit");
    assert_eq!((h.name(), h.severity), ("does-not-fit", Severity::Error));
    let w = rules::Finding::new(rules::lookup("mem-fraction-too-high").unwrap().id, "x");
    assert_eq!((w.code.as_str(), w.severity), ("MEM003", Severity::Warning));
    let s = RuleSettings {
        allow: vec!["MEM005".into()],
        deny: vec!["MEM003".into()],
        ..Default::default()
    };
    let out = s.apply(vec![h, w]);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0].code.as_str(), out[0].severity),
        ("MEM003", Severity::Error)
    );
}
