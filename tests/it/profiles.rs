//! Named profiles: discovery, extends, errors with their position, overrides, list and show.

use std::path::Path;

use crate::common;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn topo(name: &str) -> String {
    format!("{ROOT}/tests/fixtures/topologies/{name}.json")
}

/// The launcher with the host's settings removed and the user's config dir in `home`.
fn sl(home: &Path) -> Command {
    let mut c = common::launcher();
    c.env_remove("XDG_CONFIG_HOME").env("HOME", home);
    c
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
}

fn show(c: &mut Command, name: &str) -> Value {
    let out = c
        .args([
            "profiles",
            "show",
            name,
            "--json",
            "--topology",
            &topo("8x-h100-sxm-nvlink"),
        ])
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

const SMALL: &str =
    "[args]\nmodel-path = \"Qwen/Qwen3-8B\"\n[launcher]\nsglang-version = \"0.5.23\"\n";

#[test]
fn directories_are_searched_in_order_and_shadow_the_shipped_profiles() {
    let t = tempfile::tempdir().unwrap();
    let (opt, var, xdg) = (
        t.path().join("opt"),
        t.path().join("var"),
        t.path().join("xdg"),
    );
    let user = xdg.join("sglang-launch/profiles");
    for d in [&opt, &var, &user] {
        write(d, "p", SMALL);
    }
    write(&user, "l4-1x", SMALL);
    let first = |v: &Value| v["chain"][0].as_str().unwrap().to_owned();
    let base = || {
        let mut c = sl(t.path());
        c.env("XDG_CONFIG_HOME", &xdg);
        c
    };
    let mut c = base();
    c.env("SGLANG_LAUNCH_PROFILES_DIR", &var)
        .args(["profiles", "show", "p", "--profiles-dir"])
        .arg(&opt);
    let v: Value = serde_json::from_slice(
        &c.args(["--json", "--topology", &topo("8x-h100-sxm-nvlink")])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(first(&v).starts_with(opt.to_str().unwrap()), "{v}");
    let v = show(base().env("SGLANG_LAUNCH_PROFILES_DIR", &var), "p");
    assert!(first(&v).starts_with(var.to_str().unwrap()));
    assert!(first(&show(&mut base(), "p")).starts_with(user.to_str().unwrap()));
    assert!(first(&show(&mut base(), "l4-1x")).starts_with(user.to_str().unwrap()));
    // Without the user's file, the shipped one; the current directory is never searched.
    assert_eq!(
        first(&show(&mut sl(t.path()), "l4-1x")),
        "shipped:profiles/l4-1x.toml"
    );
    write(Path::new(ROOT), "cwd-only-profile", SMALL);
    let out = sl(t.path())
        .args(["profiles", "show", "cwd-only-profile"])
        .output()
        .unwrap();
    std::fs::remove_file(Path::new(ROOT).join("cwd-only-profile.toml")).unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn extends_merges_parent_then_child_and_names_a_cycle() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    write(
        &d,
        "base",
        "description = \"base\"\n[args]\nmodel-path = \"Qwen/Qwen3-8B\"\ntp = 2\n[env]\nA = \"1\"\n[launcher]\nsglang-version = \"0.5.23\"\nstrict = true\n",
    );
    write(
        &d,
        "child",
        "extends = \"base\"\n[args]\ntp = 1\nenable-metrics = true\n[launcher]\nstrict = false\n",
    );
    let v = show(sl(t.path()).env("SGLANG_LAUNCH_PROFILES_DIR", &d), "child");
    assert_eq!(v["description"], "base");
    let args = v["args"].as_array().unwrap();
    let tp = args.iter().find(|a| a["key"] == "tp").unwrap();
    assert_eq!(tp["value"], 1);
    assert!(tp["from"].as_str().unwrap().ends_with("child.toml"));
    let mp = args.iter().find(|a| a["key"] == "model-path").unwrap();
    assert!(mp["from"].as_str().unwrap().ends_with("base.toml"));
    assert_eq!(v["launcher"]["strict"]["value"], false);
    assert!(
        v["launcher"]["sglang-version"]["from"]
            .as_str()
            .unwrap()
            .ends_with("base.toml")
    );
    let tokens: Vec<&str> = v["plan"]["sglang_args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(
        tokens,
        [
            "--model-path",
            "Qwen/Qwen3-8B",
            "--tp",
            "1",
            "--enable-metrics"
        ]
    );

    write(&d, "a", "extends = \"b\"\n");
    write(&d, "b", "\nextends = \"a\"\n");
    sl(t.path())
        .args(["check", "--profile", "a", "--profiles-dir"])
        .arg(&d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "b.toml:2:11: extends forms a cycle: a → b → a",
        ));
}

#[test]
fn a_missing_profile_lists_the_available_ones_with_a_suggestion() {
    let t = tempfile::tempdir().unwrap();
    insta::assert_snapshot!(common::transcript(
        sl(t.path())
            .args(["plan", "--profile", "h100-nvlink-9x"])
            .args(["--topology", &topo("8x-h100-sxm-nvlink")]),
        &[(t.path(), "[HOME]")],
    ));
}

/// `run --dry-run` of the profile `text` (saved as `bad`), as a transcript.
fn broken(text: &str) -> String {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    write(&d, "bad", text);
    common::transcript(
        sl(t.path())
            .args(["run", "--dry-run", "--profile", "bad"])
            .args(["--topology", &topo("8x-h100-sxm-nvlink"), "--profiles-dir"])
            .arg(&d),
        &[(t.path(), "[HOME]")],
    )
}

#[test]
fn unknown_keys_options_and_wrong_types_name_file_line_and_column() {
    let text = [
        "description = \"x\"\n  colour = 1\n",
        "[hardware]\ngpus = 8\n",
        "[launcher]\nsglang-version = \"0.5.23\"\n[args]\nmodel-path = \"m\"\n tensor-paralel-size = 8\n",
        "[launcher]\nsglang-version = \"0.5.23\"\n[args]\ntp = \"eight\"\n",
        "[launcher]\nstrict = \"yes\"\n",
        "[hardware]\ncompute-capability = \"12\"\n",
    ]
    .map(broken)
    .concat();
    insta::assert_snapshot!(text);
}

fn check_profile(home: &Path, dir: &Path, name: &str) -> (Option<i32>, String) {
    let out = sl(home)
        .args([
            "run",
            "--dry-run",
            "--profile",
            name,
            "--topology",
            &topo("1x-l4"),
            "--profiles-dir",
        ])
        .arg(dir)
        .timeout(std::time::Duration::from_secs(3))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), stderr)
}

