//! Weight bytes from the checkpoint's files: safetensors headers, else the index.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::local::read_json;
use super::plausible::{self, Implausible};
use super::{HeaderProblem, Invalid, ModelProblem, SafetensorsError, Unavailable, WeightSource};
use crate::fsread;

/// Tensor bytes of safetensors files, and how many of them are float32.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct ShardBytes {
    pub total: u64,
    pub float32: u64,
}

impl ShardBytes {
    fn tensor(bytes: u64, float32: bool) -> Self {
        let float32 = if float32 { bytes } else { 0 };
        ShardBytes {
            total: bytes,
            float32,
        }
    }

    fn add(self, o: ShardBytes) -> Self {
        ShardBytes {
            total: self.total.saturating_add(o.total),
            float32: self.float32.saturating_add(o.float32),
        }
    }
}

/// The checkpoint's weight bytes as its files give them, and where from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct FileWeights {
    pub bytes: ShardBytes,
    pub source: WeightSource,
}

impl FileWeights {
    fn from_headers(bytes: ShardBytes) -> Self {
        FileWeights {
            bytes,
            source: WeightSource::SafetensorsHeaders,
        }
    }

    /// A total without the dtypes behind it (the index, the Hub's figure).
    fn total(total: u64, source: WeightSource) -> Self {
        FileWeights {
            bytes: ShardBytes { total, float32: 0 },
            source,
        }
    }

    /// Bytes on the GPU for a model run in `dtype`: SGLang casts a checkpoint stored in float32
    /// to the 16-bit dtype it runs, halving those tensors. Only a checkpoint mostly in float32 is
    /// taken so; the few float32 tensors of others (scales, router biases) may stay float32.
    pub fn resident(&self, dtype: Option<&str>) -> u64 {
        let b = self.bytes;
        let sixteen = matches!(dtype, Some("float16" | "bfloat16" | "half"));
        if sixteen && b.float32 > b.total / 2 {
            b.total - b.float32 / 2
        } else {
            b.total
        }
    }
}

/// Safetensors headers larger than this are treated as malformed (real ones are a few MB).
const MAX_SAFETENSORS_HEADER: u64 = fsread::SAFETENSORS.limit - 8;

