//! Shell completion, in real shells: the checked-in bash script is sourced in `bash` and asked
//! for a matrix of command lines (every command name, every visible option of every command,
//! every option's values, SGLang's options and choices for the release in use); fish, when
//! installed, answers the same lines through `complete -C`. The scripts run the launcher
//! binary, as a user's shell would, with the host's settings kept out.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Arg;
use sglang_launch::invocation::cli;
use sglang_launch::sglang::flagset;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A shell session with the launcher on `PATH` and nothing of the host's environment: no
/// config files, no profiles but the shipped ones, no SGLang install unless a test adds one.
struct Shell {
    home: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Shell {
    fn new() -> Shell {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("work/models")).unwrap();
        std::fs::write(home.path().join("work/box.json"), "{}").unwrap();
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_sglang-launch"));
        let path = format!("{}:/usr/bin:/bin", bin.parent().unwrap().display());
        let h = home.path().display().to_string();
        let env = vec![
            ("PATH".into(), path),
            ("HOME".into(), h.clone()),
            ("XDG_CONFIG_HOME".into(), format!("{h}/config")),
            ("XDG_CACHE_HOME".into(), format!("{h}/cache")),
            (
                "SGLANG_LAUNCH_SYSTEM_CONFIG".into(),
                "/nonexistent/sglang-launch.toml".into(),
            ),
            ("LC_ALL".into(), "C".into()),
        ];
        Shell { home, env }
    }

    fn env(mut self, k: &str, v: &str) -> Shell {
        self.env.push((k.into(), v.into()));
        self
    }

    fn dir(&self) -> &Path {
        self.home.path()
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(self.home.path().join("work"));
        c
    }

    /// `COMPREPLY` for each line, the cursor at its end, in one bash process.
    fn bash(&self, lines: &[String]) -> Vec<Vec<String>> {
        let mut script = format!(
            "source '{ROOT}/completions/sglang-launch.bash'\n\
             compopt() {{ :; }}  # only readline may call the real one\n"
        );
        for l in lines {
            let quoted = l.replace('\'', "'\\''");
            script.push_str(&format!(
                "COMP_LINE='{quoted}'; COMP_POINT=${{#COMP_LINE}}; COMP_WORDS=(sglang-launch); \
                 COMP_CWORD=0; _sglang_launch; printf '%s\\n' \"${{COMPREPLY[@]}}\"; echo @@\n"
            ));
        }
        let out = self
            .command("bash")
            .args(["--norc", "--noprofile", "-c", &script])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let replies: Vec<Vec<String>> = text
            .split("@@\n")
            .take(lines.len())
            .map(|r| {
                r.lines()
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .collect();
        assert_eq!(replies.len(), lines.len(), "{text}");
        replies
    }

    fn one(&self, line: &str) -> Vec<String> {
        self.bash(&[line.to_owned()]).remove(0)
    }
}

fn has(reply: &[String], want: &str, line: &str) {
    assert!(
        reply.iter().any(|r| r == want),
        "`{line}`: {want} not offered: {reply:?}"
    );
}

/// Every visible leaf command, as the words that name it (`["flags", "show"]`).
fn leaves() -> Vec<(Vec<String>, clap::Command)> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, clap::Command)>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let mut p = path.clone();
            p.push(sub.get_name().to_owned());
            if sub.has_subcommands() {
                walk(sub, p, out);
            } else {
                out.push((p, sub.clone()));
            }
        }
    }
    let mut root = cli::command();
    root.build();
    let mut out = Vec::new();
    walk(&root, Vec::new(), &mut out);
    out
}

#[test]
fn command_names_complete_and_the_hidden_one_does_not() {
    let sh = Shell::new();
    let root = cli::command();
    let mut want: Vec<String> = root
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_owned())
        .collect();
    let mut got = sh.one("sglang-launch ");
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert!(!got.iter().any(|c| c.starts_with("__")));
    assert_eq!(sh.one("sglang-launch ex"), ["explain"]);
    assert_eq!(sh.one("sglang-launch flags "), ["list", "show", "refresh"]);
    assert_eq!(sh.one("sglang-launch config s"), ["show"]);
    assert_eq!(sh.one("sglang-launch profiles "), ["list", "show"]);
}

