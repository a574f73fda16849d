//! A line SGLang rejects still gets every other finding it deserves (the checks and the memory
//! planner read its best-effort parse); approximate mode for a release with no flag set of its
//! own; exact version lookup. Through the planning pipeline, on the fixture topologies and
//! model configs.

use std::ffi::OsString;

use sglang_launch::install::select::VersionSource;
use sglang_launch::plan::v1::{Finding, Verdict};
use sglang_launch::plan::{self, Outcome, Request};
use sglang_launch::rules::Severity;
use sglang_launch::sglang::flagset::{self, ActionKind, KNOWN_VERSIONS, Nargs, ValueType};
use sglang_launch::sglang::{self as sgl};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const LLAMA_8B: &str = "tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct";
const A100_X4: &str = "4x-a100-pcie-40gb-nvlink-pairs";
const R4090: &str = "2x-rtx-4090-pcie";

fn request(topology: &str, version: &str, line: &[&str]) -> Request {
    Request {
        tokens: line.iter().map(OsString::from).collect(),
        topology: Some(format!("{ROOT}/tests/fixtures/topologies/{topology}.json").into()),
        sglang_version: Some(version.into()),
        python: Some("/nonexistent/python3".into()),
        ..Request::default()
    }
}

fn build(topology: &str, version: &str, line: &[&str]) -> Outcome {
    plan::build(&request(topology, version, line)).unwrap()
}

fn with_model<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["--model-path", LLAMA_8B];
    v.extend_from_slice(rest);
    v
}

fn of<'a>(out: &'a Outcome, code: &str) -> Vec<&'a Finding> {
    out.plan
        .findings
        .iter()
        .filter(|f| f.code == code)
        .collect()
}

fn tokens(out: &Outcome) -> Vec<String> {
    out.args
        .tokens
        .iter()
        .map(|t| t.to_string_lossy().into_owned())
        .collect()
}

/// SGLang's own error for this line on this release, word for word.
fn sglang_error(version: &str, line: &[&str]) -> String {
    let args = sgl::parse(
        flagset::get(version).unwrap(),
        line.iter().map(OsString::from).collect(),
    );
    args.errors[0].message.clone()
}

#[test]
fn a_rejected_line_still_gets_the_gpu_count_finding() {
    let line = with_model(&["--tp", "8", "--bogus-flag"]);
    let out = build(A100_X4, "0.5.23", &line);
    let arg = of(&out, "ARG001");
    assert_eq!(arg.len(), 1);
    assert!(arg[0].message.starts_with(&sglang_error("0.5.23", &line)));
    assert_eq!(of(&out, "TOP001").len(), 1, "{:#?}", out.plan.findings);
    assert_eq!(out.plan.verdict, Verdict::Error);
}

#[test]
fn a_bad_value_is_left_out_and_the_rest_still_checked() {
    // argparse stops at the bad choice: --tp 8 comes after it.
    let line = with_model(&["--attention-backend", "nope", "--tp", "8"]);
    let out = build(A100_X4, "0.5.23", &line);
    let arg = of(&out, "ARG001");
    assert!(arg[0].message.starts_with(&sglang_error("0.5.23", &line)));
    assert!(
        arg[0]
            .message
            .ends_with("the other findings read the line without --attention-backend"),
        "{}",
        arg[0].message
    );
    assert!(of(&out, "TOP001")[0].message.contains("--tp-size 8"));
    // Nothing SGLang would run: no plan, no namespace, no resolved server.
    assert!(out.plan.memory.is_none() && out.plan.sglang_parsed.is_none());
    assert!(out.plan.resolved.is_none());
}

#[test]
fn fixes_wait_until_sglang_takes_the_line() {
    let line = with_model(&["--tp", "2", "--bogus"]);
    let out = build(R4090, "0.5.23", &line);
    let ar = of(&out, "AR001");
    assert_eq!(ar.len(), 1, "{:#?}", out.plan.findings);
    assert!(!ar[0].fixed);
    assert!(
        ar[0]
            .message
            .contains("not fixed: SGLang rejects the arguments (ARG001)")
    );
    assert_eq!(tokens(&out), line, "the user's line is left as it is");
    assert_eq!(out.exit_code(), sglang_launch::exit::BLOCKED);
    // Report only: the same findings, nothing changed.
    let mut req = request(R4090, "0.5.23", &line);
    req.no_fix = true;
    let kept = plan::build(&req).unwrap();
    assert_eq!(of(&kept, "AR001").len(), 1);
    assert_eq!(kept.plan.gpus, vec![0, 1]);
    assert_eq!(tokens(&kept), line);
}

