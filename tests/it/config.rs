//! SGLang's `--config FILE.yaml` through the pipeline: the launcher analyses the merged
//! arguments but keeps (and execs) the user's own tokens, edits only those, and says so when a
//! fix would have to change the file.

use std::ffi::OsString;
use std::io::Write;

use sglang_launch::facts::Env;
use sglang_launch::plan::{self, Request, fixes};
use sglang_launch::rules::ArgEdit;
use sglang_launch::sglang::{self, ArgErrorKind, flagset};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn yaml(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn toks(v: &[&str]) -> Vec<OsString> {
    v.iter().map(OsString::from).collect()
}

fn build(tokens: Vec<OsString>) -> plan::Outcome {
    plan::build(&Request {
        tokens,
        topology: Some(format!("{ROOT}/examples/topologies/8x-rtx-pro-6000-pcie.json").into()),
        sglang_version: Some("0.5.23".into()),
        python: Some("/usr/bin/python3".into()),
        env: Env::default(),
        ..Request::default()
    })
    .unwrap()
}

#[test]
fn analysis_sees_the_file_but_the_plan_keeps_the_users_tokens() {
    let f = yaml(&format!(
        "model-path: {ROOT}/examples/models/Qwen3-32B\ntp-size: 8\napi-key: sekrit-in-file\n"
    ));
    let path = f.path().to_str().unwrap();
    let out = build(toks(&[
        "--config",
        path,
        "--port",
        "3000",
        "--api-key",
        "mine",
    ]));
    let p = &out.plan;
    // The effective line is parsed: TP 8 from the file is what the GPUs were chosen for.
    assert_eq!(p.gpus, (0..8).collect::<Vec<u32>>());
    assert_eq!(out.args.int("--tp-size"), Some(8));
    // Explicit arguments win over the file's.
    assert_eq!(out.args.str("--api-key"), Some("mine"));
    // sglang_args: the user's tokens (secret masked); nothing from the file is copied in.
    assert_eq!(
        &p.sglang_args[..5],
        ["--config", path, "--port", "3000", "--api-key"]
    );
    assert_eq!(p.sglang_args[5], "***");
    assert!(
        !p.sglang_args
            .iter()
            .any(|a| a == "--tp-size" || a.contains("sekrit"))
    );
    let c = out.args.config.as_ref().unwrap();
    assert_eq!(c.file, path);
    assert_eq!(out.args.config_len(), 6);
    let borrowed: Vec<OsString> = out.args.effective_iter().map(Into::into).collect();
    assert_eq!(borrowed, out.args.effective_tokens());
    assert_eq!(borrowed.len(), 6 + 4);
    assert!(out.args.occurrences_of("--tp-size").all(|o| o.from_config));
    assert!(
        out.args
            .user_occurrences_of("--port")
            .all(|o| o.start == 2 && o.len == 2)
    );
}

#[test]
fn a_fix_that_would_edit_the_file_is_reported_not_applied() {
    let f = yaml(&format!(
        "model-path: {ROOT}/examples/models/Qwen3-32B\ntp-size: 8\nenable-nccl-nvls: true\n"
    ));
    let path = f.path().to_str().unwrap();
    let out = build(toks(&["--config", path]));
    let nvls = out
        .plan
        .findings
        .iter()
        .find(|f| f.code == "COMM003")
        .expect("NVLS on PCIe is flagged");
    assert!(!nvls.fixed);
    assert!(nvls.message.contains(path), "{}", nvls.message);
    // The file's line is named, so the user can go straight to it.
    assert!(
        nvls.message.contains(&format!(
            "--enable-nccl-nvls comes from the config file {path}:3; change it there"
        )),
        "{}",
        nvls.message
    );
    assert!(out.args.flag("--enable-nccl-nvls"));
    // Without the file the same flag is removed from the command line.
    let out = build(toks(&[
        "--model-path",
        &format!("{ROOT}/examples/models/Qwen3-32B"),
        "--tp",
        "8",
        "--enable-nccl-nvls",
    ]));
    assert!(
        out.plan
            .findings
            .iter()
            .any(|f| f.code == "COMM003" && f.fixed)
    );
    assert!(!out.args.flag("--enable-nccl-nvls"));
}

#[test]
fn a_renamed_or_replaced_flag_in_the_file_is_one_error_at_its_line() {
    let f = yaml(&format!(
        "model-path: {ROOT}/examples/models/Qwen3-32B\n# tuned\nnsa-prefill-backend: flashmla_sparse\n"
    ));
    let path = f.path().to_str().unwrap();
    let out = build(toks(&["--config", path]));
    let codes: Vec<&str> = out.plan.findings.iter().map(|f| f.code.as_str()).collect();
    // FLAG001 names the option and its values: argparse's own ARG001 would only repeat it.
    assert!(
        codes.contains(&"FLAG001") && !codes.contains(&"ARG001"),
        "{codes:?}"
    );
    let f = out
        .plan
        .findings
        .iter()
        .find(|f| f.code == "FLAG001")
        .unwrap();
    assert!(f.message.contains(&format!("{path}:3;")), "{}", f.message);
}

#[test]
fn set_overrides_the_file_explicitly_and_remove_is_blocked() {
    let flags = flagset::get("0.5.23").unwrap();
    let file = vec![
        "--model-path".to_owned(),
        "m".to_owned(),
        "--chunked-prefill-size".to_owned(),
        "4096".to_owned(),
        "--enable-metrics".to_owned(),
    ];
    let args = sglang::parse_with(
        flags,
        toks(&["--tp", "2", "--config", "c.yaml"]),
        &mut |p| {
            assert_eq!(p, "c.yaml");
            Ok(file.clone())
        },
    );
    assert!(args.is_ok(), "{:?}", args.errors);
    assert_eq!(args.int("--chunked-prefill-size"), Some(4096));

    let set = fixes::try_apply_args(
        &args,
        &[ArgEdit::Set {
            option: "--chunked-prefill-size".into(),
            value: "2048".into(),
        }],
    )
    .unwrap();
    assert_eq!(
        set.tokens,
        toks(&[
            "--tp",
            "2",
            "--config",
            "c.yaml",
            "--chunked-prefill-size",
            "2048"
        ])
    );
    assert_eq!(set.int("--chunked-prefill-size"), Some(2048));
    // The re-parse reused the file's tokens (the closure above is gone; no file exists).
    assert_eq!(set.config_len(), 5);

    let blocked = fixes::try_apply_args(
        &args,
        &[
            ArgEdit::Set {
                option: "--tp-size".into(),
                value: "4".into(),
            },
            ArgEdit::Remove {
                option: "--enable-metrics".into(),
            },
        ],
    )
    .unwrap_err();
    assert_eq!(blocked.option, "--enable-metrics");
    assert_eq!(blocked.file, "c.yaml");
    // The user's own option is still editable in place.
    let tp = fixes::try_apply_args(
        &args,
        &[ArgEdit::Set {
            option: "--tp-size".into(),
            value: "4".into(),
        }],
    )
    .unwrap();
    assert_eq!(tp.tokens, toks(&["--tp", "4", "--config", "c.yaml"]));
    // A rename of a spelling only the file uses cannot be done either.
    let renamed = fixes::try_apply_args(
        &args,
        &[ArgEdit::Rename {
            from: "--chunked-prefill-size".into(),
            to: "--x".into(),
        }],
    );
    assert!(renamed.is_err());
}

/// A `--config` file that is not here blocks a plan for this machine, as SGLang would fail
/// here; planned for another machine from its topology file, where it may be, it is ARG003
/// and the rest of the line is checked.
#[test]
fn a_missing_config_file_blocks_here_and_warns_for_another_machine() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.yaml");
    let path = missing.to_str().unwrap();
    let line = toks(&["--config", path, "--model-path", "m", "--tp", "16"]);
    let elsewhere = build(line.clone());
    let codes: Vec<&str> = elsewhere
        .plan
        .findings
        .iter()
        .map(|f| f.code.as_str())
        .collect();
    assert!(codes.contains(&"ARG003"), "{codes:?}");
    assert!(!codes.contains(&"ARG001"), "{codes:?}");
    // The line's own options are still checked: TP 16 on an 8-GPU host.
    assert!(codes.contains(&"TOP001"), "{codes:?}");
    let topology = format!("{ROOT}/examples/topologies/8x-rtx-pro-6000-pcie.json");
    let here = plan::build(&Request {
        tokens: line,
        gpus: Some(sglang_launch::facts::topology::Topology::load(topology.as_ref()).unwrap()),
        sglang_version: Some("0.5.23".into()),
        python: Some("/usr/bin/python3".into()),
        env: Env::default(),
        ..Request::default()
    })
    .unwrap();
    let arg = here
        .plan
        .findings
        .iter()
        .find(|f| f.code == "ARG001")
        .unwrap();
    assert!(
        arg.message.contains("Config file not found"),
        "{}",
        arg.message
    );
    assert!(here.plan.findings.iter().all(|f| f.code != "ARG003"));
}

