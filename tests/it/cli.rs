//! The command line as users meet it: exit codes, outputs, exec, secrets, generated files.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::common;
use common::launcher as sl;

use predicates::prelude::*;
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn topo(name: &str) -> String {
    format!("{ROOT}/examples/topologies/{name}.json")
}

fn plan_json(args: &[&str]) -> Value {
    let out = sl()
        .args([
            "plan",
            "--json",
            "--topology",
            &topo("8x-h100-sxm-nvlink"),
            "--sglang-version",
            "0.5.23",
            "--",
        ])
        .args(args)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// `check --json` for Llama-3.1-8B on a fixture box (SGLang 0.5.23), plus extra SGLang args.
fn check_llama8b(topology: &str, extra: &[&str]) -> Value {
    let out = sl()
        .args([
            "check",
            "--json",
            "--topology",
            &topo(topology),
            "--sglang-version",
            "0.5.23",
            "--",
        ])
        .args([
            "--model-path",
            "tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct",
        ])
        .args(extra)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn codes(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn plan_json_has_exactly_the_contract_fields() {
    let mut cmd = sl();
    cmd.args(["plan", "--json", "--python", "/usr/bin/python3"])
        .args(["--topology", &topo("8x-h100-sxm-nvlink")])
        .args(["--sglang-version", "0.5.23", "--"])
        .args(["--model-path", "examples/models/Qwen3-32B", "--tp", "8"]);
    let v = plan_json(&["--model-path", "examples/models/Qwen3-32B", "--tp", "8"]);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "schema",
            "sglang_version",
            "sglang_version_source",
            "verdict",
            "program",
            "sglang_args",
            "sglang_parsed",
            "env",
            "findings",
            "gpus",
            "memory",
            "resolved"
        ]
    );
    // The rest, what the launcher believes SGLang will run (TP 8 as one NVLink group) included.
    insta::assert_snapshot!(common::transcript(&mut cmd, &[]));
}

/// `check` of `line` on the 8× H100 box (SGLang 0.5.23).
fn check_h100(line: &[&str]) -> assert_cmd::Command {
    let mut c = sl();
    c.args(["check", "--topology", &topo("8x-h100-sxm-nvlink")])
        .args(["--sglang-version", "0.5.23", "--"])
        .args(line);
    c
}

#[test]
fn check_exit_codes_follow_the_contract() {
    let mut t = String::new();
    // Launchable.
    t += &common::transcript(
        &mut check_h100(&["--model-path", "examples/models/Qwen3-32B", "--tp", "8"]),
        &[],
    );
    // SGLang's own parser would reject it: a finding, verdict error, exit 1.
    t += &common::transcript(&mut check_h100(&["--model-path", "m", "--pp", "2"]), &[]);
    // The launcher's own input error: exit 2, naming the file.
    t += &common::transcript(
        sl().args(["check", "--topology", "/nonexistent/box.json"])
            .args(["--sglang-version", "0.5.23", "--", "--model-path", "m"]),
        &[],
    );
    // An unknown launcher option before `--` is clap's error, exit 2, with a suggestion.
    t += &common::transcript(
        sl().args(["check", "--topolgy", "x.json", "--", "--model-path", "m"]),
        &[],
    );
    insta::assert_snapshot!(t);
}

#[test]
fn missing_driver_is_a_clear_input_error() {
    insta::assert_snapshot!(common::transcript(
        sl().args([
            "check",
            "--sglang-version",
            "0.5.23",
            "--",
            "--model-path",
            "m"
        ])
        .env("SGLANG_LAUNCH_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"),
        &[],
    ));
}

#[test]
fn launcher_options_come_from_env_too() {
    insta::assert_snapshot!(common::transcript(
        sl().args(["check", "--json", "--", "--model-path", "m", "--tp", "2"])
            .env("SGLANG_LAUNCH_PYTHON", "/usr/bin/python3")
            .env("SGLANG_LAUNCH_TOPOLOGY", topo("2x-rtx-4090-pcie"))
            .env("SGLANG_LAUNCH_SGLANG_VERSION", "0.5.5"),
        &[],
    ));
}

#[test]
fn print_args_round_trips_and_masks_secrets() {
    let run = |extra: &[&str]| {
        let mut c = sl();
        c.args(["plan", "--print-args", "--no-fix"])
            .args(["--python", "/usr/bin/python3"])
            .args(["--topology", &topo("1x-l4"), "--sglang-version", "0.5.23"])
            .args(extra)
            .args([
                "--",
                "--model-path",
                "/models/it's here",
                "--api-key",
                "hunter22",
            ])
            .args(["--served-model-name", "a b\"c"]);
        common::transcript_of(&mut c, &[])
    };
    let (masked, t) = run(&[]);
    let masked = String::from_utf8(masked.stdout).unwrap();
    assert!(!masked.contains("hunter22"), "{masked}");
    // The line is one the shell splits back into the words SGLang gets.
    let words = shell_words::split(masked.trim()).unwrap();
    assert_eq!(words[4], "/models/it's here");
    assert_eq!(words[8], "a b\"c");
    let (shown, t2) = run(&["--show-secrets"]);
    let shown = shell_words::split(String::from_utf8(shown.stdout).unwrap().trim()).unwrap();
    assert_eq!(shown[6], "hunter22");
    insta::assert_snapshot!(t + &t2);
}

#[test]
fn secrets_never_reach_any_report() {
    for mode in [
        &["check"][..],
        &["check", "--json"][..],
        &["plan"][..],
        &["plan", "--json"][..],
    ] {
        sl().args(mode)
            .args([
                "--topology",
                &topo("1x-l4"),
                "--sglang-version",
                "0.5.23",
                "--",
            ])
            .args([
                "--model-path",
                "m",
                "--api",
                "s3cr3t-key",
                "--admin-api-key=adm1n-key",
            ])
            .env("HF_TOKEN", "hf_abcdefgh")
            .assert()
            .stdout(predicate::str::contains("s3cr3t-key").not())
            .stdout(predicate::str::contains("adm1n-key").not())
            .stdout(predicate::str::contains("hf_abcdefgh").not());
    }
}

#[test]
fn no_fix_changes_nothing() {
    let args = [
        "--model-path",
        "m",
        "--tp",
        "8",
        "--cuda-graph-max-bs",
        "64",
    ];
    let (out, t) = common::transcript_of(
        sl().args(["plan", "--json", "--no-fix", "--python", "/usr/bin/python3"])
            .args(["--topology", &topo("8x-rtx-pro-6000-pcie")])
            .args(["--sglang-version", "0.5.23", "--"])
            .args(args)
            .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"),
        &[],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sglang_args"], serde_json::json!(args));
    assert_eq!(v["env"], serde_json::json!({"set": {}, "unset": []}));
    // An unfixed error (argparse's ambiguity) blocks.
    insta::assert_snapshot!(t);
}

/// `check --json` of `line` on one of a job's 8-GPU nodes under the scheduler's `env`.
fn check_under(env: &[(&str, &str)], launcher: &[&str], line: &[&str]) -> assert_cmd::Command {
    let mut c = sl();
    c.args([
        "check",
        "--json",
        "--python",
        "/usr/bin/python3",
        "--topology",
    ])
    .arg(format!(
        "{ROOT}/tests/fixtures/topologies/8x-h100-sxm-nvlink.json"
    ))
    .args(["--sglang-version", "0.5.23"])
    .args(launcher)
    .arg("--")
    .args(line)
    .envs(env.iter().copied());
    c
}

/// The second node of a two-node Slurm job, for a TP 16 line: the multi-node options are added
/// (PAR009) and the GPU count is the job's; with --no-fix, the same findings, nothing added,
/// and the one-node line's GPU count stands (TOP001).
#[test]
fn a_slurm_job_supplies_the_multinode_options() {
    let env = [
        ("SLURM_STEP_ID", "0"),
        ("SLURM_NNODES", "2"),
        ("SLURM_NODEID", "1"),
        ("SLURM_JOB_NODELIST", "gpu[07-08]"),
    ];
    let line = ["--model-path", "examples/models/Qwen3-32B", "--tp", "16"];
    let mut t = common::transcript(&mut check_under(&env, &[], &line), &[]);
    t += &common::transcript(&mut check_under(&env, &["--no-fix"], &line), &[]);
    insta::assert_snapshot!(t);
}

#[test]
fn nodes_from_the_scheduler_must_divide_the_gpus() {
    let env = [
        ("SLURM_STEP_ID", "0"),
        ("SLURM_NNODES", "3"),
        ("SLURM_NODEID", "2"),
        ("SLURM_JOB_NODELIST", "gpu[07-09]"),
    ];
    insta::assert_snapshot!(common::transcript(
        &mut check_under(&env, &[], &["--model-path", "m", "--tp", "16"]),
        &[],
    ));
}

#[test]
fn multinode_options_are_derived_only_where_the_job_needs_them_and_they_can_work() {
    let step = [
        ("SLURM_STEP_ID", "0"),
        ("SLURM_STEP_NUM_NODES", "2"),
        ("SLURM_STEP_NUM_TASKS", "2"),
        ("SLURM_NODEID", "1"),
        ("SLURM_STEP_NODELIST", "gpu[07-08]"),
    ];
    let mut t = String::new();
    let mut run = |env: &[(&str, &str)], tp: &str| {
        let line = ["--model-path", "m", "--tp", tp];
        t += &common::transcript(&mut check_under(env, &[], &line), &[]);
    };
    // TP 8 on 8-GPU nodes: a server per node, the line unchanged (PAR012).
    run(&step, "8");
    // The batch shell (no srun step) and eight tasks per node: nothing derived, what to run
    // said (PAR010).
    run(&step[1..], "16");
    run(
        &[&step[..], &[("SLURM_STEP_NUM_TASKS", "16")]].concat(),
        "16",
    );
    // MASTER_ADDR and MASTER_PORT name the rendezvous.
    let master = [("MASTER_ADDR", "10.1.2.3"), ("MASTER_PORT", "29500")];
    run(&[&step[..], &master].concat(), "16");
    // A variable the derivation needs that cannot be read: exit 2, named, nothing half-derived.
    let lws = [
        ("LWS_GROUP_SIZE", "2"),
        ("LWS_WORKER_INDEX", "abc"),
        ("LWS_LEADER_ADDRESS", "llm-0.llm"),
    ];
    run(&lws, "16");
    run(
        &[&step[..4], &[("SLURM_STEP_NODELIST", "gpu[07-")]].concat(),
        "16",
    );
    insta::assert_snapshot!(t);
}

/// A fake interpreter in a venv layout with SGLang "installed": it records its PID and argv.
fn fake_venv(dir: &Path) -> PathBuf {
    let r = dir.join("record");
    let script = format!(
        "#!/bin/sh\necho $$ > '{r}.pid'\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > '{r}.argv'\nprintf '%s' \"$SGLANG_CUSTOM_ALLREDUCE_ALGO\" > '{r}.env'\n",
        r = r.display()
    );
    common::venv_with(dir, &script, 0o755)
}

#[test]
fn run_execs_sglang_in_the_same_process_with_byte_exact_args() {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_venv(dir.path());
    let weird = OsString::from_vec(b"served-\xff\xfe-name".to_vec());
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sglang-launch"));
    cmd.current_dir(ROOT)
        .env("NO_COLOR", "1")
        .env("XDG_STATE_HOME", dir.path())
        .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
        .args(["run", "--python"])
        .arg(&py)
        .args(["--topology", &topo("8x-rtx-pro-6000-pcie"), "--"])
        .args([
            "--model-path",
            "examples/models/Qwen3-32B",
            "--tp",
            "8",
            "--served-model-name",
        ])
        .arg(&weird)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let rec = |ext: &str| std::fs::read(dir.path().join(format!("record.{ext}"))).unwrap();
    assert_eq!(
        String::from_utf8(rec("pid")).unwrap().trim(),
        pid.to_string(),
        "exec keeps the PID"
    );
    let raw = rec("argv");
    let argv: Vec<&[u8]> = raw.split(|b| *b == 0).filter(|s| !s.is_empty()).collect();
    assert_eq!(argv[0], b"-m".as_slice());
    assert_eq!(argv[1], b"sglang.launch_server".as_slice());
    assert!(
        argv.contains(&weird.as_bytes()),
        "non-UTF-8 argument reaches SGLang unchanged"
    );
    assert!(
        argv.contains(&&b"--tp"[..]),
        "the user's own spelling is kept"
    );
    // The seed story's ineffective variable was unset by a reported fix.
    assert_eq!(rec("env"), b"");
}

#[test]
fn run_without_interpreter_or_sglang_exits_127_and_launches_nothing() {
    let mut t = common::transcript(
        sl().args(["run", "--python", "/nonexistent/python3"])
            .args(["--topology", &topo("1x-l4"), "--", "--model-path", "m"]),
        &[],
    );
    let dir = tempfile::tempdir().unwrap();
    let py = fake_venv(dir.path());
    std::fs::remove_dir_all(dir.path().join("venv/lib")).unwrap();
    t += &common::transcript(
        sl().args(["run", "--python"])
            .arg(&py)
            .args(["--topology", &topo("1x-l4"), "--sglang-version", "0.5.23"])
            .args(["--", "--model-path", "m"]),
        &[(dir.path(), "[T]")],
    );
    assert!(!dir.path().join("record.pid").exists());
    insta::assert_snapshot!(t);
}

#[test]
fn drop_in_form_takes_sglang_arguments_directly() {
    // No launcher options on the command line: they come from the environment. An
    // interpreter with SGLang, so that the line itself is what stops the launch.
    let dir = tempfile::tempdir().unwrap();
    let py = fake_venv(dir.path());
    insta::assert_snapshot!(common::transcript(
        sl().args(["--model-path", "m", "--tp", "2", "--bogus-flag"])
            .env("SGLANG_LAUNCH_TOPOLOGY", topo("2x-rtx-4090-pcie"))
            .env("SGLANG_LAUNCH_SGLANG_VERSION", "0.5.23")
            .env("SGLANG_LAUNCH_PYTHON", &py),
        &[(dir.path(), "[T]")],
    ));
    assert!(!dir.path().join("record.pid").exists());
}

#[test]
fn generated_completions_and_man_page_are_fresh() {
    for (shell, file) in [
        ("bash", "completions/sglang-launch.bash"),
        ("zsh", "completions/_sglang-launch"),
        ("fish", "completions/sglang-launch.fish"),
    ] {
        let out = sl().args(["completions", shell]).output().unwrap();
        let want = std::fs::read(Path::new(ROOT).join(file)).unwrap();
        assert!(
            out.stdout == want,
            "{file} is stale: run scripts/gen-completions.sh"
        );
    }
    let out = sl().arg("man").output().unwrap();
    let want = std::fs::read(Path::new(ROOT).join("man/sglang-launch.1")).unwrap();
    assert!(
        out.stdout == want,
        "man/sglang-launch.1 is stale: run scripts/gen-completions.sh"
    );
}

#[test]
fn rules_and_explain() {
    let out = sl().args(["rules", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.as_array().unwrap().len() >= 60);
    let mut t = String::new();
    for args in [
        &["explain", "no-such-rule"][..],
        &["explain", "AR006"],
        &["explain", "renamed-flag"],
    ] {
        t += &common::transcript(sl().args(args), &[]);
    }
    insta::assert_snapshot!(t);
}

#[test]
fn detect_reads_nvml_or_says_what_is_missing() {
    insta::assert_snapshot!(common::transcript(
        sl().args(["detect", "--json"])
            .env("SGLANG_LAUNCH_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"),
        &[],
    ));
}

#[test]
fn a_kv_cache_smaller_than_one_request_is_a_warning() {
    let codes = |extra: &[&str]| codes(&check_llama8b("1x-l4", extra));
    assert!(codes(&[]).contains(&"MEM007".to_owned()));
    assert!(!codes(&["--context-length", "512"]).contains(&"MEM007".to_owned()));
}

/// The FP8 KV cache MEM007 suggests is one the model takes: DeepSeek's sparse-attention indexer
/// (GLM-5 here) refuses fp8_e5m2.
#[test]
fn a_short_kv_cache_suggests_the_fp8_cache_the_model_takes() {
    let out = sl()
        .current_dir(ROOT)
        .args([
            "check",
            "--json",
            "--sglang-version",
            "0.5.12",
            "--topology",
        ])
        .arg("examples/topologies/8x-h200-nvlink.json")
        .args([
            "--",
            "--model-path",
            "tests/fixtures/models/zai-org__GLM-5-FP8",
            "--tp",
            "8",
            "--mem-fraction-static",
            "0.75",
        ])
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mem007 = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "MEM007")
        .unwrap_or_else(|| panic!("{:#}", v["findings"]));
    let text = mem007["message"].as_str().unwrap();
    assert!(text.contains("--kv-cache-dtype fp8_e4m3"), "{text}");
    assert!(!text.contains("fp8_e5m2"), "{text}");
}

/// The warning, and the catalogue as `rules` prints it.
#[test]
fn a_mistyped_launcher_variable_is_named_with_a_suggestion() {
    insta::assert_snapshot!(common::transcript(
        sl().args(["rules"])
            .env("SGLANG_LAUNCH_TOPOLGY", "box.json"),
        &[],
    ));
}

#[test]
fn boolean_launcher_variables_read_like_systemd_writes_them() {
    for (value, fixed) in [
        ("1", false),
        ("yes", false),
        ("0", true),
        ("off", true),
        ("", true),
    ] {
        let out = sl()
            .args([
                "plan",
                "--json",
                "--topology",
                &topo("8x-rtx-pro-6000-pcie"),
                "--sglang-version",
                "0.5.23",
                "--",
            ])
            .args(["--model-path", "m", "--tp", "8", "--enable-torch-symm-mem"])
            .env("SGLANG_LAUNCH_NO_FIX", value)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let any_fixed = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["fixed"] == true);
        assert_eq!(any_fixed, fixed, "SGLANG_LAUNCH_NO_FIX={value:?}");
    }
}

#[test]
fn impossible_fractions_and_sizes_are_errors_not_nonsense() {
    let run = |extra: &[&str]| check_llama8b("8x-h100-sxm-nvlink", extra);
    for bad in ["nan", "inf", "1.5", "1e308", "0", "-0.2"] {
        let v = run(&["--mem-fraction-static", bad]);
        assert_eq!(v["verdict"], "error", "{bad}");
        assert!(v["memory"].is_null(), "{bad}");
        assert!(
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["code"] == "MEM008"),
            "{bad}"
        );
        // The user's value is never replaced.
        let args: Vec<&str> = v["sglang_args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(
            args.iter()
                .filter(|a| **a == "--mem-fraction-static")
                .count(),
            1,
            "{bad}"
        );
    }
    let v = run(&["--tp", "99999999999999999999999"]);
    assert_eq!(v["verdict"], "error");
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "TOP001")
    );
}

