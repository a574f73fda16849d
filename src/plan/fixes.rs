//! Applies [`Fix`] edits to the SGLang tokens and the environment.
//!
//! Edits work on the user's tokens through the parser's occurrences, so everything a fix does
//! not touch passes through byte for byte, and the user's own spelling of an option is kept.
//! Options that come from a `--config` file are not in the user's tokens: a fix overrides them
//! explicitly where it can, and is reported as blocked where it cannot.

use std::ffi::OsString;

use crate::facts::Env;
use crate::rules::{ArgEdit, EnvEdit};
use crate::sglang::SglangArgs;

use super::v1::EnvChanges;

/// An edit the launcher cannot make: what it would change comes from the `--config` file,
/// and only the user's own tokens are edited (SGLang reads the file itself at launch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not fixed: {option} comes from the config file {file}{}; change it there", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct Blocked {
    pub option: String,
    pub file: String,
    /// The line of the file's key, where it could be found.
    pub(crate) line: Option<usize>,
}

/// The arguments after the edits, re-parsed. Edits naming options this version lacks are skipped
/// (a rule only proposes options from the flag set in use; this keeps an odd edit harmless), and
/// so are edits the config file blocks (see [`try_apply_args`]).
/// The options these edits set (a removed option falls back to its default, set by no one).
pub(crate) fn set_options(edits: &[ArgEdit]) -> impl Iterator<Item = &str> {
    edits.iter().filter_map(|e| match e {
        ArgEdit::Set { option, .. }
        | ArgEdit::AddFlag { option }
        | ArgEdit::NamePositional { option } => Some(option.as_str()),
        ArgEdit::Rename { to, .. } => Some(to.as_str()),
        ArgEdit::Remove { .. } | ArgEdit::Drop { .. } | ArgEdit::DropOption { .. } => None,
    })
}

pub(crate) fn apply_args(args: &SglangArgs, edits: &[ArgEdit]) -> SglangArgs {
    edits.iter().fold(args.clone(), |cur, edit| {
        match edit_tokens(&located(&cur), edit) {
            Ok(Some(tokens)) => cur.reparse(tokens),
            _ => cur,
        }
    })
}

/// Where each option is in the tokens: argparse stops at its first error, so for a line it
/// rejects the best-effort parse knows (the tokens are the same).
fn located(args: &SglangArgs) -> std::borrow::Cow<'_, SglangArgs> {
    if args.is_ok() {
        std::borrow::Cow::Borrowed(args)
    } else {
        std::borrow::Cow::Owned(args.recover().args)
    }
}

/// Like [`apply_args`], all or nothing: an edit that only the config file could make (removing
/// or renaming an option the file sets) fails the whole fix. A `Set` of an option the file sets
/// appends an explicit override, which wins because the file's tokens come first.
pub fn try_apply_args(args: &SglangArgs, edits: &[ArgEdit]) -> Result<SglangArgs, Blocked> {
    let mut cur = args.clone();
    for edit in edits {
        if let Some(tokens) = edit_tokens(&located(&cur), edit)? {
            cur = cur.reparse(tokens);
        }
    }
    Ok(cur)
}

