//! The pure combine step: layers in, merged settings and each setting's source out.

use std::path::PathBuf;

use figment::Figment;
use serde::{Deserialize, Serialize};

use super::layer::{Layer, Source};
use super::registry;

/// The launcher settings a file, a profile, the environment or the command line may set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct Settings {
    pub sglang_version: Option<String>,
    pub python: Option<PathBuf>,
    pub topology: Option<PathBuf>,
    pub nvml_lib: Option<PathBuf>,
    pub strict: bool,
    pub no_fix: bool,
    pub fit: bool,
    pub offline: bool,
    pub online: bool,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
}

/// Every layer above the built-in defaults, lowest first within each field.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The system file, then the user file (those that exist).
    pub files: Vec<Layer>,
    /// The selected profile's name and its `[launcher]` table.
    pub profile: Option<(String, toml::Table)>,
    /// One layer per variable that is set.
    pub env: Vec<Layer>,
    /// Only the options typed on the command line.
    pub cli: Option<Layer>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub settings: Settings,
    /// `(key, source)` for every setting, in registry order.
    pub sources: Vec<(&'static str, String)>,
}

impl Resolved {
    pub fn source(&self, key: &str) -> Option<&str> {
        self.sources
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, s)| s.as_str())
    }
}

/// Rejects unknown keys and wrong types, naming the layer.
pub fn check(layer: &Layer) -> Result<(), String> {
    Settings::deserialize(toml::Value::Table(layer.values.clone()))
        .map(drop)
        .map_err(|e| format!("{}: {}", layer.source, e.message().trim_end()))
}

fn defaults() -> Layer {
    let values = toml::Table::try_from(Settings::default()).expect("settings serialize");
    Layer {
        source: Source::Default,
        values,
    }
}

/// Merges defaults < files < profile < environment < command line; a layer overrides only the
/// keys it sets.
pub fn combine(inputs: Inputs) -> Result<Resolved, String> {
    let profile = inputs.profile.map(|(name, values)| Layer {
        source: Source::Profile(name),
        values,
    });
    let layers: Vec<Layer> = std::iter::once(defaults())
        .chain(inputs.files)
        .chain(profile)
        .chain(inputs.env)
        .chain(inputs.cli)
        .collect();
    layers.iter().try_for_each(check)?;
    let figment = layers.into_iter().fold(Figment::new(), Figment::merge);
    let settings: Settings = figment.extract().map_err(|e| e.to_string())?;
    let sources = registry::settings()
        .map(|(key, _)| {
            let source = figment.find_metadata(key).map(|m| m.name.to_string());
            (key, source.unwrap_or_else(|| Source::Default.to_string()))
        })
        .collect();
    Ok(Resolved { settings, sources })
}
