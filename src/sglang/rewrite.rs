//! A command line (and its `--config` file) rewritten for another SGLang release: each option
//! the user wrote goes to its spelling there ([`super::advice::fate`]), or is dropped when
//! that release has no such option. Everything else is kept byte for byte.

use std::ffi::OsString;

use serde::Serialize;

use super::advice::{Fate, fate};
use super::config_file::key_of;
use super::error::ArgError;
use super::flagset::{self, Action, FlagSet};
use super::parser::{Occurrence, SglangArgs, action_for, parse_with};
use super::{config_file, renames};

/// One change made to reach the target release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Edit {
    /// `from` is spelled `to` in the target release.
    Renamed { from: String, to: String },
    /// An abbreviation that would be ambiguous or mean another option there, written out.
    Expanded { from: String, to: String },
    /// The target release has no such option: dropped with its values.
    Removed { option: String },
    /// Kept, but the target release deprecates it.
    Deprecated {
        option: String,
        replacement: Option<String>,
    },
    /// A flag SGLang replaced by an option with a value (`to`, e.g. `--ep-size 8`).
    Replaced { from: String, to: String },
}

/// The result: new tokens, the changes, the rewritten config file text, and what the target
/// release's parser still says about the line.
#[derive(Debug, Clone)]
pub struct Rewritten {
    pub(crate) tokens: Vec<OsString>,
    pub(crate) edits: Vec<Edit>,
    /// The config file's name and rewritten text, when the line has one and it changed.
    pub(crate) config: Option<(String, String)>,
    pub(crate) config_edits: Vec<Edit>,
    /// The target release's parser on the rewritten line (and file).
    pub(crate) parsed: SglangArgs,
}

/// What to write instead of `written` (an option string or abbreviation of `a`).
fn respell(a: &Action, written: &str, from: &FlagSet, to: &'static FlagSet) -> Option<Edit> {
    let exact = from.action(written).is_some() || to.action(written).is_some();
    let subject = if exact {
        written
    } else {
        a.option_strings.iter().find(|o| o.starts_with("--"))?
    };
    match fate(a, subject, to) {
        Fate::Kept(t) if exact || abbreviates(to, written, t) => None,
        Fate::Kept(_) => Some(Edit::Expanded {
            from: written.to_owned(),
            to: subject.to_owned(),
        }),
        Fate::Renamed { action, .. } if !exact && abbreviates(to, written, action) => None,
        Fate::Renamed { to: new, .. } => Some(Edit::Renamed {
            from: written.to_owned(),
            to: new,
        }),
        Fate::Deprecated { replacement, .. } => Some(Edit::Deprecated {
            option: written.to_owned(),
            replacement,
        }),
        // What SGLang replaced is repaired on the target's line (`repair`).
        Fate::Removed
            if renames::replaced(subject).is_some_and(|b| to.action(b.option()).is_some()) =>
        {
            None
        }
        Fate::Removed => Some(Edit::Removed {
            option: written.to_owned(),
        }),
    }
}

/// argparse reads `prefix` in `flags` as one of `t`'s option strings.
fn abbreviates(flags: &'static FlagSet, prefix: &str, t: &Action) -> bool {
    action_for(flags, prefix).is_some_and(|i| flags.actions[i].option_strings == t.option_strings)
}

fn head(written: &str) -> &str {
    written.split_once('=').map_or(written, |(w, _)| w)
}

fn edit_for(args: &SglangArgs, o: &Occurrence, to: &'static FlagSet) -> Option<Edit> {
    let a = args.flags.action(&o.option)?;
    respell(a, head(&o.written), args.flags, to)
}

/// The user's tokens for `to`.
fn rewrite_tokens(args: &SglangArgs, to: &'static FlagSet) -> (Vec<OsString>, Vec<Edit>) {
    let mut tokens = args.tokens.clone();
    let mut edits = Vec::new();
    let mut user: Vec<&Occurrence> = args.occurrences.iter().filter(|o| !o.from_config).collect();
    user.sort_by_key(|o| std::cmp::Reverse(o.start));
    for o in user {
        let Some(edit) = edit_for(args, o, to) else {
            continue;
        };
        match &edit {
            Edit::Renamed { to: new, .. } | Edit::Expanded { to: new, .. } => {
                let tail = o.written.split_once('=').map(|(_, v)| v);
                tokens[o.start] = match tail {
                    Some(v) => format!("{new}={v}").into(),
                    None => new.into(),
                };
            }
            Edit::Removed { .. } => {
                tokens.drain(o.start..(o.start + o.len).min(tokens.len()));
            }
            Edit::Deprecated { .. } | Edit::Replaced { .. } => {}
        }
        edits.push(edit);
    }
    edits.reverse();
    (tokens, edits)
}

