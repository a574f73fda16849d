//! Flag sets for releases this build has no data for (newer than the build, a fork, a source
//! checkout): the installed SGLang's own parser, read by running the user's interpreter on the
//! embedded extractor (`scripts/sglang_flags.py`: stdlib only, torch never imported), converted
//! here, and cached per version and install under the user's cache directory, so later runs
//! read the cache and start no Python. The same run reads the install's environment registry
//! (its `environ.py`, statically).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};

use crate::fsread;
use crate::sglang::envs::InstallEnvs;
use crate::sglang::flagset::FlagSet;

mod plausible;

/// The extractor, run with `python -c`.
const EXTRACTOR: &str = include_str!("../../scripts/sglang_flags.py");

/// How long the extractor may run (it takes well under 2 s without torch; a cold disk or a
/// slow import chain gets some slack, then the launcher falls back to the embedded data).
const TIMEOUT: Duration = Duration::from_secs(10);

/// Bumped when the cached format or the extractor's facts change: older caches are rebuilt.
const CACHE_FORMAT: u32 = 2;

/// The install a flag set is read from: its version and its `.dist-info` (or `.egg-info`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Install<'a> {
    pub(crate) version: &'a str,
    pub(crate) dist_info: &'a Path,
    /// The digest of its parser files, when it is not the release its version names: the cache
    /// is then keyed by content (a checkout changes without a reinstall).
    pub(crate) digest: Option<&'a str>,
}

/// A flag set read from an installed SGLang.
#[derive(Debug, Clone)]
pub(crate) struct Extracted {
    pub(crate) flags: FlagSet,
    /// The cache file holding it (None when there is no cache directory or it is not writable).
    pub(crate) cache: Option<PathBuf>,
    /// False when it came from the cache without running Python.
    pub(crate) ran_python: bool,
}

/// Why no flag set could be read from the installed SGLang (the launcher then falls back to
/// the nearest embedded set).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExtractError {
    #[error("could not run {0}: {1}")]
    Spawn(PathBuf, std::io::Error),
    #[error("{0} did not finish within {1:?}")]
    Timeout(PathBuf, Duration),
    #[error("SGLang's parser could not be built: {0}")]
    Failed(String),
    #[error("the extractor's output is not a flag set: {0}")]
    BadOutput(String),
}

/// What a cache file holds: the flag set and the install it was read from.
#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    version: String,
    /// The `.dist-info`/`.egg-info` directory of the install, and its modification time
    /// (a reinstall over the same version changes it).
    dist_info: PathBuf,
    dist_info_mtime: Option<(u64, u32)>,
    /// The parser files' digest the flags were read from (modified installs).
    #[serde(default)]
    digest: Option<String>,
    python: PathBuf,
    flags: serde_json::Value,
    /// The install's environment registry, read from its `environ.py` (None: it has none).
    #[serde(default)]
    envs: Option<serde_json::Value>,
}

/// `$XDG_CACHE_HOME/sglang-launch/flags`, else `~/.cache/sglang-launch/flags`.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("sglang-launch").join("flags"))
}

/// The cache file for this install: the version and a hash of where it is installed (a fork
/// can reuse a version number).
pub(crate) fn cache_path(installed: Install) -> Option<PathBuf> {
    let safe: String = installed
        .version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = match installed.digest {
        Some(d) => format!("{safe}-src-{}.json", &d[..d.len().min(16)]),
        None => format!(
            "{safe}-{:016x}.json",
            fnv1a(installed.dist_info.to_string_lossy().as_bytes())
        ),
    };
    cache_dir().map(|d| d.join(name))
}

pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

pub(crate) fn mtime(p: &Path) -> Option<(u64, u32)> {
    let d = std::fs::metadata(p)
        .ok()?
        .modified()
        .ok()?
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?;
    Some((d.as_secs(), d.subsec_nanos()))
}

/// A cache file's bytes, when no one else could have written it (a planted cache would choose
/// the options the launcher accepts and the defaults it plans with). Shared with the RECORD
/// cache beside it.
pub(crate) fn read_cache(path: &Path) -> Option<Vec<u8>> {
    if let Err(e) = fsread::trust::check(path) {
        fsread::warn_once(path, &format!("ignoring a cache file: {e}; it is rebuilt"));
        return None;
    }
    fsread::read(path, fsread::FLAG_CACHE)
        .map_err(|e| fsread::warn_unless_missing(&e))
        .ok()
}

