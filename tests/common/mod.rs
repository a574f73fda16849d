//! The launcher binary with the host's own settings kept out, for every test that runs it.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// A variable of the host that would change what the launcher does: SGLang's and the
/// launcher's own, the schedulers' (Slurm, LeaderWorkerSet), the Hugging Face Hub's, proxies
/// the terminal width the report wraps to, and the locale (its character set picks UTF-8 or
/// ASCII punctuation).
fn host_setting(k: &str) -> bool {
    ["SGLANG_", "SGL_", "SLURM_", "LWS_", "HF_", "HUGGING"]
        .iter()
        .any(|p| k.starts_with(p))
        || k.to_ascii_uppercase().ends_with("_PROXY")
        || k == "MASTER_PORT"
        || k == "MASTER_ADDR"
        || k == "CUDA_VISIBLE_DEVICES"
        || k == "COLUMNS"
        || k == "LANG"
        || k.starts_with("LC_")
}

/// `sglang-launch` run from the repository root, without colour, the host's settings, its
/// config files (the system one is overridden, the user one absent) or its device nodes.
#[allow(dead_code)]
pub fn launcher() -> Command {
    launcher_at(&assert_cmd::cargo::cargo_bin("sglang-launch"))
}

/// [`launcher`] run through another path to the binary (a link to it installed in a venv).
#[allow(dead_code)]
pub fn launcher_at(path: &Path) -> Command {
    Command::from_std(launcher_std_at(path))
}

/// [`launcher`] as a plain `std::process::Command`, for tests that wire its streams themselves.
#[allow(dead_code)]
pub fn launcher_std() -> std::process::Command {
    launcher_std_at(&assert_cmd::cargo::cargo_bin("sglang-launch"))
}

fn launcher_std_at(path: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(path);
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    for (k, _) in std::env::vars_os() {
        if let Some(k) = k.to_str().filter(|k| host_setting(k)) {
            c.env_remove(k);
        }
    }
    c.envs(ISOLATION);
    c.env("XDG_STATE_HOME", state_home());
    c
}

/// Where the launchers of this test run keep their run records and observations (a test that
/// reads them sets its own): never the host's state directory.
fn state_home() -> &'static Path {
    Path::new(concat!(env!("CARGO_TARGET_TMPDIR"), "/state"))
}

/// What every launcher the tests run is given: no colour, no config file of the host's, and
/// (the host's own accelerators, an AMD or Ascend test machine, would make it pass through) no
/// device nodes.
const ISOLATION: [(&str, &str); 4] = [
    ("NO_COLOR", "1"),
    (
        "SGLANG_LAUNCH_SYSTEM_CONFIG",
        "/nonexistent/sglang-launch.toml",
    ),
    ("XDG_CONFIG_HOME", "/nonexistent"),
    ("SGLANG_LAUNCH_DEVICE_ROOT", "/nonexistent"),
];

/// A venv layout in `dir/venv` with SGLang 0.5.23 "installed" and `bin/python3` holding
/// `script` with `mode`; returns that `python3`.
#[allow(dead_code)]
pub fn venv_with(dir: &Path, script: &str, mode: u32) -> PathBuf {
    let bin = dir.join("venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    sglang_dist_info(
        &dir.join("venv/lib/python3.11/site-packages"),
        "0.5.23",
        None,
    );
    std::fs::write(
        dir.join("venv/pyvenv.cfg"),
        "home = /usr/bin\nversion = 3.11.7\n",
    )
    .unwrap();
    let py = bin.join("python3");
    std::fs::write(&py, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(mode)).unwrap();
    py
}