#[test]
fn unusable_config_files_are_arg001_findings_naming_the_file() {
    let bad_yaml = yaml("tp-size: [1\n");
    let not_a_dict = yaml("- a\n- b\n");
    let unsupported = yaml("model-path: m\ndisable-cuda-graph: true\n");
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("c.txt");
    let cases: Vec<(String, &str)> = vec![
        (
            txt.to_str().unwrap().to_owned(),
            "must be YAML format, got: .txt",
        ),
        (bad_yaml.path().to_str().unwrap().to_owned(), "ParserError"),
        (
            not_a_dict.path().to_str().unwrap().to_owned(),
            "dictionary at root level",
        ),
        (
            unsupported.path().to_str().unwrap().to_owned(),
            "Unsupported config option",
        ),
        (
            dir.path().to_str().unwrap().to_owned(),
            "must be YAML format",
        ),
    ];
    for (path, want) in cases {
        let out = build(toks(&["--config", &path, "--tp", "2"]));
        let arg = out
            .plan
            .findings
            .iter()
            .find(|f| f.code == "ARG001")
            .unwrap_or_else(|| panic!("{path}: no ARG001"));
        assert!(arg.message.contains(want), "{path}: {}", arg.message);
        assert!(arg.message.contains(&path), "{path}: {}", arg.message);
        assert_eq!(out.plan.sglang_args[..2], ["--config", path.as_str()]);
        assert!(out.plan.memory.is_none());
    }
    let out = build(toks(&["--config"]));
    assert!(out.plan.findings.iter().any(|f| {
        f.code == "ARG001"
            && f.message
                .contains("No config file specified after --config flag!")
    }));
    // A directory named like a YAML file exists but cannot be read.
    let d = dir.path().join("d.yaml");
    std::fs::create_dir(&d).unwrap();
    let args = sglang::parse(
        flagset::get("0.5.23").unwrap(),
        toks(&["--config", d.to_str().unwrap()]),
    );
    assert_eq!(args.errors[0].kind, ArgErrorKind::Exception);
    assert!(
        args.errors[0]
            .message
            .starts_with("IsADirectoryError: [Errno 21] Is a directory: '")
    );
}

