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
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1");
    for (k, _) in std::env::vars_os() {
        if let Some(k) = k.to_str().filter(|k| host_setting(k)) {
            c.env_remove(k);
        }
    }
    c.env(
        "SGLANG_LAUNCH_SYSTEM_CONFIG",
        "/nonexistent/sglang-launch.toml",
    )
    .env("XDG_CONFIG_HOME", "/nonexistent")
    // The host's own accelerators (an AMD or Ascend test machine) would make it pass through.
    .env("SGLANG_LAUNCH_DEVICE_ROOT", "/nonexistent");
    c
}

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