#[test]
fn every_visible_option_of_every_command_completes_and_no_hidden_one() {
    let sh = Shell::new().env("SGLANG_LAUNCH_SGLANG_VERSION", "0.5.23");
    let leaves = leaves();
    let lines: Vec<String> = leaves
        .iter()
        .map(|(p, _)| format!("sglang-launch {} --", p.join(" ")))
        .collect();
    for ((path, cmd), (line, reply)) in leaves.iter().zip(lines.iter().zip(sh.bash(&lines))) {
        for a in cmd.get_arguments().filter(|a| a.get_long().is_some()) {
            let opt = format!("--{}", a.get_long().unwrap());
            let offered = reply.contains(&opt);
            assert_eq!(
                offered,
                !a.is_hide_set(),
                "`{line}`: {opt} (hidden: {})",
                a.is_hide_set()
            );
        }
        // run, check, plan and upgrade: SGLang's part may start here.
        let planning = ["run", "check", "plan", "upgrade"].contains(&path[0].as_str());
        assert_eq!(
            reply.iter().any(|r| r == "--model-path"),
            planning,
            "{line}"
        );
    }
}

/// What a launcher option's value completes to.
#[derive(Debug)]
enum Want {
    Rules,
    Releases,
    Profiles,
    Choices(Vec<String>),
    Files,
    Dirs,
    Nothing,
}

fn want(a: &Arg) -> Want {
    let choices: Vec<String> = a
        .get_possible_values()
        .iter()
        .map(|v| v.get_name().to_owned())
        .collect();
    if !choices.is_empty() {
        return Want::Choices(choices);
    }
    match a.get_id().as_str() {
        "allow" | "deny" | "rule" => Want::Rules,
        "sglang_version" | "to" => Want::Releases,
        "profile" => Want::Profiles,
        "name" if a.is_positional() => Want::Profiles,
        "topology" | "python" | "nvml_lib" | "json_file" => Want::Files,
        "dir" | "profiles_dir" => Want::Dirs,
        "writable" => Want::Files,
        "name" | "port" | "url" | "host" | "timeout" | "pid" | "fit_request_tokens" => {
            Want::Nothing
        }
        "line" | "words" => Want::Nothing,
        other => panic!("no expectation for the values of {other}: add one here"),
    }
}

fn check_values(line: &str, reply: &[String], want: &Want) {
    match want {
        Want::Rules => {
            has(reply, "AR002", line);
            has(reply, "custom-allreduce-pcie", line);
        }
        Want::Releases => {
            has(reply, "0.5.23", line);
            has(reply, "0.4.0", line);
            assert_eq!(reply.len(), flagset::KNOWN_VERSIONS.len(), "{line}");
        }
        Want::Profiles => {
            has(reply, "l4-1x", line);
            has(reply, "h100-nvlink-8x", line);
        }
        Want::Choices(c) => assert_eq!(reply, c.as_slice(), "{line}"),
        Want::Files => {
            has(reply, "box.json", line);
            has(reply, "models", line);
        }
        Want::Dirs => assert_eq!(reply, ["models"], "{line}"),
        Want::Nothing => assert!(reply.is_empty(), "`{line}`: {reply:?}"),
    }
}

#[test]
fn every_option_value_completes_to_what_the_option_takes() {
    let sh = Shell::new();
    let mut cases: Vec<(String, Want)> = Vec::new();
    for (path, cmd) in leaves() {
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if !a.get_action().takes_values() || a.get_id() == "sglang_args" {
                continue;
            }
            let cmdline = format!("sglang-launch {}", path.join(" "));
            let line = match a.get_long() {
                Some(l) => format!("{cmdline} --{l} "),
                None => format!("{cmdline} "),
            };
            cases.push((line, want(a)));
            if let Some(l) = a.get_long() {
                // The `--opt=value` spelling: readline replaces what follows the `=`.
                cases.push((format!("{cmdline} --{l}="), want(a)));
            }
        }
    }
    let lines: Vec<String> = cases.iter().map(|(l, _)| l.clone()).collect();
    for ((line, want), reply) in cases.iter().zip(sh.bash(&lines)) {
        check_values(line, &reply, want);
    }
}