fn edit_tokens(args: &SglangArgs, edit: &ArgEdit) -> Result<Option<Vec<OsString>>, Blocked> {
    let mut tokens = args.tokens.clone();
    let blocked = |option: &str, file: &str| Blocked {
        option: option.to_owned(),
        file: file.to_owned(),
        line: crate::sglang::config_file::key_line(file, option),
    };
    match edit {
        ArgEdit::Remove { option } => {
            if let Some(file) = args.config_file_setting(option) {
                return Err(blocked(option, file));
            }
            let spans: Vec<_> = args
                .user_occurrences_of(option)
                .map(|o| (o.start, o.len))
                .collect();
            if spans.is_empty() {
                return Ok(None);
            }
            for (start, len) in spans.into_iter().rev() {
                tokens.drain(start..(start + len).min(tokens.len()));
            }
        }
        ArgEdit::Set { option, value } => {
            if args.flags.action(option).is_none() {
                return Ok(None);
            }
            match args.user_occurrences_of(option).last() {
                Some(o) => {
                    let written = o
                        .written
                        .split_once('=')
                        .map_or(o.written.as_str(), |(w, _)| w);
                    let new: Vec<OsString> = if o.len == 1 && o.written.contains('=') {
                        vec![format!("{written}={value}").into()]
                    } else {
                        vec![written.into(), value.into()]
                    };
                    let end = (o.start + o.len).min(tokens.len());
                    tokens.splice(o.start..end, new);
                }
                None => tokens.extend([OsString::from(option), OsString::from(value)]),
            }
        }
        ArgEdit::Rename { from, to } => {
            let renamed = |s: &str| {
                if s == from {
                    Some(to.clone())
                } else {
                    s.strip_prefix(from.as_str())
                        .and_then(|rest| rest.strip_prefix('='))
                        .map(|v| format!("{to}={v}"))
                }
            };
            let mut changed = false;
            for i in args.option_words() {
                let Some(s) = tokens[i].to_str() else {
                    continue;
                };
                if let Some(r) = renamed(s) {
                    tokens[i] = r.into();
                    changed = true;
                }
            }
            if let Some(c) = &args.config
                && c.tokens.iter().any(|t| renamed(t).is_some())
            {
                return Err(blocked(from, &c.file));
            }
            if !changed {
                return Ok(None);
            }
        }
        ArgEdit::Drop { written } => {
            if !drop_words(args, &mut tokens, written, false)? {
                return Ok(None);
            }
        }
        ArgEdit::DropOption { written } => {
            if !drop_words(args, &mut tokens, written, true)? {
                return Ok(None);
            }
        }
        ArgEdit::AddFlag { option } => {
            if args.flags.action(option).is_none() || args.flag(option) {
                return Ok(None);
            }
            tokens.push(option.into());
        }
        ArgEdit::NamePositional { option } => {
            let bare = tokens
                .first()
                .and_then(|t| t.to_str())
                .is_some_and(|t| !t.starts_with('-'));
            if args.flags.action(option).is_none() || !bare {
                return Ok(None);
            }
            tokens.insert(0, option.into());
        }
    }
    Ok(Some(tokens))
}

/// Drops every word spelled `written` (with the value after it where `with_value`): whether
/// any was. Blocked where the config file has it.
fn drop_words(
    args: &SglangArgs,
    tokens: &mut Vec<OsString>,
    written: &str,
    with_value: bool,
) -> Result<bool, Blocked> {
    if let Some(c) = &args.config
        && c.tokens.iter().any(|t| t == written)
    {
        return Err(Blocked {
            option: written.to_owned(),
            file: c.file.clone(),
            line: crate::sglang::config_file::key_line(&c.file, written),
        });
    }
    let drop: Vec<usize> = if with_value {
        option_and_value(args, tokens, written)
    } else {
        args.option_words()
            .filter(|&i| tokens[i].to_str() == Some(written))
            .collect()
    };
    for &i in drop.iter().rev() {
        tokens.remove(i);
    }
    Ok(!drop.is_empty())
}

/// Applies env edits to the environment the server will get, recording them as plan changes.
pub(crate) fn apply_env(env: &mut Env, changes: &mut EnvChanges, edits: &[EnvEdit]) {
    for edit in edits {
        match edit {
            EnvEdit::Set { name, value } => {
                env.set(name, value);
                changes.unset.retain(|n| n != name);
                changes.set.insert(name.clone(), value.clone());
            }
            EnvEdit::Unset { name } => {
                if env.unset(name) && !changes.unset.contains(name) {
                    changes.unset.push(name.clone());
                }
                changes.set.remove(name);
            }
        }
    }
}

/// Where an unknown option spelled `written` stands among the option words (`--x V`, with the
/// value after it unless that is an option word of its own, or `--x=V`), in order.
fn option_and_value(args: &SglangArgs, tokens: &[OsString], written: &str) -> Vec<usize> {
    let words: Vec<usize> = args.option_words().collect();
    let mut drop = Vec::new();
    for &i in &words {
        let Some(s) = tokens[i].to_str() else {
            continue;
        };
        if s == written {
            drop.push(i);
            let value = tokens.get(i + 1).and_then(|t| t.to_str());
            if words.contains(&(i + 1)) && value.is_some_and(|v| !v.starts_with('-')) {
                drop.push(i + 1);
            }
        } else if s.strip_prefix(written).is_some_and(|r| r.starts_with('=')) {
            drop.push(i);
        }
    }
    drop.dedup();
    drop
}