#[test]
fn a_spelling_repair_makes_the_line_whole_and_the_other_fixes_follow() {
    let out = build(
        R4090,
        "0.5.23",
        &with_model(&["--tp", "2", "--cuda-graph-max-bs", "128"]),
    );
    assert!(of(&out, "ARG001").is_empty(), "{:#?}", out.plan.findings);
    assert!(of(&out, "FLAG001")[0].fixed && of(&out, "AR001")[0].fixed);
    let t = tokens(&out);
    assert!(t.contains(&"--cuda-graph-max-bs-decode".to_owned()));
    assert!(t.contains(&"--disable-custom-all-reduce".to_owned()));
    assert!(out.plan.memory.is_some());
}

#[test]
fn the_memory_planner_speaks_on_a_rejected_line() {
    let line = [
        "--model-path",
        "examples/models/Qwen3-32B",
        "--reasoning_parser",
        "qwen3",
    ];
    let out = build("1x-l4", "0.5.23", &line);
    assert_eq!(of(&out, "ARG001").len(), 1);
    assert_eq!(of(&out, "MEM005").len(), 1, "{:#?}", out.plan.findings);
}

#[test]
fn later_errors_follow_sglangs_own() {
    let line = with_model(&["--tp", "abc", "--bogus"]);
    let out = build(R4090, "0.5.23", &line);
    let arg = of(&out, "ARG001");
    assert_eq!(arg.len(), 2, "{arg:#?}");
    assert!(arg[0].message.starts_with(&sglang_error("0.5.23", &line)));
    assert!(arg[0].message.contains("invalid int value: 'abc'"));
    assert_eq!(
        arg[1].message,
        "unrecognized arguments: --bogus (what SGLang says once the error above is fixed)"
    );
}

/// An option the later of two adjacent embedded releases added (a `store` option with free
/// text, no abbreviation of an older option): (older, newer, option).
fn added_option() -> (&'static str, &'static str, String) {
    let added = |a: &str, b: &str| -> Option<String> {
        let (fa, fb) = (flagset::get(a)?, flagset::get(b)?);
        let in_a = |o: &str| {
            fa.actions
                .iter()
                .flat_map(|x| &x.option_strings)
                .any(|p| p.starts_with(o))
        };
        fb.actions
            .iter()
            .filter(|x| x.kind == ActionKind::Store && x.nargs == Nargs::One)
            .filter(|x| x.choices.is_none() && matches!(x.value_type, ValueType::Str))
            .flat_map(|x| &x.option_strings)
            .find(|o| o.starts_with("--") && !in_a(o))
            .cloned()
    };
    KNOWN_VERSIONS
        .windows(2)
        .find_map(|w| Some((w[0], w[1], added(w[0], w[1])?)))
        .expect("some embedded release adds an option")
}

/// A choice the later of two adjacent embedded releases added to an option both have:
/// (newer, option, choice).
fn added_choice() -> (&'static str, String, String) {
    let added = |a: &str, b: &str| -> Option<(String, String)> {
        let (fa, fb) = (flagset::get(a)?, flagset::get(b)?);
        fb.actions.iter().find_map(|x| {
            let option = x.option_strings.iter().find(|o| o.starts_with("--"))?;
            let old = fa.action(option)?.choices.as_ref()?;
            let choice = x
                .choices
                .as_ref()?
                .iter()
                .filter_map(|c| c.as_str())
                .find(|c| !old.iter().any(|o| o.as_str() == Some(c)) && !c.starts_with('-'))?;
            (x.nargs == Nargs::One).then(|| (option.clone(), choice.to_owned()))
        })
    };
    KNOWN_VERSIONS
        .windows(2)
        .find_map(|w| {
            let (o, c) = added(w[0], w[1])?;
            Some((w[1], o, c))
        })
        .expect("some embedded release adds a choice")
}

#[test]
fn approximate_an_option_a_neighbouring_release_has_is_a_warning() {
    let (older, newer, option) = added_option();
    // A source checkout of `newer`: between the two.
    let checkout = format!("{newer}.dev0");
    let line = with_model(&["--tp", "2", &option, "x"]);
    let out = build(R4090, &checkout, &line);
    assert_eq!(out.plan.sglang_version, older);
    assert_eq!(out.plan.sglang_version_source, VersionSource::Fallback);
    assert!(of(&out, "ARG001").is_empty(), "{:#?}", out.plan.findings);
    let warned = of(&out, "ARG002");
    assert_eq!(warned.len(), 1);
    assert_eq!(warned[0].severity, Severity::Warning);
    assert!(
        warned[0]
            .message
            .contains(&format!("SGLang {newer} accepts it"))
    );
    assert_eq!(out.plan.verdict, Verdict::Warning);
    assert_eq!(out.exit_code(), sglang_launch::exit::OK);
    // The option stays, the other fixes are made, the memory is planned.
    let t = tokens(&out);
    assert!(t.windows(2).any(|w| w[0] == option && w[1] == "x"));
    assert!(of(&out, "AR001")[0].fixed);
    assert!(out.plan.memory.is_some());
    // Said once, and clearly.
    let ver = of(&out, "VER001");
    assert_eq!(ver.len(), 1);
    assert!(ver[0].message.contains("the check is approximate"));
}