/// The cached flag set of this install, when there is one for the install as it is now; it
/// is checked as a fresh extraction is.
pub(crate) fn cached(installed: Install) -> Option<Extracted> {
    let path = cache_path(installed)?;
    let bytes = read_cache(&path)?;
    let file: CacheFile = serde_json::from_slice(&bytes).ok()?;
    let same_install = match installed.digest {
        Some(d) => file.digest.as_deref() == Some(d),
        None => {
            file.dist_info == installed.dist_info
                && file.dist_info_mtime == mtime(installed.dist_info)
        }
    };
    let current = file.format == CACHE_FORMAT && file.version == installed.version && same_install;
    if !current {
        return None;
    }
    let flags = match convert(file.flags) {
        Ok(f) => f.with_install_envs(install_envs(file.envs)),
        Err(e) => {
            fsread::warn_once(
                &path,
                &format!("ignoring {}: {e}; it is rebuilt", path.display()),
            );
            return None;
        }
    };
    Some(Extracted {
        flags,
        cache: Some(path),
        ran_python: false,
    })
}

/// The cached flag set, else one extracted now (and cached).
pub(crate) fn load_or_extract(
    python: &Path,
    installed: Install,
) -> Result<Extracted, ExtractError> {
    match cached(installed) {
        Some(found) => Ok(found),
        None => refresh(python, installed),
    }
}

/// Extracts the flag set from the installed SGLang now and rewrites its cache.
pub(crate) fn refresh(python: &Path, installed: Install) -> Result<Extracted, ExtractError> {
    let raw = run(python)?;
    let flags_json = raw.get("flags").cloned().unwrap_or_default();
    let envs = raw.get("envs").cloned().filter(|e| !e.is_null());
    let flags = convert(flags_json.clone())?.with_install_envs(install_envs(envs.clone()));
    let file = CacheFile {
        format: CACHE_FORMAT,
        version: installed.version.to_owned(),
        dist_info: installed.dist_info.to_path_buf(),
        dist_info_mtime: mtime(installed.dist_info),
        digest: installed.digest.map(str::to_owned),
        python: python.to_path_buf(),
        flags: flags_json,
        envs,
    };
    let cache = cache_path(installed).filter(|p| write_cache(p, &file));
    Ok(Extracted {
        flags,
        cache,
        ran_python: true,
    })
}

fn write_cache(path: &Path, file: &CacheFile) -> bool {
    write_atomic(path, &serde_json::to_vec(file).unwrap_or_default())
}

/// Writes a cache file through a new temporary file beside it (created exclusively under a
/// random name: nothing planted at a guessable name is followed), then renamed over it, so a
/// concurrent reader never sees half of it. Nothing is written into a directory someone else
/// could write: the next read would refuse the file anyway.
pub(crate) fn write_atomic(path: &Path, text: &[u8]) -> bool {
    use std::io::Write;
    let Some(dir) = path.parent() else {
        return false;
    };
    if std::fs::create_dir_all(dir).is_err() || fsread::trust::check(dir).is_err() {
        return false;
    }
    let Ok(mut tmp) = tempfile::Builder::new().prefix(".tmp").tempfile_in(dir) else {
        return false;
    };
    tmp.write_all(text).is_ok() && tmp.persist(path).is_ok()
}

/// The extractor's environment registry; one it could not read, or that is not plausible,
/// leaves the embedded one in use.
fn install_envs(envs: Option<serde_json::Value>) -> Option<InstallEnvs> {
    envs.and_then(|e| serde_json::from_value(e).ok())
        .filter(|e| plausible::envs(e).is_ok())
}

/// The extractor's flag set as the launcher's [`FlagSet`], checked for what the parser needs
/// and for what no SGLang parser could have produced.
fn convert(flags: serde_json::Value) -> Result<FlagSet, ExtractError> {
    let set: FlagSet =
        serde_json::from_value(flags).map_err(|e| ExtractError::BadOutput(clip(&e.to_string())))?;
    plausible::flag_set(&set).map_err(ExtractError::BadOutput)?;
    Ok(set)
}

