//! Files that are not what they should be, wherever the launcher reads one: a FIFO (nothing ever
//! writes to it), `/dev/zero` (never ends), a directory, a symlink loop, a file it may not read
//! and one far too large. Each run must end quickly with one message naming the file: an error
//! with the documented exit code for inputs the user named, a warning for context the launcher
//! looks for on its own. Nothing a file holds may appear in a message.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common;

use assert_cmd::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// A run that has not ended by then is killed, and the test fails.
const LIMIT: Duration = Duration::from_secs(10);
const MIB: u64 = 1024 * 1024;

fn topology() -> String {
    format!("{ROOT}/examples/topologies/8x-rtx-pro-6000-pcie.json")
}

fn model() -> String {
    format!("{ROOT}/examples/models/Qwen3-32B")
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Hostile {
    Fifo,
    DevZero,
    Directory,
    SymlinkLoop,
    NoPermission,
    /// Larger than the kind's cap (a sparse file: no disk is used).
    Oversized(u64),
}

impl Hostile {
    /// Every kind, with this cap.
    fn all(cap: u64) -> [Hostile; 6] {
        use Hostile::*;
        [
            Fifo,
            DevZero,
            Directory,
            SymlinkLoop,
            NoPermission,
            Oversized(cap),
        ]
    }

    /// What the message says about it.
    fn words(self) -> String {
        match self {
            Hostile::Fifo => "it is a named pipe (FIFO), not a regular file".into(),
            Hostile::DevZero => "it is a character device, not a regular file".into(),
            Hostile::Directory => "it is a directory, not a regular file".into(),
            Hostile::SymlinkLoop => "Too many levels of symbolic links".into(),
            Hostile::NoPermission => "Permission denied".into(),
            Hostile::Oversized(cap) => format!("larger than {} MiB", cap / MIB),
        }
    }
}

fn root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Puts `what` at `at`; `false` when it cannot apply here: root reads any file whatever its
/// permissions, so a denied read can only be shown to other users.
fn plant(what: Hostile, at: &Path) -> bool {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    match what {
        Hostile::Fifo => {
            nix::unistd::mkfifo(at, nix::sys::stat::Mode::from_bits(0o600).unwrap()).unwrap()
        }
        Hostile::DevZero => symlink("/dev/zero", at).unwrap(),
        Hostile::Directory => std::fs::create_dir(at).unwrap(),
        Hostile::SymlinkLoop => {
            let other = at.with_extension("loop");
            symlink(&other, at).unwrap();
            symlink(at, &other).unwrap();
        }
        Hostile::NoPermission => {
            if root() {
                eprintln!("skipped: running as root, which may read a file of mode 000");
                return false;
            }
            std::fs::write(at, "{}").unwrap();
            std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o000)).unwrap();
        }
        Hostile::Oversized(cap) => {
            let f = std::fs::File::create(at).unwrap();
            f.set_len(cap + 1).unwrap();
            std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    true
}

struct Ran {
    code: i32,
    /// stderr, then stdout.
    stderr: String,
}

/// Runs the launcher, failing when it has not ended within [`LIMIT`].
fn run(mut c: Command) -> Ran {
    let start = Instant::now();
    let out = c.timeout(LIMIT).output().unwrap();
    let took = start.elapsed();
    // `check` prints its report on stdout, warnings and errors go to stderr: both are read.
    let stderr =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("did not end within {LIMIT:?} (killed); stderr: {stderr}"));
    assert!(took < LIMIT, "took {took:?}");
    Ran { code, stderr }
}

fn check(extra: &[&str], sglang: &[&str]) -> Command {
    let mut c = common::launcher();
    c.arg("check").args(extra).arg("--").args(sglang);
    c
}

/// The case's one line on stderr that names `path`.
fn line_naming<'a>(r: &'a Ran, path: &Path) -> &'a str {
    let shown = path.display().to_string();
    r.stderr
        .lines()
        .find(|l| l.contains(&shown))
        .unwrap_or_else(|| panic!("no line names {shown}:\n{}", r.stderr))
}

