//! Flags by SGLang version: renamed, deprecated, removed (from the per-version flag sets).

use super::*;
use crate::rules::{ArgEdit, Fix};
use crate::sglang::flagset::{self, ActionKind, KNOWN_VERSIONS};
use crate::sglang::opt;

use crate::sglang::renames;

/// Long options as written on the command line, in order (`--x` and `--x=v` both give `--x`).
pub(crate) fn written(ctx: &Context) -> Vec<String> {
    let mut out = Vec::new();
    // A set beside the list: a config file can add many thousands of options.
    let mut seen = std::collections::HashSet::new();
    // The effective line: options a `--config` file adds count too (their fixes are then
    // reported as blocked, naming the file).
    for t in ctx.user().command_line().effective_iter() {
        let Some(t) = t.to_str() else { continue };
        if t == "--" {
            break;
        }
        if let Some(rest) = t.strip_prefix("--")
            && !rest.is_empty()
        {
            let name = t.split_once('=').map_or(t, |(n, _)| n);
            if seen.insert(name.to_owned()) {
                out.push(name.to_string());
            }
        }
    }
    out
}

fn rename(from: &str, to: &str) -> Fix {
    Fix {
        summary: format!("renamed {from} to {to}"),
        args: vec![ArgEdit::Rename {
            from: from.into(),
            to: to.into(),
        }],
        env: vec![],
    }
}

/// Long options of this version that `w` is a prefix of (argparse's abbreviation candidates).
fn prefix_matches<'a>(ctx: &'a Context, w: &str) -> Vec<&'a str> {
    ctx.user()
        .command_line()
        .flags
        .actions
        .iter()
        .flat_map(|a| a.option_strings.iter())
        .filter(|o| o.starts_with(w) && o.starts_with("--"))
        .map(String::as_str)
        .collect()
}

pub(crate) fn renamed(ctx: &Context) -> Vec<Fired> {
    let mut out = vec![];
    for w in written(ctx) {
        let Some(to) = renames::counterpart(&w) else {
            continue;
        };
        if ctx.user().knows(&w) || !ctx.user().knows(to) {
            continue;
        }
        let prefixed = prefix_matches(ctx, &w);
        let how = match prefixed.as_slice() {
            // argparse takes a unique prefix as an abbreviation: harmless if it means the new
            // name; a different option is FLAG006's (the line runs, with that option).
            [_] => continue,
            [] => "argparse rejects it".to_string(),
            _ => "argparse rejects it as ambiguous".to_string(),
        };
        out.push(
            Fired::new(format!(
                "{w} is spelled {to} in SGLang {}; {how}",
                ctx.version
            ))
            .with_fix(rename(&w, to)),
        );
    }
    out
}

/// Whether the user wrote this action's option (not another action sharing its dest).
fn used(ctx: &Context, a: &flagset::Action) -> bool {
    let args = ctx.user().command_line();
    if !args.occurrences.is_empty() {
        return args.occurrences.iter().any(|o| {
            a.option_strings.contains(&o.option) || a.option_strings.contains(&o.written)
        });
    }
    if !args.tokens.is_empty() {
        return written(ctx).iter().any(|w| a.option_strings.contains(w));
    }
    // Values only (no parser output): attributable when no other action shares the dest.
    args.values.contains_key(&a.dest)
        && args
            .flags
            .actions
            .iter()
            .filter(|b| b.dest == a.dest)
            .count()
            == 1
}

pub(crate) fn deprecated(ctx: &Context) -> Vec<Fired> {
    let mut out = vec![];
    for a in &ctx.user().command_line().flags.actions {
        let Some(new) = a.deprecated_for.as_deref() else {
            continue;
        };
        let Some(opt) = a.option_strings.iter().find(|o| o.starts_with("--")) else {
            continue;
        };
        if a.kind == ActionKind::Deprecated || opt == opt::ENABLE_DP_ATTENTION || !used(ctx, a) {
            continue;
        }
        let msg = format!("{opt} is deprecated in SGLang {}; use {new}", ctx.version);
        // A plain rename only: same kind of action under another name.
        let plain = new.starts_with("--") && !new.contains([' ', '=', '{', '<']);
        let same_kind = ctx
            .user()
            .command_line()
            .flags
            .action(new)
            .is_some_and(|n| n.kind == a.kind);
        out.push(if plain && same_kind {
            Fired::new(msg).with_fix(rename(opt, new))
        } else {
            Fired::new(msg)
        });
    }
    out
}

pub(crate) fn dp_attention_deprecated(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().knows(opt::ATTN_DP_SIZE) || !ctx.user().is_set(opt::ENABLE_DP_ATTENTION) {
        return vec![];
    }
    let dp = ctx.dp();
    let msg = format!(
        "--enable-dp-attention is deprecated in SGLang {}: --dp-size now means data-parallel replicas, and SGLang rewrites this to --attn-dp-size {dp}",
        ctx.version
    );
    if ctx.user().given(opt::ATTN_DP_SIZE) {
        return vec![Fired::new(msg)];
    }
    let mut args = vec![ArgEdit::Remove {
        option: opt::ENABLE_DP_ATTENTION.into(),
    }];
    if ctx.user().given(opt::DP_SIZE) {
        args.push(ArgEdit::Remove {
            option: opt::DP_SIZE.into(),
        });
    }
    args.push(ArgEdit::Set {
        option: opt::ATTN_DP_SIZE.into(),
        value: dp.to_string(),
    });
    vec![Fired::new(msg).with_fix(Fix {
        summary: format!("replaced --enable-dp-attention --dp-size {dp} with --attn-dp-size {dp}"),
        args,
        env: vec![],
    })]
}

