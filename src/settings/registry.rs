//! Every launcher setting declared once: its typed field in [`Settings`], and its row in one
//! table of every `SGLANG_LAUNCH_*` variable (the setting it feeds, if it is a layered one, its
//! type, its meaning, its command-line option). The options of `run`, `check`, `plan` and
//! `config show` (and those of the commands that read only some settings: `upgrade`, `detect`,
//! `flags`, `profiles`), the file keys, the env layer, the unknown-variable warning, `config
//! show` and `docs/config.md` all come from here, so they cannot disagree.

use std::num::NonZeroU64;
use std::path::PathBuf;

use clap::builder::{FalseyValueParser, PossibleValuesParser};
use clap::{Arg, ArgAction, ValueHint};
use serde::{Deserialize, Serialize};

/// What the launcher does with what it finds (`run` and the drop-in form).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    /// Error findings block the launch (exit 78).
    #[default]
    Enforce,
    /// Findings are reported and fixes applied, and SGLang is launched whatever they say.
    Warn,
    /// Nothing is read or changed: the command is exec'd as given.
    Off,
}

impl Mode {
    pub(crate) const NAMES: [&'static str; 3] = ["enforce", "warn", "off"];
}

/// The launcher settings a file, a profile, the environment or the command line may set; each
/// field has its row in [`VARS`], in the same order (a test holds them together).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub(crate) struct Settings {
    pub(crate) sglang_version: Option<String>,
    pub(crate) python: Option<PathBuf>,
    pub(crate) topology: Option<PathBuf>,
    pub(crate) nvml_lib: Option<PathBuf>,
    pub(crate) device_root: Option<PathBuf>,
    pub(crate) strict: bool,
    pub(crate) no_fix: bool,
    pub(crate) fit: bool,
    pub(crate) fit_request_tokens: Option<NonZeroU64>,
    pub(crate) offline: bool,
    pub(crate) online: bool,
    pub(crate) ignore_observed: bool,
    pub(crate) allow: Vec<String>,
    pub(crate) deny: Vec<String>,
    pub(crate) mode: Mode,
}

/// How a variable's (or a file key's) value reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `1/0`, `true/false`, `yes/no`, `on/off` (clap's falsey parsing: only the false words are false).
    Bool,
    Text,
    Path,
    /// Comma-separated in the environment, an array of strings in a file.
    List,
    /// A whole number above zero.
    Count,
}

#[derive(Debug, Clone, Copy)]
pub struct Var {
    pub name: &'static str,
    /// The layered setting (config-file key); `None` for per-invocation switches.
    pub(crate) key: Option<&'static str>,
    pub(crate) kind: Kind,
    pub(crate) meaning: &'static str,
    /// A layered setting's `--KEY`: its help, and how its value is shown and completed.
    pub(crate) option: Opt,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Opt {
    pub(crate) help: &'static str,
    pub(crate) value_name: Option<&'static str>,
    pub(crate) hint: ValueHint,
    pub(crate) hidden: bool,
    /// The only values it takes (none: any of its kind).
    pub(crate) choices: &'static [&'static str],
}

const fn setting(name: &'static str, key: &'static str, kind: Kind, meaning: &'static str) -> Var {
    Var {
        name,
        key: Some(key),
        kind,
        meaning,
        option: Opt {
            help: "",
            value_name: None,
            hint: ValueHint::Unknown,
            hidden: false,
            choices: &[],
        },
    }
}

const fn switch(name: &'static str, kind: Kind, meaning: &'static str) -> Var {
    let mut v = setting(name, "", kind, meaning);
    v.key = None;
    v
}

impl Var {
    const fn help(mut self, help: &'static str) -> Var {
        self.option.help = help;
        self
    }

    const fn value(mut self, name: &'static str, hint: ValueHint) -> Var {
        self.option.value_name = Some(name);
        self.option.hint = hint;
        self
    }

    const fn hidden(mut self) -> Var {
        self.option.hidden = true;
        self
    }

    const fn choices(mut self, choices: &'static [&'static str]) -> Var {
        self.option.choices = choices;
        self
    }
}

