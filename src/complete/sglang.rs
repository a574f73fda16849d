//! SGLang's part of the line: the options of the release the line would run, and each option's
//! choices. The release is the one the run context chooses (typed or configured, else the
//! installed one's embedded or cached flag set, else the newest), found without ever running
//! Python.

use super::reply::{Mode, Reply};
use super::values::Line;
use crate::sglang::flagset::{Action, ActionKind, FlagSet, Nargs, ValueType};

/// Candidates for `current` after SGLang's words `done`; options named in `shadowed` are the
/// launcher's at this point and left out.
pub(crate) fn complete(line: &Line, done: &[String], current: &str, shadowed: &[String]) -> Reply {
    // A TAB must be instant: the release is never read by running Python.
    let flags = line.context().release_without_python().flags;
    // argparse takes a word that looks like an option as one, even where a value was due.
    let value_due = done.last().and_then(|w| takes_value(flags, w));
    if let Some(action) = value_due.filter(|_| !current.starts_with('-')) {
        return values(action, "", current);
    }
    if let Some((option, value)) = current
        .split_once('=')
        .filter(|_| current.starts_with("--"))
    {
        return match lookup(flags, option) {
            Some(a) if a.nargs != Nargs::Zero => values(a, &format!("{option}="), value),
            _ => Reply::none(current),
        };
    }
    if !current.is_empty() && !current.starts_with('-') {
        return Reply::none(current);
    }
    let options = flags
        .actions
        .iter()
        .filter(|a| offered(a))
        .flat_map(|a| a.option_strings.iter())
        .filter(|o| o.starts_with("--") && !shadowed.contains(o))
        .map(|o| (o.clone(), String::new()));
    Reply::words("", current, options)
}

/// Options a user would type: not `-h`, not the deprecated aliases SGLang only warns about.
fn offered(a: &Action) -> bool {
    !matches!(a.kind, ActionKind::Help | ActionKind::Deprecated) && a.deprecated_for.is_none()
}

/// The action an option word names: exactly, or (argparse's `allow_abbrev`, so `--tp` for
/// `--tp-size`) as the prefix of one action's options only.
fn lookup<'f>(flags: &'f FlagSet, word: &str) -> Option<&'f Action> {
    if let Some(i) = flags.position(word) {
        return Some(&flags.actions[i]);
    }
    if !flags.allow_abbrev || !word.starts_with("--") {
        return None;
    }
    let mut owners = flags
        .actions
        .iter()
        .filter(|a| a.option_strings.iter().any(|o| o.starts_with(word)));
    let first = owners.next()?;
    owners.next().is_none().then_some(first)
}

/// The action whose value the next word is, when `word` is an option that takes one.
fn takes_value<'f>(flags: &'f FlagSet, word: &str) -> Option<&'f Action> {
    let a = lookup(flags, word)?;
    (!matches!(a.nargs, Nargs::Zero | Nargs::Optional)).then_some(a)
}

fn values(a: &Action, prefix: &str, current: &str) -> Reply {
    if let Some(choices) = &a.choices {
        let items = choices.iter().map(|c| {
            let text = c.as_str().map_or_else(|| c.to_string(), str::to_owned);
            (text, String::new())
        });
        return Reply::words(prefix, current, items);
    }
    match path_kind(a) {
        Some(mode) => Reply::paths(mode, prefix, current),
        None => Reply::none(current),
    }
}

/// Where SGLang expects a path (by its own naming: `--model-path`, `--ssl-keyfile`,
/// `--download-dir`, `--config`), files or directories; nothing for numbers and JSON.
fn path_kind(a: &Action) -> Option<Mode> {
    if !matches!(
        a.value_type,
        ValueType::Str | ValueType::NullableStr | ValueType::None
    ) {
        return None;
    }
    let d = a.dest.as_str();
    if d.ends_with("_dir") {
        Some(Mode::Dirs)
    } else if d == "config"
        || (d.ends_with("_path") && d != "fastapi_root_path")
        || d.ends_with("_paths")
        || d.ends_with("_file")
        || d.ends_with("keyfile")
        || d.ends_with("certfile")
    {
        Some(Mode::Files)
    } else {
        None
    }
}
