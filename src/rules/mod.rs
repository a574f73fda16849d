//! The catalogue of known-bad flag / environment / hardware combinations.
//!
//! One rule = a stable code, a kebab-case name, a default severity, the SGLang versions it
//! applies to, its texts (data, `data/rules/`), and a check over the facts. A check reports a
//! [`Hit`] with a one-line message naming the facts and, where safe, a [`Fix`].

pub mod fix;

use serde::Serialize;

use crate::facts::{Env, Topology};
use crate::sglang::SglangArgs;

pub use fix::{ArgEdit, EnvEdit, Fix};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

/// Everything a check may look at. Borrowed: checks are pure functions of the facts.
pub struct Context<'a> {
    /// The SGLang version whose flag set is in use.
    pub version: &'a str,
    pub args: &'a SglangArgs,
    pub env: &'a Env,
    pub topology: &'a Topology,
    /// Topology indices the server will use.
    pub gpus: &'a [u32],
    pub model: Option<&'a crate::facts::model::ModelFacts>,
}

/// A rule that fired.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub code: &'static str,
    pub message: String,
    pub fix: Option<Fix>,
}

/// `--allow`, `--deny`, `--strict`: how the user tunes the catalogue.
#[derive(Debug, Clone, Default)]
pub struct RuleSettings {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub strict: bool,
}
