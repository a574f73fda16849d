//! The local store: `$XDG_STATE_HOME/sglang-launch/` (else `~/.local/state/sglang-launch/`):
//! `runs/<pid>.json` for a server `run` started, `observations.jsonl` for what came of it.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{Observation, RunRecord};

/// The store's directory; `None` without a state or home directory.
pub(crate) fn dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state"))
        })?;
    Some(base.join("sglang-launch"))
}

fn run_path(pid: u32) -> Option<PathBuf> {
    Some(dir()?.join("runs").join(format!("{pid}.json")))
}

/// Keeps what was planned for process `pid` (best effort: a launch never fails for it).
pub(crate) fn save_run(pid: u32, r: &RunRecord) -> Result<(), String> {
    let path = run_path(pid).ok_or("no state directory (set XDG_STATE_HOME or HOME)")?;
    let text = serde_json::to_vec(r).map_err(|e| e.to_string())?;
    // Written whole or not at all: `wait-ready` may read it while `run` still writes.
    crate::install::extract::write_atomic(&path, &text)
        .then_some(())
        .ok_or_else(|| format!("{}: cannot write", path.display()))
}

/// What `run` planned for process `pid`, if it started it.
pub(crate) fn run_of(pid: u32) -> Option<RunRecord> {
    let path = run_path(pid)?;
    if !trusted(&path) {
        return None;
    }
    let text = crate::fsread::optional_string(&path, crate::fsread::OBSERVATIONS)?;
    serde_json::from_str(&text).ok()
}

fn observations_path() -> Option<PathBuf> {
    Some(dir()?.join("observations.jsonl"))
}

/// Appends one observation.
pub(crate) fn append(o: &Observation) -> Result<PathBuf, String> {
    let path = observations_path().ok_or("no state directory (set XDG_STATE_HOME or HOME)")?;
    let parent = path.parent().ok_or("no parent")?;
    std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let mut line = serde_json::to_string(o).map_err(|e| e.to_string())?;
    line.push('\n');
    // Never through a link planted at the store's name.
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Every observation kept, oldest first; lines that do not read are skipped.
pub(crate) fn all() -> Vec<Observation> {
    let Some(path) = observations_path().filter(|p| trusted(p)) else {
        return Vec::new();
    };
    let text =
        crate::fsread::optional_string(&path, crate::fsread::OBSERVATIONS).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Whether a store file may be read: observations steer the plan (the verdict, the fraction),
/// so one someone else could have written is not believed, and that is said once.
fn trusted(path: &Path) -> bool {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    match crate::fsread::trust::check(path) {
        Ok(()) => true,
        Err(e) => {
            if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                crate::out::warn(&format!("{e}; its observations are not used"));
            }
            false
        }
    }
}
