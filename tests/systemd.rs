//! `systemd-unit`: the units it prints, checked line by line and by systemd's own
//! `systemd-analyze verify` (which also checks that ExecStart's binary exists).

use std::path::Path;
use std::process::{Command, Output};

use sglang_launch::exit;

const BIN: &str = env!("CARGO_BIN_EXE_sglang-launch");

fn unit(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("systemd-unit")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `Key=value` lines of the unit, in order.
fn lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with('#')).collect()
}

fn has(text: &str, line: &str) {
    assert!(lines(text).contains(&line), "no line {line:?} in:\n{text}");
}

/// Runs `systemd-analyze verify` on the unit saved as `file_name` (and on `instance`, for a
/// template); `None` when the tool is not installed.
fn verify(text: &str, file_name: &str, instance: Option<&str>, user: bool) -> Option<Output> {
    if which::which("systemd-analyze").is_err() {
        eprintln!(
            "note: systemd-analyze not installed; unit not verified (apt-get install systemd)"
        );
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(file_name), text).unwrap();
    let runtime = dir.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let mut cmd = Command::new("systemd-analyze");
    if user {
        // The user manager needs a runtime directory, even for an offline check.
        cmd.arg("--user").env("XDG_RUNTIME_DIR", &runtime);
    }
    let target = dir.path().join(instance.unwrap_or(file_name));
    Some(cmd.arg("verify").arg(&target).output().unwrap())
}

/// systemd reports a bad setting on stderr and still exits 0: both must be clean.
fn assert_verifies(text: &str, file_name: &str, instance: Option<&str>, user: bool) {
    if let Some(out) = verify(text, file_name, instance, user) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.trim().is_empty(),
            "systemd-analyze verify {file_name}: {stderr}\n{text}"
        );
    }
}

fn restart_prevent() -> String {
    format!(
        "RestartPreventExitStatus={} {} {}",
        exit::CONFIG,
        exit::USAGE,
        exit::NOT_FOUND
    )
}

#[test]
fn system_unit_runs_the_profile_and_waits_for_health() {
    let text = unit(&["--profile", "qwen3-32b"]);
    let exe = Path::new(BIN).canonicalize().unwrap();
    let exe = exe.to_str().unwrap();
    has(
        &text,
        "After=network-online.target nvidia-persistenced.service",
    );
    has(&text, "Wants=network-online.target");
    has(&text, "Type=exec");
    has(&text, &format!("ExecStart={exe} run --profile qwen3-32b"));
    has(
        &text,
        &format!("ExecStartPost={exe} wait-ready --port 30000 --timeout 1800 --pid ${{MAINPID}}"),
    );
    has(&text, "TimeoutStartSec=1860");
    has(&text, "Restart=on-failure");
    has(&text, &restart_prevent());
    has(&text, "KillMode=mixed");
    has(&text, "LimitNOFILE=65535");
    has(&text, "EnvironmentFile=-/etc/sglang-launch/%N.env");
    has(&text, "WantedBy=multi-user.target");
    assert_verifies(&text, "sglang.service", None, false);
}

#[test]
fn port_reaches_sglang_and_the_wait() {
    let text = unit(&["--profile", "my model", "--port", "8000", "--name", "llm"]);
    assert!(text.starts_with("# llm.service "), "{text}");
    assert!(
        text.contains(" run --profile \"my model\" -- --port 8000\n"),
        "{text}"
    );
    assert!(
        text.contains(" wait-ready --port 8000 --timeout 1800 "),
        "{text}"
    );
    assert_verifies(&text, "llm.service", None, false);
}

#[test]
fn user_unit_reads_the_users_env_file() {
    let text = unit(&["--profile", "q", "--user"]);
    has(&text, "EnvironmentFile=-%h/.config/sglang-launch/%N.env");
    has(&text, "WantedBy=default.target");
    assert!(!text.contains("multi-user.target"), "{text}");
    assert_verifies(&text, "sglang.service", None, true);
}

#[test]
fn template_takes_the_profile_from_the_instance() {
    let text = unit(&["--template", "--port", "30001"]);
    assert!(text.starts_with("# sglang@.service "), "{text}");
    assert!(
        text.contains(" run --profile %i -- --port 30001\n"),
        "{text}"
    );
    has(
        &text,
        "Description=SGLang server (sglang-launch, profile %i)",
    );
    assert_verifies(&text, "sglang@.service", Some("sglang@qwen.service"), false);
}

/// The check above can fail: a setting systemd does not know is reported.
#[test]
fn verify_reports_a_broken_unit() {
    let text = unit(&["--profile", "q"]).replace("KillMode=mixed", "KillMode=gently");
    if let Some(out) = verify(&text, "sglang.service", None, false) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("kill mode"), "{stderr}");
    }
}

#[test]
fn bad_input_is_a_usage_error() {
    for args in [
        vec![],
        vec!["--profile", "q", "--template"],
        vec!["--profile", "q", "--name", "a@b"],
        vec!["--profile", "q", "--port", "0"],
        vec!["--profile", "a\nb"],
    ] {
        let out = Command::new(BIN)
            .arg("systemd-unit")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(exit::USAGE), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