#[test]
fn a_topology_file_of_any_wrong_kind_is_a_usage_error() {
    let t = tempfile::tempdir().unwrap();
    for what in Hostile::all(16 * MIB) {
        let at = t.path().join(format!("{what:?}.json"));
        if !plant(what, &at) {
            continue;
        }
        let at_s = at.to_str().unwrap();
        let r = run(check(
            &["--topology", at_s, "--sglang-version", "0.5.23"],
            &["--model-path", &model()],
        ));
        assert_eq!(r.code, 2, "{what:?}: {}", r.stderr);
        let l = line_naming(&r, &at);
        assert!(l.contains("cannot read topology file"), "{what:?}: {l}");
        assert!(l.contains(&what.words()), "{what:?}: {l}");
        assert!(l.contains("--topology"), "{what:?}: {l}");
    }
}

#[test]
fn an_sglang_config_file_of_any_wrong_kind_blocks_with_arg001() {
    let t = tempfile::tempdir().unwrap();
    for what in Hostile::all(16 * MIB) {
        let at = t.path().join(format!("{what:?}.yaml"));
        if !plant(what, &at) {
            continue;
        }
        let r = run(check(
            &["--topology", &topology(), "--sglang-version", "0.5.23"],
            &["--model-path", &model(), "--config", at.to_str().unwrap()],
        ));
        assert_eq!(r.code, 1, "{what:?}: {}", r.stderr);
        let l = line_naming(&r, &at);
        assert!(l.contains("ARG001"), "{what:?}: {l}");
        // Where SGLang itself fails at once, its own words; where it would hang or fill
        // memory, the launcher's.
        let expected = match what {
            Hostile::Directory => "IsADirectoryError: [Errno 21] Is a directory".to_owned(),
            Hostile::SymlinkLoop => "Config file not found".to_owned(),
            Hostile::NoPermission => "PermissionError: [Errno 13] Permission denied".to_owned(),
            other => format!(
                "cannot read config file {}: {}",
                at.display(),
                other.words()
            ),
        };
        assert!(l.contains(&expected), "{what:?}: {l}");
    }
}

/// Root refuses a file others may write before reading it (`/dev/zero` is mode 666).
fn refused_or(r: &Ran, path: &Path, what: Hostile) {
    let l = line_naming(r, path);
    let refused = what == Hostile::DevZero && root() && l.contains("group or others");
    assert!(refused || l.contains(&what.words()), "{what:?}: {l}");
}

#[test]
fn a_launcher_config_file_of_any_wrong_kind_is_a_usage_error() {
    let t = tempfile::tempdir().unwrap();
    for what in Hostile::all(MIB) {
        let at = t.path().join(format!("{what:?}.toml"));
        if !plant(what, &at) {
            continue;
        }
        let mut c = check(
            &["--topology", &topology(), "--sglang-version", "0.5.23"],
            &["--model-path", &model()],
        );
        c.env("SGLANG_LAUNCH_SYSTEM_CONFIG", &at);
        let r = run(c);
        assert_eq!(r.code, 2, "{what:?}: {}", r.stderr);
        refused_or(&r, &at, what);
    }
}

#[test]
fn a_profile_of_any_wrong_kind_is_a_usage_error() {
    for what in Hostile::all(MIB) {
        let t = tempfile::tempdir().unwrap();
        let at = t.path().join("p.toml");
        if !plant(what, &at) {
            continue;
        }
        let dir = t.path().to_str().unwrap();
        let r = run(check(
            &[
                "--profile",
                "p",
                "--profiles-dir",
                dir,
                "--topology",
                &topology(),
            ],
            &["--model-path", &model()],
        ));
        assert_eq!(r.code, 2, "{what:?}: {}", r.stderr);
        refused_or(&r, &at, what);
        if what != Hostile::DevZero || !root() {
            assert!(r.stderr.contains("cannot read profile"), "{}", r.stderr);
        }
    }
}

/// A model directory with the example's config.json, and `name` replaced by `what`.
fn model_with(t: &Path, name: &str, what: Hostile) -> Option<PathBuf> {
    let dir = t.join("model");
    std::fs::create_dir_all(&dir).unwrap();
    if name != "config.json" {
        std::fs::copy(format!("{}/config.json", model()), dir.join("config.json")).unwrap();
    }
    plant(what, &dir.join(name)).then_some(dir)
}

#[test]
fn a_model_config_of_any_wrong_kind_is_a_warning_and_the_plan_goes_on() {
    for what in Hostile::all(64 * MIB) {
        let t = tempfile::tempdir().unwrap();
        let Some(dir) = model_with(t.path(), "config.json", what) else {
            continue;
        };
        let r = run(check(
            &["--topology", &topology(), "--sglang-version", "0.5.23"],
            &["--model-path", dir.to_str().unwrap()],
        ));
        assert_eq!(r.code, 0, "{what:?}: {}", r.stderr);
        let l = line_naming(&r, &dir.join("config.json"));
        assert!(l.contains("MEM002") && l.contains(&what.words()), "{l}");
    }
}

