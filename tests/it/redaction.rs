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

/// stdout and stderr of one launcher run, together: `cmd`, then the offline options and `--`
/// and the SGLang line (none when `sglang` is `None`: the command takes no line).
fn output(cmd: &[&str], sglang: &[String], env: &[(String, String)], dir: &Path) -> String {
    run(cmd, Some(sglang), env, dir)
}

fn run(cmd: &[&str], sglang: Option<&[String]>, env: &[(String, String)], dir: &Path) -> String {
    let mut c = common::launcher();
    c.current_dir(dir).args(cmd);
    if let Some(line) = sglang {
        c.args(["--topology", &topo(), "--sglang-version", "0.5.23", "--"])
            .args(line);
    }
    // A Hub's files land in the case's own cache (its directory names are checked too).
    c.env("XDG_CACHE_HOME", dir.join("cache"))
        .env("HF_HOME", dir.join("hf"));
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

/// One case: the SGLang line, the environment, launcher options for every command that plans
/// (a profile, `--online`), and commands of its own (whole argument lists).
#[derive(Default)]
struct Case {
    line: Vec<String>,
    env: Vec<(String, String)>,
    launcher: Vec<String>,
    own: Vec<Vec<String>>,
}

/// Every command that prints the line, the plan, a profile or the settings, run on the case.
fn all_outputs(c: &Case, dir: &Path) -> Vec<(String, String)> {
    let py = broken_venv(dir);
    let py = py.to_str().unwrap();
    let planning: &[&[&str]] = &[
        &["check"],
        &["plan"],
        &["plan", "--json"],
        &["plan", "--print-args"],
        &["run", "--dry-run"],
        &["run", "--json", "--dry-run"],
        &["run", "--python", py],
    ];
    let mut runs: Vec<(Vec<String>, Option<&[String]>)> = planning
        .iter()
        .map(|cmd| {
            (
                words(cmd).into_iter().chain(c.launcher.clone()).collect(),
                Some(&c.line[..]),
            )
        })
        .collect();
    let upgrade = |extra: &[&str]| {
        let mut v = words(&["upgrade", "--to", "0.5.23", "--sglang-version", "0.5.5"]);
        v.extend(words(extra));
        v.push("--".into());
        v.extend(c.line.clone());
        (v, None)
    };
    // `upgrade` takes no profile: a profile's secret reused on the line is no secret to it.
    if !c.launcher.iter().any(|o| o == "--profile") {
        runs.push(upgrade(&[]));
        runs.push(upgrade(&["--print-args"]));
    }
    runs.push((words(&["config", "show"]), None));
    runs.extend(c.own.iter().map(|cmd| (cmd.clone(), None)));
    runs.iter()
        .map(|(cmd, line)| {
            let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
            (cmd.join(" "), run(&cmd, *line, &c.env, dir))
        })
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
    /// In a URL's or address's password (`P`), around one character a userinfo may hold.
    Userinfo(&'static [&'static str], &'static str),
    /// In a profile (`S`), used with `--profile` and shown by `profiles show`/`list`.
    Profile(&'static str),
    /// In `HF_ENDPOINT`'s password, for a model fetched from that Hub (`org/huge`: MEM013,
    /// `org/bad`: MEM002).
    Hub(&'static str),
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
    // What argparse refuses as the value, and spellings close to a secret option.
    &["--api-key", "-skS"],
    &["--admin-api-key", "--XS"],
    &["--api-key", "--XS", "--port", "5"],
    &["-api-key", "S"],
    &["-api-key=S"],
    &["--api-kye", "S"],
    &["--api_key", "S"],
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
/// Every place a URL or an address holds a password.
const USERINFO: &[&[&str]] = &[
    &["--tokenizer-path", "https://u:P@hub.example/t"],
    &["--model-path", "s3://user:P@host/bucket/m"],
    &["--served-model-name", "http://user:P@host/m"],
    &["--dist-init-addr", "user:P@10.0.0.1:5000"],
    &["--dist-init-addr=user:P@10.0.0.1:5000"],
];
/// RFC 3986's userinfo characters (unreserved, sub-delims, `:`, a pct-encoded `@`) and a raw
/// `@`, which no client sends but users write.
const USERINFO_CHARS: &[&str] = &[
    "-", ".", "_", "~", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";", "=", ":", "%40", "@",
    "==",
];
const PROFILE: &[&str] = &[
    "[args]\napi-key = \"{S}\"\n",
    "[args]\nadmin-api-key = \"{S}\"\n",
    "[args]\napi = \"{S}\"\n",
    "[env]\nHF_TOKEN = \"{S}\"\n",
    "[env]\nDB_PASSWORD = \"{S}\"\n",
    "[env]\nMY_API_KEY = \"{S}\"\n",
    "[env]\nHF_ENDPOINT = \"http://u:{S}@127.0.0.1:1\"\n",
];

fn place() -> impl Strategy<Value = Place> {
    prop_oneof![
        proptest::sample::select(ARGV).prop_map(Place::Argv),
        proptest::sample::select(ENV).prop_map(Place::Env),
        proptest::sample::select(CONFIG).prop_map(Place::Config),
        (
            proptest::sample::select(USERINFO),
            proptest::sample::select(USERINFO_CHARS)
        )
            .prop_map(|(w, c)| Place::Userinfo(w, c)),
        proptest::sample::select(PROFILE).prop_map(Place::Profile),
        proptest::sample::select(&["org/huge", "org/bad"][..]).prop_map(Place::Hub),
    ]
}

/// The case for one place; `reuse` repeats the secret (a URL's whole password) as another
/// flag's value.
fn case(secret: &str, place: &Place, reuse: Option<&str>, dir: &Path) -> Case {
    let mut c = Case {
        line: words(&["--model-path", "m", "--tokenizer-mode", "slow"]),
        ..Case::default()
    };
    let dir_s = dir.to_str().unwrap().to_owned();
    let mut value = secret.to_owned();
    match place {
        Place::Argv(w) => {
            c.line.extend(w.iter().map(|t| t.replace('S', secret)));
            // What the secret option holds: a value argparse refuses (`-skS`) is all secret.
            let held = w.iter().find(|t| t.contains('S')).unwrap();
            if held.starts_with('-') && !held.contains('=') {
                value = held.replace('S', secret);
            }
        }
        Place::Env(name) => c.env.push((name.to_string(), secret.to_owned())),
        Place::Config(yaml) => {
            std::fs::write(dir.join("c.yaml"), yaml.replace('S', secret)).unwrap();
            c.line.extend(words(&["--config", "c.yaml"]));
        }
        Place::Userinfo(w, ch) => {
            let password = format!("{secret}{ch}{secret}");
            value = password.clone();
            c.line.extend(w.iter().map(|t| t.replace('P', &password)));
            let url = format!("http://user:{password}@127.0.0.1:1/health");
            // A process already gone ends the wait at once, its error naming the URL (the
            // timeout's error is `wait_ready_hides_the_urls_password_in_its_error`'s).
            let gone = gone_pid().to_string();
            c.own
                .push(words(&["wait-ready", "--url", &url, "--pid", &gone]));
        }
        Place::Profile(toml) => {
            std::fs::create_dir_all(dir.join("profiles")).unwrap();
            std::fs::write(dir.join("profiles/p.toml"), toml.replace("{S}", secret)).unwrap();
            let at = format!("{dir_s}/profiles");
            c.launcher = words(&["--profiles-dir", &at, "--profile", "p"]);
            let tail = ["--profiles-dir", &at, "--topology", &topo()];
            for cmd in [
                &["show", "p"][..],
                &["show", "p", "--json"],
                &["list"],
                &["list", "--json"],
            ] {
                c.own.push(words(&[&["profiles"][..], cmd, &tail].concat()));
            }
        }
        Place::Hub(repo) => {
            let endpoint = format!("http://user:{secret}@{}", fake_hub());
            c.env.push(("HF_ENDPOINT".into(), endpoint));
            c.line.extend(words(&["--model-path", repo]));
            c.launcher = words(&["--online"]);
        }
    }
    if let Some(flag) = reuse {
        // `--flag=-sk…`: a value that starts with a dash is only a value in that form.
        if value.starts_with('-') {
            c.line.push(format!("{flag}={value}"));
        } else {
            c.line.extend([flag.to_owned(), value]);
        }
    }
    c
}

/// The PID of a child that has exited and been reaped.
fn gone_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A Hub on 127.0.0.1 for the whole run: every repo has config.json, which for `org/bad` is
/// not JSON and for any other repo has 10^8 layers.
fn fake_hub() -> &'static str {
    static HUB: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HUB.get_or_init(|| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let config = format!("{ROOT}/examples/models/Qwen3-32B/config.json");
        let mut huge: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(config).unwrap()).unwrap();
        huge["num_hidden_layers"] = 100_000_000.into();
        let huge = huge.to_string();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                hub_answer(stream, &huge);
            }
        });
        addr
    })
}