pub const VARS: &[Var] = &[
    setting(
        "SGLANG_LAUNCH_SGLANG_VERSION",
        "sglang-version",
        Kind::Text,
        "use this SGLang version's flag set instead of detecting the installed one",
    ).help("Use this SGLang version's flag set instead of detecting the installed one")
    .value("VER", ValueHint::Unknown),
    setting(
        "SGLANG_LAUNCH_PYTHON",
        "python",
        Kind::Path,
        "the Python interpreter that runs SGLang (default: the python3 beside the launcher in a venv or conda env, else python3 on PATH)",
    ).help("Python interpreter that runs SGLang [default: the python3 beside the launcher in a venv or conda env, else python3 on PATH]")
    .value("PATH", ValueHint::ExecutablePath),
    setting(
        "SGLANG_LAUNCH_TOPOLOGY",
        "topology",
        Kind::Path,
        "read the GPUs from a topology/v1 file instead of NVML",
    ).help("Read the GPUs from a topology file (topology/v1) instead of NVML")
    .value("FILE", ValueHint::FilePath),
    setting(
        "SGLANG_LAUNCH_NVML_LIB",
        "nvml-lib",
        Kind::Path,
        "libnvidia-ml to load instead of the system's libnvidia-ml.so.1",
    ).help("Path of libnvidia-ml to load instead of the system's libnvidia-ml.so.1")
    .value("PATH", ValueHint::FilePath)
    .hidden(),
    setting(
        "SGLANG_LAUNCH_DEVICE_ROOT",
        "device-root",
        Kind::Path,
        "the root under which dev/ is read for other accelerators (default /; for tests)",
    ).help("The root under which dev/ is read for other accelerators (tests)")
    .value("DIR", ValueHint::Unknown)
    .hidden(),
    setting(
        "SGLANG_LAUNCH_STRICT",
        "strict",
        Kind::Bool,
        "warnings block too",
    ).help("Treat warnings as blocking"),
    setting(
        "SGLANG_LAUNCH_NO_FIX",
        "no-fix",
        Kind::Bool,
        "report only: arguments and environment unchanged",
    ).help("Report only: leave the arguments and the environment unchanged"),
    setting(
        "SGLANG_LAUNCH_FIT",
        "fit",
        Kind::Bool,
        "lower context length, running requests and graph batch to what fits",
    ).help("When the server does not fit, lower --context-length, then --max-running-requests, then the decode CUDA-graph max batch to the largest values that fit (each change reported)"),
    setting(
        "SGLANG_LAUNCH_FIT_REQUEST_TOKENS",
        "fit-request-tokens",
        Kind::Count,
        "--fit: the tokens (prompt and output) a typical request holds, for sizing --max-running-requests (default 4096)",
    ).help("With --fit: the tokens (prompt and output) a typical request holds; --max-running-requests is sized for requests of this length (default 4096)")
    .value("TOKENS", ValueHint::Unknown),
    setting(
        "SGLANG_LAUNCH_OFFLINE",
        "offline",
        Kind::Bool,
        "never ask the Hugging Face Hub for a model that is not on disk",
    ).help("Never ask the Hugging Face Hub for a model that is not on disk (HF_HUB_OFFLINE=1 does too)"),
    setting(
        "SGLANG_LAUNCH_ONLINE",
        "online",
        Kind::Bool,
        "with a topology file, still ask the Hub (offline wins)",
    ).help("With --topology, still ask the Hugging Face Hub for a model not on disk (--offline wins)"),
    setting(
        "SGLANG_LAUNCH_IGNORE_OBSERVED",
        "ignore-observed",
        Kind::Bool,
        "plan from predictions only, not from the starts kept on this machine",
    ).help("Plan from predictions only: leave out what earlier starts of this line on this machine measured (`observed`)"),
    setting(
        "SGLANG_LAUNCH_ALLOW",
        "allow",
        Kind::List,
        "rules to skip (codes or names)",
    ).help("Skip a rule (code or name; repeatable or comma-separated)")
    .value("CODE", ValueHint::Unknown),
    setting(
        "SGLANG_LAUNCH_DENY",
        "deny",
        Kind::List,
        "rules whose findings become errors (codes or names)",
    ).help("Make a rule's finding an error (code or name; repeatable or comma-separated)")
    .value("CODE", ValueHint::Unknown),
    setting(
        "SGLANG_LAUNCH_MODE",
        "mode",
        Kind::Text,
        "run and the drop-in form: enforce (error findings block, exit 78), warn (report, fix, launch anyway) or off (exec the command untouched)",
    ).help("run and the drop-in form: enforce (error findings block, exit 78), warn (report and fix, then launch anyway) or off (exec the command as given, nothing read or changed); check and plan always judge as enforce does")
    .value("MODE", ValueHint::Unknown)
    .choices(&Mode::NAMES),
    switch(
        "SGLANG_LAUNCH_JSON",
        Kind::Bool,
        "run: plan/v1 JSON on stderr; check/plan: on stdout (or --json-file)",
    ),
    switch(
        "SGLANG_LAUNCH_JSON_FILE",
        Kind::Path,
        "run/check/plan: write the plan/v1 JSON to this file",
    ),
    switch(
        "SGLANG_LAUNCH_PROFILE",
        Kind::Text,
        "start from this profile (NAME.toml); its [launcher] table is the layer between the files and the environment",
    ),
    switch(
        "SGLANG_LAUNCH_PROFILES_DIR",
        Kind::Path,
        "look for profiles in this directory first",
    ),
    switch(
        "SGLANG_LAUNCH_DRY_RUN",
        Kind::Bool,
        "run: print the command instead of exec'ing",
    ),
    switch(
        "SGLANG_LAUNCH_PRINT_ARGS",
        Kind::Bool,
        "plan: print only the final command",
    ),
    switch(
        "SGLANG_LAUNCH_SHOW_SECRETS",
        Kind::Bool,
        "plan: show secret values instead of ***",
    ),
    switch(
        "SGLANG_LAUNCH_SYSTEM_CONFIG",
        Kind::Path,
        "for tests: read this file instead of /etc/sglang-launch/config.toml",
    ),
];