#[test]
fn a_safetensors_shard_of_any_wrong_kind_is_a_warning() {
    // A header length past the cap, in a file that really is that long: refused before any
    // allocation.
    for what in Hostile::all(0) {
        let t = tempfile::tempdir().unwrap();
        let name = "model-00001-of-00001.safetensors";
        let Some(dir) = model_with(t.path(), name, what) else {
            continue;
        };
        let shard = dir.join(name);
        if let Hostile::Oversized(_) = what {
            let len: u64 = 200 * MIB;
            std::fs::write(&shard, len.to_le_bytes()).unwrap();
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&shard)
                .unwrap();
            f.set_len(len + 8).unwrap();
        }
        let r = run(check(
            &["--topology", &topology(), "--sglang-version", "0.5.23"],
            &["--model-path", dir.to_str().unwrap()],
        ));
        assert_eq!(r.code, 0, "{what:?}: {}", r.stderr);
        let l = line_naming(&r, &shard);
        assert!(l.contains("MEM002"), "{l}");
        let expected = match what {
            Hostile::Oversized(_) => "implausible safetensors header length".to_owned(),
            other => other.words(),
        };
        assert!(l.contains(&expected), "{what:?}: {l}");
    }
}

#[test]
fn a_shard_that_links_to_another_file_never_shows_its_bytes() {
    let t = tempfile::tempdir().unwrap();
    let secret = t.path().join("secret");
    let dir = t.path().join("model");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(format!("{}/config.json", model()), dir.join("config.json")).unwrap();
    let cases: [&[u8]; 2] = [
        b"hunter2:topsecret\n",
        // A plausible length, then text that is not JSON.
        b"\x09\0\0\0\0\0\0\0hunter2!!",
    ];
    for (i, bytes) in cases.iter().enumerate() {
        std::fs::write(&secret, bytes).unwrap();
        let shard = dir.join(format!("model-0000{i}.safetensors"));
        symlink(&secret, &shard).unwrap();
        let r = run(check(
            &["--topology", &topology(), "--sglang-version", "0.5.23"],
            &["--model-path", dir.to_str().unwrap()],
        ));
        let prefix = u64::from_le_bytes(bytes[..8].try_into().unwrap()).to_string();
        assert!(line_naming(&r, &shard).contains("MEM002"), "{}", r.stderr);
        assert!(!r.stderr.contains("hunter2"), "{}", r.stderr);
        assert!(i == 1 || !r.stderr.contains(&prefix), "{}", r.stderr);
        std::fs::remove_file(&shard).unwrap();
    }
}