fn hub_answer(mut stream: std::net::TcpStream, huge: &str) {
    use std::io::{BufRead, Write};
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let target = first.split_whitespace().nth(1).unwrap_or("");
    let body = if target.starts_with("/api/models/") {
        r#"{"sha":"abc","siblings":[{"rfilename":"config.json"}]}"#
    } else if target.starts_with("/org/bad/") {
        "{not json"
    } else {
        huge
    };
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Every file and directory name under `dir`.
fn names_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        out.push(e.file_name().to_string_lossy().into_owned());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(names_under(&e.path()));
        }
    }
    out
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
        let c = case(&secret, &place, reuse, dir.path());
        for (cmd, out) in all_outputs(&c, dir.path()) {
            prop_assert!(!out.contains(&secret), "{cmd} {:?} {:?} printed the secret:\n{out}", c.line, c.env);
            // The harmless look-alike survives where the line is shown.
            if cmd.starts_with("plan --print-args") {
                prop_assert!(out.contains("--tokenizer-mode slow"), "{cmd}:\n{out}");
            }
        }
        // No file is named for a secret (a `--revision` the user set to it names its snapshot).
        let stored = names_under(dir.path());
        let named = stored.iter().any(|n| n.contains(&secret));
        prop_assert!(reuse.is_some() || !named, "a file is named for it: {stored:?}");
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