#[test]
fn empty_or_malformed_launcher_variables_are_handled_by_name() {
    let mut t = common::transcript(
        sl().args([
            "check",
            "--topology",
            &topo("1x-l4"),
            "--sglang-version",
            "0.5.23",
        ])
        .args(["--allow", "AR001,", "--", "--model-path", "m"])
        .env("SGLANG_LAUNCH_ALLOW", "")
        .env("SGLANG_LAUNCH_PYTHON", ""),
        &[],
    );
    t += &common::transcript(
        sl().args([
            "check",
            "--topology",
            &topo("1x-l4"),
            "--",
            "--model-path",
            "m",
        ])
        .env("SGLANG_LAUNCH_STRICT", "garbage"),
        &[],
    );
    insta::assert_snapshot!(t);
}

#[test]
fn sglang_help_passes_through_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_venv(dir.path());
    insta::assert_snapshot!(common::transcript(
        sl().args(["run", "--dry-run", "--python"])
            .arg(&py)
            .args(["--topology", &topo("1x-l4")])
            .args(["--sglang-version", "0.5.23", "--", "--help"]),
        &[(dir.path(), "[T]")],
    ));
}

/// A line copied from an `sglang serve` script keeps serve's own `--model-type llm`: the
/// launcher starts the LLM server itself, so the option is left out and reported (FLAG008);
/// with `--no-fix` the server's parser stops on it, as SGLang would.
#[test]
fn serve_s_server_choice_is_left_out_of_a_launch_server_line() {
    let run = |extra: &[&str]| {
        sl().args(extra)
            .args(["--topology", &topo("1x-l4"), "--sglang-version", "0.5.20"])
            .args([
                "--",
                "--model-type",
                "llm",
                "--model-path",
                "m",
                "--tp",
                "1",
            ])
            .output()
            .unwrap()
    };
    let fixed = run(&["plan", "--print-args"]);
    assert!(fixed.status.success(), "{fixed:?}");
    let line = String::from_utf8(fixed.stdout).unwrap();
    assert!(
        line.trim_end()
            .ends_with("-m sglang.launch_server --model-path m --tp 1"),
        "{line}"
    );
    blocked_as_written(&run(&["check", "--no-fix"]), "FLAG008");
}

