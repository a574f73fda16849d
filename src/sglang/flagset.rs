//! Per-version flag sets, embedded as data (`data/flags/flags-<version>.json`, facts only).

use serde::Deserialize;
use serde_json::Value;

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
