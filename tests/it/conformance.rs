//! Replays the argparse goldens (tests/conformance/<version>.jsonl, made by
//! scripts/gen-conformance.py from SGLang's real parser) against the Rust parser: same
//! accept/reject, same error message, same namespace. The `--config` goldens
//! (config-<version>.jsonl, YAML files in tests/conformance/configs/) also compare the argv after
//! SGLang's merge; their paths are relative to the crate root, cargo's working directory here.

use std::collections::BTreeMap;
use std::ffi::OsString;

use serde_json::Value;
use sglang_launch::sglang::{ArgErrorKind, flagset, parse};

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    verdict_mismatch: Vec<String>,
    message_exact: usize,
    message_mismatch: Vec<String>,
    namespace_mismatch: Vec<String>,
    /// PyYAML syntax/construction errors: same exception family, text not compared.
    yaml_error_class: usize,
    effective_exact: usize,
    /// Rejected lines whose best-effort parse does not start with argparse's own error.
    recovery_mismatch: Vec<String>,
    /// A deprecated option's exception (0.4.0–0.5.7): its text is the option's help, SGLang's
    /// prose, so the exception class is compared.
    deprecated_class: usize,
}

/// PyYAML's exception classes: their text (marks, context lines) is PyYAML's own prose.
const YAML_ERRORS: &[&str] = &[
    "ScannerError",
    "ParserError",
    "ComposerError",
    "ConstructorError",
    "ReaderError",
];

fn yaml_class(message: &str) -> bool {
    YAML_ERRORS
        .iter()
        .any(|c| message.starts_with(&format!("{c}: ")))
}

/// Ours is the launcher's own text for a retired option whose SGLang message is prose the data
/// does not keep (the help text raised as an exception, or `DeprecatedAction`'s error message):
/// the exception class (kind and verdict are compared as usual) and the option must match.
fn deprecated_prose(golden: &str, ours: &str) -> bool {
    let class = |m: &str| m.split_once(": ").map(|(c, _)| c.to_owned());
    let option = |m: &str| {
        m.split_whitespace()
            .find(|w| w.starts_with("--"))
            .map(str::to_owned)
    };
    let raised =
        class(golden).is_some() && class(golden) == class(ours) && ours.ends_with(" is deprecated");
    let removed = ours.contains(" has been removed") && option(golden) == option(ours);
    raised || removed
}

