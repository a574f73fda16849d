//! The profile file as written: one TOML file, unknown keys refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use toml::Spanned;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    pub description: Option<String>,
    pub extends: Option<Spanned<String>>,
    /// SGLang options without their leading dashes; spans locate an unknown or mistyped one.
    #[serde(default)]
    pub args: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    pub env: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default)]
    pub launcher: Launcher,
    #[serde(default)]
    pub hardware: Hardware,
}

/// Launcher settings a profile may carry. Every field is optional: a profile sets only what
/// it means to, and the command line and `SGLANG_LAUNCH_*` win over it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Launcher {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sglang_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deny: Option<Vec<String>>,
    /// `enforce`, `warn` or `off` (checked by the layered settings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit_request_tokens: Option<std::num::NonZeroU64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline: Option<bool>,
}

/// Conditions the machine must meet; all optional, all must hold.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Hardware {
    /// Glob (`*`, `?`, case-insensitive) every GPU's name must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_name: Option<String>,
    /// Comma-separated comparisons, e.g. `">=12.0,<13"`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "checked_cc"
    )]
    pub compute_capability: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_gpus: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_memory_gib: Option<f64>,
    /// true: every GPU pair over NVLink; false: at least one pair without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvlink: Option<bool>,
}

/// Refuses a malformed compute-capability condition while the parser still knows its position.
fn checked_cc<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let spec = String::deserialize(d)?;
    super::cc::parse_cc(&spec).map_err(serde::de::Error::custom)?;
    Ok(Some(spec))
}