/// `HF_HUB_CACHE/models--acme--m` with snapshot `abc` (its config.json a link into `blobs/`,
/// as the Hub lays it out) and `refs/main` as given.
fn hub_cache(t: &Path) -> PathBuf {
    let repo = t.join("hub/models--acme--m");
    for d in ["refs", "blobs", "snapshots/abc"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    std::fs::copy(format!("{}/config.json", model()), repo.join("blobs/cfg")).unwrap();
    symlink("../../blobs/cfg", repo.join("snapshots/abc/config.json")).unwrap();
    repo
}

fn plan_cached(t: &Path) -> Ran {
    let mut c = check(
        &["--topology", &topology(), "--sglang-version", "0.5.23"],
        &["--model-path", "acme/m"],
    );
    c.env("HF_HUB_CACHE", t.join("hub"));
    run(c)
}

#[test]
fn a_cached_model_through_blob_links_is_read() {
    let t = tempfile::tempdir().unwrap();
    let repo = hub_cache(t.path());
    std::fs::write(repo.join("refs/main"), "abc\n").unwrap();
    let r = plan_cached(t.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("verdict: ok\n"), "{}", r.stderr);
    assert!(!r.stderr.contains("sglang-launch: warning"), "{}", r.stderr);
    assert!(
        r.stderr.contains("  model weights") || r.stderr.contains("  weights "),
        "{}",
        r.stderr
    );
}

#[test]
fn a_hf_ref_of_any_wrong_kind_is_a_warning_and_the_newest_snapshot_stands_in() {
    for what in Hostile::all(1024) {
        let t = tempfile::tempdir().unwrap();
        let at = hub_cache(t.path()).join("refs/main");
        if !plant(what, &at) {
            continue;
        }
        let r = plan_cached(t.path());
        assert_eq!(r.code, 0, "{what:?}: {}", r.stderr);
        let l = line_naming(&r, &at);
        assert!(l.contains("cannot read Hugging Face cache ref"), "{l}");
        let words = match what {
            Hostile::Oversized(_) => "larger than 1 KiB".to_owned(),
            other => other.words(),
        };
        assert!(l.contains(&words), "{what:?}: {l}");
        assert!(!r.stderr.contains("MEM002"), "{}", r.stderr);
    }
}

#[test]
fn a_hf_ref_never_leads_out_of_the_cache() {
    let t = tempfile::tempdir().unwrap();
    // A snapshot elsewhere whose config would be reported if it were read.
    let outside = t.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("config.json"), "{").unwrap();
    let repo = hub_cache(t.path());
    symlink(&outside, repo.join("snapshots/evil")).unwrap();
    let refs = [
        outside.to_str().unwrap().to_owned(),
        "../../../outside".to_owned(),
        "evil".to_owned(),
    ];
    for r in refs {
        std::fs::write(repo.join("refs/main"), format!("{r}\n")).unwrap();
        let ran = plan_cached(t.path());
        assert_eq!(ran.code, 0, "{r}: {}", ran.stderr);
        assert!(!ran.stderr.contains("MEM002"), "{r}: {}", ran.stderr);
        assert!(
            !ran.stderr.contains("outside/config.json"),
            "{}",
            ran.stderr
        );
        let warned = if r == "evil" {
            "leads outside the Hugging Face cache entry"
        } else {
            "does not hold a commit hash; ignored"
        };
        assert!(ran.stderr.contains(warned), "{r}: {}", ran.stderr);
        assert!(
            ran.stderr.contains("  model weights") || ran.stderr.contains("  weights "),
            "{}",
            ran.stderr
        );
    }
}

#[test]
fn a_python_version_file_of_any_wrong_kind_is_a_warning() {
    for what in Hostile::all(4096) {
        let t = tempfile::tempdir().unwrap();
        let shims = t.path().join("pyenv/shims");
        std::fs::create_dir_all(t.path().join("pyenv/versions/3.11.9/bin")).unwrap();
        std::fs::create_dir_all(&shims).unwrap();
        std::fs::write(shims.join("python3"), "#!/bin/sh\nexit 1\n").unwrap();
        let work = t.path().join("work");
        let at = work.join(".python-version");
        if !plant(what, &at) {
            continue;
        }
        let python = shims.join("python3");
        let mut c = check(
            &[
                "--python",
                python.to_str().unwrap(),
                "--topology",
                &topology(),
            ],
            &["--model-path", &model()],
        );
        c.current_dir(&work);
        let r = run(c);
        assert_eq!(r.code, 0, "{what:?}: {}", r.stderr);
        let l = line_naming(&r, &at);
        let words = match what {
            Hostile::Oversized(_) => "larger than 4 KiB".to_owned(),
            other => other.words(),
        };
        assert!(l.starts_with("sglang-launch: warning: cannot read pyenv version file"));
        assert!(l.contains(&words), "{what:?}: {l}");
    }
}

#[test]
fn package_metadata_of_any_wrong_kind_is_a_warning() {
    // Only the headers at the top are read: a huge file is read no further than its start.
    for what in Hostile::all(4 * 1024 * MIB) {
        let t = tempfile::tempdir().unwrap();
        let at = t.path().join("pp/sglang.egg-info/PKG-INFO");
        if !plant(what, &at) {
            continue;
        }
        let mut c = check(
            &[
                "--python",
                "/nonexistent/python3",
                "--topology",
                &topology(),
            ],
            &["--model-path", &model()],
        );
        c.env("PYTHONPATH", t.path().join("pp"));
        let r = run(c);
        assert_eq!(r.code, 0, "{what:?}: {}", r.stderr);
        if let Hostile::Oversized(_) = what {
            continue; // read from its start: no version header there, nothing to warn about
        }
        let l = line_naming(&r, &at);
        assert!(l.contains("cannot read package metadata") && l.contains(&what.words()));
    }
}
