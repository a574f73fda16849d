//! `[args]` as SGLang tokens, checked against the flag set of the release in use: pure.

use std::ffi::OsString;

use super::error::ProfileError;
use super::load::Setting;
use crate::sglang::parser;
use crate::sglang::{Action, ActionKind, FlagSet, Nargs, ValueType};

/// The tokens for every `[args]` entry, in the profile's order.
pub(crate) fn tokens(
    args: &[Setting],
    flags: &'static FlagSet,
) -> Result<Vec<OsString>, ProfileError> {
    let mut out = Vec::new();
    for s in args {
        out.extend(one(s, flags)?.into_iter().map(OsString::from));
    }
    Ok(out)
}

fn one(s: &Setting, flags: &'static FlagSet) -> Result<Vec<String>, ProfileError> {
    let fail = |m: String| ProfileError(format!("{}: [args] {}: {m}", s.at, s.key));
    if s.key.starts_with('-') {
        return Err(fail(format!(
            "write the option without leading dashes: {} = …",
            s.key.trim_start_matches('-')
        )));
    }
    let option = format!("--{}", s.key);
    // Exact, or an abbreviation argparse accepts (`tp` for `tp-size`).
    let Some(action) = parser::action_for(flags, &option).map(|i| &flags.actions[i]) else {
        return Err(fail(unknown(&option, flags)));
    };
    if action.kind == ActionKind::Help {
        return Err(fail("--help is not a server setting; remove it".to_owned()));
    }
    if action.nargs == Nargs::Zero {
        return switch(s, action, &option).map_err(fail);
    }
    let values = values(&s.value, action).map_err(fail)?;
    Ok(std::iter::once(option).chain(values).collect())
}

fn unknown(option: &str, flags: &FlagSet) -> String {
    let hint = flags
        .actions
        .iter()
        .flat_map(|a| &a.option_strings)
        .map(|o| (strsim::jaro_winkler(option, o), o))
        .filter(|(s, _)| *s > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, o)| format!(" (did you mean {}?)", o.trim_start_matches('-')))
        .unwrap_or_default();
    format!(
        "SGLang {} has no option {option} (or it abbreviates several){hint}; fix or remove the key \
         (`sglang-launch flags show`)",
        flags.version
    )
}

/// A flag taking no value: `true` writes it, `false` leaves SGLang's default (or writes
/// `--no-X` for a `BooleanOptionalAction`).
fn switch(s: &Setting, action: &Action, option: &str) -> Result<Vec<String>, String> {
    let toml::Value::Boolean(on) = s.value else {
        return Err(format!("{option} takes no value: write true or false"));
    };
    Ok(match (on, action.kind) {
        (true, _) => vec![option.to_owned()],
        (false, ActionKind::BooleanOptional) => action
            .option_strings
            .iter()
            .filter(|o| o.starts_with("--no-"))
            .take(1)
            .cloned()
            .collect(),
        (false, _) => vec![],
    })
}

/// The values of an option that takes some: a list only where it takes several.
fn values(value: &toml::Value, action: &Action) -> Result<Vec<String>, String> {
    let many = matches!(
        action.nargs,
        Nargs::ZeroOrMore | Nargs::OneOrMore | Nargs::Exactly(_)
    );
    match value {
        toml::Value::Array(items) if many => items.iter().map(|v| scalar(v, action)).collect(),
        toml::Value::Array(_) => Err("takes one value, not a list".to_owned()),
        v => Ok(vec![scalar(v, action)?]),
    }
}

fn scalar(value: &toml::Value, action: &Action) -> Result<String, String> {
    use toml::Value as V;
    let json = matches!(action.value_type, ValueType::Json | ValueType::JsonList);
    match (value, action.value_type) {
        (V::Table(_) | V::Array(_), _) if json => {
            serde_json::to_string(value).map_err(|e| format!("cannot be written as JSON: {e}"))
        }
        (V::Integer(i), _) => Ok(i.to_string()),
        (V::Float(f), ValueType::Float | ValueType::Str | ValueType::None) => Ok(f.to_string()),
        (V::String(t), ValueType::Int) => Err(format!("expects an integer, not the string {t:?}")),
        (V::String(t), ValueType::Float) => Err(format!("expects a number, not the string {t:?}")),
        (V::String(t), _) => Ok(t.clone()),
        (V::Boolean(_), _) => Err("expects a value, not true/false: write it as a string".into()),
        (other, t) => Err(format!("expects {}, not {}", expected(t), other.type_str())),
    }
}

fn expected(t: ValueType) -> &'static str {
    match t {
        ValueType::Int | ValueType::HumanInt => "an integer",
        ValueType::Float => "a number",
        _ => "a string",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(key: &str, value: toml::Value) -> Setting {
        Setting {
            key: key.into(),
            value,
            origin: "p.toml".into(),
            at: "p.toml:3:1".into(),
        }
    }

    fn run(key: &str, value: toml::Value) -> Result<Vec<String>, ProfileError> {
        let flags = crate::sglang::flagset::get("0.5.23").unwrap();
        tokens(&[setting(key, value)], flags)
            .map(|t| t.into_iter().map(|x| x.into_string().unwrap()).collect())
    }

    #[test]
    fn values_flags_and_lists_become_tokens() {
        use toml::Value as V;
        assert_eq!(run("tp", V::Integer(8)).unwrap(), ["--tp", "8"]);
        assert_eq!(
            run("enable-metrics", V::Boolean(true)).unwrap(),
            ["--enable-metrics"]
        );
        assert!(run("enable-metrics", V::Boolean(false)).unwrap().is_empty());
        assert_eq!(
            run("mem-fraction-static", V::Float(0.8)).unwrap(),
            ["--mem-fraction-static", "0.8"]
        );
        let list = V::Array(vec![V::Integer(1), V::Integer(2)]);
        assert_eq!(run("numa-node", list).unwrap(), ["--numa-node", "1", "2"]);
    }

    #[test]
    fn unknown_options_and_wrong_types_name_the_position() {
        use toml::Value as V;
        let e = run("tensor-paralel-size", V::Integer(8)).unwrap_err().0;
        assert!(
            e.starts_with("p.toml:3:1: [args] tensor-paralel-size: SGLang 0.5.23 has no option"),
            "{e}"
        );
        assert!(e.contains("did you mean tensor-parallel-size?"), "{e}");
        let e = run("tp", V::String("eight".into())).unwrap_err().0;
        assert!(e.contains("expects an integer"), "{e}");
        let e = run("enable-metrics", V::Integer(1)).unwrap_err().0;
        assert!(e.contains("write true or false"), "{e}");
        assert!(run("tp", V::Array(vec![V::Integer(8)])).is_err());
    }
}
