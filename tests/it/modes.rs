//! Launching as scripts, units and containers meet it: the modes, pass-through for servers that
//! are not for an NVIDIA GPU, exit 78 for a refused launch, the logged exec line, where the
//! plan's JSON goes, and launcher options written among SGLang's arguments.

use std::path::Path;

use crate::common;
use common::launcher as sl;
use common::{fake_venv, recorded, transcript};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn topo(name: &str) -> String {
    format!("{ROOT}/examples/topologies/{name}.json")
}

/// Qwen3-32B TP 8 on 8× RTX PRO 6000 over PCIe with FlashInfer all-reduce fusion: the launcher
/// removes the fusion flag (ARCH001) and unsets an ineffective variable.
const SEED: [&str; 5] = [
    "--model-path",
    "examples/models/Qwen3-32B",
    "--tp",
    "8",
    "--enable-flashinfer-allreduce-fusion",
];

fn seed_run(py: &Path) -> assert_cmd::Command {
    let mut c = sl();
    c.env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
        .env("SGLANG_LAUNCH_TOPOLOGY", topo("8x-rtx-pro-6000-pcie"))
        .env("SGLANG_LAUNCH_PYTHON", py);
    c
}

#[test]
fn a_refused_launch_exits_78_and_check_keeps_1() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let bad = ["--model-path", "examples/models/Qwen3-32B", "--bogus-flag"];
    let tp16 = ["--model-path", "examples/models/Qwen3-32B", "--tp", "16"];
    let paths = [(t.path(), "[T]")];
    let mut text = transcript(seed_run(&py).args(bad), &paths);
    text += &transcript(seed_run(&py).args(["run", "--"]).args(tp16), &paths);
    text += &transcript(seed_run(&py).args(["check", "--"]).args(bad), &paths);
    assert!(recorded(t.path()).is_none(), "nothing was launched");
    insta::assert_snapshot!(text);
}

#[test]
fn warn_mode_reports_fixes_and_launches_anyway() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let mut text = transcript(
        seed_run(&py)
            .env("SGLANG_LAUNCH_MODE", "warn")
            .args(SEED)
            .arg("--bogus-flag"),
        &[(t.path(), "[T]")],
    );
    let (argv, _) = recorded(t.path()).unwrap();
    assert!(argv.contains(&"--bogus-flag".to_owned()), "{argv:?}");
    // A line that does not parse gets no fixes: it runs as given.
    assert!(argv.contains(&"--enable-flashinfer-allreduce-fusion".to_owned()));

    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    text += &transcript(
        seed_run(&py)
            .args(["run", "--mode", "warn", "--"])
            .args(SEED),
        &[(t.path(), "[T]")],
    );
    let (argv, env) = recorded(t.path()).unwrap();
    assert!(!argv.contains(&"--enable-flashinfer-allreduce-fusion".to_owned()));
    assert!(
        !env.iter()
            .any(|l| l.starts_with("SGLANG_CUSTOM_ALLREDUCE_ALGO="))
    );
    insta::assert_snapshot!(text);
}

#[test]
fn off_mode_execs_the_command_untouched_in_the_same_process() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sglang-launch"));
    cmd.current_dir(ROOT)
        .env("XDG_STATE_HOME", t.path())
        .env("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
        .env("SGLANG_LAUNCH_MODE", "off")
        .env("SGLANG_LAUNCH_PYTHON", &py)
        // Nothing is read: no driver and no topology file is no error.
        .env("SGLANG_LAUNCH_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .env_remove("SGLANG_LAUNCH_TOPOLOGY")
        .args(SEED)
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("ARCH001"), "no report: {stderr}");
    assert!(stderr.contains("mode off"), "{stderr}");
    let pid_file = std::fs::read_to_string(t.path().join("record.pid")).unwrap();
    assert_eq!(pid_file.trim(), pid.to_string(), "exec keeps the PID");
    let (argv, env) = recorded(t.path()).unwrap();
    assert_eq!(argv[..2], ["-m", "sglang.launch_server"]);
    assert_eq!(argv[2..], SEED);
    assert!(env.contains(&"SGLANG_CUSTOM_ALLREDUCE_ALGO=1stage".to_owned()));
}

#[test]
fn the_exec_line_shows_the_command_and_env_changes_with_secrets_masked() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let (out, text) = common::transcript_of(
        seed_run(&py)
            .env("HF_TOKEN", "hf_sekrit_value")
            .args(SEED)
            .args(["--api-key", "hunter22"]),
        &[(t.path(), "[T]")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("hunter22") && !stderr.contains("hf_sekrit"),
        "{stderr}"
    );
    // The exec line: the command with the fusion flag removed and the key masked, and the
    // variable unset.
    insta::assert_snapshot!(text.replace("hf_sekrit_value", "[HF_TOKEN]"));
    // SGLang gets the real values.
    let (argv, env) = recorded(t.path()).unwrap();
    assert!(argv.contains(&"hunter22".to_owned()));
    assert!(env.contains(&"HF_TOKEN=hf_sekrit_value".to_owned()));
}