/// Weight bytes from the checkpoint files: safetensors headers first, then the index.
/// `Ok(None)` when there are no weight files; `Err` names a malformed file. A header or index
/// that reads but holds an implausible value goes to `implausible`, and is not believed.
pub(super) fn weight_bytes_from_files(
    dir: &Path,
    implausible: &mut Vec<Implausible>,
) -> Result<Option<FileWeights>, Invalid> {
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
        let mut total = ShardBytes::default();
        let mut failure = None;
        let mut odd = Vec::new();
        for shard in &shards {
            match read_shard(shard) {
                Ok((b, o)) => {
                    total = total.add(b);
                    odd.extend(o);
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        match failure {
            None if odd.is_empty() => {
                return Ok(Some(FileWeights::from_headers(total)));
            }
            None => implausible.extend(odd),
            // A shard that isn't there (e.g. a partial download) still leaves the index usable.
            Some(e) => {
                if let Some(t) = index_total(dir, implausible)? {
                    return Ok(Some(FileWeights::total(t, WeightSource::Index)));
                }
                return Err(e.into());
            }
        }
    }
    if let Some(t) = index_total(dir, implausible)? {
        return Ok(Some(FileWeights::total(t, WeightSource::Index)));
    }
    Ok(hub_total(dir, implausible)?.map(|t| FileWeights::total(t, WeightSource::HubMetadata)))
}

/// The weight bytes a Hub fetch recorded from the model-info API (repos without an index).
fn hub_total(dir: &Path, implausible: &mut Vec<Implausible>) -> Result<Option<u64>, Invalid> {
    total_size(&dir.join(crate::facts::hub::WEIGHTS_FILE), implausible)
}

/// `metadata.total_size` of `model.safetensors.index.json`; `Ok(None)` without one. The
/// index was found, so any failure to read it makes it invalid.
fn index_total(dir: &Path, implausible: &mut Vec<Implausible>) -> Result<Option<u64>, Invalid> {
    total_size(&dir.join("model.safetensors.index.json"), implausible)
}

/// `metadata.total_size` (the index) or `total_size` (our Hub record) of a JSON file: `None`
/// (and an entry in `implausible`) for a number no checkpoint has.
fn total_size(path: &Path, implausible: &mut Vec<Implausible>) -> Result<Option<u64>, Invalid> {
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
    let (key, t) = match v.pointer("/metadata/total_size") {
        Some(t) => ("metadata.total_size", t),
        None => match v.get("total_size") {
            Some(t) => ("total_size", t),
            None => return Ok(None),
        },
    };
    if !t.is_number() {
        return Err(Invalid::IndexTotalSize { path });
    }
    let size = plausible::total_size(t);
    if size.is_none() {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        implausible.push(Implausible::new(
            name,
            key,
            t,
            format!("whole bytes from 1 to {}", plausible::MAX_TOTAL_SIZE),
        ));
    }
    Ok(size)
}

/// Sum of tensor byte ranges in one safetensors file, reading only its header.
pub fn safetensors_tensor_bytes(path: &Path) -> Result<u64, SafetensorsError> {
    read_shard(path).map(|(bytes, _)| bytes.total)
}

/// [`safetensors_tensor_bytes`], and the first tensor whose entry is implausible.
fn read_shard(path: &Path) -> Result<(ShardBytes, Option<Implausible>), SafetensorsError> {
    let bad = |problem: HeaderProblem| SafetensorsError {
        path: path.to_path_buf(),
        problem,
    };
    let head = |len| {
        fsread::head(path, fsread::SAFETENSORS, len)
            .map_err(|e| bad(HeaderProblem::Io(e.problem.to_string())))
    };
    let first = head(8)?;
    let Ok(len) = <[u8; 8]>::try_from(first.bytes.as_slice()) else {
        return Err(bad(HeaderProblem::Truncated));
    };
    // Checked before anything is allocated for it.
    let n = header_len(len, first.file_len).map_err(bad)?;
    let whole = head(8 + n)?;
    let Some(header) = whole.bytes.get(8..).filter(|h| h.len() as u64 == n) else {
        return Err(bad(HeaderProblem::Truncated));
    };
    let file = path.file_name().unwrap_or_default().to_string_lossy();
    let data_len = first.file_len.saturating_sub(8).saturating_sub(n);
    header_tensor_bytes(header, &file, data_len).map_err(bad)
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
    let data_len = (file.len() as u64).saturating_sub(8).saturating_sub(n);
    header_tensor_bytes(header, "model.safetensors", data_len).map(|(bytes, _)| bytes.total)
}

/// The header length the 8-byte prefix gives, if a real header could have it.
fn header_len(prefix: [u8; 8], file_len: u64) -> Result<u64, HeaderProblem> {
    let n = u64::from_le_bytes(prefix);
    if n == 0 || n > MAX_SAFETENSORS_HEADER || n > file_len.saturating_sub(8) {
        return Err(HeaderProblem::Length(n));
    }
    Ok(n)
}

/// Sum of the tensors' `data_offsets` ranges in the JSON header of `file`, whose data section
/// holds `data_len` bytes; and the first tensor whose entry is implausible.
fn header_tensor_bytes(
    header: &[u8],
    file: &str,
    data_len: u64,
) -> Result<(ShardBytes, Option<Implausible>), HeaderProblem> {
    let v: Value =
        serde_json::from_slice(header).map_err(|e| HeaderProblem::Json(e.to_string()))?;
    let Value::Object(map) = v else {
        return Err(HeaderProblem::NotAnObject);
    };
    let mut odd = None;
    let mut total = ShardBytes::default();
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
            (Some(a), Some(b)) if b >= a => {
                let f32 = t.get("dtype").and_then(Value::as_str) == Some("F32");
                total = total.add(ShardBytes::tensor(b - a, f32));
                if odd.is_none() {
                    odd = plausible::tensor(file, name, t, (a, b), data_len);
                }
            }
            _ => return Err(HeaderProblem::BadOffsets(name.clone())),
        }
    }
    Ok((total, odd))
}