/// A password holding any userinfo character is hidden whole from the plan, the printed and
/// exec'd lines, and findings that quote the value (SRV001).
#[test]
fn a_password_of_any_userinfo_character_is_hidden_whole() {
    for ch in USERINFO_CHARS {
        let pw = format!("Pw1{ch}Pw2");
        let line = [
            "--model-path".to_owned(),
            format!("s3://user:{pw}@host/bucket/m"),
            "--served-model-name".to_owned(),
            format!("http://user:{pw}@host/m"),
            "--dist-init-addr".to_owned(),
            format!("user:{pw}@10.0.0.1:5000"),
        ];
        let dir = tempfile::tempdir().unwrap();
        for cmd in [
            &["check"][..],
            &["plan", "--json"],
            &["plan", "--print-args"],
            &["run", "--dry-run"],
        ] {
            let out = output(cmd, &line, &[], dir.path());
            assert!(
                !out.contains("Pw1") && !out.contains("Pw2"),
                "{ch:?} {cmd:?}:\n{out}"
            );
            assert!(out.contains("s3://***@host/bucket/m"), "{cmd:?}:\n{out}");
        }
    }
}

#[test]
fn wait_ready_hides_the_urls_password_in_its_error() {
    for url in [
        "http://user:Sekret=1@127.0.0.1:1/health",
        "http://user:dGVzdA==@127.0.0.1:1/health",
        "http://u:Sek@ret@127.0.0.1:1/health",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            &["wait-ready", "--url", url, "--timeout", "1"],
            None,
            &[],
            dir.path(),
        );
        assert!(
            out.contains("http://***@127.0.0.1:1/health did not answer"),
            "{out}"
        );
        assert!(!out.contains("Sek") && !out.contains("dGVzdA"), "{out}");
    }
}