/// A host without the NVIDIA driver, whose device nodes live under `root`.
fn no_driver(py: &Path, root: &Path) -> assert_cmd::Command {
    let mut c = sl();
    c.env("SGLANG_LAUNCH_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .env("SGLANG_LAUNCH_DEVICE_ROOT", root)
        .env("SGLANG_LAUNCH_PYTHON", py);
    c
}

#[test]
fn servers_not_for_an_nvidia_gpu_pass_through_unchanged() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let line = ["--model-path", "m", "--device", "npu", "--tp", "3"];
    let mut text = transcript(no_driver(&py, t.path()).args(line), &[(t.path(), "[T]")]);
    assert_eq!(recorded(t.path()).unwrap().0[2..], line);

    // No driver, but an AMD GPU: SGLang's auto-detection is left to do its job.
    let t = tempfile::tempdir().unwrap();
    let paths = [(t.path(), "[T]")];
    let py = fake_venv(t.path());
    std::fs::create_dir_all(t.path().join("dev")).unwrap();
    std::fs::write(t.path().join("dev/kfd"), "").unwrap();
    text += &transcript(no_driver(&py, t.path()).args(["--model-path", "m"]), &paths);
    assert!(recorded(t.path()).is_some());
    for sub in ["check", "plan"] {
        let mut cmd = no_driver(&py, t.path());
        text += &transcript(cmd.args([sub, "--", "--model-path", "m"]), &paths);
    }
    insta::assert_snapshot!(text);
}

/// Qwen2.5-7B's 28 heads do not split over TP 8 on any accelerator SGLang shards a model over,
/// so `check` blocks the line there; SGLang's CPU engine pads the heads instead and runs it.
#[test]
fn a_pass_through_model_that_cannot_be_sharded_is_still_an_error_except_on_the_cpu() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let model = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/models/Qwen__Qwen2.5-7B-Instruct"
    );
    let check = |device: &str| {
        let out = no_driver(&py, t.path())
            .args(["check", "--json", "--", "--model-path", model])
            .args(["--tp", "8", "--device", device])
            .output()
            .unwrap();
        let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
        let codes: Vec<String> = plan["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .map(|f| f["code"].as_str().unwrap().to_owned())
            .collect();
        (out.status.code(), plan["verdict"].clone(), codes)
    };
    for device in ["npu", "xpu"] {
        assert_eq!(
            check(device),
            (Some(1), "error".into(), vec!["PAR001".to_owned()]),
            "{device}"
        );
    }
    assert_eq!(check("cpu"), (Some(0), "pass-through".into(), vec![]));
}

#[test]
fn cuda_without_a_driver_is_an_error_unless_warned() {
    let t = tempfile::tempdir().unwrap();
    let paths = [(t.path(), "[T]")];
    let py = fake_venv(t.path());
    // The drop-in's own code for it (75), which a service manager retries: at boot the
    // driver may not be loaded yet.
    let mut text = transcript(no_driver(&py, t.path()).args(["--model-path", "m"]), &paths);
    // The likely cause named: the topology file went to SGLang.
    text += &transcript(
        no_driver(&py, t.path()).args([
            "check",
            "--",
            "--model-path",
            "m",
            "--topology",
            "box.json",
        ]),
        &paths,
    );
    std::fs::create_dir_all(t.path().join("dev")).unwrap();
    std::fs::write(t.path().join("dev/kfd"), "").unwrap();
    // Asked for CUDA: another accelerator does not change that.
    let cuda = ["--model-path", "m", "--device", "cuda"];
    text += &transcript(no_driver(&py, t.path()).args(cuda), &paths);
    assert!(recorded(t.path()).is_none());
    text += &transcript(
        no_driver(&py, t.path())
            .env("SGLANG_LAUNCH_MODE", "warn")
            .args(cuda),
        &paths,
    );
    assert!(recorded(t.path()).is_some());
    insta::assert_snapshot!(text);
}

#[test]
fn run_keeps_stdout_for_sglang_and_json_goes_to_stderr_or_a_file() {
    let t = tempfile::tempdir().unwrap();
    let paths = [(t.path(), "[T]")];
    let py = fake_venv(t.path());
    let file = t.path().join("plan.json");
    let (out, mut text) = common::transcript_of(
        seed_run(&py)
            .args(["run", "--json", "--json-file"])
            .arg(&file)
            .arg("--")
            .args(SEED),
        &paths,
    );
    assert!(out.stdout.is_empty(), "stdout is SGLang's");
    let v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(v["verdict"], "ok");
    // check writes the file and keeps its human report on stdout.
    let file = t.path().join("check.json");
    text += &transcript(
        seed_run(&py)
            .args(["check", "--json-file"])
            .arg(&file)
            .arg("--")
            .args(SEED),
        &paths,
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "ARCH001")
    );
    insta::assert_snapshot!(text);
}

