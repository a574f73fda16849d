//! Secrets never reach any output: every spelling of a secret option, secret-named variables,
//! `--config` files, URL passwords, and each secret wherever it recurs; harmless values that
//! only look like secrets (`--tokenizer-mode slow`) are printed as they are.

use crate::common;

use std::path::{Path, PathBuf};

use proptest::prelude::*;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn topo() -> String {
    format!("{ROOT}/tests/fixtures/topologies/1x-l4.json")
}

/// A venv whose `python3` SGLang looks installed for, but which cannot be executed: `run`
/// gets as far as exec, which fails and says so.
fn broken_venv(dir: &Path) -> PathBuf {
    common::venv_with(dir, "not a program\n", 0o644)
}

/// stdout and stderr of one launcher run, together.
fn output(cmd: &[&str], sglang: &[String], env: &[(String, String)], dir: &Path) -> String {
    let mut c = common::launcher();
    c.current_dir(dir)
        .args(cmd)
        .args(["--topology", &topo(), "--sglang-version", "0.5.23", "--"])
        .args(sglang);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every command that prints the line or the plan, run on the same input.
fn all_outputs(sglang: &[String], env: &[(String, String)], dir: &Path) -> Vec<(String, String)> {
    let py = broken_venv(dir);
    let py = py.to_str().unwrap();
    [
        &["check"][..],
        &["plan"],
        &["plan", "--json"],
        &["plan", "--print-args"],
        &["run", "--dry-run"],
        &["run", "--json", "--dry-run"],
        &["run", "--python", py],
    ]
    .iter()
    .map(|cmd| (cmd.join(" "), output(cmd, sglang, env, dir)))
    .collect()
}

fn words(line: &[&str]) -> Vec<String> {
    line.iter().map(|s| s.to_string()).collect()
}

/// Where the canary secret goes.
#[derive(Debug, Clone)]
enum Place {
    Argv(&'static [&'static str]),
    Env(&'static str),
    Config(&'static str),
}

const ARGV: &[&[&str]] = &[
    &["--api-key", "S"],
    &["--api-key=S"],
    &["--api", "S"],
    &["--admin-api-key", "S"],
    &["--admin-api-key=S"],
    &["--ssl-keyfile-password", "S"],
    &["--api-key", "--api-key", "S"],
    &["--api-key", "x1", "--api-key", "S"],
    &["--hf-token", "S"],
    &["--dist-init-addr", "user:S@host:5000"],
    &["--tokenizer-path", "https://u:S@host/t"],
];
const ENV: &[&str] = &["HF_TOKEN", "OPENAI_API_KEY", "DB_PASSWORD", "MY_SECRET"];
const CONFIG: &[&str] = &[
    "api_key: S\n",
    "api-key: S\n",
    "hf-token: S\n",
    "hf_token: S\n",
    "admin-api-key: [S, other]\n",
    "api-key: [first, S]\n",
    "api-key: \"S\"\n",
];

fn place() -> impl Strategy<Value = Place> {
    prop_oneof![
        proptest::sample::select(ARGV).prop_map(Place::Argv),
        proptest::sample::select(ENV).prop_map(Place::Env),
        proptest::sample::select(CONFIG).prop_map(Place::Config),
    ]
}

/// The line, environment and config file for one case.
fn case(
    secret: &str,
    place: &Place,
    reuse: Option<&str>,
    dir: &Path,
) -> (Vec<String>, Vec<(String, String)>) {
    let mut line = words(&["--model-path", "m", "--tokenizer-mode", "slow"]);
    let mut env = Vec::new();
    match place {
        Place::Argv(w) => line.extend(w.iter().map(|t| t.replace('S', secret))),
        Place::Env(name) => env.push((name.to_string(), secret.to_owned())),
        Place::Config(yaml) => {
            std::fs::write(dir.join("c.yaml"), yaml.replace('S', secret)).unwrap();
            line.extend(words(&["--config", "c.yaml"]));
        }
    }
    if let Some(flag) = reuse {
        line.extend([flag.to_owned(), secret.to_owned()]);
    }
    (line, env)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_canary_secret_never_reaches_any_output(
        secret in "[A-Z][A-Za-z0-9]{9,15}",
        place in place(),
        reuse in proptest::option::of(proptest::sample::select(
            &["--served-model-name", "--tokenizer-path", "--revision"][..],
        )),
    ) {
        // A canary the fixed parts of the output cannot contain by chance.
        let secret = format!("Cnry{secret}");
        let dir = tempfile::tempdir().unwrap();
        let (line, env) = case(&secret, &place, reuse, dir.path());
        for (cmd, out) in all_outputs(&line, &env, dir.path()) {
            prop_assert!(!out.contains(&secret), "{cmd} {line:?} {env:?} printed the secret:\n{out}");
            // The harmless look-alike survives where the line is shown.
            if cmd.contains("print-args") {
                prop_assert!(out.contains("--tokenizer-mode slow"), "{cmd}:\n{out}");
            }
        }
    }
}

fn one(cmd: &[&str], line: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    output(cmd, &words(line), &[], dir.path())
}

#[test]
fn a_repeated_secret_option_masks_the_value_not_the_option() {
    let out = one(
        &["plan", "--print-args"],
        &["--model-path", "m", "--api-key", "--api-key", "Sekret123"],
    );
    assert!(!out.contains("Sekret123"), "{out}");
    assert!(out.contains("--api-key --api-key '***'"), "{out}");
    // An option after a secret one is an option: argparse's message names it as it is.
    let out = one(
        &["check"],
        &["--model-path", "m", "--api-key", "--port", "5"],
    );
    assert!(
        out.contains("argument --api-key: expected one argument"),
        "{out}"
    );
}

#[test]
fn url_credentials_are_hidden_in_json_print_args_and_dry_run() {
    let line = [
        "--model-path",
        "m",
        "--dist-init-addr",
        "user:Passw0rd1@host:5000",
        "--tokenizer-path",
        "https://u:Passw0rd2@hub.example/t",
    ];
    for cmd in [
        &["plan", "--json"][..],
        &["plan", "--print-args"],
        &["run", "--dry-run"],
    ] {
        let out = one(cmd, &line);
        assert!(!out.contains("Passw0rd"), "{cmd:?}:\n{out}");
        assert!(out.contains("user:***@host:5000"), "{cmd:?}:\n{out}");
        assert!(out.contains("https://***@hub.example/t"), "{cmd:?}:\n{out}");
    }
}

#[test]
fn config_file_secrets_are_hidden_in_argparse_messages() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c.yaml"),
        "api_key: Sekret1\nhf-token: Sekret2\nadmin-api-key: [Sekret3, Sekret4]\nbogus: 1\n",
    )
    .unwrap();
    let out = output(
        &["check"],
        &words(&["--model-path", "m", "--config", "c.yaml"]),
        &[],
        dir.path(),
    );
    assert!(out.contains("unrecognized arguments"), "{out}");
    assert!(!out.contains("Sekret"), "{out}");
    // The harmless key's value is still named.
    assert!(out.contains("--bogus 1"), "{out}");
}

#[test]
fn a_secret_reused_in_another_flag_is_hidden_there_too() {
    let out = one(
        &["plan", "--json"],
        &[
            "--model-path",
            "m",
            "--api-key",
            "Sekret123",
            "--served-model-name",
            "Sekret123",
        ],
    );
    assert!(!out.contains("Sekret123"), "{out}");
}

#[test]
fn words_that_only_contain_token_are_not_secrets() {
    for cmd in [&["plan", "--print-args"][..], &["plan", "--json"]] {
        let out = one(
            cmd,
            &[
                "--model-path",
                "m",
                "--tokenizer_mode",
                "slow",
                "--max-total-tokens",
                "4096",
            ],
        );
        assert!(!out.contains("***"), "{cmd:?}:\n{out}");
        assert!(out.contains("slow") && out.contains("4096"), "{out}");
    }
}

#[test]
fn show_secrets_is_the_one_way_to_print_them() {
    let out = one(
        &["plan", "--print-args", "--show-secrets"],
        &["--model-path", "m", "--api-key", "Sekret123"],
    );
    assert!(out.contains("--api-key Sekret123"), "{out}");
}