/// Installs the `sglang` distribution `version` in `site` (its `.dist-info` with METADATA) and,
/// with `editable`, marks it a PEP 610 editable install of that URL (a source checkout).
/// Returns the `.dist-info` directory.
#[allow(dead_code)]
pub fn sglang_dist_info(site: &Path, version: &str, editable: Option<&str>) -> PathBuf {
    let info = site.join(format!("sglang-{version}.dist-info"));
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n"),
    )
    .unwrap();
    if let Some(url) = editable {
        std::fs::write(
            info.join("direct_url.json"),
            format!(r#"{{"url": "{url}", "dir_info": {{"editable": true}}}}"#),
        )
        .unwrap();
    }
    info
}

/// A fake interpreter in a venv layout with SGLang 0.5.23 "installed". Run, it records its PID,
/// its argv (NUL-separated) and its environment next to `dir/record`.
#[allow(dead_code)]
pub fn fake_venv(dir: &Path) -> PathBuf {
    let r = dir.join("record");
    let script = format!(
        "#!/bin/sh\necho $$ > '{r}.pid'\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > '{r}.argv'\nenv > '{r}.env'\n",
        r = r.display()
    );
    venv_with(dir, &script, 0o755)
}

/// What the fake interpreter was run with: `(argv after the interpreter, environment lines)`;
/// `None` when it never ran.
#[allow(dead_code)]
pub fn recorded(dir: &Path) -> Option<(Vec<String>, Vec<String>)> {
    let argv = std::fs::read(dir.join("record.argv")).ok()?;
    let argv = argv
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    let env = std::fs::read_to_string(dir.join("record.env")).unwrap();
    Some((argv, env.lines().map(str::to_owned).collect()))
}

/// Reads one HTTP request's head from `stream` (what the local test servers answer); returns
/// its request line.
#[allow(dead_code)]
pub fn request_line(stream: &std::net::TcpStream) -> String {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap() > 2 {
        line.clear();
    }
    first
}

/// The fake libnvidia-ml (`tests/fake-nvml`), built once per test binary into its own target
/// directory. It reads the GPUs from `FAKE_NVML_TOPOLOGY` (a topology/v1 file).
#[allow(dead_code)]
pub fn fake_nvml_lib() -> &'static Path {
    static LIB: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        // target/<profile>/deps/nvml-<hash> → target
        let target = exe.ancestors().nth(3).unwrap().to_path_buf();
        let dir = target.join("fake-nvml");
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "fake-nvml", "--manifest-path"])
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&dir)
            .status()
            .expect("run cargo");
        assert!(status.success(), "building fake-nvml failed");
        let lib = dir.join("debug").join(format!(
            "{}fake_nvml{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ));
        assert!(lib.exists(), "{} missing", lib.display());
        lib
    })
}

/// Every file called `name` under `dir`, at any depth (none when `dir` is missing).
#[allow(dead_code)]
pub fn files_named(dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_named(&p, name));
        } else if p.file_name().is_some_and(|n| n == name) {
            out.push(p);
        }
    }
    out
}

/// What a user sees of one run, whole, for a snapshot: the exit code, then stdout and stderr,
/// normalised by [`normalise`] (`paths`: a test's own directories and their stand-ins).
#[allow(dead_code)]
pub fn shown(out: &std::process::Output, paths: &[(&Path, &str)]) -> String {
    let code = out
        .status
        .code()
        .map_or_else(|| format!("{:?}", out.status), |c| c.to_string());
    let stream = |name: &str, bytes: &[u8]| {
        if bytes.is_empty() {
            format!("--- {name}: (empty)\n")
        } else {
            let text = String::from_utf8_lossy(bytes);
            let end = if text.ends_with('\n') {
                ""
            } else {
                "\n(no newline at end)\n"
            };
            format!("--- {name}:\n{text}{end}")
        }
    };
    let text = format!(
        "exit: {code}\n{}{}",
        stream("stdout", &out.stdout),
        stream("stderr", &out.stderr)
    );
    normalise(&text, paths)
}