fn replay(version: &str, file: &str) -> Tally {
    // CONFORMANCE_DIR: replay an extra fuzz round made with `gen-conformance.py --seed X --out DIR`.
    let dir = std::env::var("CONFORMANCE_DIR")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| format!("{}/tests/conformance", env!("CARGO_MANIFEST_DIR")));
    let path = format!("{dir}/{file}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    let header: Value =
        serde_json::from_str(lines.next().expect("header line")).expect("header JSON");
    assert_eq!(header["version"], version);
    let baseline: BTreeMap<String, Value> =
        serde_json::from_value(header["baseline"].clone()).expect("baseline namespace");
    let flags = flagset::get(version).expect("embedded flag set");
    let mut t = Tally::default();
    for line in lines {
        let case: Value = serde_json::from_str(line).expect("case JSON");
        let argv: Vec<String> = serde_json::from_value(case["argv"].clone()).expect("argv");
        t.cases += 1;
        let args = parse(flags, argv.iter().map(OsString::from).collect());
        let golden_ok = case["ok"].as_bool().unwrap_or(false);
        let golden_help = case["exit_code"] == 0;
        let ours_ok = args.is_ok() && !args.help;
        let recovered = args.recover();
        if recovered.problems.first().map(|p| &p.error) != args.errors.first() {
            t.recovery_mismatch.push(format!(
                "{argv:?}: {:?} then {:?}",
                args.errors.first(),
                recovered.problems.first()
            ));
        }
        if golden_ok != ours_ok || golden_help != (args.help && args.is_ok()) {
            t.verdict_mismatch.push(format!(
                "{argv:?}: golden ok={golden_ok} help={golden_help} {}; ours ok={ours_ok} help={} {:?}",
                case.get("error").or(case.get("exception")).unwrap_or(&Value::Null),
                args.help,
                args.errors.first().map(|e| &e.message)
            ));
            continue;
        }
        if let Some(Value::Array(eff)) = case.get("effective_argv") {
            let want: Vec<OsString> = eff
                .iter()
                .map(|t| OsString::from(t.as_str().unwrap_or_default()))
                .collect();
            if args.effective_tokens() == want {
                t.effective_exact += 1;
            } else {
                t.namespace_mismatch.push(format!(
                    "{argv:?}: effective argv golden {want:?} ours {:?}",
                    args.effective_tokens()
                ));
                continue;
            }
        }
        if golden_ok {
            let mut want = baseline.clone();
            if let Some(Value::Object(set)) = case.get("set") {
                for (k, v) in set {
                    want.insert(k.clone(), v.clone());
                }
            }
            if let Some(Value::Array(missing)) = case.get("missing") {
                for k in missing {
                    want.remove(k.as_str().unwrap_or_default());
                }
            }
            let got = args.namespace();
            let differs = |k: &String| match (want.get(k), got.get(k)) {
                (Some(a), Some(b)) => !same(a, b),
                (a, b) => a.is_some() != b.is_some(),
            };
            if want.keys().chain(got.keys()).any(differs) {
                let diff: Vec<String> = want
                    .keys()
                    .chain(got.keys())
                    .filter(|k| differs(k))
                    .map(|k| format!("{k}: golden {:?} ours {:?}", want.get(k), got.get(k)))
                    .collect();
                t.namespace_mismatch
                    .push(format!("{argv:?}: {}", diff.join("; ")));
            }
        } else if !golden_help {
            let ours = &args.errors[0];
            let (golden, kind) = match (case.get("error"), case.get("exception")) {
                (Some(Value::String(e)), _) => (e.clone(), ArgErrorKind::Usage),
                (_, Some(Value::String(e))) => (e.clone(), ArgErrorKind::Exception),
                _ => (String::new(), ArgErrorKind::Usage),
            };
            if ours.kind != kind {
                t.verdict_mismatch.push(format!(
                    "{argv:?}: golden {kind:?} {golden:?}; ours {:?} {:?}",
                    ours.kind, ours.message
                ));
            } else if ours.message == golden {
                t.message_exact += 1;
            } else if yaml_class(&golden) && yaml_class(&ours.message) {
                t.yaml_error_class += 1;
            } else if deprecated_prose(&golden, &ours.message) {
                t.deprecated_class += 1;
            } else {
                t.message_mismatch.push(format!(
                    "{argv:?}:\n   golden {golden:?}\n   ours   {:?}",
                    ours.message
                ));
            }
        }
    }
    t
}

/// JSON equality, except that two floats may differ in the last bit: the goldens are read back
/// with serde_json, whose default float parsing is not always correctly rounded (Python's
/// `2.5e+33` comes back one ulp off), while the parser's own floats are.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() && y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x == y || (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn check(version: &str) {
    check_file(version, &format!("{version}.jsonl"), 1000);
}

fn check_config(version: &str) {
    check_file(version, &format!("config-{version}.jsonl"), 100);
}

fn check_file(version: &str, file: &str, min_cases: usize) {
    let t = replay(version, file);
    let errors =
        t.message_exact + t.message_mismatch.len() + t.yaml_error_class + t.deprecated_class;
    eprintln!(
        "{file}: {} cases, {} verdict mismatches, {} namespace mismatches, {}/{} error messages exact ({} PyYAML errors matched by class), {} merged argv exact",
        t.cases,
        t.verdict_mismatch.len(),
        t.namespace_mismatch.len(),
        t.message_exact,
        errors,
        t.yaml_error_class,
        t.effective_exact
    );
    assert!(
        t.cases >= min_cases,
        "{file}: corpus too small ({})",
        t.cases
    );
    let show = |v: &Vec<String>| v.iter().take(15).cloned().collect::<Vec<_>>().join("\n");
    assert!(
        t.verdict_mismatch.is_empty(),
        "{file} accept/reject:\n{}",
        show(&t.verdict_mismatch)
    );
    assert!(
        t.namespace_mismatch.is_empty(),
        "{file} namespace:\n{}",
        show(&t.namespace_mismatch)
    );
    assert!(
        t.recovery_mismatch.is_empty(),
        "{file} recovery:\n{}",
        show(&t.recovery_mismatch)
    );
    assert!(
        t.message_mismatch.is_empty(),
        "{file} messages:\n{}",
        show(&t.message_mismatch)
    );
}