#[test]
fn rule_lists_complete_after_the_comma_and_file_names_only_where_a_path_goes() {
    let sh = Shell::new();
    let r = sh.one("sglang-launch check --allow AR001,AR00");
    has(&r, "AR001,AR002", "--allow AR001,AR00");
    assert!(r.iter().all(|c| c.starts_with("AR001,AR00")), "{r:?}");
    // A rule already in the list is not offered again, by its code or by its name.
    assert!(!r.contains(&"AR001,AR001".to_owned()), "{r:?}");
    let r = sh.one("sglang-launch check --allow custom-allreduce-pcie,AR00");
    assert!(!r.iter().any(|c| c.ends_with(",AR002")), "{r:?}");
    has(
        &r,
        "custom-allreduce-pcie,AR001",
        "--allow custom-allreduce-pcie,AR00",
    );
    assert_eq!(
        sh.one("sglang-launch explain AR00"),
        sh.one("sglang-launch check --deny AR00")
    );
    assert_eq!(sh.one("sglang-launch run --topology b"), ["box.json"]);
    // No file names where a rule code, a release or a number goes.
    assert!(sh.one("sglang-launch explain box").is_empty());
    assert!(sh.one("sglang-launch run --sglang-version box").is_empty());
    assert!(sh.one("sglang-launch wait-ready --port box").is_empty());
}

fn sglang_options(version: &str) -> Vec<String> {
    let f = flagset::get(version).unwrap();
    f.actions
        .iter()
        .flat_map(|a| a.option_strings.iter().cloned())
        .collect()
}

fn choices(version: &str, option: &str) -> Vec<String> {
    let f = flagset::get(version).unwrap();
    let a = &f.actions[f.position(option).unwrap()];
    a.choices
        .as_ref()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn sglang_options_and_choices_follow_the_release_on_the_line() {
    let sh = Shell::new();
    let old = choices("0.4.0", "--attention-backend");
    let new = choices("0.5.23", "--attention-backend");
    assert_ne!(old, new);
    let lines: Vec<String> = [
        "sglang-launch run --sglang-version 0.4.0 -- --model-path m --attention-backend ",
        "sglang-launch check --sglang-version=0.5.23 --model-path m --attention-backend ",
        "sglang-launch plan --sglang-version 0.4.0 --attention-backend=",
        "sglang-launch run --sglang-version 0.5.23 --model-path m --tp ",
        "sglang-launch run --sglang-version 0.5.23 --model-path ",
        "sglang-launch run --sglang-version 0.5.23 --download-dir ",
        "sglang-launch run --sglang-version 0.5.23 -- --json --model-pa",
    ]
    .map(String::from)
    .to_vec();
    let r = sh.bash(&lines);
    assert_eq!(r[0], old, "{}", lines[0]);
    assert_eq!(r[1], new, "{}", lines[1]);
    assert_eq!(r[2], old, "{}", lines[2]);
    assert!(r[3].is_empty(), "--tp takes a number: {:?}", r[3]);
    has(&r[4], "box.json", &lines[4]);
    assert_eq!(r[5], ["models"], "{}", lines[5]);
    assert_eq!(r[6], ["--model-path"], "{}", lines[6]);
    // An option only the newer release has is offered for it alone.
    let only_new: Vec<String> = sglang_options("0.5.23")
        .into_iter()
        .filter(|o| o.starts_with("--") && !sglang_options("0.4.0").contains(o))
        .collect();
    let probe = &only_new[0];
    let lines = [
        format!("sglang-launch run --sglang-version 0.4.0 -- {probe}"),
        format!("sglang-launch run --sglang-version 0.5.23 -- {probe}"),
    ];
    let r = sh.bash(&lines);
    assert!(!r[0].contains(probe), "{probe} offered for 0.4.0");
    has(&r[1], probe, &lines[1]);
}

#[test]
fn the_drop_in_form_completes_sglang_options_for_the_configured_or_installed_release() {
    let old = choices("0.4.0", "--attention-backend");
    let new = choices("0.5.23", "--attention-backend");
    let line = "sglang-launch --model-path m --attention-backend ";
    // The variable.
    let sh = Shell::new().env("SGLANG_LAUNCH_SGLANG_VERSION", "0.4.0");
    assert_eq!(sh.one(line), old);
    // The user's config file.
    let sh = Shell::new();
    let cfg = sh.dir().join("config/sglang-launch");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.toml"), "sglang-version = \"0.4.0\"\n").unwrap();
    assert_eq!(sh.one(line), old);
    // The installed release (its dist-info on PYTHONPATH); the line's own option wins.
    let site = tempfile::tempdir().unwrap();
    let dist = site.path().join("sglang-0.4.0.dist-info");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("METADATA"), "Name: sglang\nVersion: 0.4.0\n").unwrap();
    let sh = Shell::new().env("PYTHONPATH", site.path().to_str().unwrap());
    assert_eq!(sh.one(line), old);
    assert_eq!(
        sh.one("sglang-launch run --sglang-version 0.5.23 --attention-backend "),
        new
    );
    // The drop-in form's first word: SGLang's options and the launcher's own flags.
    let r = sh.one("sglang-launch --");
    has(&r, "--model-path", "sglang-launch --");
    has(&r, "--help", "sglang-launch --");
    assert!(!r.iter().any(|c| c == "--nvml-lib"));
}

