//! `systemd-unit`: the units it prints, checked line by line and by systemd's own
//! `systemd-analyze verify` (which also checks that ExecStart's binary exists).

use std::path::Path;
use std::process::{Command, Output};

use sglang_launch::exit;

const BIN: &str = env!("CARGO_BIN_EXE_sglang-launch");

/// The profiles the tests' units run, in a directory whose name needs quoting: `qwen3-32b`
/// (port 8001 on all interfaces) and `my.model`.
fn profiles() -> &'static Path {
    static DIR: std::sync::OnceLock<(tempfile::TempDir, std::path::PathBuf)> =
        std::sync::OnceLock::new();
    &DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("profiles dir");
        std::fs::create_dir(&dir).unwrap();
        let text = "[args]\nmodel-path = \"Qwen/Qwen3-32B\"\nhost = \"0.0.0.0\"\nport = 8001\n";
        std::fs::write(dir.join("qwen3-32b.toml"), text).unwrap();
        std::fs::write(dir.join("my.model.toml"), "[args]\nmodel-path = \"m\"\n").unwrap();
        (d, dir)
    })
    .1
}

fn launcher() -> Command {
    let mut c = Command::new(BIN);
    c.env_remove("XDG_CONFIG_HOME")
        .env_remove("SGLANG_LAUNCH_PROFILES_DIR");
    c
}

fn unit(args: &[&str]) -> String {
    let out = launcher()
        .arg("systemd-unit")
        .args(args)
        .arg("--profiles-dir")
        .arg(profiles())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The unit text for a snapshot: the launcher's path and the profiles directory replaced.
fn snap(text: &str) -> String {
    crate::common::normalise(text, &[(profiles(), "[PROFILES]")])
}

/// Runs of `systemd-unit` with each of `args`, as a transcript for a snapshot.
fn transcripts(home: Option<&Path>, runs: &[&[&str]]) -> String {
    let mut text = String::new();
    for args in runs {
        let mut cmd = launcher();
        if let Some(home) = home {
            cmd.env("HOME", home);
        }
        cmd.arg("systemd-unit").args(*args);
        let mut cmd = assert_cmd::Command::from_std(cmd);
        let paths = home.map(|h| (h, "[HOME]"));
        text += &crate::common::transcript(&mut cmd, paths.as_slice());
    }
    text
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

/// After the network and the NVIDIA services, `Type=exec`, the profile's own port polled on
/// loopback (it listens on every interface), restarts bounded and never after a refusal.
#[test]
fn system_unit_runs_the_profile_and_waits_for_health() {
    let text = unit(&["--profile", "qwen3-32b"]);
    has(&text, &restart_prevent());
    insta::assert_snapshot!(snap(&text));
    assert_verifies(&text, "sglang.service", None, false);
}

#[test]
fn port_reaches_sglang_and_the_wait() {
    let text = unit(&["--profile", "my.model", "--port", "8000", "--name", "llm"]);
    insta::assert_snapshot!(snap(&text));
    assert_verifies(&text, "llm.service", None, false);
}

#[test]
fn user_unit_reads_the_users_env_file() {
    let text = unit(&["--profile", "qwen3-32b", "--user"]);
    // The user manager cannot order against system units.
    assert!(!text.contains("After="), "{text}");
    insta::assert_snapshot!(snap(&text));
    assert_verifies(&text, "sglang.service", None, true);
}

#[test]
fn template_takes_the_profile_from_the_instance() {
    let text = unit(&["--template", "--port", "30001"]);
    insta::assert_snapshot!(snap(&text));
    assert_verifies(&text, "sglang@.service", Some("sglang@qwen.service"), false);
}

/// The check above can fail: a setting systemd does not know is reported.
#[test]
fn verify_reports_a_broken_unit() {
    let text = unit(&["--profile", "qwen3-32b"]).replace("KillMode=mixed", "KillMode=gently");
    if let Some(out) = verify(&text, "sglang.service", None, false) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("kill mode"), "{stderr}");
    }
}

#[test]
fn bad_input_is_a_usage_error() {
    let runs: [&[&str]; 10] = [
        &[],
        &["--profile", "q", "--template"],
        // A profile the service finds, so that the name is what is judged.
        &["--profile", "l4-1x", "--name", "a@b"],
        &["--profile", "q", "--port", "0"],
        &["--profile", "a\nb"],
        &["--profile", "nosuch"],
        &["--profile", "l4-1x", "--writable", "/data"],
        &[
            "--profile",
            "l4-1x",
            "--hardened",
            "--writable",
            "relative/dir",
        ],
        &["--profile", "l4-1x", "--hardened", "--user"],
        &["--profile", "l4-1x", "--timeout", "0"],
    ];
    for args in runs {
        let out = launcher().arg("systemd-unit").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(exit::USAGE), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        if args.contains(&"a@b") {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("unit name \"a@b\" is not valid") && err.contains("no @"),
                "{err}"
            );
        }
    }
    insta::assert_snapshot!(transcripts(None, &runs));
}

