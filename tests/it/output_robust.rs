//! Output that cannot stop a launch: a closed or broken stderr never prevents the exec, a
//! failed write of what the user asked for is an error, controls from files are escaped, and
//! bytes that are not UTF-8 reach SGLang (and `--print-args`) exactly.

use crate::common;

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_sglang-launch");

fn topo() -> String {
    format!("{ROOT}/tests/fixtures/topologies/1x-l4.json")
}

/// A fake interpreter with SGLang "installed": it records its argv and the environment it was
/// exec'd with, byte for byte (from /proc, not through the shell).
fn fake_venv(dir: &Path) -> PathBuf {
    let r = dir.join("record").display().to_string();
    let script =
        format!("#!/bin/sh\ncat /proc/$$/cmdline > '{r}.argv'\ncat /proc/$$/environ > '{r}.env'\n");
    common::venv_with(dir, &script, 0o755)
}

fn record(dir: &Path, ext: &str) -> Option<Vec<Vec<u8>>> {
    let raw = std::fs::read(dir.join(format!("record.{ext}"))).ok()?;
    Some(raw.split(|b| *b == 0).map(<[u8]>::to_vec).collect())
}

/// The launcher (isolated like `common::launcher`) as a plain `Command`, to wire its streams.
fn launcher(args: &[&str]) -> Command {
    let mut c = common::launcher_std();
    c.args(args);
    c
}

/// A pipe whose read end is already closed: every write to it fails with EPIPE.
fn broken_pipe() -> Stdio {
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    Stdio::from(write)
}

#[test]
fn a_broken_stderr_never_stops_the_launch() {
    for dropin in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let py = fake_venv(dir.path());
        let py = py.to_str().unwrap();
        let line = ["--model-path", "m", "--tp", "1"];
        let mut c = if dropin {
            let mut c = launcher(&line);
            c.env("SGLANG_LAUNCH_TOPOLOGY", topo())
                .env("SGLANG_LAUNCH_PYTHON", py)
                // A typo'd setting: its warning goes to the broken stderr too.
                .env("SGLANG_LAUNCH_STRCT", "1");
            c
        } else {
            let mut c = launcher(&["run", "--python", py, "--topology", &topo(), "--"]);
            c.args(line);
            c
        };
        let status = c
            .stdout(Stdio::null())
            .stderr(broken_pipe())
            .status()
            .unwrap();
        assert!(status.success(), "drop-in {dropin}: {status:?}");
        let argv = record(dir.path(), "argv").expect("the interpreter ran");
        assert!(argv.contains(&b"--model-path".to_vec()), "{argv:?}");
    }
}

#[test]
fn a_closed_stderr_never_stops_the_launch_nor_the_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_venv(dir.path());
    // `2>&-`: the launcher starts with no stderr at all.
    let run = |extra: &[&str]| {
        Command::new("sh")
            .args(["-c", "exec \"$0\" \"$@\" 2>&-", BIN, "run", "--python"])
            .arg(&py)
            .args(["--topology", &topo()])
            .args(extra)
            .args(["--", "--model-path", "m"])
            .env("NO_COLOR", "1")
            .env("SGLANG_LAUNCH_SYSTEM_CONFIG", "/nonexistent/x.toml")
            .env("XDG_STATE_HOME", dir.path())
            .current_dir(ROOT)
            .output()
            .unwrap()
    };
    let dry = run(&["--dry-run"]);
    assert!(dry.status.success(), "{dry:?}");
    assert!(
        String::from_utf8_lossy(&dry.stdout).contains("sglang.launch_server --model-path m"),
        "{dry:?}"
    );
    assert!(
        record(dir.path(), "argv").is_none(),
        "a dry run runs nothing"
    );
    let launched = run(&[]);
    assert!(launched.status.success(), "{launched:?}");
    assert!(record(dir.path(), "argv").is_some(), "the interpreter ran");
}

