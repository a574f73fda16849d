//! The pure combine step: layers in, merged settings and each setting's source out.

use figment::Figment;
use serde::Deserialize;

use super::layer::{Layer, Source};
use super::registry::{self, Settings};

/// Every layer above the built-in defaults, lowest first within each field.
#[derive(Debug, Clone, Default)]
pub(crate) struct Inputs {
    /// The system file, then the user file (those that exist).
    pub(crate) files: Vec<Layer>,
    /// The selected profile's name and its `[launcher]` table.
    pub(crate) profile: Option<(String, toml::Table)>,
    /// One layer per variable that is set.
    pub(crate) env: Vec<Layer>,
    /// Only the options typed on the command line.
    pub(crate) cli: Option<Layer>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub(crate) settings: Settings,
    /// `(key, source)` for every setting, in registry order.
    pub(crate) sources: Vec<(&'static str, String)>,
}

impl Resolved {
    pub(crate) fn source(&self, key: &str) -> Option<&str> {
        self.sources
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, s)| s.as_str())
    }
}

/// Rejects unknown keys and wrong types, naming the layer.
pub(crate) fn check(layer: &Layer) -> Result<(), String> {
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
pub(crate) fn combine(inputs: Inputs) -> Result<Resolved, String> {
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
    let sources: Vec<(&'static str, String)> = registry::settings()
        .map(|(key, _)| {
            let source = figment.find_metadata(key).map(|m| m.name.to_string());
            (key, source.unwrap_or_else(|| Source::Default.to_string()))
        })
        .collect();
    Ok(Resolved { settings, sources })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Mode;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    fn layer(source: Source, text: &str) -> Layer {
        Layer {
            source,
            values: table(text),
        }
    }

    /// Inputs where only the layers named in `set` set `python` to their own rank.
    fn inputs(set: &[usize]) -> Inputs {
        let py = |rank: usize| {
            if set.contains(&rank) {
                format!("python = \"p{rank}\"")
            } else {
                String::new()
            }
        };
        Inputs {
            files: vec![
                layer(Source::File("/etc/c.toml".into()), &py(0)),
                layer(Source::File("/home/u/c.toml".into()), &py(1)),
            ],
            profile: Some(("gpu".into(), table(&py(2)))),
            env: vec![layer(Source::Env("SGLANG_LAUNCH_PYTHON"), &py(3))],
            cli: Some(layer(Source::CommandLine, &py(4))),
        }
    }

    const NAMES: [&str; 5] = [
        "/etc/c.toml",
        "/home/u/c.toml",
        "profile gpu",
        "env SGLANG_LAUNCH_PYTHON",
        "command line",
    ];

    #[test]
    fn every_higher_layer_beats_every_lower_one() {
        for low in 0..5 {
            for (high, name) in NAMES.iter().enumerate().skip(low + 1) {
                let r = combine(inputs(&[low, high])).unwrap();
                assert_eq!(
                    r.settings.python,
                    Some(format!("p{high}").into()),
                    "{low} < {high}"
                );
                assert_eq!(r.source("python"), Some(*name));
            }
        }
    }

    #[test]
    fn each_layer_alone_beats_the_default_and_unset_keys_stay_default() {
        for (rank, name) in NAMES.iter().enumerate() {
            let r = combine(inputs(&[rank])).unwrap();
            assert_eq!(r.source("python"), Some(*name));
            assert_eq!(r.source("strict"), Some("default"));
        }
        let r = combine(Inputs::default()).unwrap();
        assert_eq!(r.settings, Settings::default());
        assert!(r.sources.iter().all(|(_, s)| s == "default"));
        assert_eq!(r.sources.len(), registry::settings().count());
    }

    #[test]
    fn a_layer_overrides_only_what_it_sets() {
        let r = combine(Inputs {
            files: vec![layer(
                Source::File("/etc/c.toml".into()),
                "strict = true\nallow = [\"AR001\"]",
            )],
            profile: Some(("p".into(), table("allow = [\"AR002\", \"AR003\"]"))),
            env: vec![layer(Source::Env("SGLANG_LAUNCH_STRICT"), "strict = false")],
            cli: Some(layer(Source::CommandLine, "fit = true")),
        })
        .unwrap();
        assert!(!r.settings.strict && r.settings.fit);
        assert_eq!(r.settings.mode, Mode::Enforce);
        // A list is replaced, not appended to.
        assert_eq!(r.settings.allow, ["AR002", "AR003"]);
        assert_eq!(r.source("allow"), Some("profile p"));
        assert_eq!(r.source("strict"), Some("env SGLANG_LAUNCH_STRICT"));
    }

    #[test]
    fn a_bad_profile_table_is_named() {
        let mut i = inputs(&[]);
        i.profile = Some(("gpu".into(), table("stric = true")));
        let e = combine(i).unwrap_err();
        assert!(e.starts_with("profile gpu: unknown field `stric`"), "{e}");
        let mut i = inputs(&[]);
        i.profile = Some(("gpu".into(), table("fit = 1")));
        let e = combine(i).unwrap_err();
        assert!(
            e.contains("profile gpu") && e.contains("expected a boolean"),
            "{e}"
        );
    }

    #[test]
    fn mode_is_layered_and_checked_by_name() {
        let r = combine(Inputs {
            files: vec![layer(Source::File("/etc/c.toml".into()), "mode = \"off\"")],
            profile: Some(("p".into(), table("mode = \"warn\""))),
            ..Inputs::default()
        })
        .unwrap();
        assert_eq!(r.settings.mode, Mode::Warn);
        assert_eq!(r.source("mode"), Some("profile p"));
        let e = combine(Inputs {
            env: vec![layer(Source::Env("SGLANG_LAUNCH_MODE"), "mode = \"loud\"")],
            ..Inputs::default()
        })
        .unwrap_err();
        assert!(
            e.starts_with("env SGLANG_LAUNCH_MODE: unknown variant `loud`")
                && e.contains("enforce"),
            "{e}"
        );
    }

    #[test]
    fn the_registry_names_every_setting() {
        let keys: Vec<String> = table_keys(&Settings::default());
        let reg: Vec<&str> = registry::settings().map(|(k, _)| k).collect();
        assert_eq!(keys, reg);
    }

    fn table_keys(s: &Settings) -> Vec<String> {
        match serde_json::to_value(s).unwrap() {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            _ => unreachable!(),
        }
    }
}