/// An option another release has but this one does not, and what this release's argparse
/// makes of it.
struct Foreign {
    written: String,
    /// What the embedded releases say of when it existed.
    when: String,
    /// This release's options it abbreviates.
    prefix_of: Vec<String>,
}

fn foreign(ctx: &Context) -> Vec<Foreign> {
    let mut out = vec![];
    for w in written(ctx) {
        if ctx.user().knows(&w)
            || renames::counterpart(&w).is_some()
            || replacement(ctx, &w).is_some()
        {
            continue;
        }
        let having = flagset::releases_with(&w);
        let (Some(first), Some(last)) = (having.first(), having.last()) else {
            continue;
        };
        let when = if crate::sglang::release::cmp(ctx.version, first).is_lt() {
            // The embedded flag sets only bound when it arrived: after the last one without
            // it, at or before `first`. Claim no more than that.
            let before = KNOWN_VERSIONS
                .iter()
                .copied()
                .take_while(|v| v != first)
                .last()
                .filter(|v| *v != ctx.version);
            match before {
                Some(b) => format!(
                    "is not in SGLang {}; it was added after {b} and is present in {first}",
                    ctx.version
                ),
                None => format!("is not in SGLang {}; present in {first}", ctx.version),
            }
        } else {
            format!("was removed after SGLang {last} (this is {})", ctx.version)
        };
        let prefix_of = prefix_matches(ctx, &w)
            .into_iter()
            .map(str::to_owned)
            .collect();
        out.push(Foreign {
            written: w,
            when,
            prefix_of,
        });
    }
    out
}

/// Whether, in the release nearest to this one that has `written`, the option `abbreviated`
/// names the same setting (an alias of it, or another option with its dest).
fn same_setting(ctx: &Context, written: &str, abbreviated: &str) -> bool {
    let having = flagset::releases_with(written);
    let nearest = having
        .iter()
        .rev()
        .find(|v| crate::sglang::release::cmp(v, ctx.version).is_lt())
        .or(having.first());
    let Some(set) = nearest.and_then(|v| flagset::get(v)) else {
        return false;
    };
    let Some(action) = set.action(written) else {
        return false;
    };
    action.option_strings.iter().any(|o| o == abbreviated)
        || set.dest_of(abbreviated) == Some(action.dest.as_str())
}

/// FLAG004: argparse rejects it (no option, or several, starts with it).
pub(crate) fn removed(ctx: &Context) -> Vec<Fired> {
    foreign(ctx)
        .into_iter()
        .filter(|f| f.prefix_of.len() != 1)
        .map(|f| {
            let then = if f.prefix_of.is_empty() {
                "argparse rejects it"
            } else {
                "argparse rejects it as ambiguous"
            };
            Fired::new(format!("{} {}; {then}", f.written, f.when))
        })
        .collect()
}

/// FLAG005: argparse reads it as the abbreviation of the same setting: it runs, but only while
/// no new option shares the prefix.
pub(crate) fn abbreviates_same(ctx: &Context) -> Vec<Fired> {
    foreign(ctx)
        .into_iter()
        .filter_map(|f| match f.prefix_of.as_slice() {
            [one] if same_setting(ctx, &f.written, one) => Some(Fired::new(format!(
                "{} {}; argparse reads it as the abbreviation of {one}, the same setting, so it runs; the full spelling {one} keeps working when a later release adds an option with the same prefix",
                f.written, f.when
            ))),
            _ => None,
        })
        .collect()
}

/// FLAG006: argparse reads it as the abbreviation of a different option.
pub(crate) fn abbreviates_other(ctx: &Context) -> Vec<Fired> {
    foreign(ctx)
        .into_iter()
        .filter_map(|f| match f.prefix_of.as_slice() {
            [one] if !same_setting(ctx, &f.written, one) => Some(Fired::new(format!(
                "{} {}; argparse reads it as the abbreviation of {one}, a different option, and SGLang runs with that",
                f.written, f.when
            ))),
            _ => None,
        })
        .collect()
}

/// What replaces the flag `w` in this release, when this release refuses it.
fn replacement(ctx: &Context, w: &str) -> Option<(&'static str, String)> {
    renames::replacement_in(ctx.user().command_line().flags, w, ctx.tp())
}

/// FLAG007: a flag SGLang replaced by an option with a value, which this release refuses.
pub(crate) fn replaced(ctx: &Context) -> Vec<Fired> {
    written(ctx)
        .into_iter()
        .filter_map(|w| {
            let (option, value) = replacement(ctx, &w)?;
            let mut args = vec![ArgEdit::Drop { written: w.clone() }];
            let (summary, yours) = if ctx.user().given(option) {
                (
                    format!("removed {w}"),
                    format!("; {option} is already given"),
                )
            } else {
                args.push(ArgEdit::Set {
                    option: option.to_owned(),
                    value: value.clone(),
                });
                (format!("replaced {w} with {option} {value}"), String::new())
            };
            let msg = format!(
                "{w} is refused by SGLang {}: {option} {value} replaces it{yours}",
                ctx.version
            );
            Some(Fired::new(msg).with_fix(Fix {
                summary,
                args,
                env: vec![],
            }))
        })
        .collect()
}
