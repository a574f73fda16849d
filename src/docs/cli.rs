//! `docs/cli.md`: the command-line reference, walked from the clap definition that also drives
//! parsing, `--help`, the man page and the completions. Hidden commands and arguments stay out.

use clap::{Arg, Command};

use super::cell;
use crate::invocation::cli;

/// The whole of `docs/cli.md`.
pub fn cli_markdown() -> String {
    let mut root = cli::command();
    // Building fills in the subcommands' bin names (for their usage lines) and the help flags.
    root.build();
    let mut s = String::from(
        "# Command-line reference\n\n\
         <!-- Generated from the clap definition (src/invocation/cli.rs) by scripts/gen-docs.sh; \
         do not edit. -->\n\n",
    );
    push_about(&mut s, &root);
    s.push_str(&usage(&root));
    if let Some(after) = root.get_after_long_help().or(root.get_after_help()) {
        s.push_str(&format!("{after}\n\n"));
    }
    s.push_str(
        "Every command also takes `-h`/`--help`; `sglang-launch --version` prints the version.\n\n\
         ## Commands\n\n",
    );
    let subs: Vec<&Command> = root
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .collect();
    for sub in &subs {
        s.push_str(&format!(
            "- [`{}`](#sglang-launch-{}): {}\n",
            sub.get_name(),
            sub.get_name(),
            cell(&sub.get_about().map(|a| a.to_string()).unwrap_or_default())
        ));
    }
    s.push('\n');
    for sub in subs {
        s.push_str(&command_section(sub));
    }
    // Each block ends with a blank line; the file ends with one newline.
    s.truncate(s.trim_end().len());
    s.push('\n');
    s
}

/// README's table of the launcher options `run`, `check` and `plan` take, each with its
/// variable: one row per option, in `run`'s order, marked with its command where only one
/// takes it.
pub fn launcher_options_table() -> String {
    let mut root = cli::command();
    root.build();
    let commands = ["run", "check", "plan"];
    let mut rows: Vec<(String, [String; 4], Vec<&str>)> = Vec::new();
    for name in commands {
        let Some(cmd) = root.find_subcommand(name) else {
            continue;
        };
        let args = cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set() && !is_builtin(a) && a.get_env().is_some());
        for a in args {
            let id = a.get_id().to_string();
            match rows.iter_mut().find(|r| r.0 == id) {
                Some(r) => r.2.push(name),
                None => rows.push((id, arg_row(a), vec![name])),
            }
        }
    }
    let mut s = String::from("| option | env | meaning |\n|---|---|---|\n");
    for (_, [written, env, _, help], used) in rows {
        let only = match used.as_slice() {
            [one] => format!(" ({one})"),
            _ => String::new(),
        };
        s.push_str(&format!("| {written}{only} | {env} | {help} |\n"));
    }
    s
}

fn push_about(s: &mut String, cmd: &Command) {
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        s.push_str(&format!("{about}\n\n"));
    }
}

/// The usage line(s), as `--help` prints them, in a code block.
fn usage(cmd: &Command) -> String {
    let text = cmd.clone().render_usage().to_string();
    format!("```text\n{}\n```\n\n", text.trim_end())
}

fn command_section(cmd: &Command) -> String {
    let name = cmd.get_name();
    let mut s = format!("<a id=\"sglang-launch-{name}\"></a>\n\n## `sglang-launch {name}`\n\n");
    push_about(&mut s, cmd);
    s.push_str(&usage(cmd));
    // Options first, then the positionals, as the usage line orders them.
    let (options, positionals): (Vec<&Arg>, Vec<&Arg>) = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !is_builtin(a))
        .partition(|a| !a.is_positional());
    let rows: Vec<[String; 4]> = options
        .into_iter()
        .chain(positionals)
        .map(arg_row)
        .collect();
    s.push_str(&table(&rows));
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        s.push_str(&format!("{after}\n\n"));
    }
    s
}

/// clap's own `--help` / `--version`, mentioned once at the top instead of in every table.
fn is_builtin(a: &Arg) -> bool {
    matches!(a.get_id().as_str(), "help" | "version")
}

/// The arguments' table, without the env or default column when no argument has one.
fn table(rows: &[[String; 4]]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let header = ["argument", "env", "default", "description"];
    let shown: Vec<usize> = (0..4)
        .filter(|&c| c == 0 || c == 3 || rows.iter().any(|r| !r[c].is_empty()))
        .collect();
    let line = |cells: Vec<&str>| format!("| {} |\n", cells.join(" | "));
    let mut s = line(shown.iter().map(|&c| header[c]).collect());
    s.push_str(&line(shown.iter().map(|_| "---").collect()));
    for r in rows {
        s.push_str(&line(shown.iter().map(|&c| r[c].as_str()).collect()));
    }
    s.push('\n');
    s
}

/// One table row: how the argument is written, its variable, its default, and its help with,
/// for a closed set of values, those values.
fn arg_row(a: &Arg) -> [String; 4] {
    let takes_value = a.get_action().takes_values();
    let value = a
        .get_value_names()
        .map(|v| {
            v.iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", a.get_id().as_str().to_ascii_uppercase()));
    let repeat = if a.get_num_args().is_some_and(|n| n.max_values() > 1) {
        "..."
    } else {
        ""
    };
    let mut spelled: Vec<String> = Vec::new();
    if let Some(short) = a.get_short() {
        spelled.push(format!("-{short}"));
    }
    if let Some(long) = a.get_long() {
        spelled.push(format!("--{long}"));
    }
    let written = match (spelled.is_empty(), takes_value) {
        (true, _) => format!("{value}{repeat}"),
        (false, true) => format!("{} {value}{repeat}", spelled.join(", ")),
        (false, false) => spelled.join(", "),
    };
    let env = match a.get_env() {
        Some(e) if !a.is_hide_env_set() => format!("`{}`", e.to_string_lossy()),
        _ => String::new(),
    };
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|d| format!("`{}`", d.to_string_lossy()))
        .collect();
    let default = if takes_value && !a.is_hide_default_value_set() {
        defaults.join(", ")
    } else {
        String::new()
    };
    let mut help = a
        .get_long_help()
        .or(a.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let values: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if takes_value && !values.is_empty() {
        help = if help.is_empty() {
            format!("One of {}", values.join(", "))
        } else {
            format!("{help} (one of {})", values.join(", "))
        };
    }
    [format!("`{}`", cell(&written)), env, default, cell(&help)]
}
