//! The model-info answer (`/api/models/{repo}/revision/{rev}` with `expand=sha`, `siblings`,
//! `safetensors`): the commit, the files at the top of the repo, and the weight bytes.

use serde_json::Value;

/// What the model-info answer says about one revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ModelInfo {
    /// The commit the revision names: files are fetched at it, so they agree.
    pub(crate) sha: Option<String>,
    /// `siblings[].rfilename`.
    pub(crate) files: Vec<String>,
    /// Parameters per dtype times the dtype's width; `None` when absent or a dtype is unknown.
    pub(crate) weight_bytes: Option<u64>,
}

impl ModelInfo {
    pub(super) fn has(&self, file: &str) -> bool {
        self.files.iter().any(|f| f == file)
    }
}

/// `Err` says what is wrong with the answer.
pub(super) fn parse_info(body: &[u8]) -> Result<ModelInfo, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("invalid JSON: {e}"))?;
    if !v.is_object() {
        return Err("not a JSON object".into());
    }
    let sha = v.get("sha").and_then(Value::as_str).map(str::to_owned);
    let files = v
        .get("siblings")
        .and_then(Value::as_array)
        .ok_or("no siblings (file list)")?
        .iter()
        .filter_map(|s| s.get("rfilename")?.as_str().map(str::to_owned))
        .collect();
    let weight_bytes = v
        .pointer("/safetensors/parameters")
        .and_then(Value::as_object)
        .and_then(|params| {
            let mut bits = 0u128;
            for (dtype, n) in params {
                bits += u128::from(n.as_u64()?) * u128::from(dtype_bits(dtype)?);
            }
            u64::try_from(bits / 8).ok()
        });
    Ok(ModelInfo {
        sha,
        files,
        weight_bytes,
    })
}

/// Width of a safetensors dtype in bits.
fn dtype_bits(dtype: &str) -> Option<u32> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E4M3" | "F8_E5M2" | "F8_E8M0" => 8,
        "BF16" | "F16" | "I16" | "U16" => 16,
        "F32" | "I32" | "U32" => 32,
        "F64" | "I64" | "U64" => 64,
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_per_dtype_become_bytes() {
        let body = br#"{"_id":"x","id":"org/m","sha":"abc","siblings":[{"rfilename":"config.json"},{"rfilename":"model.safetensors"}],"safetensors":{"parameters":{"BF16":1000,"F8_E4M3":500,"F32":10},"total":1510}}"#;
        let info = parse_info(body).unwrap();
        assert_eq!(info.sha.as_deref(), Some("abc"));
        assert!(info.has("config.json") && !info.has("tokenizer.json"));
        assert_eq!(info.weight_bytes, Some(2000 + 500 + 40));
    }

    #[test]
    fn an_unknown_dtype_or_no_metadata_gives_no_bytes() {
        let unknown = br#"{"siblings":[],"safetensors":{"parameters":{"Q9":1}}}"#;
        assert_eq!(parse_info(unknown).unwrap().weight_bytes, None);
        assert_eq!(
            parse_info(br#"{"siblings":[]}"#).unwrap().weight_bytes,
            None
        );
    }

    #[test]
    fn answers_that_are_not_model_info_are_errors() {
        assert!(parse_info(b"<html>").is_err());
        assert!(parse_info(b"[]").is_err());
        assert!(parse_info(b"{}").is_err());
    }
}
