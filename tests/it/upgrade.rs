//! `sglang-launch upgrade`: a command line (and its `--config` file) moved to another release.

use serde_json::Value;

use crate::common;
use common::launcher as sl;

fn advice(from: &str, to: &str, line: &[&str]) -> (Value, i32) {
    let out = sl()
        .args([
            "upgrade",
            "--json",
            "--sglang-version",
            from,
            "--to",
            to,
            "--",
        ])
        .args(line)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).expect("upgrade --json prints JSON");
    (v, out.status.code().unwrap())
}

/// `upgrade` from `from` to `to` of `line` (`extra`: its own options), as a transcript.
fn upgrade(from: &str, to: &str, extra: &[&str], line: &[&str]) -> String {
    common::transcript(
        sl().args(["upgrade", "--sglang-version", from, "--to", to])
            .args(extra)
            .arg("--")
            .args(line),
        &[],
    )
}

#[test]
fn renamed_flag_is_rewritten_and_the_target_parser_accepts_the_line() {
    let line = [
        "--model-path",
        "m",
        "--cuda-graph-max-bs",
        "128",
        "--tp",
        "2",
    ];
    let mut text = upgrade("0.5.10.post1", "0.5.23", &[], &line);
    text += &upgrade("0.5.10.post1", "0.5.23", &["--json"], &line);
    insta::assert_snapshot!(text);
}

#[test]
fn print_args_gives_one_line_for_eval_with_secrets_masked_unless_asked() {
    let line = [
        "--model-path",
        "m",
        "--api-key",
        "S3CRET-VALUE",
        "--cuda-graph-max-bs",
        "8",
    ];
    let (out, masked) = common::transcript_of(
        sl().args([
            "upgrade",
            "--sglang-version",
            "0.5.10.post1",
            "--to",
            "0.5.23",
        ])
        .args(["--print-args", "--"])
        .args(line),
        &[],
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("S3CRET"),
        "{masked}"
    );
    let shown = upgrade(
        "0.5.10.post1",
        "0.5.23",
        &["--print-args", "--show-secrets"],
        &line,
    );
    insta::assert_snapshot!(masked + &shown);
}

/// A masked line will not run as is: `upgrade --print-args` says so on stderr, in the words
/// `plan --print-args` uses, and not when nothing was masked.
#[test]
fn print_args_notes_masked_secrets_as_plan_does() {
    let line = ["--model-path", "m", "--api-key", "S3CRET-VALUE"];
    let note = |out: &std::process::Output| -> Vec<String> {
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("note:"))
            .map(str::to_owned)
            .collect()
    };
    let run = |cmd: &[&str], line: &[&str]| {
        sl().args(cmd)
            .args(["--sglang-version", "0.5.23", "--print-args", "--"])
            .args(line)
            .output()
            .unwrap()
    };
    let plan = run(
        &["plan", "--topology", "examples/topologies/1x-l4.json"],
        &line,
    );
    let upgrade = run(&["upgrade", "--to", "0.5.23"], &line);
    assert_eq!(note(&plan).len(), 1, "{plan:?}");
    assert_eq!(note(&upgrade), note(&plan), "{upgrade:?}");
    assert!(note(&upgrade)[0].contains("--show-secrets"));
    let plain = run(&["upgrade", "--to", "0.5.23"], &line[..2]);
    assert!(note(&plain).is_empty(), "{plain:?}");
}