#[test]
fn a_profile_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    write(&d, "open", SMALL);
    let file = d.join("open.toml");
    let chmod =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    chmod(&file, 0o666);
    let (code, stderr) = check_profile(t.path(), &d, "open");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}: refused: it is writable by", file.display()))
            && stderr.contains("chmod go-w"),
        "{stderr}"
    );
    // A directory above it that others may write is as bad as the file.
    chmod(&file, 0o644);
    chmod(&d, 0o777);
    let (code, stderr) = check_profile(t.path(), &d, "open");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("the directory {} above it", d.display())),
        "{stderr}"
    );
    chmod(&d, 0o755);
    let (code, stderr) = check_profile(t.path(), &d, "open");
    assert_eq!(code, Some(0), "{stderr}");
}

/// Root running a profile another user owns would run that user's `[env]` (`LD_PRELOAD`) as
/// root: refused, whatever its mode, and in a sticky directory too.
#[test]
fn root_refuses_a_profile_another_user_owns() {
    if !nix::unistd::geteuid().is_root() {
        return; // fsread::trust's tests cover the rules for other users
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    write(
        &d,
        "foreign",
        &format!("{SMALL}[env]\nLD_PRELOAD = \"/tmp/evil.so\"\n"),
    );
    let file = d.join("foreign.toml");
    let nobody = nix::unistd::Uid::from_raw(65534);
    nix::unistd::chown(&file, Some(nobody), None).unwrap();
    let (code, stderr) = check_profile(t.path(), &d, "foreign");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}: refused: it is owned by", file.display()))
            && stderr.contains("uid 65534")
            && stderr.contains("owned by root or you"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("evil.so"),
        "nothing of it is used: {stderr}"
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let (code, stderr) = check_profile(t.path(), &d, "foreign");
    assert_eq!(
        code,
        Some(2),
        "a sticky directory vouches for no one: {stderr}"
    );
}

#[test]
fn the_command_line_overrides_the_profile_and_says_so() {
    let t = tempfile::tempdir().unwrap();
    let plan = |profile: &str, topology: &str| {
        let mut c = sl(t.path());
        c.args(["plan", "--python", "/usr/bin/python3", "--profile", profile])
            .args(["--topology", &topo(topology)]);
        c
    };
    let mut text = common::transcript(
        plan("rtx-pro-6000-pcie-8x", "8x-rtx-pro-6000-pcie").args([
            "--",
            "--cuda-graph-max-bs-decode",
            "64",
            "--port",
            "30001",
        ]),
        &[(t.path(), "[HOME]")],
    );
    // An explicit --sglang-version wins over the profile's.
    text += &common::transcript(
        plan("l4-1x", "1x-l4").args(["--sglang-version", "0.5.10"]),
        &[(t.path(), "[HOME]")],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn a_profile_for_other_hardware_is_refused() {
    let t = tempfile::tempdir().unwrap();
    insta::assert_snapshot!(common::transcript(
        sl(t.path()).env("SGLANG_LAUNCH_PROFILE", "b200-8x").args([
            "run",
            "--dry-run",
            "--topology",
            &topo("1x-l4")
        ]),
        &[(t.path(), "[HOME]")],
    ));
}

/// `profiles list` and `profiles show` as a user reads them, on a box some profiles are for.
#[test]
fn profiles_list_and_show_read_as_the_user_sees_them() {
    let t = tempfile::tempdir().unwrap();
    let paths = [(t.path(), "[HOME]")];
    let box_ = ["--topology", &topo("8x-h100-sxm-nvlink")];
    let mut text = common::transcript(sl(t.path()).args(["profiles", "list"]).args(box_), &paths);
    for profile in ["h100-nvlink-8x", "l4-1x"] {
        let mut c = sl(t.path());
        c.args(["profiles", "show", profile])
            .args(box_)
            .env("SGLANG_LAUNCH_PYTHON", "/usr/bin/python3");
        text += &common::transcript(&mut c, &paths);
    }
    insta::assert_snapshot!(text);
}

/// `profiles show`'s verdict line and JSON status say what its exit code says: a profile
/// for other hardware is blocked (exit 1), one for this box is not.
#[test]
fn show_gives_the_verdict_its_exit_code_gives() {
    let t = tempfile::tempdir().unwrap();
    for (profile, code, verdict, status) in [
        (
            "l4-1x",
            1,
            "verdict: blocked — not for this machine",
            "incompatible",
        ),
        ("h100-nvlink-8x", 0, "verdict: ok", "runnable"),
    ] {
        let out = sl(t.path())
            .args(["profiles", "show", profile, "--topology"])
            .arg(topo("8x-h100-sxm-nvlink"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let last = text.lines().last().unwrap_or_default();
        assert!(last.starts_with(verdict), "{profile}: {last}");
        let v = show(&mut sl(t.path()), profile);
        assert_eq!(v["status"], status, "{profile}");
    }
}

/// `profiles list` and `show` read the GPUs through the settings, as `check` does: the
/// topology file from `SGLANG_LAUNCH_TOPOLOGY` or a config file, not only `--topology`.
#[test]
fn profiles_read_the_topology_setting_from_the_environment_and_config_files() {
    let t = tempfile::tempdir().unwrap();
    let status = |c: &mut Command| -> Value {
        let out = c.args(["profiles", "list", "--json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = v["profiles"].as_array().unwrap().clone();
        let l4 = rows.iter().find(|r| r["name"] == "l4-1x").unwrap();
        l4["status"].clone()
    };
    let by_env = status(sl(t.path()).env("SGLANG_LAUNCH_TOPOLOGY", topo("1x-l4")));
    assert_eq!(by_env, "runnable");
    let cfg = t.path().join(".config/sglang-launch");
    std::fs::create_dir_all(&cfg).unwrap();
    let text = format!("topology = {:?}\n", topo("1x-l4"));
    std::fs::write(cfg.join("config.toml"), text).unwrap();
    assert_eq!(status(&mut sl(t.path())), "runnable");
    let out = sl(t.path())
        .args(["profiles", "show", "l4-1x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1× NVIDIA L4"),
        "{out:?}"
    );
    // The option still wins over both.
    let out = sl(t.path())
        .args(["profiles", "show", "l4-1x", "--topology"])
        .arg(topo("8x-h100-sxm-nvlink"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

const MATCHES: [(&str, &str); 6] = [
    ("rtx-pro-6000-pcie-8x", "8x-rtx-pro-6000-pcie"),
    ("h100-nvlink-8x", "8x-h100-sxm-nvlink"),
    ("h200-nvlink-8x", "8x-h200-nvlink"),
    ("b200-8x", "8x-b200-nvlink"),
    ("rtx-4090-pcie-2x", "2x-rtx-4090-pcie"),
    ("l4-1x", "1x-l4"),
];

fn list(topology: &str) -> Vec<Value> {
    let t = tempfile::tempdir().unwrap();
    let out = sl(t.path())
        .args(["profiles", "list", "--json", "--topology", &topo(topology)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["profiles"].as_array().unwrap().clone()
}

#[test]
fn each_shipped_profile_runs_on_its_box_and_nowhere_else() {
    for (profile, box_) in MATCHES {
        let rows = list(box_);
        assert_eq!(rows.len(), MATCHES.len());
        for row in rows {
            let mine = row["name"] == profile;
            let want = if mine { "runnable" } else { "incompatible" };
            assert_eq!(row["status"], want, "{box_}: {row}");
            assert_eq!(row["details"].as_array().unwrap().is_empty(), mine, "{row}");
        }
        let t = tempfile::tempdir().unwrap();
        let out = sl(t.path())
            .args([
                "check",
                "--json",
                "--profile",
                profile,
                "--topology",
                &topo(box_),
            ])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let errors: Vec<&Value> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] == "error")
            .collect();
        assert!(errors.is_empty(), "{profile}: {errors:?}");
    }
}

#[test]
fn list_shows_fixes_and_blocking_codes() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    write(
        &d,
        "fusion",
        "[launcher]\nsglang-version = \"0.5.23\"\n[args]\nmodel-path = \"Qwen/Qwen3-32B\"\ntp = 8\nenable-flashinfer-allreduce-fusion = true\n",
    );
    write(
        &d,
        "too-wide",
        "[launcher]\nsglang-version = \"0.5.23\"\n[args]\nmodel-path = \"Qwen/Qwen3-32B\"\ntp = 16\n",
    );
    let list = |json: &[&str]| {
        let mut c = sl(t.path());
        c.args(["profiles", "list"])
            .args(json)
            .args([
                "--topology",
                &topo("8x-rtx-pro-6000-pcie"),
                "--profiles-dir",
            ])
            .arg(&d);
        common::transcript(&mut c, &[(t.path(), "[HOME]")])
    };
    insta::assert_snapshot!(list(&[]) + &list(&["--json"]));
}

#[test]
fn the_origin_story_profile_fits_its_box() {
    let t = tempfile::tempdir().unwrap();
    let out = sl(t.path())
        .args([
            "plan",
            "--json",
            "--profile",
            "rtx-pro-6000-pcie-8x",
            "--topology",
            &topo("8x-rtx-pro-6000-pcie"),
        ])
        .args(["--", "--model-path", "examples/models/Qwen3-32B"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["memory"]["fits"], true, "{v}");
    assert_eq!(v["sglang_parsed"]["disable_custom_all_reduce"], true);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["severity"] != "error")
    );
}

/// What `run` sets at exec, `run --dry-run`, `plan --print-args` and plan/v1 `env` all show:
/// the dry-run line, run by `sh`, starts the server with the same arguments and environment.
#[test]
fn the_profiles_environment_is_in_every_line_that_shows_what_runs() {
    let t = tempfile::tempdir().unwrap();
    let py = common::fake_venv(t.path());
    let base = |cmd: &str| {
        let mut c = sl(t.path());
        c.args([cmd, "--profile", "rtx-4090-pcie-2x", "--topology"])
            .arg(topo("2x-rtx-4090-pcie"))
            .arg("--python")
            .arg(&py)
            .env_remove("NCCL_P2P_DISABLE");
        c
    };
    let dry = base("run").arg("--dry-run").output().unwrap();
    assert_eq!(dry.status.code(), Some(0), "{dry:?}");
    let dry = String::from_utf8(dry.stdout).unwrap();
    assert!(dry.starts_with("env 'NCCL_P2P_DISABLE=1' "), "{dry}");
    let printed = base("plan").arg("--print-args").output().unwrap();
    assert_eq!(String::from_utf8(printed.stdout).unwrap(), dry);
    let json: Value =
        serde_json::from_slice(&base("plan").arg("--json").output().unwrap().stdout).unwrap();
    assert_eq!(json["env"]["set"]["NCCL_P2P_DISABLE"], "1", "{json}");

    base("run").assert().success();
    let (argv, env) = common::recorded(t.path()).expect("the server ran");
    assert!(env.contains(&"NCCL_P2P_DISABLE=1".to_owned()), "{env:?}");
    std::fs::remove_file(t.path().join("record.env")).unwrap();
    let shell = std::process::Command::new("sh")
        .args(["-c", dry.trim_end()])
        .env_remove("NCCL_P2P_DISABLE")
        .status()
        .unwrap();
    assert!(shell.success());
    let (again, env) = common::recorded(t.path()).unwrap();
    assert_eq!(again, argv);
    assert!(env.contains(&"NCCL_P2P_DISABLE=1".to_owned()), "{env:?}");
}

/// Without a driver (and no topology file) the profiles are still listed and shown, not planned.
#[test]
fn profiles_are_listed_and_shown_without_a_driver() {
    let t = tempfile::tempdir().unwrap();
    let no_driver = |args: &[&str]| {
        let mut c = sl(t.path());
        c.env("SGLANG_LAUNCH_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
            .args(args);
        common::transcript(&mut c, &[(t.path(), "[HOME]")])
    };
    let text = no_driver(&["profiles", "list", "--json"])
        + &no_driver(&["profiles", "show", "l4-1x", "--json"]);
    insta::assert_snapshot!(text);
}