#[test]
fn requested_output_that_cannot_be_written_is_an_error() {
    for cmd in [
        &["plan", "--print-args"][..],
        &["plan", "--json"],
        &["run", "--dry-run"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = launcher(cmd)
            .args(["--topology", &topo(), "--sglang-version", "0.5.23", "--"])
            .args(["--model-path", "m"])
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot write the output to stdout") && err.contains("No space left"),
            "{cmd:?}: {err}"
        );
    }
}

/// JSON keeps every character of the data, as JSON escapes: the plan parses back to the same
/// model path, and no C1 or bidi control is written raw.
#[test]
fn json_output_escapes_controls_as_json_and_keeps_the_data() {
    let model = "m\u{85}\u{202e}\u{7f}";
    let out = common::launcher()
        .args(["check", "--json", "--topology", &topo()])
        .args(["--sglang-version", "0.5.23", "--", "--model-path", model])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        !stdout
            .chars()
            .any(|c| c != '\n' && (c.is_control() || c == '\u{202e}')),
        "{stdout:?}"
    );
    let plan: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(plan["sglang_args"][1], model, "{stdout}");
    assert!(stdout.contains(r"m\u0085\u202e\u007f"), "{stdout}");
}

#[test]
fn gpu_names_from_a_file_cannot_forge_report_lines() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(topo()).unwrap().replace(
        "\"NVIDIA L4\"",
        "\"NVIDIA L4\\u001b[2J\\nverdict: ok\\u0007\"",
    );
    let file = dir.path().join("t.json");
    std::fs::write(&file, text).unwrap();
    let out = common::launcher()
        .args(["check", "--topology"])
        .arg(&file)
        .args([
            "--sglang-version",
            "0.5.23",
            "--",
            "--model-path",
            "m",
            "--tp",
            "2",
        ])
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains('\x1b') && !all.contains('\x07'), "{all:?}");
    assert!(all.contains(r"NVIDIA L4\x1b[2J\nverdict: ok\x07"), "{all}");
    let verdicts = all.lines().filter(|l| l.starts_with("verdict:")).count();
    assert_eq!(verdicts, 1, "{all}");
}

