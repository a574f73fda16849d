//! `sglang-launch upgrade`: the advice for moving a command line to another SGLang release,
//! as text or JSON.

use serde::Serialize;

use crate::sglang::advice::{DefaultChanged, EnvDiff, FlagDiff};
use crate::sglang::rewrite::Edit;

/// The rewritten `--config` file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct ConfigAdvice {
    pub(crate) file: String,
    /// The file's text for the target release (secrets masked unless asked).
    pub(crate) text: String,
    pub(crate) edits: Vec<Edit>,
}

/// A variable set in this environment that the target release reads differently.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct EnvYouSet {
    pub(crate) name: String,
    /// The name the target release reads instead; `None` when it reads neither.
    pub(crate) now_read_as: Option<String>,
    /// How the target release converts the value for that name (`invert_bool`, `ms_to_s`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) converted: Option<String>,
}

/// Everything `upgrade` says. Secret values are already masked where asked.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct Advice {
    /// The release in use.
    pub(crate) from: String,
    /// Set when the release in use has no exact flag set and a neighbour's stands in for it.
    pub(crate) from_approximate: Option<String>,
    pub(crate) to: String,
    /// The command line for the target release (empty when none was given).
    pub(crate) command: Vec<String>,
    pub(crate) edits: Vec<Edit>,
    pub(crate) config: Option<ConfigAdvice>,
    /// What the release in use's parser says about the line as given.
    pub(crate) rejected_now: Option<String>,
    /// What the target release's parser still says about the rewritten line.
    pub(crate) rejected_by_target: Option<String>,
    /// Variables set in this environment that the target release renamed or no longer reads.
    pub(crate) env_you_set: Vec<EnvYouSet>,
    /// Defaults that change for options the command line leaves to SGLang.
    pub(crate) defaults_you_rely_on: Vec<DefaultChanged>,
    pub(crate) options: FlagDiff,
    pub(crate) env: EnvDiff,
}

/// Values as SGLang's `--help` shows them (Python's repr: `None`, `True`, `'x'`).
fn json_text(v: &serde_json::Value) -> String {
    crate::sglang::pytypes::py_repr(v)
}

fn edit_line(e: &Edit, to: &str) -> String {
    match e {
        Edit::Renamed { from, to: new } => format!("renamed {from} to {new}"),
        Edit::Expanded { from, to: new } => {
            format!("wrote out {from} as {new} (the abbreviation means something else in {to})")
        }
        Edit::Removed { option } => format!("removed {option} (SGLang {to} has no such option)"),
        Edit::Replaced { from, to: new } => {
            format!("replaced {from} with {new} (what SGLang replaced it with)")
        }
        Edit::Deprecated {
            option,
            replacement,
        } => match replacement {
            Some(r) => format!("kept {option}: deprecated in SGLang {to} (use {r})"),
            None => format!("kept {option}: deprecated in SGLang {to}"),
        },
    }
}

/// One line of the report: whatever data it quotes (a version, an option, a file's line, a
/// parser's message) is escaped whole, so it stays one line.
fn put(out: &mut String, line: String) {
    out.push_str(&crate::out::escape(&line));
    out.push('\n');
}

fn list<T>(out: &mut String, title: &str, items: &[T], line: impl Fn(&T) -> String) {
    if items.is_empty() {
        return;
    }
    put(out, format!("  {title} ({}):", items.len()));
    for i in items {
        put(out, format!("    {}", line(i)));
    }
}

fn command_part(out: &mut String, a: &Advice) {
    if let Some(why) = &a.rejected_now {
        put(
            out,
            format!("SGLang {} rejects the line as given: {why}", a.from),
        );
    }
    put(out, format!("command line for SGLang {}:", a.to));
    // Already one line of POSIX sh, each control character in `printf` octal.
    out.push_str(&format!("  {}\n", super::shell_join(&a.command)));
    for e in &a.edits {
        put(out, format!("  - {}", edit_line(e, &a.to)));
    }
    if let Some(c) = &a.config {
        put(out, format!("config file {} for SGLang {}:", c.file, a.to));
        for l in c.text.lines() {
            put(out, format!("  | {l}"));
        }
        for e in &c.edits {
            put(out, format!("  - {}", edit_line(e, &a.to)));
        }
    }
    match &a.rejected_by_target {
        Some(why) => put(
            out,
            format!(
                "still rejected by SGLang {}: {why}; change it by hand",
                a.to
            ),
        ),
        None => put(out, format!("SGLang {}'s parser accepts it", a.to)),
    }
    for r in &a.env_you_set {
        put(out, format!("environment: {}", env_line(r, &a.to)));
    }
    if !a.defaults_you_rely_on.is_empty() {
        out.push_str("defaults that change for options the line leaves to SGLang:\n");
        for d in &a.defaults_you_rely_on {
            put(out, format!("  {}", default_line(d)));
        }
    }
}