/// The config file's text with its keys renamed or removed for `to`.
fn rewrite_config(args: &SglangArgs, to: &'static FlagSet, text: &str) -> (String, Vec<Edit>) {
    let mut out = text.to_owned();
    let mut edits = Vec::new();
    for o in args.occurrences.iter().filter(|o| o.from_config) {
        let Some(edit) = edit_for(args, o, to) else {
            continue;
        };
        let key = head(&o.written).trim_start_matches('-');
        out = match &edit {
            Edit::Renamed { to: new, .. } | Edit::Expanded { to: new, .. } => {
                rename_key(&out, key, new.trim_start_matches('-'))
            }
            Edit::Removed { .. } => remove_key(&out, key),
            Edit::Deprecated { .. } | Edit::Replaced { .. } => out,
        };
        edits.push(edit);
    }
    (out, edits)
}

fn rename_key(text: &str, key: &str, new: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| match key_of(line) {
            Some(k) if k == key => line.replacen(key, new, 1),
            _ => line.to_owned(),
        })
        .collect()
}

/// Drops the key's line and its value's continuation lines (indented, or list items).
fn remove_key(text: &str, key: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        match key_of(line) {
            Some(k) => skipping = k == key,
            None if line.trim().is_empty() || line.starts_with('#') => skipping = false,
            None => {}
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
}

/// Rewrites `args` (parsed with the release in use) for `to`: first what the release in use
/// itself refuses is repaired, then each option goes to its spelling in `to`, then what `to`
/// still refuses is repaired. `config_text` is the `--config` file's text when the line names
/// one and it could be read.
pub fn rewrite(args: &SglangArgs, to: &'static FlagSet, config_text: Option<&str>) -> Rewritten {
    let (args, mut edits) = repair(args);
    let mut r = respelled(&args, to, config_text);
    let (parsed, after) = repair(&r.parsed);
    edits.append(&mut r.edits);
    edits.extend(after);
    r.tokens = parsed.tokens.clone();
    r.parsed = parsed;
    r.edits = edits;
    r
}

fn respelled(args: &SglangArgs, to: &'static FlagSet, config_text: Option<&str>) -> Rewritten {
    let (tokens, edits) = rewrite_tokens(args, to);
    let (config, config_edits) = match (&args.config, config_text) {
        (Some(c), Some(text)) => {
            let (new, e) = rewrite_config(args, to, text);
            (Some((c.file.clone(), new)), e)
        }
        _ => (None, Vec::new()),
    };
    let file_text = config.as_ref().map(|(_, t)| t.clone());
    let parsed = parse_with(to, tokens.clone(), &mut |path| match &file_text {
        Some(text) => config_file::convert(to, path, text).map_err(ArgError::from),
        None => config_file::load(to, path).map_err(ArgError::from),
    });
    Rewritten {
        tokens,
        edits,
        config: config.filter(|(_, t)| Some(t.as_str()) != config_text),
        config_edits,
        parsed,
    }
}

/// The line with what `args`' own release refuses repaired the way the rules repair it:
/// an option written as another release spells it renamed, a replaced flag turned into its
/// replacement, an option of another release that this one lacks dropped with its values.
/// Only the user's tokens change; a `--config` file's options stay as they are.
pub(crate) fn repair(args: &SglangArgs) -> (SglangArgs, Vec<Edit>) {
    let mut cur = args.clone();
    let mut edits = Vec::new();
    // Each round settles one token; a line has few the release refuses.
    for _ in 0..32 {
        // Replacements last: their value (the TP size) is read once the rest of the line parses.
        let Some((tokens, edit)) = repair_one(&cur, false).or_else(|| repair_one(&cur, true))
        else {
            break;
        };
        cur = cur.reparse(tokens);
        edits.push(edit);
    }
    (cur, edits)
}

/// The first option of the user's tokens this release refuses (unknown, or known only to
/// raise) that can be repaired, repaired.
fn repair_one(args: &SglangArgs, replacements: bool) -> Option<(Vec<OsString>, Edit)> {
    let refused = |head: &str| args.flags.action(head).is_none_or(Action::refuses);
    args.option_words().find_map(|i| {
        let written = args.tokens[i].to_str()?;
        let head = head(written);
        let replaced = renames::replaced(head).is_some();
        (head.starts_with("--") && refused(head) && replaced == replacements).then_some(())?;
        repair_at(args, i, written, head)
    })
}

fn repair_at(
    args: &SglangArgs,
    i: usize,
    written: &str,
    head: &str,
) -> Option<(Vec<OsString>, Edit)> {
    let mut tokens = args.tokens.clone();
    if let Some(new) = renames::counterpart(head).filter(|n| args.flags.action(n).is_some()) {
        tokens[i] = written.replacen(head, new, 1).into();
        let (from, to) = (head.to_owned(), new.to_owned());
        return Some((tokens, Edit::Renamed { from, to }));
    }
    // A refused line's values stop at argparse's error: read TP as far as it can be read.
    let tp = || {
        args.int("--tp-size")
            .or_else(|| args.recover().args.int("--tp-size"))
            .unwrap_or(1)
    };
    if renames::replaced(head).is_some()
        && let Some((option, value)) = renames::replacement_in(args.flags, head, tp())
    {
        tokens.remove(i);
        if !args.is_set(option) {
            tokens.extend([option.into(), value.clone().into()]);
        }
        let to = format!("{option} {value}");
        return Some((
            tokens,
            Edit::Replaced {
                from: head.to_owned(),
                to,
            },
        ));
    }
    // Another release's option that argparse cannot read here as an abbreviation.
    if flagset::releases_with(head).is_empty() || action_for(args.flags, head).is_some() {
        return None;
    }
    // Its values: `--opt=v` holds its own; else the words up to the next option.
    let values = if written.contains('=') {
        0
    } else {
        tokens[i + 1..]
            .iter()
            .take_while(|t| !t.to_string_lossy().starts_with('-'))
            .count()
    };
    tokens.drain(i..=i + values);
    Some((
        tokens,
        Edit::Removed {
            option: head.to_owned(),
        },
    ))
}

/// An error the target release's parser would still raise on the rewritten line.
pub fn remaining_error(r: &Rewritten) -> Option<&ArgError> {
    r.parsed.errors.first()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::{flagset, parse};

    fn toks(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn up(from: &str, to: &str, line: &[&str]) -> Rewritten {
        let args = parse(flagset::get(from).unwrap(), toks(line));
        assert!(args.errors.is_empty(), "{:?}", args.errors);
        rewrite(&args, flagset::get(to).unwrap(), None)
    }

    #[test]
    fn renamed_option_takes_the_target_spelling_and_the_line_parses_there() {
        let r = up(
            "0.5.10.post1",
            "0.5.23",
            &["--model-path", "m", "--cuda-graph-max-bs=128", "--tp", "2"],
        );
        assert_eq!(
            r.tokens,
            toks(&[
                "--model-path",
                "m",
                "--cuda-graph-max-bs-decode=128",
                "--tp",
                "2"
            ])
        );
        assert!(remaining_error(&r).is_none(), "{:?}", r.parsed.errors);
        assert_eq!(r.parsed.int("--tp-size"), Some(2));
    }

    #[test]
    fn an_option_the_target_lacks_is_dropped_with_its_value() {
        let from = flagset::get("0.5.23").unwrap();
        let to = flagset::get("0.4.10.post2").unwrap();
        let only_new = super::super::advice::FlagDiff::between(to, from).added;
        let opt = only_new
            .iter()
            .find(|o| {
                from.action(o)
                    .is_some_and(|a| a.nargs == crate::sglang::Nargs::One)
            })
            .expect("0.5.23 has value options 0.4.10 lacks");
        let a = from.action(opt).unwrap();
        let value = a
            .choices
            .as_ref()
            .and_then(|c| c.first())
            .map(|v| v.as_str().map_or(v.to_string(), str::to_owned))
            .unwrap_or_else(|| "1".into());
        let r = up(
            "0.5.23",
            "0.4.10.post2",
            &["--model-path", "m", opt, &value],
        );
        assert_eq!(r.tokens, toks(&["--model-path", "m"]));
        assert_eq!(
            r.edits,
            vec![Edit::Removed {
                option: opt.clone()
            }]
        );
    }

    #[test]
    fn config_keys_are_renamed_and_removed_in_the_file_text() {
        let text = "model-path: m\ncuda-graph-max-bs: 64\n# note\ntp-size: 2\n";
        let r = rename_key(text, "cuda-graph-max-bs", "cuda-graph-max-bs-decode");
        assert_eq!(
            r,
            "model-path: m\ncuda-graph-max-bs-decode: 64\n# note\ntp-size: 2\n"
        );
        let list = "a: 1\nlora-paths:\n  - x\n  - y\nb: 2\n";
        assert_eq!(remove_key(list, "lora-paths"), "a: 1\nb: 2\n");
    }
}
