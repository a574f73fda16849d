//! Every `SGLANG_LAUNCH_*` variable in one table: the setting it feeds (if it is a layered
//! setting), its type and its meaning. The env layer, the unknown-variable warning and
//! `docs/config.md` all read this table, so they cannot disagree.

/// How a variable's (or a file key's) value reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
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
    pub key: Option<&'static str>,
    pub kind: Kind,
    pub meaning: &'static str,
}

const fn setting(name: &'static str, key: &'static str, kind: Kind, meaning: &'static str) -> Var {
    Var {
        name,
        key: Some(key),
        kind,
        meaning,
    }
}

const fn switch(name: &'static str, kind: Kind, meaning: &'static str) -> Var {
    Var {
        name,
        key: None,
        kind,
        meaning,
    }
}

pub const VARS: &[Var] = &[
    setting(
        "SGLANG_LAUNCH_SGLANG_VERSION",
        "sglang-version",
        Kind::Text,
        "use this SGLang version's flag set instead of detecting the installed one",
    ),
    setting(
        "SGLANG_LAUNCH_PYTHON",
        "python",
        Kind::Path,
        "the Python interpreter that runs SGLang (default: python3 on PATH)",
    ),
    setting(
        "SGLANG_LAUNCH_TOPOLOGY",
        "topology",
        Kind::Path,
        "read the GPUs from a topology/v1 file instead of NVML",
    ),
    setting(
        "SGLANG_LAUNCH_NVML_LIB",
        "nvml-lib",
        Kind::Path,
        "libnvidia-ml to load instead of the system's libnvidia-ml.so.1",
    ),
    setting(
        "SGLANG_LAUNCH_DEVICE_ROOT",
        "device-root",
        Kind::Path,
        "the root under which dev/ is read for other accelerators (default /; for tests)",
    ),
    setting(
        "SGLANG_LAUNCH_STRICT",
        "strict",
        Kind::Bool,
        "warnings block too",
    ),
    setting(
        "SGLANG_LAUNCH_NO_FIX",
        "no-fix",
        Kind::Bool,
        "report only: arguments and environment unchanged",
    ),
    setting(
        "SGLANG_LAUNCH_FIT",
        "fit",
        Kind::Bool,
        "lower context length, running requests and graph batch to what fits",
    ),
    setting(
        "SGLANG_LAUNCH_FIT_REQUEST_TOKENS",
        "fit-request-tokens",
        Kind::Count,
        "--fit: the tokens (prompt and output) a typical request holds, for sizing --max-running-requests (default 4096)",
    ),
    setting(
        "SGLANG_LAUNCH_OFFLINE",
        "offline",
        Kind::Bool,
        "never ask the Hugging Face Hub for a model that is not on disk",
    ),
    setting(
        "SGLANG_LAUNCH_ONLINE",
        "online",
        Kind::Bool,
        "with a topology file, still ask the Hub (offline wins)",
    ),
    setting(
        "SGLANG_LAUNCH_ALLOW",
        "allow",
        Kind::List,
        "rules to skip (codes or names)",
    ),
    setting(
        "SGLANG_LAUNCH_DENY",
        "deny",
        Kind::List,
        "rules whose findings become errors (codes or names)",
    ),
    setting(
        "SGLANG_LAUNCH_MODE",
        "mode",
        Kind::Text,
        "run and the drop-in form: enforce (error findings block, exit 78), warn (report, fix, launch anyway) or off (exec the command untouched)",
    ),
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

/// The layered settings, in table order.
pub fn settings() -> impl Iterator<Item = (&'static str, &'static Var)> {
    VARS.iter().filter_map(|v| v.key.map(|k| (k, v)))
}

pub fn by_key(key: &str) -> Option<&'static Var> {
    VARS.iter().find(|v| v.key == Some(key))
}

pub fn is_known(name: &str) -> bool {
    VARS.iter().any(|v| v.name == name)
}