#[test]
fn config_file_keys_follow_the_target_and_its_secrets_stay_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("server.yaml");
    std::fs::write(
        &file,
        "model-path: m\ncuda-graph-max-bs: 64\napi-key: HIDDEN-KEY\ntp-size: 2\n",
    )
    .unwrap();
    let text = common::transcript(
        sl().args([
            "upgrade",
            "--sglang-version",
            "0.5.10.post1",
            "--to",
            "0.5.23",
        ])
        .args(["--", "--config", file.to_str().unwrap(), "--port", "3000"]),
        &[(dir.path(), "[T]")],
    );
    assert!(!text.contains("HIDDEN-KEY"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn option_the_target_lacks_is_dropped_and_named() {
    let line = ["--model-path", "m", "--attn-dp-size", "2"];
    insta::assert_snapshot!(upgrade("0.5.23", "0.4.10.post2", &[], &line));
}

/// Every change the report lists is made, on a line the release in use already refuses too:
/// renames applied, replaced flags translated (EP size = the line's TP), removed ones dropped.
#[test]
fn every_rename_replacement_and_removal_listed_is_applied() {
    let line = [
        "--model-path",
        "m",
        "--tp",
        "8",
        "--enable-ep-moe",
        "--cuda-graph-max-bs",
        "64",
        "--enable-deepep-moe",
        "--ds-heavy-channel-num",
        "4",
    ];
    for from in ["0.4.9", "0.5.5", "0.5.23"] {
        let (v, code) = advice(from, "0.5.23", &line);
        assert_eq!(code, 0, "{from}: {v}");
        assert_eq!(
            v["command"],
            serde_json::json!([
                "--model-path",
                "m",
                "--tp",
                "8",
                "--cuda-graph-max-bs-decode",
                "64",
                "--ep-size",
                "8",
                "--moe-a2a-backend",
                "deepep"
            ]),
            "{from}"
        );
        let kinds: Vec<&str> = v["edits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds.iter().filter(|k| **k == "replaced").count(),
            2,
            "{from}: {kinds:?}"
        );
        assert!(
            kinds.contains(&"renamed") && kinds.contains(&"removed"),
            "{from}: {kinds:?}"
        );
    }
}

#[test]
fn the_report_is_short_unless_all_is_asked_and_print_args_says_why_it_fails() {
    let line = ["--model-path", "m"];
    let mut text = upgrade("0.4.9", "0.5.23", &[], &line);
    text += &upgrade("0.4.9", "0.5.23", &["--all"], &line);
    text += &upgrade(
        "0.5.5",
        "0.5.23",
        &["--print-args"],
        &["--model-path", "m", "--bogus"],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn a_line_the_target_still_rejects_exits_1_and_says_why() {
    // A choice the target dropped, found from the data rather than assumed.
    let (v, _) = advice("0.5.5", "0.5.23", &["--model-path", "m"]);
    let removed = v["options"]["choices_removed"].as_array().unwrap();
    let c = removed.first().expect("0.5.23 dropped choices 0.5.5 had");
    let (opt, choice) = (
        c["option"].as_str().unwrap(),
        c["choices"][0].as_str().unwrap(),
    );
    let (v, code) = advice("0.5.5", "0.5.23", &["--model-path", "m", opt, choice]);
    assert_eq!(code, 1);
    let why = v["rejected_by_target"].as_str().unwrap();
    assert!(why.contains("invalid choice"), "{why}");
}

#[test]
fn environment_variables_the_target_renamed_are_flagged_when_set() {
    let out = sl()
        .args([
            "upgrade",
            "--json",
            "--sglang-version",
            "0.5.2",
            "--to",
            "0.5.5",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let Some(r) = v["env"]["renamed"].as_array().unwrap().first().cloned() else {
        panic!("0.5.2 → 0.5.5 renames environment variables")
    };
    let name = r["from"].as_str().unwrap();
    let out = sl()
        .env(name, "1")
        .args([
            "upgrade",
            "--json",
            "--sglang-version",
            "0.5.2",
            "--to",
            "0.5.5",
            "--",
            "--model-path",
            "m",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["env_you_set"][0]["name"], name);
    assert_eq!(v["env_you_set"][0]["now_read_as"], r["to"]);
}

#[test]
fn an_unknown_target_is_a_usage_error_naming_it() {
    insta::assert_snapshot!(common::transcript(
        sl().args(["upgrade", "--to", "0.5.99", "--sglang-version", "0.5.23"]),
        &[],
    ));
}