#[test]
fn versions_without_config_merging_reject_the_option() {
    let f = yaml("model-path: m\n");
    let path = f.path().to_str().unwrap();
    for v in ["0.4.10.post2", "0.5.2"] {
        let args = sglang::parse(
            flagset::get(v).unwrap(),
            toks(&["--model-path", "m", "--config", path]),
        );
        assert!(args.config.is_none());
        assert_eq!(args.errors[0].kind, ArgErrorKind::Usage, "{v}");
        assert!(
            args.errors[0]
                .message
                .starts_with("unrecognized arguments: --config"),
            "{v}"
        );
    }
    // `--config=FILE` is an ordinary argparse option to SGLang: no merging.
    let args = sglang::parse(
        flagset::get("0.5.23").unwrap(),
        toks(&["--model-path", "x", &format!("--config={path}")]),
    );
    assert!(args.config.is_none() && args.is_ok());
    assert_eq!(args.str("--model-path"), Some("x"));
}

#[test]
fn a_renamed_option_inside_the_file_is_named_and_not_fixed() {
    let f = yaml("cuda-graph-max-bs: 128\n");
    let path = f.path().to_str().unwrap();
    let out = build(toks(&["--model-path", "m", "--config", path]));
    let flag = out
        .plan
        .findings
        .iter()
        .find(|f| f.code == "FLAG001")
        .expect("FLAG001");
    assert!(!flag.fixed);
    assert!(flag.message.contains(path), "{}", flag.message);
    assert_eq!(out.plan.verdict, sglang_launch::plan::v1::Verdict::Error);
    // The user's tokens are untouched.
    assert_eq!(
        out.args.tokens,
        toks(&["--model-path", "m", "--config", path])
    );
}
