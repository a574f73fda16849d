//! Fixes are idempotent: planning the planned command again changes nothing, on every fixture
//! topology and a corpus of command lines.

use std::ffi::OsString;
use std::path::PathBuf;

use sglang_launch::facts::Env;
use sglang_launch::plan::{self, Request};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn topologies() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(format!("{ROOT}/examples/topologies"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    assert!(
        v.len() >= 9,
        "every shared fixture topology is in examples/topologies"
    );
    v
}

const LINES: &[&str] = &[
    "--model-path examples/models/Qwen3-32B --tp 8",
    "--model-path examples/models/Qwen3-32B --tp 8 --enable-flashinfer-allreduce-fusion --cuda-graph-max-bs 512",
    "--model-path examples/models/Qwen3-32B --tp 8 --enable-torch-symm-mem --speculative-algorithm EAGLE3",
    "--model-path examples/models/Qwen3-32B --tp 2 --attention-backend fa3 --quantization fp8",
    "--model-path examples/models/Qwen3-32B --tp 4 --ep 4 --moe-a2a-backend flashinfer",
    "--model-path m --tp 8 --disable-custom-all-reduce --mem-fraction-static 0.95",
    "--model-path m --tp 2 --dp 2 --enable-dp-attention --kv-cache-dtype fp8_e5m2",
    "--model-path m --nnodes 2 --tp 16",
    "--model-path m --tp 3",
    "--model-path m",
];

const ENVS: &[&[(&str, &str)]] = &[
    &[],
    &[
        ("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"),
        ("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"),
    ],
    &[
        ("NCCL_P2P_DISABLE", "1"),
        ("CUDA_VISIBLE_DEVICES", "0,1,2,3"),
    ],
];

fn request(topology: &std::path::Path, tokens: Vec<OsString>, env: Env) -> Request {
    Request {
        tokens,
        topology: Some(topology.to_path_buf()),
        sglang_version: Some("0.5.23".into()),
        python: Some("/usr/bin/python3".into()),
        env,
        ..Request::default()
    }
}

#[test]
fn planning_the_planned_command_changes_nothing() {
    let mut checked = 0;
    for topo in topologies() {
        for line in LINES {
            for env in ENVS {
                let tokens: Vec<OsString> = line.split_whitespace().map(OsString::from).collect();
                let first = plan::build(&request(
                    &topo,
                    tokens,
                    Env::from_pairs(env.iter().copied()),
                ))
                .unwrap();
                let again = plan::build(&request(
                    &topo,
                    first.args.tokens.clone(),
                    first.env.clone(),
                ))
                .unwrap();
                let ctx = format!("{} | {line} | {env:?}", topo.display());
                assert!(
                    again.plan.findings.iter().all(|f| !f.fixed),
                    "second plan applied fixes: {ctx}: {:#?}",
                    again.plan.findings
                );
                assert_eq!(again.args.tokens, first.args.tokens, "{ctx}");
                assert_eq!(again.env, first.env, "{ctx}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 270);
}

#[test]
fn no_fix_reports_everything_fixing_would_touch_and_changes_nothing() {
    for topo in topologies() {
        for line in LINES {
            for env in ENVS {
                let tokens: Vec<OsString> = line.split_whitespace().map(OsString::from).collect();
                let env = Env::from_pairs(env.iter().copied());
                let fixed = plan::build(&request(&topo, tokens.clone(), env.clone())).unwrap();
                let mut req = request(&topo, tokens.clone(), env.clone());
                req.no_fix = true;
                let report = plan::build(&req).unwrap();
                let ctx = format!("{} | {line}", topo.display());
                assert_eq!(report.args.tokens, tokens, "{ctx}");
                assert_eq!(report.env, env, "{ctx}");
                assert!(
                    report.plan.env.set.is_empty() && report.plan.env.unset.is_empty(),
                    "{ctx}"
                );
                assert!(
                    report
                        .plan
                        .findings
                        .iter()
                        .all(|f| !f.fixed && f.fix.is_none()),
                    "{ctx}"
                );
                for f in fixed.plan.findings.iter().filter(|f| f.fixed) {
                    assert!(
                        report.plan.findings.iter().any(|r| r.code == f.code),
                        "{ctx}: --no-fix hides {}",
                        f.code
                    );
                }
            }
        }
    }
}

/// A fix whose finding the fixed line still raises is not made: DeepSeek-V4's model overrides
/// pin its attention backend, so deterministic inference has none to fall back to. The line
/// stays as written and the refusal blocks, saying why no fix was made.
#[test]
fn a_fix_that_leaves_its_finding_is_not_made_and_the_line_blocks() {
    let topo = PathBuf::from(format!("{ROOT}/examples/topologies/8x-h20-nvlink.json"));
    let model = format!("{ROOT}/tests/fixtures/models/deepseek-ai__DeepSeek-V4-Flash");
    for extra in [&[][..], &["--attention-backend", "fa3"][..]] {
        let mut line = vec!["--model-path", &model, "--tp", "8"];
        line.extend(["--trust-remote-code", "--enable-deterministic-inference"]);
        line.extend(extra);
        let tokens: Vec<OsString> = line.iter().map(OsString::from).collect();
        let mut req = request(&topo, tokens.clone(), Env::default());
        req.sglang_version = Some("0.5.21".into());
        let out = plan::build(&req).unwrap();
        let attn = (out.plan.findings.iter())
            .find(|f| f.code == "ATTN013")
            .unwrap_or_else(|| panic!("{extra:?}: no ATTN013: {:#?}", out.plan.findings));
        assert!(!attn.fixed, "{extra:?}: {attn:#?}");
        assert_eq!(attn.severity, sglang_launch::rules::Severity::Error);
        assert!(attn.message.contains("not fixed"), "{}", attn.message);
        assert_eq!(out.args.tokens, tokens, "{extra:?}: the line was changed");
    }
}
