//! Finding the model's directory offline: a local path, `--download-dir` or the Hugging Face cache.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::fsread;

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
        let hash = read_ref(&repo.join("refs").join(rev)).unwrap_or_else(|| rev.to_owned());
        return in_cache(repo, snapshots.join(hash));
    }
    if let Some(snap) =
        read_ref(&repo.join("refs/main")).and_then(|r| in_cache(repo, snapshots.join(r)))
    {
        return Some(snap);
    }
    // No refs/main: the newest snapshot that has a config.
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(&snapshots).ok()?.flatten() {
        let Some(path) = in_cache(repo, entry.path()) else {
            continue;
        };
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

/// The commit a ref names: one plain name (the Hub writes a 40-digit hash). Anything else (an
/// absolute path, `..`, a FIFO, a huge file) is ignored with a warning: it must not lead the
/// reader out of the cache.
fn read_ref(path: &Path) -> Option<String> {
    let text = fsread::optional_string(path, fsread::HF_REF)?;
    let name = text.trim();
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !plain {
        fsread::warn_once(
            path,
            &format!(
                "Hugging Face cache ref {} does not hold a commit hash; ignored",
                path.display()
            ),
        );
    }
    plain.then(|| name.to_owned())
}

/// `snap` when it has a config.json and, all links followed, lies inside the cached repo (its
/// files' links into `blobs/` are the cache's own layout).
fn in_cache(repo: &Path, snap: PathBuf) -> Option<PathBuf> {
    if !snap.join("config.json").is_file() {
        return None;
    }
    let inside = match (repo.canonicalize(), snap.canonicalize()) {
        (Ok(root), Ok(real)) => real.starts_with(root),
        _ => false,
    };
    if !inside {
        fsread::warn_once(
            &snap,
            &format!(
                "{} leads outside the Hugging Face cache entry {}; ignored",
                snap.display(),
                repo.display()
            ),
        );
    }
    inside.then_some(snap)
}

/// A JSON file of the model: a missing file makes the model unavailable, any other failure
/// invalid.
pub(super) fn read_json(path: &Path) -> Result<Value, ModelProblem> {
    let text = fsread::read_string(path, fsread::MODEL_JSON).map_err(|e| {
        let (path, error) = (path.to_path_buf(), e.problem.to_string());
        if e.problem.is_not_found() {
            ModelProblem::from(Unavailable::Missing { path, error })
        } else {
            ModelProblem::from(Invalid::Unreadable { path, error })
        }
    })?;
    python_json(text.as_bytes()).map_err(|error| {
        ModelProblem::from(Invalid::Json {
            path: path.to_path_buf(),
            error,
        })
    })
}

/// A model's JSON as transformers reads it, with Python's `json`: strict JSON first (fast), then
/// Python's wider language (`Infinity`, `NaN`: Nemotron-H configs carry `[0.0, Infinity]`).
pub(super) fn python_json(text: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(text).or_else(|strict| {
        let text = std::str::from_utf8(text).map_err(|_| strict.to_string())?;
        crate::sglang::pyjson::loads(text).map_err(|_| strict.to_string())
    })
}
