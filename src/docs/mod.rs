//! Reference documents generated from the code: the JSON Schemas of the two public formats
//! (plan/v1, topology/v1), the rule catalogue, the command-line reference, the configuration
//! reference, the man page and the shell completion scripts (from [`crate::complete`]). The
//! checked-in copies under `docs/`, `man/` and `completions/` are kept fresh by
//! `tests/it/docs.rs` (`scripts/gen-docs.sh` rewrites them).

mod cli;
mod config;
pub(crate) mod man;
mod rules;

use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::complete::{self, scripts};
use crate::facts::topology::Topology;
use crate::invocation::cli::{Command, Shell};
use crate::plan::v1::Plan;

pub use cli::{cli_markdown, launcher_options_table};
pub(crate) use config::config_markdown;
pub use man::man_page;
pub(crate) use rules::rules_markdown;

/// What `completions`, `man` and the hidden `__complete` print (handed to `invocation`, the
/// layer below, by the binary).
pub fn answer(cmd: &Command) -> String {
    match cmd {
        Command::Completions(a) => scripts::script(a.shell),
        Command::Man => man_page(),
        Command::Complete(a) => complete::answer(a).render(),
        _ => String::new(),
    }
}

/// Every generated file: its path relative to the repository root, and its contents.
pub fn generated() -> Vec<(&'static str, String)> {
    vec![
        ("docs/schema/plan-v1.schema.json", pretty(&plan_schema())),
        (
            "docs/schema/topology-v1.schema.json",
            pretty(&topology_schema()),
        ),
        ("docs/rules.md", rules_markdown()),
        ("docs/cli.md", cli_markdown()),
        ("docs/config.md", config_markdown()),
        ("man/sglang-launch.1", man_page()),
        (
            "completions/sglang-launch.bash",
            scripts::script(Shell::Bash),
        ),
        ("completions/_sglang-launch", scripts::script(Shell::Zsh)),
        (
            "completions/sglang-launch.fish",
            scripts::script(Shell::Fish),
        ),
    ]
}

/// The plan/v1 schema: what `plan --json` and `check --json` write, so the serializer's view
/// (an `Option` is always present, possibly `null`).
pub fn plan_schema() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Plan>();
    titled(
        schema.to_value(),
        "sglang-launch plan/v1",
        "The plan `sglang-launch plan --json` and `check --json` print (docs/plan-v1.md). \
         Fields are only ever added within v1.",
    )
}

/// The topology/v1 schema: what `--topology` accepts, so the reader's view (optional keys may be
/// absent). The reader's cross-field checks (unique indices and UUIDs, links between listed
/// GPUs, used memory within the total) are beyond a schema; docs/topology-v1.md lists them.
pub fn topology_schema() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<Topology>();
    titled(
        schema.to_value(),
        "sglang-launch topology/v1",
        "The GPU topology `sglang-launch detect --json` writes and `--topology FILE` reads \
         (docs/topology-v1.md). Fields are only ever added within v1.",
    )
}

/// The root's title and description name the format, not the Rust type; they go right after
/// `$schema` so the file reads top-down.
fn titled(schema: Value, title: &str, description: &str) -> Value {
    let Value::Object(rest) = schema else {
        return schema;
    };
    let mut map = serde_json::Map::new();
    if let Some(meta) = rest.get("$schema") {
        map.insert("$schema".into(), meta.clone());
    }
    map.insert("title".into(), title.into());
    map.insert("description".into(), description.into());
    for (k, v) in rest {
        map.entry(k).or_insert(v);
    }
    Value::Object(map)
}

fn pretty(v: &Value) -> String {
    // A `Value` always serialises.
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// Markdown table cell text: one line, `|` escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}
