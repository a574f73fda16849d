//! Applies [`Fix`] edits to the SGLang tokens and the environment.
//!
//! Edits work on the user's tokens through the parser's occurrences, so everything a fix does
//! not touch passes through byte for byte, and the user's own spelling of an option is kept.

use std::ffi::OsString;

use crate::facts::Env;
use crate::rules::{ArgEdit, EnvEdit};
use crate::sglang::{self, SglangArgs};

use super::json::EnvChanges;

/// The arguments after the edits, re-parsed. Edits naming options this version lacks are skipped
/// (a rule only proposes options from the flag set in use; this keeps an odd edit harmless).
pub fn apply_args(args: &SglangArgs, edits: &[ArgEdit]) -> SglangArgs {
    edits
        .iter()
        .fold(args.clone(), |cur, edit| match edit_tokens(&cur, edit) {
            Some(tokens) => sglang::parse(cur.flags, tokens),
            None => cur,
        })
}

fn edit_tokens(args: &SglangArgs, edit: &ArgEdit) -> Option<Vec<OsString>> {
    let mut tokens = args.tokens.clone();
    match edit {
        ArgEdit::Remove { option } => {
            let spans: Vec<_> = args
                .occurrences_of(option)
                .map(|o| (o.start, o.len))
                .collect();
            if spans.is_empty() {
                return None;
            }
            for (start, len) in spans.into_iter().rev() {
                tokens.drain(start..(start + len).min(tokens.len()));
            }
        }
        ArgEdit::Set { option, value } => {
            args.flags.action(option)?;
            match args.occurrences_of(option).last() {
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
            // `from` may be unknown to this flag set, so match tokens, skipping option values.
            let values: Vec<usize> = args
                .occurrences
                .iter()
                .flat_map(|o| o.start + 1..o.start + o.len)
                .collect();
            let mut changed = false;
            for (i, t) in tokens.iter_mut().enumerate() {
                if values.contains(&i) {
                    continue;
                }
                let Some(s) = t.to_str() else { continue };
                let renamed = if s == from {
                    Some(to.clone())
                } else {
                    s.strip_prefix(from.as_str())
                        .and_then(|rest| rest.strip_prefix('='))
                        .map(|v| format!("{to}={v}"))
                };
                if let Some(r) = renamed {
                    *t = r.into();
                    changed = true;
                }
            }
            if !changed {
                return None;
            }
        }
        ArgEdit::AddFlag { option } => {
            args.flags.action(option)?;
            if args.flag(option) {
                return None;
            }
            tokens.push(option.into());
        }
    }
    Some(tokens)
}

/// Applies env edits to the environment the server will get, recording them as plan changes.
pub fn apply_env(env: &mut Env, changes: &mut EnvChanges, edits: &[EnvEdit]) {
    for edit in edits {
        match edit {
            EnvEdit::Set { name, value } => {
                env.vars.insert(name.clone(), value.clone());
                changes.unset.retain(|n| n != name);
                changes.set.insert(name.clone(), value.clone());
            }
            EnvEdit::Unset { name } => {
                if env.vars.remove(name).is_some() && !changes.unset.contains(name) {
                    changes.unset.push(name.clone());
                }
                changes.set.remove(name);
            }
        }
    }
}