#[test]
fn approximate_a_typo_no_release_has_stays_an_error() {
    let (_, newer, option) = added_option();
    let line = with_model(&[&option, "x", "--tensor-paralel-size", "2"]);
    let out = build(R4090, &format!("{newer}.dev0"), &line);
    assert_eq!(of(&out, "ARG002").len(), 1);
    let arg = of(&out, "ARG001");
    assert_eq!(arg.len(), 1, "{arg:#?}");
    assert!(
        arg[0]
            .message
            .starts_with("unrecognized arguments: --tensor-paralel-size 2"),
        "{}",
        arg[0].message
    );
    assert_eq!(out.plan.verdict, Verdict::Error);
}

#[test]
fn approximate_a_choice_a_neighbouring_release_has_is_a_warning() {
    let (newer, option, choice) = added_choice();
    let out = build(
        "8x-h100-sxm-nvlink",
        &format!("{newer}.dev0"),
        &with_model(&[&option, &choice]),
    );
    assert!(of(&out, "ARG001").is_empty(), "{:#?}", out.plan.findings);
    let warned = of(&out, "ARG002");
    assert_eq!(warned.len(), 1, "{:#?}", out.plan.findings);
    assert!(warned[0].message.contains("invalid choice"));
    assert!(
        warned[0]
            .message
            .contains(&format!("SGLang {newer} accepts it"))
    );
}

#[test]
fn approximate_no_rename_toward_another_releases_spelling() {
    let newest = *KNOWN_VERSIONS.last().unwrap();
    // Newer than every embedded release: the newest stands in.
    let line = with_model(&["--tp", "2", "--cuda-graph-max-bs", "64"]);
    let out = build(R4090, "0.5.99", &line);
    assert_eq!(out.plan.sglang_version, newest);
    let flag = of(&out, "FLAG001");
    assert!(flag.iter().all(|f| !f.fixed), "{flag:#?}");
    assert!(flag.iter().all(|f| f.message.contains("is approximate")));
    // The spelling is kept (other fixes, the 4090 pair's all-reduce, may append).
    assert_eq!(tokens(&out)[..line.len()], line);
    // No embedded release bounds 0.5.99 from above: what the newest says is a warning, since
    // 0.5.99's own parser may differ.
    assert!(of(&out, "ARG001").is_empty(), "{:#?}", out.plan.findings);
    assert!(of(&out, "ARG002")[0].message.contains("ambiguous option"));
    // A source checkout of the newest release: the spelling the stand-in knows is not renamed
    // toward either.
    let line = with_model(&["--tp", "2", "--cuda-graph-max-bs-decode", "64"]);
    let out = build(R4090, &format!("{newest}.dev0"), &line);
    assert!(of(&out, "FLAG001").iter().all(|f| !f.fixed));
    assert!(of(&out, "ARG001").is_empty(), "{:#?}", out.plan.findings);
    assert_eq!(tokens(&out)[..line.len()], line);
}

#[test]
fn approximate_older_than_every_release() {
    let oldest = KNOWN_VERSIONS[0];
    let out = build(R4090, "0.3.0", &with_model(&["--tp", "2"]));
    assert_eq!(out.plan.sglang_version, oldest);
    assert!(
        of(&out, "VER001")[0]
            .message
            .contains("the check is approximate")
    );
    // A fix whose option the (only) neighbouring release has is made.
    assert!(of(&out, "AR001")[0].fixed);
}

#[test]
fn exact_lookup_tells_builds_from_other_releases() {
    let newest = *KNOWN_VERSIONS.last().unwrap();
    let cases = [
        format!("{newest}+cu128"),
        format!("v{newest}"),
        format!("{newest}.dev3+gabc123"),
        format!("{newest}.post1.dev2"),
        "0.5.10".to_owned(),
        "0.5.10.post1".to_owned(),
        "0.5.0rc2".to_owned(),
    ];
    for v in &cases {
        let out = build(R4090, v, &with_model(&[]));
        let embedded = KNOWN_VERSIONS
            .iter()
            .any(|k| sglang_launch::sglang::release::cmp(k, v).is_eq());
        let source = out.plan.sglang_version_source;
        assert_eq!(source == VersionSource::Option, embedded, "{v}: {source:?}");
        assert_eq!(of(&out, "VER001").len(), usize::from(!embedded), "{v}");
    }
    // The local label names a build of the same release.
    let out = build(R4090, &format!("{newest}+cu128"), &with_model(&[]));
    assert_eq!(out.plan.sglang_version, newest);
}