/// Text from the extractor (the user's program), shortened for a message.
fn clip(s: &str) -> String {
    const MAX: usize = 300;
    match s.char_indices().nth(MAX) {
        None => s.to_owned(),
        Some((at, _)) => format!("{}… ({} more bytes)", &s[..at], s.len() - at),
    }
}

/// Output past this is no flag set (a real one is a few hundred KiB): reading stops there.
const OUTPUT_CAP: usize = 8 << 20;

/// After the extractor exits, how long a process it left behind may hold its output open.
const GRACE: Duration = Duration::from_millis(200);

/// How the extractor's output ended.
enum Outcome {
    /// Read to its end.
    Output(Vec<u8>),
    /// More than [`OUTPUT_CAP`].
    Cut,
    /// Still running at [`TIMEOUT`].
    TimedOut,
    /// It exited, but a process outside its group keeps its output open.
    Held,
}

/// Runs the extractor with `python` (no torch import; SGLANG_* variables are ignored by it),
/// in a process group of its own, so the deadline holds whatever it starts: at the deadline,
/// or once it has exited, the whole group is killed and reading stops.
fn run(python: &Path) -> Result<serde_json::Value, ExtractError> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(python)
        .args(["-c", EXTRACTOR])
        .env("PYTHONHASHSEED", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| ExtractError::Spawn(python.to_path_buf(), e))?;
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let stdout = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    // Left behind, not joined, when a process outside the group holds the pipe.
    std::thread::spawn(move || {
        let _ = tx.send(read_capped(stdout, OUTPUT_CAP));
    });
    let outcome = wait_output(&mut child, &rx, group);
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    let _ = child.kill();
    let _ = child.wait();
    match outcome {
        Outcome::Output(out) => parse_output(&out),
        Outcome::Cut => Err(ExtractError::BadOutput(format!(
            "more than {} MiB of output; reading stopped there",
            OUTPUT_CAP >> 20
        ))),
        Outcome::TimedOut => Err(ExtractError::Timeout(python.to_path_buf(), TIMEOUT)),
        Outcome::Held => Err(ExtractError::BadOutput(
            "its output stayed open after it exited (a process it started outside its \
             process group holds it)"
                .into(),
        )),
    }
}

/// Reads to the end, or to `cap` bytes and one more: `(bytes, cut)`.
fn read_capped(mut from: impl Read, cap: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let _ = from.by_ref().take(cap as u64 + 1).read_to_end(&mut out);
    let cut = out.len() > cap;
    out.truncate(cap);
    (out, cut)
}

/// Waits for the output to end, the deadline, or the extractor to exit and the [`GRACE`] after
/// it (then its group is killed, which ends the output of every process in it).
fn wait_output(
    child: &mut std::process::Child,
    rx: &std::sync::mpsc::Receiver<(Vec<u8>, bool)>,
    group: nix::unistd::Pid,
) -> Outcome {
    use std::sync::mpsc::RecvTimeoutError;
    let done = |(out, cut): (Vec<u8>, bool)| {
        if cut {
            Outcome::Cut
        } else {
            Outcome::Output(out)
        }
    };
    let start = Instant::now();
    let mut exited: Option<Instant> = None;
    loop {
        match rx.recv_timeout(Duration::from_millis(5)) {
            Ok(read) => return done(read),
            Err(RecvTimeoutError::Disconnected) => return Outcome::Output(Vec::new()),
            Err(RecvTimeoutError::Timeout) => {}
        }
        if exited.is_none() && matches!(child.try_wait(), Ok(Some(_))) {
            exited = Some(Instant::now());
        }
        if exited.is_some_and(|at| at.elapsed() >= GRACE) {
            // What it left behind holds the pipe: end the group, take what was written.
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            return rx.recv_timeout(GRACE * 5).map_or(Outcome::Held, done);
        }
        if start.elapsed() >= TIMEOUT {
            return Outcome::TimedOut;
        }
    }
}