/// One run of `cmd` as a transcript for a snapshot: the command line (`$ VAR=value
/// sglang-launch ARGS`, with the variables the test set), then [`shown`].
#[allow(dead_code)]
pub fn transcript(cmd: &mut Command, paths: &[(&Path, &str)]) -> String {
    transcript_of(cmd, paths).1
}

/// [`transcript`], with the run's output for the assertions a test makes on it as well.
#[allow(dead_code)]
pub fn transcript_of(cmd: &mut Command, paths: &[(&Path, &str)]) -> (std::process::Output, String) {
    let out = cmd.output().unwrap();
    let quote = |s: &std::ffi::OsStr| shell_words::quote(&s.to_string_lossy()).into_owned();
    let mut line = String::from("$");
    for (k, v) in cmd.get_envs() {
        let Some(v) = v else { continue };
        let fixed = ISOLATION.iter().any(|(fk, fv)| k == *fk && v == *fv)
            || (k == "XDG_STATE_HOME" && v == state_home().as_os_str());
        if !fixed {
            line += &format!(" {}={}", k.to_string_lossy(), quote(v));
        }
    }
    let program = Path::new(cmd.get_program());
    if program == assert_cmd::cargo::cargo_bin("sglang-launch") {
        line += " sglang-launch";
    } else {
        line += &format!(" {}", quote(program.as_os_str()));
    }
    for a in cmd.get_args() {
        line += &format!(" {}", quote(a));
    }
    let text = normalise(&format!("{line}\n"), paths) + &shown(&out, paths);
    (out, text)
}

/// `text` with only what legitimately differs between runs and machines replaced: each of
/// `paths` by its stand-in, then the launcher binary (`[BIN]`), the build's target directory
/// (`[TARGET]`), the repository (`[ROOT]`), any other temporary directory `tempfile` made
/// (`[TMP]`), the home directory (`[HOME]`) and the launcher's own version (`[VERSION]`).
#[allow(dead_code)]
pub fn normalise(text: &str, paths: &[(&Path, &str)]) -> String {
    let bin = assert_cmd::cargo::cargo_bin("sglang-launch");
    let target = bin.ancestors().nth(2).unwrap_or(&bin).to_path_buf();
    let mut subs: Vec<(String, String)> = Vec::new();
    let mut add = |p: &Path, to: &str| {
        for p in [p.to_path_buf(), p.canonicalize().unwrap_or_default()] {
            let s = p.to_string_lossy().into_owned();
            if s.len() > 1 {
                subs.push((s, to.to_owned()));
            }
        }
    };
    for (p, to) in paths {
        add(p, to);
    }
    add(&bin, "[BIN]");
    add(&target, "[TARGET]");
    add(Path::new(env!("CARGO_MANIFEST_DIR")), "[ROOT]");
    // Longest first, so that a path inside another is replaced whole.
    subs.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    let mut text = text.to_owned();
    for (from, to) in &subs {
        text = text.replace(from, to);
    }
    text = temp_dirs(&text);
    if let Some(home) = std::env::var_os("HOME").filter(|h| h.len() > 1) {
        text = text.replace(&*home.to_string_lossy(), "[HOME]");
    }
    let v = env!("CARGO_PKG_VERSION");
    for lead in ["sglang-launch ", "sglang-launch/", "sglang-launch v"] {
        text = text.replace(&format!("{lead}{v}"), &format!("{lead}[VERSION]"));
    }
    text
}

/// `text` with each `tempfile` directory (`$TMPDIR/.tmpXXXXXX`) as `[TMP]`.
fn temp_dirs(text: &str) -> String {
    let tmp = std::env::temp_dir().join(".tmp");
    let tmp = tmp.to_string_lossy();
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(&*tmp) {
        out.push_str(&rest[..i]);
        let after = &rest[i + tmp.len()..];
        let n = after
            .char_indices()
            .take_while(|(_, c)| c.is_ascii_alphanumeric())
            .count();
        out.push_str("[TMP]");
        rest = &after[n..];
    }
    out.push_str(rest);
    out
}