/// The release is the one the run context chooses, from the same layers: a profile's
/// `[launcher]` table, and a config file next to a variable the run would refuse (left out
/// alone, not with every other layer).
#[test]
fn sglang_options_follow_the_release_the_run_context_chooses() {
    let old = choices("0.4.0", "--attention-backend");
    let line = "sglang-launch --model-path m --attention-backend ";
    let sh = Shell::new().env("SGLANG_LAUNCH_MODE", "loud");
    let cfg = sh.dir().join("config/sglang-launch");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.toml"), "sglang-version = \"0.4.0\"\n").unwrap();
    assert_eq!(sh.one(line), old);
    let sh = Shell::new();
    let dir = sh.dir().join("profiles");
    std::fs::create_dir_all(&dir).unwrap();
    let profile = "[launcher]\nsglang-version = \"0.4.0\"\n";
    std::fs::write(dir.join("old.toml"), profile).unwrap();
    let dir = dir.display();
    let line = format!(
        "sglang-launch run --profiles-dir {dir} --profile old -- --model-path m --attention-backend "
    );
    assert_eq!(sh.one(&line), old, "{line}");
}

/// A TAB never runs Python: an install whose parser only its interpreter could read (an
/// editable one) gets the nearest embedded release's options, and the interpreter stays idle.
#[test]
fn a_tab_never_runs_the_interpreter() {
    let sh = Shell::new();
    let ran = sh.dir().join("ran");
    let script = format!("#!/bin/sh\ntouch '{}'\n", ran.display());
    let py = crate::common::venv_with(sh.dir(), &script, 0o755);
    let site = sh.dir().join("venv/lib/python3.11/site-packages");
    std::fs::remove_dir_all(site.join("sglang-0.5.23.dist-info")).unwrap();
    crate::common::sglang_dist_info(&site, "0.5.23", Some("file:///src/sglang"));
    let sh = sh.env("SGLANG_LAUNCH_PYTHON", py.to_str().unwrap());
    let line = "sglang-launch --model-path m --attention-backend ";
    assert_eq!(sh.one(line), choices("0.5.23", "--attention-backend"));
    assert!(!ran.exists(), "the interpreter ran on a TAB");
}

#[test]
fn fish_gives_the_same_candidates() {
    if Command::new("fish").arg("--version").output().is_err() {
        eprintln!("note: fish is not installed; its completion is not tested");
        return;
    }
    let sh = Shell::new();
    let lines = [
        "sglang-launch ex",
        "sglang-launch check --allow AR001,AR00",
        "sglang-launch run --sglang-version 0.4.0 -- --attention-backend ",
        "sglang-launch --model-path m --attention-backend=",
        "sglang-launch run --topology b",
        "sglang-launch detect --",
    ];
    let mut script = format!("source '{ROOT}/completions/sglang-launch.fish'\n");
    for l in lines {
        script.push_str(&format!("complete -C '{l}'; echo @@\n"));
    }
    let out = sh
        .command("fish")
        .args(["--no-config", "-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let fish: Vec<Vec<String>> = text
        .split("@@\n")
        .take(lines.len())
        .map(|r| {
            r.lines()
                .map(|l| l.split('\t').next().unwrap().to_owned())
                .collect()
        })
        .collect();
    let bash = sh.bash(&lines.map(String::from));
    for ((line, mut f), mut b) in lines.iter().zip(fish).zip(bash) {
        // fish shows the whole word; bash only what follows `=`.
        if let Some((opt, _)) = line.rsplit(' ').next().unwrap().split_once('=') {
            b = b.into_iter().map(|c| format!("{opt}={c}")).collect();
        }
        f.sort();
        b.sort();
        assert!(!b.is_empty(), "`{line}`: nothing offered");
        assert_eq!(f, b, "`{line}`");
    }
}