/// `check --no-fix` kept the line as written: SGLang's parser refuses it (ARG001) and `code`
/// says why.
fn blocked_as_written(out: &std::process::Output, code: &str) {
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("ARG001") && report.contains(code),
        "{report}"
    );
}

/// `sglang serve MODEL …` copied as the launcher's arguments: the bare first value becomes
/// `--model-path` (FLAG009), and the model it names is read and planned like any other.
#[test]
fn serve_s_bare_model_path_is_named_on_a_launch_server_line() {
    let model = format!("{ROOT}/tests/fixtures/models/Qwen__Qwen3-8B");
    let run = |extra: &[&str]| {
        sl().args(extra)
            .args(["--topology", &topo("1x-l4"), "--sglang-version", "0.5.20"])
            .args(["--", &model, "--tp", "1"])
            .output()
            .unwrap()
    };
    let fixed = run(&["plan", "--print-args"]);
    assert!(fixed.status.success(), "{fixed:?}");
    let line = String::from_utf8(fixed.stdout).unwrap();
    assert!(
        line.contains(&format!(
            "-m sglang.launch_server --model-path {model} --tp 1"
        )),
        "{line}"
    );
    let plan: serde_json::Value = serde_json::from_slice(&run(&["plan", "--json"]).stdout).unwrap();
    assert!(
        plan["memory"]["weights_per_gpu_gib"].as_f64().unwrap() > 10.0,
        "{plan}"
    );
    blocked_as_written(&run(&["check", "--no-fix"]), "FLAG009");
}
