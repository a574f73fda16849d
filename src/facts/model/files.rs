//! Weight bytes from the checkpoint's files: safetensors headers, else the index.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::local::read_json;
use super::{HeaderProblem, Invalid, ModelProblem, SafetensorsError, Unavailable, WeightSource};

/// Safetensors headers larger than this are treated as malformed (real ones are a few MB).
const MAX_SAFETENSORS_HEADER: u64 = 100 * 1024 * 1024;

/// Weight bytes from the checkpoint files: safetensors headers first, then the index.
/// `Ok(None)` when there are no weight files; `Err` names a malformed file.
pub(super) fn weight_bytes_from_files(dir: &Path) -> Result<Option<(u64, WeightSource)>, Invalid> {
    let mut shards: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "safetensors"))
            .collect(),
        Err(_) => Vec::new(),
    };
    shards.sort();
    if !shards.is_empty() {
        let mut total = 0u64;
        let mut failure = None;
        for shard in &shards {
            match safetensors_tensor_bytes(shard) {
                Ok(b) => total = total.saturating_add(b),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        match failure {
            None => return Ok(Some((total, WeightSource::SafetensorsHeaders))),
            // A shard that isn't there (e.g. a partial download) still leaves the index usable.
            Some(e) => {
                if let Some(t) = index_total(dir)? {
                    return Ok(Some((t, WeightSource::Index)));
                }
                return Err(e.into());
            }
        }
    }
    if let Some(t) = index_total(dir)? {
        return Ok(Some((t, WeightSource::Index)));
    }
    Ok(hub_total(dir)?.map(|t| (t, WeightSource::HubMetadata)))
}

/// The weight bytes a Hub fetch recorded from the model-info API (repos without an index).
fn hub_total(dir: &Path) -> Result<Option<u64>, Invalid> {
    total_size(&dir.join(crate::facts::hub::WEIGHTS_FILE))
}

/// `metadata.total_size` of `model.safetensors.index.json`; `Ok(None)` without one. The
/// index was found, so any failure to read it makes it invalid.
fn index_total(dir: &Path) -> Result<Option<u64>, Invalid> {
    total_size(&dir.join("model.safetensors.index.json"))
}

/// `metadata.total_size` (the index) or `total_size` (our Hub record) of a JSON file.
fn total_size(path: &Path) -> Result<Option<u64>, Invalid> {
    let path = path.to_path_buf();
    if !path.is_file() {
        return Ok(None);
    }
    let v = read_json(&path).map_err(|p| match p {
        ModelProblem::Invalid(e) => e,
        ModelProblem::Unavailable(u) => Invalid::Unreadable {
            path: path.clone(),
            error: match u {
                Unavailable::Missing { error, .. } => error,
                other => other.to_string(),
            },
        },
        ModelProblem::Hub(h) => Invalid::Unreadable {
            path: path.clone(),
            error: h.to_string(),
        },
    })?;
    match v
        .pointer("/metadata/total_size")
        .or_else(|| v.get("total_size"))
    {
        Some(t) => t
            .as_u64()
            .or_else(|| t.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .map(Some)
            .ok_or(Invalid::IndexTotalSize { path }),
        None => Ok(None),
    }
}

/// Sum of tensor byte ranges in one safetensors file, reading only its header.
pub fn safetensors_tensor_bytes(path: &Path) -> Result<u64, SafetensorsError> {
    let bad = |problem: HeaderProblem| SafetensorsError {
        path: path.to_path_buf(),
        problem,
    };
    let io = |e: std::io::Error| bad(HeaderProblem::Io(e.to_string()));
    let mut f = File::open(path).map_err(io)?;
    let file_len = f.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let mut len = [0u8; 8];
    f.read_exact(&mut len)
        .map_err(|_| bad(HeaderProblem::Truncated))?;
    let n = header_len(len, file_len).map_err(bad)?;
    let mut header = Vec::with_capacity(n as usize);
    f.take(n).read_to_end(&mut header).map_err(io)?;
    if header.len() as u64 != n {
        return Err(bad(HeaderProblem::Truncated));
    }
    header_tensor_bytes(&header).map_err(bad)
}

/// [`safetensors_tensor_bytes`] of a whole file's bytes held in memory: the same checks,
/// without the file system (the header parser's fuzz target reads through it).
#[doc(hidden)]
pub fn safetensors_bytes_in(file: &[u8]) -> Result<u64, HeaderProblem> {
    let len = file
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .ok_or(HeaderProblem::Truncated)?;
    let n = header_len(len, file.len() as u64)?;
    let header = usize::try_from(n)
        .ok()
        .and_then(|n| file.get(8..8 + n))
        .ok_or(HeaderProblem::Truncated)?;
    header_tensor_bytes(header)
}

/// The header length the 8-byte prefix gives, if a real header could have it.
fn header_len(prefix: [u8; 8], file_len: u64) -> Result<u64, HeaderProblem> {
    let n = u64::from_le_bytes(prefix);
    if n == 0 || n > MAX_SAFETENSORS_HEADER || n > file_len.saturating_sub(8) {
        return Err(HeaderProblem::Length(n));
    }
    Ok(n)
}

/// Sum of the tensors' `data_offsets` ranges in the JSON header.
fn header_tensor_bytes(header: &[u8]) -> Result<u64, HeaderProblem> {
    let v: Value =
        serde_json::from_slice(header).map_err(|e| HeaderProblem::Json(e.to_string()))?;
    let Value::Object(map) = v else {
        return Err(HeaderProblem::NotAnObject);
    };
    let mut total = 0u64;
    for (name, t) in &map {
        if name == "__metadata__" {
            continue;
        }
        let offs = t
            .get("data_offsets")
            .and_then(Value::as_array)
            .filter(|a| a.len() == 2)
            .ok_or_else(|| HeaderProblem::NoOffsets(name.clone()))?;
        let (a, b) = (offs[0].as_u64(), offs[1].as_u64());
        match (a, b) {
            (Some(a), Some(b)) if b >= a => total = total.saturating_add(b - a),
            _ => return Err(HeaderProblem::BadOffsets(name.clone())),
        }
    }
    Ok(total)
}