/// The extractor prints one JSON object: `{"ok": true, "flags": …}` or `{"ok": false, "error"}`.
fn parse_output(out: &[u8]) -> Result<serde_json::Value, ExtractError> {
    let text = String::from_utf8_lossy(out);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    let v: serde_json::Value = serde_json::from_str(line).map_err(|_| {
        let head: String = text.chars().take(200).collect();
        ExtractError::BadOutput(format!("{head:?}"))
    })?;
    if v["ok"] == true {
        Ok(v)
    } else {
        let why = v["error"].as_str().unwrap_or("no reason given");
        Err(ExtractError::Failed(clip(why)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_files_are_keyed_by_version_and_install() {
        let a = Install {
            version: "0.5.24.dev3+gabc123",
            dist_info: Path::new("/a/site-packages/sglang-0.5.24.dev3+gabc123.dist-info"),
            digest: None,
        };
        let b = Install {
            dist_info: Path::new("/b/site-packages/sglang-0.5.24.dev3+gabc123.dist-info"),
            ..a
        };
        let (Some(pa), Some(pb)) = (cache_path(a), cache_path(b)) else {
            return; // no HOME: no cache at all
        };
        assert_ne!(pa, pb);
        let name = pa.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("0.5.24.dev3+gabc123-"), "{name}");
    }

    #[test]
    fn a_cache_write_follows_no_planted_link() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("flags/0.9.0-x.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let victim = t.path().join("victim");
        // The old temporary name, and the cache file itself, as links to a victim.
        let guessed = path.with_extension(format!("tmp{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &guessed).unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        assert!(write_atomic(&path, b"{}"));
        assert!(!victim.exists(), "nothing written through a link");
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
    }

    #[test]
    fn no_cache_is_written_into_a_directory_others_can_write() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("flags");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!write_atomic(&dir.join("x.json"), b"{}"));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }

    /// An extractor stand-in: a shell script run as `python -c …`.
    fn script(dir: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join("python3");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn a_child_left_holding_the_output_does_not_stretch_the_deadline() {
        let t = tempfile::tempdir().unwrap();
        let py = script(
            t.path(),
            "(sleep 30) &\necho '{\"ok\": false, \"error\": \"bg\"}'",
        );
        let start = Instant::now();
        let r = run(&py);
        assert!(
            matches!(&r, Err(ExtractError::Failed(m)) if m == "bg"),
            "{r:?}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn endless_output_is_cut_and_said_to_be() {
        let t = tempfile::tempdir().unwrap();
        let py = script(t.path(), "head -c 1000000000 /dev/zero | tr '\\0' A");
        let start = Instant::now();
        let e = run(&py).unwrap_err().to_string();
        assert!(e.contains("more than 8 MiB of output"), "{e}");
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_long_error_is_shortened() {
        let t = tempfile::tempdir().unwrap();
        let py = script(
            t.path(),
            "printf '{\"ok\": false, \"error\": \"'; head -c 200000 /dev/zero | tr '\\0' E; echo '\"}'",
        );
        let e = run(&py).unwrap_err().to_string();
        assert!(
            e.len() < 400 && e.contains("more bytes"),
            "{}",
            &e[..e.len().min(500)]
        );
    }

    #[test]
    fn output_held_outside_the_group_ends_the_wait() {
        let Ok(setsid) = which::which("setsid") else {
            return;
        };
        let t = tempfile::tempdir().unwrap();
        let py = script(
            t.path(),
            &format!("{} sleep 5 &\necho '{{\"ok\": true}}'", setsid.display()),
        );
        let start = Instant::now();
        let e = run(&py).unwrap_err().to_string();
        assert!(e.contains("stayed open"), "{e}");
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn failures_and_garbage_are_errors_not_panics() {
        assert!(matches!(
            parse_output(br#"{"ok": false, "error": "ImportError: x"}"#),
            Err(ExtractError::Failed(m)) if m == "ImportError: x"
        ));
        assert!(matches!(
            parse_output(b"Traceback ..."),
            Err(ExtractError::BadOutput(_))
        ));
        assert!(matches!(
            convert(
                serde_json::json!({"version": "1", "prog": "p", "allow_abbrev": true, "actions": []})
            ),
            Err(ExtractError::BadOutput(_))
        ));
    }
}