#[test]
fn conformance_0_4_10_post2() {
    check("0.4.10.post2");
}

#[test]
fn conformance_0_5_2() {
    check("0.5.2");
}

#[test]
fn conformance_0_5_5() {
    check("0.5.5");
}

#[test]
fn conformance_0_5_10_post1() {
    check("0.5.10.post1");
}

#[test]
fn conformance_0_5_23() {
    check("0.5.23");
}

#[test]
fn config_conformance_0_4_10_post2() {
    check_config("0.4.10.post2");
}

#[test]
fn config_conformance_0_5_2() {
    check_config("0.5.2");
}

#[test]
fn config_conformance_0_5_5() {
    check_config("0.5.5");
}

#[test]
fn config_conformance_0_5_10_post1() {
    check_config("0.5.10.post1");
}

#[test]
fn config_conformance_0_5_23() {
    check_config("0.5.23");
}

/// The releases with full corpora; every other embedded release has a sampled golden.
const BOUNDARY: &[&str] = &["0.4.10.post2", "0.5.2", "0.5.5", "0.5.10.post1", "0.5.23"];

#[test]
fn sampled_conformance_every_other_release() {
    let mut failures = Vec::new();
    let (mut releases, mut cases) = (0, 0);
    for v in flagset::KNOWN_VERSIONS
        .iter()
        .filter(|v| !BOUNDARY.contains(v))
    {
        let t = replay(v, &format!("sample/{v}.jsonl"));
        releases += 1;
        cases += t.cases;
        if t.cases < 40 {
            failures.push(format!("{v}: only {} cases", t.cases));
        }
        for m in t
            .verdict_mismatch
            .iter()
            .chain(&t.namespace_mismatch)
            .chain(&t.message_mismatch)
        {
            failures.push(format!("{v}: {m}"));
        }
    }
    eprintln!("sampled goldens: {releases} releases, {cases} cases");
    assert_eq!(releases, flagset::KNOWN_VERSIONS.len() - BOUNDARY.len());
    let shown: Vec<&String> = failures.iter().take(20).collect();
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{shown:#?}",
        failures.len()
    );
}

/// Lines for servers not on NVIDIA (`--device cpu|npu|xpu|hpu`), recorded from the same releases'
/// parsers: the parser agrees, and `check` (which passes such a server through, unplanned) reports
/// what SGLang parses and refuses exactly what it refuses.
#[test]
fn lines_for_servers_not_on_nvidia() {
    for v in ["0.4.10.post2", "0.5.5", "0.5.23"] {
        let file = format!("devices-{v}.jsonl");
        check_file(v, &file, 8);
        let path = format!("{}/tests/conformance/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines().skip(1) {
            let case: Value = serde_json::from_str(line).unwrap();
            let argv: Vec<String> = serde_json::from_value(case["argv"].clone()).unwrap();
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_sglang-launch"))
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .args(["check", "--json", "--topology"])
                .arg("examples/topologies/8x-h100-sxm-nvlink.json")
                .args(["--sglang-version", v, "--"])
                .args(&argv)
                .env("SGLANG_LAUNCH_DEVICE_ROOT", "/nonexistent")
                .output()
                .unwrap();
            let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
            let accepted = case["ok"] == true;
            let want = if accepted { "pass-through" } else { "error" };
            assert_eq!(plan["verdict"], want, "{v} {argv:?}: {plan:#}");
            assert_eq!(
                out.status.code(),
                Some(if accepted { 0 } else { 1 }),
                "{argv:?}"
            );
            if let Some(Value::Object(set)) = case.get("set") {
                for (dest, value) in set {
                    assert!(
                        same(&plan["sglang_parsed"][dest], value),
                        "{v} {argv:?}: {dest} golden {value} ours {}",
                        plan["sglang_parsed"][dest]
                    );
                }
            } else {
                let golden = case["error"].as_str().unwrap();
                let said = plan["findings"].to_string();
                assert!(
                    said.contains(&golden[..golden.len().min(60)]),
                    "{argv:?}: {said}"
                );
            }
        }
    }
}
