//! Which SGLang flag set to use: `--sglang-version`, else the installed `sglang-*.dist-info`.

use serde::Serialize;

use super::flagset::FlagSet;

/// How the version was chosen (plan/v1 `sglang_version_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionSource {
    Detected,
    Option,
    Fallback,
}

/// The flag set chosen for a run.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The version asked for or found installed (may be newer than any known flag set).
    pub requested: String,
    pub flags: &'static FlagSet,
    pub source: VersionSource,
}
