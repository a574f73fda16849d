//! `docs/config.md`: the layers, the config-file keys and every `SGLANG_LAUNCH_*` variable,
//! generated from the settings registry.

use super::cell;
use crate::settings::files::SYSTEM;
use crate::settings::registry::{Kind, VARS};

pub(crate) fn config_markdown() -> String {
    let mut s = format!(
        "# Configuration\n\n\
         <!-- Generated from src/settings/registry.rs by scripts/gen-docs.sh; do not edit. -->\n\n\
         Launcher settings are merged from these layers, lowest first; each overrides only the keys it sets:\n\n\
         1. built-in defaults\n\
         2. `{SYSTEM}`\n\
         3. `$XDG_CONFIG_HOME/sglang-launch/config.toml` (else `~/.config/sglang-launch/config.toml`)\n\
         4. the selected profile's `[launcher]` table\n\
         5. `SGLANG_LAUNCH_*` variables (empty means unset)\n\
         6. options typed on the command line\n\n\
         A config file holds top-level keys only; an unknown key or a wrong type is an error naming the file, \
         line and column (exit 2). A file someone else could have written is refused (exit 2): as root, the \
         file and every directory above it must be owned by root or the invoking user and not be writable by \
         group or others; as another user, nothing on its path may be writable by others (see README, Files \
         others could write). Paths are used as written (relative ones against the working directory). `sglang-launch config show [--json]` \
         prints each merged value and its source (`default`, the file's path, `profile NAME`, `env VAR`, \
         `command line`); `--json` prints `{{\"settings\": {{KEY: {{\"value\": …, \"source\": …}}}}}}`.\n\n\
         ## Keys and variables\n\n\
         | key | variable | type | meaning |\n|---|---|---|---|\n"
    );
    for v in VARS {
        let key = v.key.map_or("—".to_owned(), |k| format!("`{k}`"));
        s.push_str(&format!(
            "| {key} | `{}` | {} | {} |\n",
            v.name,
            kind(v.kind),
            cell(v.meaning)
        ));
    }
    s.push_str(
        "\nVariables without a key are per-invocation switches (or, for `SGLANG_LAUNCH_SYSTEM_CONFIG`, \
         a test hook) and are not read from files.\n\n\
         ## Example\n\n```toml\nsglang-version = \"0.5.23\"\npython = \"/opt/sglang/bin/python\"\n\
         strict = true\nallow = [\"AR006\"]\n```\n",
    );
    s
}

fn kind(k: Kind) -> &'static str {
    match k {
        Kind::Bool => "boolean (`1/0`, `true/false`, `yes/no`, `on/off`)",
        Kind::Text => "string",
        Kind::Path => "path",
        Kind::Count => "whole number above 0",
        Kind::List => "list (comma-separated in the environment, array in a file)",
    }
}

#[cfg(test)]
mod tests {
    use crate::invocation::cli;
    use crate::settings::registry;

    /// Every variable clap reads is in the registry, and every registry variable but the test
    /// hook is one clap reads.
    #[test]
    fn the_registry_and_clap_name_the_same_variables() {
        let cmd = cli::command();
        let mut clap: Vec<String> = cmd
            .get_subcommands()
            .flat_map(|s| {
                s.get_subcommands()
                    .chain([s])
                    .flat_map(|c| c.get_arguments())
            })
            .filter_map(|a| a.get_env().map(|e| e.to_string_lossy().into_owned()))
            .collect();
        clap.sort();
        clap.dedup();
        let mut reg: Vec<String> = registry::VARS
            .iter()
            .map(|v| v.name.to_owned())
            .filter(|n| n != "SGLANG_LAUNCH_SYSTEM_CONFIG")
            .collect();
        reg.sort();
        assert_eq!(clap, reg);
    }
}