/// A pipe with a reader (`--json-file >(jq .)`) gets the plan; one without fails at once
/// (bad_inputs has that row).
#[test]
fn json_file_may_be_a_pipe_someone_reads() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let fifo = t.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits(0o600).unwrap()).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    // Opening for reading waits for the writer; the launcher opens it once the reader is there.
    std::thread::sleep(std::time::Duration::from_millis(100));
    seed_run(&py)
        .args(["check", "--json-file"])
        .arg(&fifo)
        .arg("--")
        .args(SEED)
        .timeout(std::time::Duration::from_secs(10))
        .assert()
        .code(0);
    let v: Value = serde_json::from_slice(&reader.join().unwrap()).unwrap();
    assert!(v["verdict"].is_string());
}

#[test]
fn print_args_says_when_secrets_are_masked() {
    let plan = |extra: &[&str]| {
        let mut c = sl();
        c.args(["plan", "--print-args", "--topology", &topo("1x-l4")])
            .args(["--sglang-version", "0.5.23", "--python", "/usr/bin/python3"])
            .args(extra);
        common::transcript_of(&mut c, &[])
    };
    let (masked, mut text) = plan(&["--", "--model-path", "m", "--api-key", "hunter22"]);
    assert!(!String::from_utf8_lossy(&masked.stdout).contains("hunter22"));
    text += &plan(&[
        "--show-secrets",
        "--",
        "--model-path",
        "m",
        "--api-key",
        "hunter22",
    ])
    .1;
    text += &plan(&["--", "--model-path", "m"]).1;
    insta::assert_snapshot!(text);
}