/// The settings' options in the order `--help` lists them, by arg id (the [`Settings`] field,
/// which the completion code and the command-line layer know them by).
const OPTION_ORDER: [&str; 15] = [
    "topology",
    "sglang_version",
    "python",
    "strict",
    "no_fix",
    "offline",
    "online",
    "fit",
    "fit_request_tokens",
    "ignore_observed",
    "allow",
    "deny",
    "nvml_lib",
    "device_root",
    "mode",
];

/// Every setting's `--KEY`, reading `SGLANG_LAUNCH_*` too (its value never shown in help).
pub(crate) fn options() -> impl Iterator<Item = Arg> {
    OPTION_ORDER.iter().filter_map(|&id| {
        let (_, v) = settings().find(|(k, _)| k.replace('-', "_") == id)?;
        Some(option(id, v))
    })
}

/// A setting picked by a command that reads only some: its key, and the help that says what it
/// means there (`None`: the registry's own).
pub(crate) type Picked = (&'static str, Option<&'static str>);

/// The `--KEY` of each picked setting, in that order, defined as [`options`] defines it.
pub(crate) fn options_of(picked: &'static [Picked]) -> impl Iterator<Item = Arg> {
    picked.iter().filter_map(|&(key, help)| {
        let v = by_key(key)?;
        let id = OPTION_ORDER.iter().find(|id| id.replace('_', "-") == key)?;
        let a = option(id, v);
        Some(match help {
            Some(h) => a.help(h),
            None => a,
        })
    })
}

fn option(id: &'static str, v: &'static Var) -> Arg {
    let o = &v.option;
    let mut a = Arg::new(id)
        .long(v.key.unwrap_or(id))
        .env(v.name)
        .hide_env_values(true)
        .help(o.help)
        .hide(o.hidden);
    if let Some(n) = o.value_name {
        a = a.value_name(n);
    }
    // Left unset, clap infers the hint from the value's type (a path completes as one).
    if o.hint != ValueHint::Unknown {
        a = a.value_hint(o.hint);
    }
    match v.kind {
        Kind::Bool => a
            .action(ArgAction::SetTrue)
            .value_parser(FalseyValueParser::new()),
        Kind::Text if !o.choices.is_empty() => a
            .action(ArgAction::Set)
            .value_parser(PossibleValuesParser::new(o.choices)),
        Kind::Text => a
            .action(ArgAction::Set)
            .value_parser(clap::value_parser!(String)),
        Kind::Path => a
            .action(ArgAction::Set)
            .value_parser(clap::value_parser!(PathBuf)),
        Kind::Count => a
            .action(ArgAction::Set)
            .value_parser(clap::value_parser!(NonZeroU64)),
        Kind::List => a
            .action(ArgAction::Append)
            .value_delimiter(',')
            .value_parser(clap::value_parser!(String)),
    }
}

/// The layered settings, in table order.
pub(crate) fn settings() -> impl Iterator<Item = (&'static str, &'static Var)> {
    VARS.iter().filter_map(|v| v.key.map(|k| (k, v)))
}

pub(crate) fn by_key(key: &str) -> Option<&'static Var> {
    VARS.iter().find(|v| v.key == Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A setting left out of the order would have no option at all.
    #[test]
    fn every_setting_has_one_option() {
        let mut ids: Vec<String> = options().map(|a| a.get_id().to_string()).collect();
        let mut keys: Vec<String> = settings().map(|(k, _)| k.replace('-', "_")).collect();
        ids.sort();
        keys.sort();
        assert_eq!(ids, keys);
        assert!(settings().all(|(_, v)| !v.option.help.is_empty()));
    }
}
