//! Per-version flag sets, embedded as data (`data/flags/<version>.json`, facts only; the
//! releases are listed once, in [`super::release`]).

use serde::Deserialize;
use serde_json::Value;

use super::release::{self, Embedded};

pub use super::release::KNOWN_VERSIONS;

static FLAG_SETS: Embedded<FlagSet> = Embedded::new(release::FLAG_DATA, "flag set");

/// The embedded flag set for exactly this version (decoded on first use only).
pub fn get(version: &str) -> Option<&'static FlagSet> {
    release::position(version).map(|i| FLAG_SETS.get(i))
}

/// How an action consumes tokens (argparse's action classes, reduced to behaviour).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    Store,
    StoreTrue,
    StoreFalse,
    StoreConst,
    /// `argparse.BooleanOptionalAction`: `--x` sets true, `--no-x` sets false.
    BooleanOptional,
    Help,
    /// SGLang's `LoRAPathAction` (version-specific result shape).
    LoraPaths,
    /// SGLang's `DeprecatedAction` (0.5.10+): warns and changes nothing, unless it carries an
    /// error message (`Action::deprecated_error`), which stops the launch.
    Deprecated,
    /// SGLang's `DeprecatedStoreConstAction`: takes a value from `choices`, stores `const`.
    DeprecatedStoreConst,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub enum Nargs {
    /// nargs=None: exactly one value.
    #[serde(rename = "1")]
    One,
    #[serde(rename = "0")]
    Zero,
    #[serde(rename = "?")]
    Optional,
    #[serde(rename = "*")]
    ZeroOrMore,
    #[serde(rename = "+")]
    OneOrMore,
    /// A fixed count N > 1.
    #[serde(untagged)]
    Exactly(u32),
}

/// The `type=` callable of an action, as SGLang declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueType {
    Str,
    Int,
    Float,
    /// `json.loads`
    Json,
    /// `json_list_type`
    JsonList,
    /// `human_readable_int` (`4k`, `1M`, …)
    HumanInt,
    /// `nullable_str`
    NullableStr,
    /// `parse_cuda_graph_backend_arg`
    CudaGraphBackend,
    /// `parse_cuda_graph_config_arg`
    CudaGraphConfig,
    /// No `type=`: the raw string (or no value for flag actions).
    None,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Action {
    pub option_strings: Vec<String>,
    pub dest: String,
    pub kind: ActionKind,
    pub nargs: Nargs,
    #[serde(default)]
    pub r#const: Value,
    #[serde(default)]
    pub default: Value,
    #[serde(default)]
    pub default_is_suppress: bool,
    pub value_type: ValueType,
    #[serde(default)]
    pub choices: Option<Vec<Value>>,
    #[serde(default)]
    pub required: bool,
    /// For SGLang's deprecated actions: the option that replaces this one.
    #[serde(default)]
    pub deprecated_for: Option<String>,
    /// A `DeprecatedAction` that stops the launch (argparse error) instead of warning.
    #[serde(default)]
    pub deprecated_error: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct FlagSet {
    pub version: String,
    pub prog: String,
    pub allow_abbrev: bool,
    pub actions: Vec<Action>,
}

impl FlagSet {
    /// The action that owns this exact option string (no abbreviation).
    pub fn action(&self, option: &str) -> Option<&Action> {
        self.actions
            .iter()
            .find(|a| a.option_strings.iter().any(|o| o == option))
    }

    /// The argparse dest behind an exact option string.
    pub fn dest_of(&self, option: &str) -> Option<&str> {
        self.action(option).map(|a| a.dest.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_flag_set_decodes_and_names_its_version() {
        for v in KNOWN_VERSIONS {
            let f = get(v).unwrap();
            assert_eq!(f.version, *v);
            assert!(f.allow_abbrev);
            assert!(f.action("--model-path").is_some(), "{v}");
        }
    }

    #[test]
    fn aliases_map_to_the_versions_dest() {
        assert_eq!(get("0.5.23").unwrap().dest_of("--tp"), None); // abbreviations are the parser's job
        assert_eq!(
            get("0.5.23").unwrap().dest_of("--tensor-parallel-size"),
            Some("tp_size")
        );
        assert_eq!(
            get("0.4.10.post2").unwrap().dest_of("--tp-size"),
            Some("tensor_parallel_size")
        );
    }
}