fn env_line(e: &EnvYouSet, to: &str) -> String {
    match &e.now_read_as {
        None => format!("{} is set here but SGLang {to} no longer reads it", e.name),
        Some(new) => match &e.converted {
            Some(how) => format!(
                "{} is set here; SGLang {to} reads {new} instead, converting the value ({how})",
                e.name
            ),
            None => format!("{} is set here; SGLang {to} reads {new} instead", e.name),
        },
    }
}

fn default_line(d: &DefaultChanged) -> String {
    format!(
        "{}: {} → {}",
        d.option,
        json_text(&d.from),
        json_text(&d.to)
    )
}

/// The report: the user's line first, then how many differences there are between the two
/// releases (each one listed with `all`, or when no line was given).
pub(crate) fn human(a: &Advice, all: bool) -> String {
    let mut out = String::new();
    put(
        &mut out,
        format!("sglang-launch upgrade: SGLang {} → {}", a.from, a.to),
    );
    if let Some(note) = &a.from_approximate {
        put(&mut out, format!("note: {note}"));
    }
    let line = !a.command.is_empty() || a.rejected_now.is_some();
    if line {
        command_part(&mut out, a);
    }
    if line && !all {
        put(&mut out, summary(a));
        return out;
    }
    differences(&mut out, a);
    out
}

/// One line counting the differences between the two releases.
fn summary(a: &Advice) -> String {
    let (o, e) = (&a.options, &a.env);
    let counts = [
        (o.renamed.len(), "options renamed"),
        (o.removed.len(), "removed"),
        (o.deprecated.len(), "deprecated"),
        (o.default_changed.len(), "defaults changed"),
        (o.choices_removed.len(), "with choices removed"),
        (o.added.len(), "added"),
        (
            e.renamed.len() + e.removed.len(),
            "environment variables renamed or no longer read",
        ),
    ];
    let said: Vec<String> = counts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    if said.is_empty() {
        return format!("no other differences between {} and {}", a.from, a.to);
    }
    format!(
        "between {} and {}: {} (--all lists them)",
        a.from,
        a.to,
        said.join(", ")
    )
}

fn differences(out: &mut String, a: &Advice) {
    put(out, format!("every difference, {} → {}:", a.from, a.to));
    let o = &a.options;
    list(out, "options renamed", &o.renamed, |r| {
        format!("{} → {}", r.from, r.to)
    });
    list(out, "options removed", &o.removed, String::clone);
    list(out, "options deprecated", &o.deprecated, |d| {
        match &d.replacement {
            Some(r) => format!("{} (use {r})", d.option),
            None => d.option.clone(),
        }
    });
    list(out, "defaults changed", &o.default_changed, default_line);
    list(out, "choices removed", &o.choices_removed, |c| {
        let gone: Vec<String> = c.choices.iter().map(json_text).collect();
        format!("{}: {}", c.option, gone.join(", "))
    });
    list(out, "options added", &o.added, String::clone);
    let e = &a.env;
    list(
        out,
        "environment variables renamed",
        &e.renamed,
        |r| match r.converted.as_deref() {
            Some(how) => format!("{} → {} (the value converted: {how})", r.from, r.to),
            None => format!("{} → {}", r.from, r.to),
        },
    );
    list(
        out,
        "environment variables no longer read",
        &e.removed,
        String::clone,
    );
    list(
        out,
        "environment defaults changed",
        &e.default_changed,
        |d| format!("{}: {} → {}", d.name, json_text(&d.from), json_text(&d.to)),
    );
}

pub(crate) fn json(a: &Advice) -> String {
    crate::out::json_safe(serde_json::to_string_pretty(a).expect("advice serializes"))
}