#[test]
fn the_profile_is_checked_where_the_service_will_look_for_it() {
    // In the user's config directory: a system service (no HOME) will not see it, a user
    // service has the HOME, and so does a unit given the directory.
    let home = tempfile::tempdir().unwrap();
    let mine = home.path().join(".config/sglang-launch/profiles");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("mine.toml"), "[args]\nmodel-path = \"m\"\n").unwrap();
    let dir = mine.to_str().unwrap();
    let mut text = transcripts(
        Some(home.path()),
        &[
            &["--profile", "mine"],
            &["--profile", "mine", "--user"],
            &["--profile", "mine", "--profiles-dir", dir],
        ],
    );
    // A shipped profile is there for every service.
    text += &transcripts(None, &[&["--profile", "l4-1x"]]);
    insta::assert_snapshot!(text);
}

#[test]
fn the_start_timeout_can_be_set() {
    let text = unit(&["--profile", "qwen3-32b", "--timeout", "3600"]);
    has(&text, "TimeoutStartSec=3660");
    assert!(text.contains(" --timeout 3600 --pid "), "{text}");
    assert_verifies(&text, "sglang.service", None, false);
}

/// The hardened unit verifies, and `systemd-analyze security` rates it "OK" or better (an
/// exposure below 5 of 10; the plain unit is "UNSAFE").
#[test]
fn the_hardened_unit_is_sandboxed_and_rated_well() {
    let text = unit(&[
        "--profile",
        "qwen3-32b",
        "--hardened",
        "--writable",
        "/data/models",
    ]);
    insta::assert_snapshot!(snap(&text));
    assert!(
        !text.contains("MemoryDenyWriteExecute"),
        "CUDA JIT needs W+X: {text}"
    );
    assert_verifies(&text, "sglang.service", None, false);
    let (Some(hardened), Some(plain)) = (
        exposure(&text),
        exposure(&unit(&["--profile", "qwen3-32b"])),
    ) else {
        return;
    };
    assert!(hardened < 5.0, "exposure {hardened}\n{text}");
    assert!(plain > hardened + 3.0, "{plain} vs {hardened}");
}

/// `systemd-analyze security --offline`'s overall exposure (0 to 10), when the tool has it.
fn exposure(text: &str) -> Option<f64> {
    which::which("systemd-analyze").ok()?;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sglang.service");
    std::fs::write(&file, text).unwrap();
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=true"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(line) = stdout
        .lines()
        .find(|l| l.contains("Overall exposure level"))
    else {
        eprintln!("note: systemd-analyze security --offline unavailable: {out:?}");
        return None;
    };
    line.split(": ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The launcher installed in a directory whose name systemd reads specially: `$` and `%` (and
/// a space) are written so systemd finds the binary; quotes and backslashes, which systemd
/// refuses in a command's path however they are written, are refused with the way out.
#[test]
fn the_launchers_own_path_is_written_as_systemd_reads_it_or_refused() {
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let install = |dir: &str| {
        let d = base.path().join(dir);
        std::fs::create_dir(&d).unwrap();
        let bin = d.join("sglang-launch");
        // A hard link where the file system allows (the binary is large), else a copy.
        if std::fs::hard_link(BIN, &bin).is_err() {
            std::fs::copy(BIN, &bin).unwrap();
        }
        bin
    };
    for dir in ["b$x", "b%x", "b x", "b;x"] {
        let bin = install(dir);
        let out = Command::new(&bin)
            .env_remove("XDG_CONFIG_HOME")
            .args(["systemd-unit", "--profile", "l4-1x"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{dir}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_verifies(&text, "sglang.service", None, false);
    }
    for dir in ["b\"q", "b\\q", "b'q"] {
        let bin = install(dir);
        let start = std::time::Instant::now();
        let out = Command::new(&bin)
            .args(["systemd-unit", "--profile", "l4-1x"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(exit::USAGE), "{dir}: {stderr}");
        assert!(out.stdout.is_empty());
        assert!(
            stderr.contains(&bin.display().to_string())
                && stderr.contains("install it under a plain path"),
            "{stderr}"
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(3));
    }
}
