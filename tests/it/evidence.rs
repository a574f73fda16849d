//! Severity is evidence. Every rule that can block (severity `error`) says in its header how it
//! is known that the user's release itself fails (`evidence:`), and the goldens behind it are
//! replayed here: each line of `tests/evidence/<CODE>.jsonl` was recorded by running a release's
//! own start-up code (`scripts/gen-evidence.py`) on inputs the rule fires on, or near misses; the
//! rule must block exactly where SGLang refused.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::common;
use sglang_launch::facts::Env;
use sglang_launch::plan::{self, Request};
use sglang_launch::rules::{self, Evidence, Severity};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[derive(Debug, Deserialize)]
struct Golden {
    code: String,
    case: usize,
    release: String,
    gpu: String,
    count: u32,
    model: String,
    argv: Vec<String>,
    env: BTreeMap<String, String>,
    refused: bool,
    error: Option<String>,
    /// Installed distributions the recording venv had, for rules that read the install.
    #[serde(default)]
    packages: BTreeMap<String, String>,
    /// The recording machine's RDMA devices, for rules that read the host's.
    rdma_devices: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
struct Gpu {
    name: String,
    cc: Option<String>,
    memory_mib: Option<u64>,
}

fn goldens(path: &str) -> Vec<Golden> {
    let text = std::fs::read_to_string(Path::new(ROOT).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: {e}: {l}")))
        .collect()
}

/// `count` of this GPU, every pair over NVLink (the oracle's fake GPUs report P2P everywhere), and
/// the recording venv's packages and the recording machine's RDMA devices where the golden has them.
fn topology(g: &Golden, gpu: &Gpu) -> Value {
    let (count, packages) = (g.count, &g.packages);
    let gpus: Vec<Value> = (0..count)
        .map(|i| {
            serde_json::json!({
                "index": i, "uuid": format!("GPU-{i:08}-0000-4000-8000-000000000000"),
                "name": gpu.name, "pci_bus_id": format!("00000000:{:02x}:00.0", 0x18 + i),
                "compute_capability": gpu.cc.as_deref().unwrap(),
                "memory_total_mib": gpu.memory_mib.unwrap(), "memory_used_mib": 0,
            })
        })
        .collect();
    let mut links = Vec::new();
    for a in 0..count {
        for b in a + 1..count {
            links.push(
                serde_json::json!({"gpus": [a, b], "path": "NV18", "nvlink": true, "p2p": "ok"}),
            );
        }
    }
    let mut topo = serde_json::json!({"schema": "sglang-launch/topology/v1",
        "source": "evidence golden", "gpus": gpus, "links": links});
    if !packages.is_empty() {
        // As `detect --json` records the install's packages.
        topo["host"] = serde_json::json!({ "packages": packages });
    }
    if let Some(devices) = &g.rdma_devices {
        topo["host"]["rdma_devices"] = serde_json::json!(devices);
    }
    topo
}

/// The error codes `check` reports for a golden's inputs, fixed or not.
fn blocking_codes(g: &Golden, gpus: &BTreeMap<String, Gpu>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("topology.json");
    std::fs::write(&topo, topology(g, &gpus[&g.gpu]).to_string()).unwrap();
    let models = Path::new(ROOT).join("tests/fixtures/models/oracle");
    // An oracle model by name, or a fixture config folder (`org__name`).
    let model = if g.model.contains("__") {
        Path::new(ROOT).join("tests/fixtures/models").join(&g.model)
    } else {
        models.join(&g.model)
    };
    let argv: Vec<String> = g
        .argv
        .iter()
        .map(|a| a.replace("@models/", &format!("{}/", models.display())))
        .map(|a| a.replace("@fixtures/", &format!("{ROOT}/tests/fixtures/models/")))
        .collect();
    // In process, as `check` builds its plan: the release data is decoded once for all goldens.
    let mut tokens: Vec<OsString> = vec!["--model-path".into(), model.into()];
    tokens.extend(argv.iter().map(OsString::from));
    let req = Request {
        tokens,
        topology: Some(topo),
        sglang_version: Some(g.release.clone()),
        python: Some("/usr/bin/python3".into()),
        env: Env::from_pairs(g.env.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
        ..Request::default()
    };
    let outcome =
        plan::build(&req).unwrap_or_else(|e| panic!("{} {}: {}", g.code, g.release, e.message));
    outcome
        .plan
        .findings
        .iter()
        // A fixed finding is the launcher handling the refusal: it changed the line so SGLang
        // takes it.
        .filter(|f| f.severity == Severity::Error)
        .map(|f| f.code.clone())
        .collect()
}

fn golden_files() -> Vec<&'static str> {
    rules::all()
        .iter()
        .flat_map(|r| r.evidence())
        .filter_map(|e| match e {
            Evidence::Golden(p) => Some(p),
            _ => None,
        })
        .collect()
}

#[test]
fn every_rule_that_can_block_says_how_the_failure_is_known() {
    let missing: Vec<&str> = rules::all()
        .iter()
        .filter(|r| r.severity == Severity::Error && r.evidence().is_empty())
        .map(|r| r.code)
        .collect();
    assert!(
        missing.is_empty(),
        "error rules without `evidence:` (record goldens, cite a version-pinned report, or make them warnings): {missing:?}"
    );
}

#[test]
fn each_golden_file_records_a_refusal_of_its_rule() {
    for r in rules::all() {
        for e in &r.evidence() {
            match e {
                Evidence::Golden(path) => {
                    let lines = goldens(path);
                    assert!(
                        lines.iter().any(|g| g.code == r.code && g.refused),
                        "{}: {path} records no refusal of it",
                        r.code
                    );
                }
                Evidence::Logs(path) => {
                    assert!(Path::new(ROOT).join(path).is_file(), "{}: {path}", r.code)
                }
                Evidence::Report { release, .. } => assert!(
                    sglang_launch::sglang::release::looks_like_version(
                        release.rsplit("==").next().unwrap_or(release)
                    ),
                    "{}: report release {release}",
                    r.code
                ),
                Evidence::Parser | Evidence::Observed(_) => {}
            }
        }
    }
}

#[test]
fn rules_block_exactly_where_the_recorded_release_refused() {
    let gpus: BTreeMap<String, Gpu> = toml::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("tests/field/gpus.toml")).unwrap(),
    )
    .unwrap();
    let mut wrong = Vec::new();
    let mut replayed = 0;
    for path in golden_files() {
        for g in goldens(path) {
            let codes = blocking_codes(&g, &gpus);
            let blocked = codes.contains(&g.code);
            if blocked != g.refused {
                wrong.push(format!(
                    "{} case {} on {}: SGLang {} ({}), the launcher {} [{}]",
                    g.code,
                    g.case,
                    g.release,
                    if g.refused { "refused" } else { "accepted" },
                    g.error.as_deref().unwrap_or("-"),
                    if blocked { "blocks" } else { "does not" },
                    codes.join(" ")
                ));
            }
            replayed += 1;
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {replayed}: {wrong:#?}",
        wrong.len()
    );
    assert!(replayed > 0);
}

/// A Python whose `sglang` is installed as `version` (from `url`, PEP 610, when given) and whose
/// interpreter cannot run, so the launcher reads only the install's metadata.
fn modified_install(dir: &Path, version: &str, url: Option<&str>) -> std::path::PathBuf {
    let py = common::venv_with(dir, "#!/bin/sh\nexit 1\n", 0o755);
    let site = dir.join("venv/lib/python3.11/site-packages");
    std::fs::remove_dir_all(site.join("sglang-0.5.23.dist-info")).unwrap();
    common::sglang_dist_info(&site, version, url);
    py
}

/// `check --json` on eight H200s with `launcher`'s options and SGLang's `line`, offline, its
/// caches under `dir`.
fn check_on_h200(dir: &Path, launcher: &[&str], line: &[&str], env: &[(&str, &str)]) -> Value {
    let out = common::launcher()
        .current_dir(ROOT)
        .args(["check", "--json", "--topology"])
        .arg("examples/topologies/8x-h200-nvlink.json")
        .args(launcher)
        .arg("--")
        .args(line)
        .envs(env.iter().copied())
        .env("HF_HUB_OFFLINE", "1")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The severity and message of the plan's finding of `code`.
fn finding(plan: &Value, code: &str) -> (String, String) {
    let f = (plan["findings"].as_array().unwrap().iter())
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("{}", plan["findings"]));
    (
        f["severity"].as_str().unwrap().to_owned(),
        f["message"].as_str().unwrap().to_owned(),
    )
}

/// A source checkout (an editable install) may run code newer than the release its version
/// names: an error the catalogue ends at a later release (ARCH017 ends at 0.5.10) warns there
/// and says why; on the release itself it blocks, and `--deny` still makes it an error.
#[test]
fn a_failure_a_later_release_fixed_warns_on_a_source_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let line = [
        "--model-path",
        "tests/fixtures/models/synthetic__DeepSeek-V3.2-like",
        "--tp",
        "8",
    ];
    let env = [("SGLANG_ENABLE_JIT_DEEPGEMM", "0")];
    let run = |launcher: &[&str]| check_on_h200(dir.path(), launcher, &line, &env);
    let severity = |plan: &Value| finding(plan, "ARCH017");
    let release = run(&["--sglang-version", "0.5.8"]);
    assert_eq!(severity(&release).0, "error");
    assert_eq!(release["verdict"], "error");
    // The same version, installed from a checkout (PEP 610 editable).
    let py = modified_install(dir.path(), "0.5.8", Some("file:///src/sglang/python"));
    let python = py.to_str().unwrap();
    let checkout = run(&["--python", python]);
    let (sev, message) = severity(&checkout);
    assert_eq!(sev, "warning");
    assert!(
        message.contains(
            "not proven for this install, so a warning: it is not the 0.5.8 release, \
             and SGLang 0.5.10 no longer fails this way"
        ),
        "{message}"
    );
    assert_ne!(checkout["verdict"], "error");
    let denied = run(&["--python", python, "--deny", "ARCH017"]);
    assert_eq!(severity(&denied).0, "error");
}

/// The same for a check whose verdict changes inside its versions: QUANT010 holds ModelOpt NVFP4
/// to SM 10.0 until 0.5.13 lowered the minimum, so a 0.5.12 checkout on H200s warns, where the
/// 0.5.12 release blocks.
#[test]
fn a_check_a_later_release_relaxed_warns_on_a_source_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let line = [
        "--model-path",
        "tests/fixtures/models/synthetic__Qwen3-8B-modelopt-nvfp4",
    ];
    let run = |launcher: &[&str]| check_on_h200(dir.path(), launcher, &line, &[]);
    let quant010 = |plan: &Value| finding(plan, "QUANT010");
    assert_eq!(quant010(&run(&["--sglang-version", "0.5.12"])).0, "error");
    let py = modified_install(dir.path(), "0.5.12", Some("file:///src/sglang/python"));
    let checkout = run(&["--python", py.to_str().unwrap()]);
    let (sev, message) = quant010(&checkout);
    assert_eq!(sev, "warning", "{message}");
    assert!(
        message
            .contains("it is not the 0.5.12 release, and SGLang 0.5.13 no longer fails this way"),
        "{message}"
    );
    // A build of main between releases (setuptools-scm's `.devN+g…` after the 0.5.12.post1
    // tag) is not an embedded release either: a revert can leave its code unlike both
    // neighbours, so it warns the same way.
    let dev = tempfile::tempdir().unwrap();
    let py = modified_install(dev.path(), "0.5.12.post2.dev346+g680bd4b42", None);
    let (sev, message) = quant010(&run(&["--python", py.to_str().unwrap()]));
    assert_eq!(sev, "warning", "{message}");
    assert!(
        message.contains(
            "it is not the 0.5.12.post1 release, and SGLang 0.5.13 no longer fails this way"
        ),
        "{message}"
    );
}

