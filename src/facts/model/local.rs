//! Finding the model's directory offline: a local path, `--download-dir` or the Hugging Face cache.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Env, Invalid, ModelProblem, Unavailable};

/// A local directory with a config.json, or the HF cache snapshot for an `org/name` id
/// (`--revision`: a branch or tag under `refs/`, or a commit hash; default `main`), in
/// `--download-dir` (SGLang hands it to huggingface_hub as the cache) first, then the HF cache.
pub(super) fn resolve_dir(
    model_path: &str,
    env: &Env,
    revision: Option<&str>,
    download_dir: Option<&str>,
) -> Option<PathBuf> {
    let p = Path::new(model_path);
    if p.join("config.json").is_file() {
        return Some(p.to_path_buf());
    }
    if p.is_dir() {
        // A directory without config.json is still the user's model: let the read report it.
        return Some(p.to_path_buf());
    }
    let (org, name) = model_path.split_once('/')?;
    if org.is_empty() || name.is_empty() || name.contains('/') || org.starts_with('.') {
        return None;
    }
    let repo_dir = format!("models--{org}--{name}");
    download_dir
        .map(PathBuf::from)
        .into_iter()
        .chain(hf_cache(env))
        .find_map(|cache| snapshot_in(&cache.join(&repo_dir), revision))
}

/// `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`.
fn hf_cache(env: &Env) -> Option<PathBuf> {
    if let Some(h) = env.get("HF_HUB_CACHE").filter(|h| !h.is_empty()) {
        Some(PathBuf::from(h))
    } else if let Some(h) = env.get("HF_HOME").filter(|h| !h.is_empty()) {
        Some(Path::new(h).join("hub"))
    } else {
        Some(Path::new(env.get("HOME")?).join(".cache/huggingface/hub"))
    }
}

/// The snapshot of one cached repo (`models--org--name`) at `revision`, else the one `main`
/// names, else the newest with a config.
fn snapshot_in(repo: &Path, revision: Option<&str>) -> Option<PathBuf> {
    let snapshots = repo.join("snapshots");
    if let Some(rev) = revision.filter(|r| !r.is_empty()) {
        // Only plain names: a revision must not walk out of the cache.
        if Path::new(rev)
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return None;
        }
        let hash = std::fs::read_to_string(repo.join("refs").join(rev))
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| rev.to_owned());
        let snap = snapshots.join(hash);
        return snap.join("config.json").is_file().then_some(snap);
    }
    if let Ok(rev) = std::fs::read_to_string(repo.join("refs/main")) {
        let snap = snapshots.join(rev.trim());
        if snap.join("config.json").is_file() {
            return Some(snap);
        }
    }
    // No refs/main: the newest snapshot that has a config.
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(&snapshots).ok()?.flatten() {
        let path = entry.path();
        if !path.join("config.json").is_file() {
            continue;
        }
        let t = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        if best.as_ref().is_none_or(|(bt, _)| t > *bt) {
            best = Some((t, path));
        }
    }
    best.map(|(_, p)| p)
}

/// A JSON file of the model: a missing file makes the model unavailable, any other failure
/// invalid.
pub(super) fn read_json(path: &Path) -> Result<Value, ModelProblem> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let (path, error) = (path.to_path_buf(), e.to_string());
        if e.kind() == std::io::ErrorKind::NotFound {
            ModelProblem::from(Unavailable::Missing { path, error })
        } else {
            ModelProblem::from(Invalid::Unreadable { path, error })
        }
    })?;
    serde_json::from_str(&text).map_err(|e| {
        ModelProblem::from(Invalid::Json {
            path: path.to_path_buf(),
            error: e.to_string(),
        })
    })
}
