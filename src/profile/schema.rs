//! The profile file as written: one TOML file, unknown keys refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use toml::Spanned;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileFile {
    pub(crate) description: Option<String>,
    pub(crate) extends: Option<Spanned<String>>,
    /// SGLang options without their leading dashes; spans locate an unknown or mistyped one.
    #[serde(default)]
    pub(crate) args: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    pub(crate) env: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    pub(crate) launcher: Launcher,
    #[serde(default)]
    pub(crate) hardware: Hardware,
}

/// Launcher settings a profile may carry. Every field is optional: a profile sets only what
/// it means to, and the command line and `SGLANG_LAUNCH_*` win over it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct Launcher {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sglang_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) python: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) strict: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) allow: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) deny: Option<Vec<String>>,
    /// `enforce`, `warn` or `off` (checked by the layered settings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fit: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fit_request_tokens: Option<std::num::NonZeroU64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) offline: Option<bool>,
}

/// Conditions the machine must meet; all optional, all must hold.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct Hardware {
    /// Glob (`*`, `?`, case-insensitive) every GPU's name must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) gpu_name: Option<String>,
    /// Comma-separated comparisons, e.g. `">=12.0,<13"`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "checked_cc"
    )]
    pub(crate) compute_capability: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) gpu_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) min_gpus: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) min_memory_gib: Option<f64>,
    /// true: every GPU pair over NVLink; false: at least one pair without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) nvlink: Option<bool>,
}

/// Refuses a malformed compute-capability condition while the parser still knows its position.
fn checked_cc<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let spec = String::deserialize(d)?;
    super::cc::parse_cc(&spec).map_err(serde::de::Error::custom)?;
    Ok(Some(spec))
}