/// What argparse refuses in a secret option's value place, and a spelling close to a secret
/// option, are masked in its message and the plan; an option there is named as it is.
#[test]
fn values_argparse_refuses_are_masked_where_it_names_them() {
    for (line, shown) in [
        (
            &["--api-key", "-skSekret1"][..],
            "unrecognized arguments: ***",
        ),
        (
            &["--admin-api-key", "--XSekret1"],
            "unrecognized arguments: ***",
        ),
        (
            &["-api-key", "Sekret1"],
            "-api-key ***; did you mean --api-key?",
        ),
        (
            &["--api-kye", "Sekret1"],
            "--api-kye ***; did you mean --api-key?",
        ),
    ] {
        let line: Vec<&str> = ["--model-path", "m"].iter().chain(line).copied().collect();
        for cmd in [&["check"][..], &["plan", "--json"]] {
            let out = one(cmd, &line);
            assert!(!out.contains("Sekret1"), "{cmd:?} {line:?}:\n{out}");
            assert!(out.contains(shown), "{cmd:?} {line:?}:\n{out}");
        }
    }
}

/// `profiles show` (human and JSON) and `list` hide a profile's secret options and variables,
/// and show its other settings.
#[test]
fn profiles_show_masks_the_profiles_secrets() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
    std::fs::write(
        dir.path().join("profiles/sec.toml"),
        "description = \"secret test\"\n[args]\nmodel-path = \"m\"\napi-key = \"Sekret1\"\n\
         admin-api = \"Sekret2\"\n[env]\nHF_TOKEN = \"Sekret3\"\nDB_PASSWORD = \"Sekret4\"\n\
         HF_ENDPOINT = \"http://u:Sekret5@mirror\"\nNCCL_DEBUG = \"INFO\"\n",
    )
    .unwrap();
    let at = dir.path().join("profiles");
    let at = at.to_str().unwrap();
    let topo = topo();
    for cmd in [
        &["profiles", "show", "sec"][..],
        &["profiles", "show", "sec", "--json"],
        &["profiles", "list"],
        &["profiles", "list", "--json"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--profiles-dir", at, "--topology", &topo]);
        let out = run(&args, None, &[], dir.path());
        assert!(!out.contains("Sekret"), "{cmd:?}:\n{out}");
        if cmd[1] == "show" {
            assert!(
                out.contains("***") && out.contains("INFO"),
                "{cmd:?}:\n{out}"
            );
        }
    }
    let out = run(
        &[
            "profiles",
            "show",
            "sec",
            "--profiles-dir",
            at,
            "--topology",
            &topo,
        ],
        None,
        &[],
        dir.path(),
    );
    assert!(out.contains("[args] api-key = \"***\""), "{out}");
    assert!(out.contains("[env] HF_TOKEN = \"***\""), "{out}");
}

/// An `HF_ENDPOINT` password is in no finding about the files fetched from it, nor in the name
/// of the directory they are kept in.
#[test]
fn a_hub_endpoints_password_is_in_no_message_nor_cache_path() {
    for (repo, code) in [("org/huge", "MEM013"), ("org/bad", "MEM002")] {
        let dir = tempfile::tempdir().unwrap();
        let env = [(
            "HF_ENDPOINT".to_owned(),
            format!("http://user:Sekret1@{}", fake_hub()),
        )];
        let line = words(&["--model-path", repo]);
        for cmd in [&["check", "--online"][..], &["plan", "--json", "--online"]] {
            let out = output(cmd, &line, &env, dir.path());
            assert!(out.contains(code), "{cmd:?}:\n{out}");
            assert!(!out.contains("Sekret1"), "{cmd:?}:\n{out}");
        }
        let stored = names_under(&dir.path().join("cache"));
        assert!(stored.iter().any(|n| n.contains("127.0.0.1")), "{stored:?}");
        assert!(!stored.iter().any(|n| n.contains("Sekret1")), "{stored:?}");
    }
}
