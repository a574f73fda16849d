//! Layered settings through the binary: config files, environment and typed options, their
//! sources in `config show`, and the errors for a bad file.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common;

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

struct Box {
    dir: TempDir,
}

impl Box {
    fn new() -> Box {
        Box {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn system(&self) -> PathBuf {
        self.dir.path().join("etc.toml")
    }

    fn user(&self) -> PathBuf {
        self.dir.path().join("xdg/sglang-launch/config.toml")
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }

    fn sl(&self) -> Command {
        let mut c = common::launcher();
        c.env("SGLANG_LAUNCH_SYSTEM_CONFIG", self.system())
            .env("XDG_CONFIG_HOME", self.dir.path().join("xdg"))
            .env("HOME", self.dir.path());
        c
    }

    fn show(&self, env: &[(&str, &str)], args: &[&str]) -> Value {
        let out = self
            .sl()
            .envs(env.iter().copied())
            .args(["config", "show", "--json"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

fn setting<'a>(v: &'a Value, key: &str) -> (&'a Value, &'a str) {
    let s = &v["settings"][key];
    (&s["value"], s["source"].as_str().unwrap())
}

#[test]
fn each_setting_shows_its_value_and_the_layer_it_came_from() {
    let b = Box::new();
    b.write(
        &b.system(),
        "python = \"/sys/python\"\nstrict = true\nallow = [\"AR001\"]\nfit = true\n",
    );
    b.write(
        &b.user(),
        "python = \"/user/python\"\nallow = [\"AR002\"]\n",
    );
    let v = b.show(
        &[
            ("SGLANG_LAUNCH_ALLOW", "AR003,AR004"),
            ("SGLANG_LAUNCH_STRICT", "0"),
        ],
        &["--allow", "AR005", "--topology", "t.json"],
    );
    let sys = b.system().display().to_string();
    let user = b.user().display().to_string();
    assert_eq!(
        setting(&v, "python"),
        (&Value::from("/user/python"), user.as_str())
    );
    assert_eq!(setting(&v, "fit"), (&Value::from(true), sys.as_str()));
    // A falsey variable turns off what a file turned on.
    assert_eq!(
        setting(&v, "strict"),
        (&Value::from(false), "env SGLANG_LAUNCH_STRICT")
    );
    assert_eq!(
        setting(&v, "allow"),
        (&serde_json::json!(["AR005"]), "command line")
    );
    assert_eq!(
        setting(&v, "topology"),
        (&Value::from("t.json"), "command line")
    );
    assert_eq!(setting(&v, "deny"), (&serde_json::json!([]), "default"));
    assert_eq!(setting(&v, "sglang-version"), (&Value::Null, "default"));

    let text = b
        .sl()
        .args(["config", "show"])
        .env("SGLANG_LAUNCH_FIT", "no")
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap()
            .to_owned()
    };
    assert!(
        line("python").ends_with(&format!("/user/python  {user}")),
        "{text}"
    );
    assert!(
        line("fit").contains("false") && line("fit").ends_with("env SGLANG_LAUNCH_FIT"),
        "{text}"
    );
    assert!(line("strict").ends_with(&sys), "{text}");
    assert!(line("deny").ends_with(" default"), "{text}");
}

/// `--strict` is a clap flag whose default is false: leaving it out must not undo the file.
#[test]
fn an_option_left_out_does_not_clobber_a_file_value() {
    let b = Box::new();
    b.write(&b.user(), "strict = true\noffline = true\n");
    let v = b.show(&[], &["--fit"]);
    assert_eq!(setting(&v, "strict").0, &Value::from(true));
    assert_eq!(setting(&v, "offline").0, &Value::from(true));
    assert_eq!(setting(&v, "fit"), (&Value::from(true), "command line"));
}

/// The file's topology and version reach the plan: without them `plan` would need NVML and
/// the installed SGLang.
#[test]
fn file_settings_reach_the_plan() {
    let b = Box::new();
    let topo = format!("{ROOT}/examples/topologies/8x-h100-sxm-nvlink.json");
    b.write(
        &b.system(),
        &format!("topology = \"{topo}\"\nsglang-version = \"0.5.23\"\n"),
    );
    let out = b
        .sl()
        .args([
            "plan",
            "--json",
            "--",
            "--model-path",
            "examples/models/Qwen3-32B",
            "--tp",
            "8",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["sglang_version"], "0.5.23");
    assert_eq!(plan["gpus"].as_array().map(Vec::len), Some(8), "{plan:#}");
}

fn fails(b: &Box, wants: &[&str]) {
    let out = b
        .sl()
        .args(["check", "--", "--model-path", "m"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for w in wants {
        assert!(err.contains(w), "{w:?} not in {err}");
    }
}

#[test]
fn unknown_keys_and_wrong_types_name_the_file_and_place() {
    let b = Box::new();
    let user = b.user().display().to_string();
    b.write(&b.user(), "fit = true\nstrictt = true\n");
    fails(&b, &[&user, "line 2, column 1", "unknown field `strictt`"]);
    b.write(&b.user(), "allow = \"AR001\"\n");
    fails(&b, &[&user, "line 1, column 9", "expected a sequence"]);
    b.write(&b.user(), "[launcher]\nfit = true\n");
    fails(&b, &[&user, "unknown field `launcher`"]);
    let out = b
        .sl()
        .args(["config", "show"])
        .env("SGLANG_LAUNCH_ONLINE", "sure")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_file_others_can_write_is_refused() {
    let b = Box::new();
    b.write(&b.system(), "fit = true\n");
    std::fs::set_permissions(b.system(), std::fs::Permissions::from_mode(0o666)).unwrap();
    fails(
        &b,
        &[
            &format!("{}: refused: it is writable by", b.system().display()),
            "chmod go-w",
        ],
    );
}

/// The user file in a directory others may write, owned by another user: root would run its
/// `python`.
#[test]
fn root_refuses_a_config_file_another_user_owns() {
    if !nix::unistd::geteuid().is_root() {
        return; // fsread::trust's tests cover the rules for other users
    }
    let b = Box::new();
    b.write(&b.user(), "python = \"/tmp/planted-python\"\n");
    let nobody = nix::unistd::Uid::from_raw(65534);
    nix::unistd::chown(&b.user(), Some(nobody), None).unwrap();
    fails(
        &b,
        &[
            &format!("{}: refused: it is owned by", b.user().display()),
            "uid 65534",
            "owned by root or you",
        ],
    );
    nix::unistd::chown(&b.user(), Some(nix::unistd::Uid::from_raw(0)), None).unwrap();
    let dir = b.user().parent().unwrap().to_path_buf();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    fails(
        &b,
        &[
            &format!("the directory {} above it is writable", dir.display()),
            &format!("chmod go-w {}", dir.display()),
        ],
    );
}

#[test]
fn config_show_prints_a_value_of_any_length_whole() {
    let b = Box::new();
    let long = "/x".repeat(35_000);
    let out = b
        .sl()
        .env("SGLANG_LAUNCH_PYTHON", &long)
        .args(["config", "show"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text.lines().find(|l| l.starts_with("python ")).unwrap();
    assert!(
        row.contains(&long) && row.ends_with("env SGLANG_LAUNCH_PYTHON"),
        "{}",
        &row[..80]
    );
    // The short values still line up after the long one.
    let sources: Vec<usize> = text
        .lines()
        .filter(|l| l.ends_with("default"))
        .map(|l| l.rfind("default").unwrap())
        .collect();
    assert!(sources.windows(2).all(|w| w[0] == w[1]), "{text:.2000}");
}

/// `b`'s launcher with `args`, succeeding; its stdout.
fn stdout(b: &Box, env: &[(&str, &str)], args: &[&str]) -> String {
    let out = b
        .sl()
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The release `check --json`, the report's header, `flags show` and `upgrade` use, and the
/// header's label for its source.
fn releases(b: &Box, env: &[(&str, &str)]) -> (String, String, String, String) {
    let topo = format!("{ROOT}/examples/topologies/8x-h100-sxm-nvlink.json");
    let line = ["--", "--model-path", "m"];
    let check = |json: &[&str]| {
        let args = [&["check", "--topology", &topo][..], json, &line[..]].concat();
        stdout(b, env, &args)
    };
    let plan: Value = serde_json::from_str(&check(&["--json"])).unwrap();
    let header = first_line(&check(&[]))
        .split(" · ")
        .next()
        .unwrap_or("")
        .to_owned();
    let flags = first_line(&stdout(b, env, &["flags", "show"])).to_owned();
    let upgrade = stdout(
        b,
        env,
        &[&["upgrade", "--to", "0.5.23"][..], &line].concat(),
    );
    let json = plan["sglang_version"].as_str().unwrap_or("").to_owned();
    (json, header, flags, first_line(&upgrade).to_owned())
}

/// The first line `flags show` prints for an embedded release.
fn flags_line(b: &Box, version: &str) -> String {
    let text = stdout(b, &[], &["flags", "show", "--sglang-version", version]);
    first_line(&text).to_owned()
}

/// `sglang-version` from a config file, a variable or the command line: `check`, `flags
/// show` and `upgrade` use the same release, and the report names where it was set.
#[test]
fn every_command_uses_the_release_the_settings_name_and_the_report_names_the_source() {
    let b = Box::new();
    b.write(&b.system(), "sglang-version = \"0.5.5\"\n");
    let file = b.system().display().to_string();
    let (json, header, flags, upgrade) = releases(&b, &[]);
    assert_eq!(json, "0.5.5");
    assert_eq!(
        header,
        format!("sglang-launch: SGLang 0.5.5 (config {file})")
    );
    assert!(flags.starts_with("SGLang 0.5.5: "), "{flags}");
    assert_eq!(flags, flags_line(&b, "0.5.5"));
    assert_eq!(upgrade, "sglang-launch upgrade: SGLang 0.5.5 → 0.5.23");
    // The variable is over the file.
    let env = [("SGLANG_LAUNCH_SGLANG_VERSION", "0.5.2")];
    let (json, header, flags, upgrade) = releases(&b, &env);
    assert_eq!(json, "0.5.2");
    assert_eq!(
        header,
        "sglang-launch: SGLang 0.5.2 (SGLANG_LAUNCH_SGLANG_VERSION)"
    );
    assert_eq!(flags, flags_line(&b, "0.5.2"));
    assert_eq!(upgrade, "sglang-launch upgrade: SGLang 0.5.2 → 0.5.23");
}

/// A profile's `sglang-version` is labelled by the profile.
#[test]
fn a_profile_release_is_labelled_by_the_profile() {
    let b = Box::new();
    b.write(&b.system(), "sglang-version = \"0.5.5\"\n");
    let dir = b.dir.path().join("profiles");
    b.write(
        &dir.join("old.toml"),
        "[args]\nmodel-path = \"m\"\n[launcher]\nsglang-version = \"0.5.2\"\n",
    );
    let topo = format!("{ROOT}/examples/topologies/8x-h100-sxm-nvlink.json");
    let dir = dir.display().to_string();
    let args = [
        "check",
        "--profile",
        "old",
        "--profiles-dir",
        &dir,
        "--topology",
        &topo,
    ];
    let header = first_line(&stdout(&b, &[], &args)).to_owned();
    assert!(
        header.starts_with("sglang-launch: SGLang 0.5.2 (profile old) · "),
        "{header}"
    );
}

/// `python` from a config file: the interpreter every command reads the installed release
/// through (`check`, `flags show`, `upgrade`, `detect`) and the one `config show` names.
#[test]
fn every_command_uses_the_interpreter_the_settings_name() {
    let b = Box::new();
    let venv = b.dir.path().join("venv");
    common::sglang_dist_info(&venv.join("lib/python3.11/site-packages"), "0.5.5", None);
    b.write(&venv.join("pyvenv.cfg"), "home = /nonexistent/bin\n");
    let python = venv.join("bin/python3");
    b.write(&python, "#!/bin/sh\nexit 3\n");
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let python = python.display().to_string();
    b.write(&b.system(), &format!("python = \"{python}\"\n"));
    let (json, header, flags, upgrade) = releases(&b, &[]);
    assert_eq!(json, "0.5.5");
    assert_eq!(header, "sglang-launch: SGLang 0.5.5 (detected)");
    assert_eq!(flags, flags_line(&b, "0.5.5"));
    assert_eq!(upgrade, "sglang-launch upgrade: SGLang 0.5.5 → 0.5.23");
    let shown = stdout(&b, &[], &["config", "show"]);
    let line = shown.lines().find(|l| l.starts_with("interpreter: "));
    assert_eq!(
        line,
        Some(
            format!(
                "interpreter: {python} (what runs SGLang: python, else the one beside the launcher, else PATH's)"
            )
            .as_str()
        )
    );
    let topo = format!("{ROOT}/examples/topologies/8x-h100-sxm-nvlink.json");
    let env = [
        (
            "SGLANG_LAUNCH_NVML_LIB",
            common::fake_nvml_lib().to_str().unwrap(),
        ),
        ("FAKE_NVML_TOPOLOGY", topo.as_str()),
    ];
    let detected: Value = serde_json::from_str(&stdout(&b, &env, &["detect", "--json"])).unwrap();
    assert_eq!(
        detected["host"]["packages"]["sglang"], "0.5.5",
        "{detected:#}"
    );
}