/// A build whose tree had no tag setuptools-scm could reach says `0.0.0.dev1+g…`: it is a
/// checkout of 0.5.6.post2 or later (the first release main's builds were versioned from), not a
/// release older than all. Its parser unread, 0.5.6.post2's data stands in, so `--pp-size`
/// spreads Qwen3-235B FP8 over four stages and the line that ran is not blocked.
#[test]
fn a_build_without_a_reachable_tag_is_read_as_a_recent_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let version = "0.0.0.dev1+g11605767e.d20260615";
    let py = modified_install(dir.path(), version, Some("file:///src/sglang/python"));
    let out = common::launcher()
        .current_dir(ROOT)
        .args(["check", "--json", "--topology"])
        .arg("examples/topologies/8x-h100-sxm-nvlink.json")
        .arg("--python")
        .arg(&py)
        .args(["--", "--model-path"])
        .arg("tests/field/models/Qwen__Qwen3-235B-A22B-Instruct-2507-FP8")
        .args(["--pp-size", "4", "--mem-fraction-static", "0.8"])
        .args(["--context-length", "131072"])
        .env("HF_HUB_OFFLINE", "1")
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .output()
        .unwrap();
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = plan["findings"].as_array().unwrap();
    let ver001 = (findings.iter())
        .find(|f| f["code"] == "VER001")
        .unwrap_or_else(|| panic!("{}", plan["findings"]));
    let message = ver001["message"].as_str().unwrap();
    assert!(
        message.contains(version) && message.contains("the 0.5.6.post2 release's data stands in"),
        "{message}"
    );
    assert!(
        !findings
            .iter()
            .any(|f| f["code"] == "ARG002" || f["severity"] == "error"),
        "{findings:#?}"
    );
    assert_ne!(plan["verdict"], "error");
}

/// EP027 judges a model against the release's own list of architectures validated for DeepEP
/// v2: a fork or dev image may have added its model to that list, so a checkout warns where the
/// 0.5.23 release blocks.
#[test]
fn a_model_missing_from_a_backend_list_warns_on_a_fork() {
    let dir = tempfile::tempdir().unwrap();
    let line = [
        "--model-path",
        "tests/fixtures/models/openai__gpt-oss-20b",
        "--tp-size",
        "8",
        "--ep-size",
        "8",
        "--moe-a2a-backend",
        "deepep_v2",
    ];
    let env = [("SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK", "65536")];
    let run = |launcher: &[&str]| check_on_h200(dir.path(), launcher, &line, &env);
    let ep027 = |plan: &Value| finding(plan, "EP027");
    assert_eq!(ep027(&run(&["--sglang-version", "0.5.23"])).0, "error");
    let py = modified_install(dir.path(), "0.5.23", Some("file:///src/sglang/python"));
    let (sev, message) = ep027(&run(&["--python", py.to_str().unwrap()]));
    assert_eq!(sev, "warning", "{message}");
    assert!(
        message.contains("may validate architectures the release's list lacks"),
        "{message}"
    );
}
