//! The environment layer: one layer per `SGLANG_LAUNCH_*` setting variable that is set, parsed
//! the way clap parses it (falsey booleans, comma-separated lists).

use toml::Value;

use super::layer::{Layer, Source};
use super::registry::{self, Kind};

/// Layers for the set variables, in registry order. Empty values mean unset.
pub(crate) fn layers(get: impl Fn(&str) -> Option<String>) -> Result<Vec<Layer>, String> {
    let mut out = Vec::new();
    for (key, var) in registry::settings() {
        let Some(raw) = get(var.name).filter(|v| !v.trim().is_empty()) else {
            continue;
        };
        let value = parse(var.kind, &raw).ok_or_else(|| {
            let want = match var.kind {
                Kind::Count => "a whole number above 0",
                _ => "a boolean: use 1/0, true/false, yes/no or on/off",
            };
            format!("{}={raw} is not {want}", var.name)
        })?;
        let mut values = toml::Table::new();
        values.insert(key.to_owned(), value);
        out.push(Layer {
            source: Source::Env(var.name),
            values,
        });
    }
    Ok(out)
}

/// A value as its variable reads it (`None`: not of the setting's kind).
pub(crate) fn parse(kind: Kind, raw: &str) -> Option<Value> {
    Some(match kind {
        Kind::Bool => Value::Boolean(boolean(raw)?),
        Kind::Text | Kind::Path => Value::String(raw.to_owned()),
        Kind::Count => Value::Integer(raw.trim().parse::<i64>().ok().filter(|&n| n > 0)?),
        Kind::List => Value::Array(
            list(raw.split(','))
                .into_iter()
                .map(Value::String)
                .collect(),
        ),
    })
}

/// clap's `FalseyValueParser` takes any value and only the false words as false; the launcher
/// has always refused other words, so a typo does not silently turn a switch on.
pub(crate) fn boolean(raw: &str) -> Option<bool> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" | "y" | "t" => Some(true),
        "0" | "false" | "no" | "off" | "n" | "f" => Some(false),
        _ => None,
    }
}

/// Trimmed, empty items dropped (`--allow AR001,` names one rule).
pub(crate) fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    items
        .into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &'static [(&str, &str)]) -> Result<Vec<Layer>, String> {
        layers(|n| {
            pairs
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn only_set_variables_make_layers_and_falsey_words_are_false() {
        let l = from(&[
            ("SGLANG_LAUNCH_STRICT", "0"),
            ("SGLANG_LAUNCH_FIT", "Yes"),
            ("SGLANG_LAUNCH_PYTHON", " "),
        ])
        .unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].source, Source::Env("SGLANG_LAUNCH_STRICT"));
        assert_eq!(l[0].values["strict"], Value::Boolean(false));
        assert_eq!(l[1].values["fit"], Value::Boolean(true));
        for word in ["0", "false", "no", "off", "n", "f", "OFF"] {
            assert_eq!(boolean(word), Some(false), "{word}");
        }
    }

    #[test]
    fn lists_split_on_commas_and_bad_booleans_name_the_variable() {
        let l = from(&[("SGLANG_LAUNCH_ALLOW", "AR001, AR002,")]).unwrap();
        assert_eq!(
            l[0].values["allow"],
            Value::Array(vec!["AR001".into(), "AR002".into()])
        );
        let e = from(&[("SGLANG_LAUNCH_OFFLINE", "maybe")]).unwrap_err();
        assert!(
            e.starts_with("SGLANG_LAUNCH_OFFLINE=maybe is not a boolean"),
            "{e}"
        );
    }
}