#[test]
fn bytes_that_are_not_utf8_reach_sglang_and_print_args_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_venv(dir.path());
    let weird = OsString::from_vec(b"name-\xff\x1b'x\\".to_vec());
    let (a, b) = (
        OsString::from_vec(b"SGL_T_\xff".to_vec()),
        OsString::from_vec(b"SGL_T_\xfe".to_vec()),
    );
    let line = |c: &mut Command| {
        c.args(["--topology", &topo(), "--"])
            .args(["--model-path", "m", "--served-model-name"])
            .arg(&weird);
    };
    let mut run = launcher(&["run", "--python", py.to_str().unwrap()]);
    line(&mut run);
    let out = run
        .env(&a, "one\u{1}")
        .env(&b, OsString::from_vec(b"two\xff".to_vec()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let argv = record(dir.path(), "argv").unwrap();
    assert!(argv.contains(&weird.as_bytes().to_vec()), "{argv:?}");
    let env = record(dir.path(), "env").unwrap();
    assert!(env.contains(&b"SGL_T_\xff=one\x01".to_vec()), "{env:?}");
    assert!(env.contains(&b"SGL_T_\xfe=two\xff".to_vec()), "{env:?}");

    // The printed line is shell-quoted so that dash and bash split it back into the same bytes.
    for (cmd, shell) in [&["plan", "--print-args"][..], &["run", "--dry-run"]]
        .into_iter()
        .flat_map(|c| [(c, "dash"), (c, "bash")])
    {
        let mut c = launcher(cmd);
        c.args(["--sglang-version", "0.5.23"]);
        line(&mut c);
        let printed = c.output().unwrap().stdout;
        let printed = String::from_utf8(printed).expect("the line is text");
        assert!(
            !printed.contains('\u{fffd}') && !printed.contains('\x1b'),
            "{printed}"
        );
        let words = Command::new(shell)
            .args(["-c", "eval \"set -- $1\"; printf '%s\\0' \"$@\"", "_"])
            .arg(printed.trim_end())
            .output()
            .unwrap()
            .stdout;
        let words: Vec<&[u8]> = words.split(|b| *b == 0).collect();
        assert!(words.contains(&weird.as_bytes()), "{cmd:?}: {printed}");
    }
}

/// Under a locale that is not UTF-8 (`LC_ALL=C`) the human report is ASCII; JSON is not touched.
#[test]
fn a_c_locale_gets_an_ascii_report() {
    let mut c = launcher(&["check"]);
    c.args(["--topology", &topo(), "--sglang-version", "0.5.23", "--"])
        .args(["--model-path", "m"])
        .env("LC_ALL", "C");
    let out = c.output().unwrap();
    let all = [out.stdout, out.stderr].concat();
    assert!(all.is_ascii(), "{}", String::from_utf8_lossy(&all));
    assert!(String::from_utf8_lossy(&all).contains("SGLang 0.5.23 (--sglang-version) - "));
    let mut utf8 = launcher(&["check"]);
    utf8.args(["--topology", &topo(), "--sglang-version", "0.5.23", "--"])
        .args(["--model-path", "m"])
        .env("LANG", "en_US.UTF-8");
    assert!(String::from_utf8_lossy(&utf8.output().unwrap().stdout).contains(" · "));
}

/// A character of a hostile data string: C0 controls (no NUL: argv and the environment cannot
/// hold one), DEL, C1 controls, bidi overrides and isolates, or a plain letter.
fn hostile_char() -> impl proptest::strategy::Strategy<Value = char> {
    use proptest::prelude::*;
    prop_oneof![
        (1u32..0x20).prop_map(|c| char::from_u32(c).unwrap()),
        Just('\x7f'),
        (0x80u32..0xa0).prop_map(|c| char::from_u32(c).unwrap()),
        prop::sample::select(vec![
            '\u{202e}', '\u{202a}', '\u{2066}', '\u{200f}', '\u{61c}'
        ]),
        prop::char::range('a', 'z'),
    ]
}

/// A TOML or YAML double-quoted string of `s`: every character not printable ASCII as
/// `\uXXXX`, which both formats read back.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => out.extend(['\\', c]),
            ' '..='~' => out.push(c),
            c => out.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Variables a run sets.
type Env<'a> = Vec<(&'a str, &'a str)>;

/// Every output of the launcher that shows a piece of `data`, with the data planted in each
/// place it can come from: a GPU name (topology file), a profile's description, a `--config`
/// key, a model path (a directory's name), a topology path, `SGLANG_LAUNCH_*` values.
fn outputs_quoting(data: &str, dir: &Path) -> Vec<(String, Vec<u8>)> {
    let d = dir.display().to_string();
    let mut topo: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{ROOT}/tests/fixtures/topologies/2x-h100-one-busy.json"
        ))
        .unwrap(),
    )
    .unwrap();
    topo["gpus"][1]["name"] = data.into();
    let t = format!("{d}/topo.json");
    std::fs::write(&t, topo.to_string()).unwrap();
    std::fs::create_dir_all(format!("{d}/profiles")).unwrap();
    let toml = format!(
        "description = {}\n[args]\nmodel-path = \"m\"\ntp = 2\n",
        quoted(data)
    );
    std::fs::write(format!("{d}/profiles/p.toml"), toml).unwrap();
    std::fs::write(format!("{d}/cfg.yaml"), format!("{}: 1\n", quoted(data))).unwrap();
    let model = dir.join(data);
    std::fs::create_dir_all(&model).unwrap();
    let model = model.to_str().unwrap().to_owned();
    let off = ["--topology", &t, "--sglang-version", "0.5.23"];
    let frob = format!("--frob{data}");
    let profs = ["--profiles-dir", &format!("{d}/profiles"), "--topology", &t];
    let missing = format!("{d}/{data}.json");
    let cases: Vec<(Vec<&str>, Env)> = vec![
        (
            [
                &["check"],
                &off[..],
                &["--", "--model-path", &model, "--tp", "2"],
            ]
            .concat(),
            vec![],
        ),
        (
            [
                &["plan"],
                &off[..],
                &["--", "--model-path", &model, "--tp", "2"],
            ]
            .concat(),
            vec![],
        ),
        (
            [
                &["plan", "--print-args"],
                &off[..],
                &["--", "--model-path", &model],
            ]
            .concat(),
            vec![],
        ),
        (
            [
                &["run", "--dry-run"],
                &off[..],
                &["--", "--model-path", &model],
            ]
            .concat(),
            vec![],
        ),
        (
            [
                &["check"],
                &off[..],
                &["--", "--model-path", "m", "--config", "cfg.yaml"],
            ]
            .concat(),
            vec![],
        ),
        ([&["profiles", "list"], &profs[..]].concat(), vec![]),
        ([&["profiles", "show", "p"], &profs[..]].concat(), vec![]),
        (
            vec!["check", "--topology", &missing, "--", "--model-path", "m"],
            vec![],
        ),
        (
            vec!["config", "show"],
            vec![("SGLANG_LAUNCH_TOPOLOGY", missing.as_str())],
        ),
        (
            vec![
                "upgrade",
                "--to",
                "0.5.23",
                "--sglang-version",
                "0.5.5",
                "--",
                "--model-path",
                &model,
            ],
            vec![],
        ),
        (
            [&["check"], &off[..], &["--", "--model-path", "m"]].concat(),
            vec![("SGLANG_LAUNCH_MODE", data)],
        ),
        (
            [&["check"], &off[..], &["--", "--model-path", "m"]].concat(),
            vec![("SGLANG_LAUNCH_ALLOW", data)],
        ),
        // clap's own errors quote what was typed: an option, a value.
        (vec!["check", &frob, "--"], vec![]),
        (vec!["check", "--mode", data, "--"], vec![]),
        (vec!["wait-ready", "--timeout", data], vec![]),
    ];
    cases
        .into_iter()
        .map(|(args, env)| {
            let mut c = launcher(&args);
            c.current_dir(dir).envs(env);
            let o = c.output().unwrap();
            let mut bytes = o.stdout;
            bytes.extend(o.stderr);
            (format!("{args:?}"), bytes)
        })
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(8))]

    /// No control character from data reaches the terminal, in any command: no byte below
    /// 0x20 but the launcher's own line breaks (no ESC at all: colour is off), no DEL, no C1
    /// or bidi control; a data newline is shown as `\n`, so it never starts a line of its own.
    #[test]
    fn no_control_from_data_reaches_the_terminal(
        mid in proptest::collection::vec(hostile_char(), 1..6),
    ) {
        let data = format!("d{}\nFAKE{}z", mid.iter().collect::<String>(), mid.iter().collect::<String>());
        let dir = tempfile::tempdir().unwrap();
        for (cmd, bytes) in outputs_quoting(&data, dir.path()) {
            // Case-folded: a variable's value is read in lower case.
            let text = String::from_utf8_lossy(&bytes).to_lowercase();
            let bad = text.chars().find(|&c| {
                (c < ' ' && c != '\n') || ('\x7f'..='\u{9f}').contains(&c)
                    || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
            });
            proptest::prop_assert!(bad.is_none(), "{cmd} {data:?}: {bad:?} in\n{text}");
            proptest::prop_assert!(!text.lines().any(|l| l.starts_with("fake")), "{cmd} {data:?}:\n{text}");
            proptest::prop_assert!(text.contains("\\nfake") || text.contains("\\012fake"), "{cmd}: data not shown:\n{text}");
        }
    }
}