#[test]
fn launcher_options_in_the_drop_in_form_are_the_launchers() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let mut text = transcript(
        sl().args(["--model-path", "examples/models/Qwen3-32B", "--topology"])
            .arg(topo("8x-rtx-pro-6000-pcie"))
            .args(["--sglang-version", "0.5.2", "--python"])
            .arg(&py)
            // `--mode` is an ambiguous prefix to SGLang (`--model-path`, `--model-impl`, …).
            .args(["--mode", "warn", "--tp", "8", "--dry-run"]),
        &[(t.path(), "[T]")],
    );
    assert!(recorded(t.path()).is_none(), "--dry-run was the launcher's");
    // `--json` abbreviates SGLang's --json-model-override-args: it stays SGLang's.
    text += &transcript(
        sl().env("SGLANG_LAUNCH_TOPOLOGY", topo("1x-l4"))
            .args(["--sglang-version", "0.5.23", "--python", "/usr/bin/python3"])
            .args(["--model-path", "m", "--json", "{}", "--dry-run"]),
        &[],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn a_mistyped_launcher_option_gets_did_you_mean_not_sglang() {
    let mut text = String::new();
    for line in [
        &["run", "--sglang-verion", "0.5.23", "--model-path", "m"][..],
        &["check", "--profle", "x", "--model-path", "m"],
        &["--model-path", "m", "--topolgy", "x.json"],
    ] {
        text += &transcript(
            sl().env("SGLANG_LAUNCH_TOPOLOGY", topo("1x-l4"))
                .env("SGLANG_LAUNCH_SGLANG_VERSION", "0.5.23")
                .args(line),
            &[],
        );
    }
    let check = || {
        let mut c = sl();
        c.args([
            "check",
            "--topology",
            &topo("1x-l4"),
            "--sglang-version",
            "0.5.23",
        ]);
        c
    };
    // One edit from the launcher's --mode, but SGLang's own alias of --model-path: SGLang's.
    text += &transcript(check().args(["--model", "m"]), &[]);
    // After `--` the user said it is SGLang's: SGLang's own parser judges it (ARG001).
    text += &transcript(
        check().args(["--", "--model-path", "m", "--profle", "x"]),
        &[],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn the_mode_comes_from_every_settings_layer() {
    let t = tempfile::tempdir().unwrap();
    let paths = [(t.path(), "[T]")];
    let config = t.path().join("config.toml");
    std::fs::write(&config, "mode = \"off\"\n").unwrap();
    let show = || {
        let mut c = sl();
        c.args(["config", "show", "--python", "/usr/bin/python3"]);
        c
    };
    let mut text = transcript(show().env("SGLANG_LAUNCH_SYSTEM_CONFIG", &config), &paths);
    text += &transcript(
        show()
            .env("SGLANG_LAUNCH_SYSTEM_CONFIG", &config)
            .env("SGLANG_LAUNCH_MODE", "warn")
            .arg("--json"),
        &paths,
    );
    let profiles = t.path().join("profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(profiles.join("lax.toml"), "[launcher]\nmode = \"warn\"\n").unwrap();
    std::fs::write(profiles.join("bad.toml"), "[launcher]\nmode = \"loud\"\n").unwrap();
    for profile in ["lax", "bad"] {
        let mut cmd = show();
        cmd.args(["--profile", profile, "--profiles-dir"])
            .arg(&profiles);
        text += &transcript(&mut cmd, &paths);
    }
    text += &transcript(show().env("SGLANG_LAUNCH_MODE", "loud"), &paths);
    insta::assert_snapshot!(text);
}

/// Called through a symlink to the launcher in SGLang's venv (`~/bin/sglang-launch`), it still
/// runs that venv's interpreter; a link into a venv without SGLang (`uv tool`) does not count.
#[test]
fn a_symlink_to_the_launcher_in_a_venv_runs_that_venvs_python() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let installed = py.with_file_name("sglang-launch");
    std::fs::copy(assert_cmd::cargo::cargo_bin("sglang-launch"), &installed).unwrap();
    let home_bin = t.path().join("bin");
    std::fs::create_dir(&home_bin).unwrap();
    let link = home_bin.join("sglang-launch");
    std::os::unix::fs::symlink(&installed, &link).unwrap();
    let line = |launcher: &Path| {
        common::launcher_at(launcher)
            .env("PATH", "/usr/bin:/bin")
            .args([
                "plan",
                "--print-args",
                "--topology",
                &topo("8x-rtx-pro-6000-pcie"),
            ])
            .args(["--", "--model-path", "m"])
            .output()
            .unwrap()
    };
    let out = line(&link);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.starts_with(&format!("{} -m sglang.launch_server", py.display())),
        "{out:?}"
    );
    // The same venv without SGLang: PATH's python3, as for `uv tool`'s link.
    std::fs::remove_dir_all(t.path().join("venv/lib")).unwrap();
    let printed = String::from_utf8_lossy(&line(&link).stdout).into_owned();
    assert!(!printed.contains("venv/bin/python3"), "{printed}");
}

/// Installed with pip into SGLang's venv, the launcher runs SGLang with that venv's interpreter
/// even when the venv is not activated (a unit's `ExecStart=/venv/bin/sglang-launch`).
#[test]
fn a_launcher_installed_in_a_venv_runs_that_venvs_python() {
    let t = tempfile::tempdir().unwrap();
    let py = fake_venv(t.path());
    let installed = py.with_file_name("sglang-launch");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("sglang-launch"), &installed).unwrap();
    let out = common::launcher_at(&installed)
        .env("SGLANG_LAUNCH_TOPOLOGY", topo("8x-rtx-pro-6000-pcie"))
        .env("PATH", "/usr/bin:/bin")
        .args(["--model-path", "examples/models/Qwen3-32B", "--tp", "8"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let (argv, _) = recorded(t.path()).expect("the venv's python3 ran");
    assert_eq!(argv[..2], ["-m", "sglang.launch_server"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("SGLang 0.5.23"),
        "the venv's SGLang release was read"
    );
}

/// `sglang-version` in a config file: `check`, `upgrade` and `flags show` all use it, and the
/// report names the file, not an option the user never typed.
#[test]
fn every_command_reads_the_same_settings_and_names_their_source() {
    let t = tempfile::tempdir().unwrap();
    let paths = [(t.path(), "[T]")];
    let file = t.path().join("sglang-launch.toml");
    std::fs::write(&file, "sglang-version = \"0.5.5\"\n").unwrap();
    let with_file = || {
        let mut c = sl();
        c.env("SGLANG_LAUNCH_SYSTEM_CONFIG", &file);
        c
    };
    let mut text = transcript(
        with_file()
            .args(["check", "--topology", &topo("8x-rtx-pro-6000-pcie"), "--"])
            .args(["--model-path", "m"]),
        &paths,
    );
    let to = ["upgrade", "--to", "0.5.23"];
    text += &transcript(
        with_file().args(to).args(["--", "--model-path", "m"]),
        &paths,
    );
    text += &transcript(with_file().args(["flags", "show"]), &paths);
    // The command line still wins.
    text += &transcript(
        with_file().args(to).args(["--sglang-version", "0.5.2"]),
        &paths,
    );
    insta::assert_snapshot!(text);
}

/// `config show` names the interpreter that will run SGLang and hides the test-only settings
/// unless something sets them.
#[test]
fn config_show_names_the_interpreter_and_hides_test_settings() {
    let show = || {
        let mut c = sl();
        c.args(["config", "show", "--python", "/usr/bin/python3"]);
        c
    };
    let mut text = transcript(show().env_remove("SGLANG_LAUNCH_DEVICE_ROOT"), &[]);
    text += &transcript(&mut show(), &[]);
    insta::assert_snapshot!(text);
}
