//! Parses SGLang arguments the way SGLang's argparse parser does for one flag set.

use std::collections::BTreeMap;
use std::ffi::OsString;

use serde_json::Value;

use super::flagset::{Action, FlagSet};

/// One option as it appeared on the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    /// argparse dest of the action.
    pub dest: String,
    /// The action's first long option string (canonical spelling for reports and fixes).
    pub option: String,
    /// What the user wrote (an abbreviation, an alias, `--x=v`).
    pub written: String,
    /// Index of the option token in `SglangArgs::tokens`.
    pub start: usize,
    /// Number of tokens it spans (option plus separate values; 1 for `--x=v`).
    pub len: usize,
}

/// A problem argparse would report (it would exit 2 with this message).
#[derive(Debug, Clone, PartialEq)]
pub struct ArgError {
    /// argparse-style message, e.g. `ambiguous option: --pp could match --pp-size, …`.
    pub message: String,
    /// Close option names for an unknown option ("did you mean").
    pub suggestions: Vec<String>,
}

/// The SGLang arguments: the user's tokens and what argparse makes of them.
#[derive(Debug, Clone)]
pub struct SglangArgs {
    pub flags: &'static FlagSet,
    /// The tokens exactly as given (byte-exact, may be non-UTF-8).
    pub tokens: Vec<OsString>,
    /// dest → typed value, for every option given (argparse's namespace minus untouched defaults).
    pub values: BTreeMap<String, Value>,
    pub occurrences: Vec<Occurrence>,
    /// Empty when argparse would accept the command line.
    pub errors: Vec<ArgError>,
}

impl SglangArgs {
    /// The value given for an option (any of its option strings), if it was given.
    pub fn get(&self, option: &str) -> Option<&Value> {
        self.values.get(self.flags.dest_of(option)?)
    }

    /// The value given, else the flag set's default. `None` if the option is not in this version.
    pub fn get_or_default(&self, option: &str) -> Option<&Value> {
        let action = self.flags.action(option)?;
        self.values.get(&action.dest).or(Some(&action.default))
    }

    /// Whether the option was given on the command line.
    pub fn is_set(&self, option: &str) -> bool {
        self.get(option).is_some()
    }

    /// True for a boolean option that is on (given, or on by default).
    pub fn flag(&self, option: &str) -> bool {
        matches!(self.get_or_default(option), Some(Value::Bool(true)))
    }

    pub fn int(&self, option: &str) -> Option<i64> {
        self.get_or_default(option).and_then(Value::as_i64)
    }

    pub fn float(&self, option: &str) -> Option<f64> {
        self.get_or_default(option).and_then(Value::as_f64)
    }

    pub fn str(&self, option: &str) -> Option<&str> {
        self.get_or_default(option).and_then(Value::as_str)
    }

    /// Whether this SGLang version knows the option at all.
    pub fn knows(&self, option: &str) -> bool {
        self.flags.action(option).is_some()
    }

    /// Occurrences of the action behind `option`, in command-line order.
    pub fn occurrences_of<'a>(&'a self, option: &str) -> impl Iterator<Item = &'a Occurrence> + 'a {
        let dest = self.flags.dest_of(option).map(str::to_owned);
        self.occurrences
            .iter()
            .filter(move |o| Some(&o.dest) == dest.as_ref())
    }

    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Parse `tokens` with the flag set, as SGLang's argparse parser would.
pub fn parse(flags: &'static FlagSet, tokens: Vec<OsString>) -> SglangArgs {
    let _ = Action::clone; // the real parser lands with the argument-model work
    SglangArgs {
        flags,
        tokens,
        values: BTreeMap::new(),
        occurrences: Vec::new(),
        errors: Vec::new(),
    }
}

impl SglangArgs {
    /// Arguments with values set directly (no tokens): for unit tests of rules and planners
    /// that should not depend on the parser. Options are named by any option string.
    pub fn with_values(flags: &'static FlagSet, values: &[(&str, Value)]) -> SglangArgs {
        let values = values
            .iter()
            .map(|(opt, v)| {
                let dest = flags
                    .dest_of(opt)
                    .unwrap_or_else(|| panic!("{opt} not in {}", flags.version));
                (dest.to_owned(), v.clone())
            })
            .collect();
        SglangArgs {
            flags,
            tokens: Vec::new(),
            values,
            occurrences: Vec::new(),
            errors: Vec::new(),
        }
    }
}
