//! Approximate checking, for a release with no flag set of its own (`VersionSource::Fallback`):
//! the nearest older embedded flag set stands in, and its argument errors are only as good as
//! the guess. An error that a neighbouring embedded release's parser does not make (an option
//! or a choice that release has) may well not be the user's release's: it is tolerated, and
//! reported as such; only the rest blocks.

use std::ops::Range;

use super::error::ArgError;
use super::flagset;
use super::parser::SglangArgs;
use super::pytypes::{decode_arg, display};
use super::recover::{Recovered, parse_merged, problems_of};
use super::release::{self, KNOWN_VERSIONS, cmp};

/// The embedded releases around `version`: the nearest older one (the flag set in use) and the
/// nearest newer one, where they exist. The user's release lies between them, so an option
/// both have is very likely its too, and one neither has very likely not.
pub fn neighbours(version: &str) -> Vec<&'static str> {
    let i = release::nearest(version);
    let mut out = vec![KNOWN_VERSIONS[i]];
    if cmp(KNOWN_VERSIONS[i], version).is_lt()
        && let Some(newer) = KNOWN_VERSIONS.get(i + 1)
    {
        out.push(newer);
    }
    out
}

/// The embedded releases that bound the parser of the install in approximate mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    pub releases: Vec<&'static str>,
    /// The install may hold code from after every embedded release (a modified install whose
    /// parser could not be read): an option or choice none of them has may be its own.
    pub open: bool,
}

impl std::ops::Deref for Bounds {
    type Target = [&'static str];
    fn deref(&self) -> &[&'static str] {
        &self.releases
    }
}

/// The embedded release `version` names (or the nearest older one) and every later one: an
/// install that is not the release it names (a source checkout, a dev image) is somewhere
/// after it, so an option any of them has may be the install's.
pub(crate) fn from(version: &str) -> Vec<&'static str> {
    KNOWN_VERSIONS[release::nearest(version)..].to_vec()
}

/// Whether every neighbouring release spells `option` so: a fix may name it.
pub(crate) fn all_have(neighbours: &[&str], option: &str) -> bool {
    !neighbours.is_empty()
        && neighbours
            .iter()
            .all(|v| flagset::get(v).is_some_and(|f| f.action(option).is_some()))
}

/// An argument error of the flag set in use that a neighbouring release's parser does not make.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tolerated {
    /// What the flag set in use says about these tokens.
    pub(crate) error: ArgError,
    /// The tokens, as Python would print them.
    pub(crate) tokens: Vec<String>,
    /// Range of `SglangArgs::effective_tokens`.
    pub(crate) span: Range<usize>,
    /// The neighbouring release whose parser takes them (empty: the user's release lies outside
    /// the embedded range, so nothing is known about them).
    pub(crate) release: &'static str,
}

/// A rejected line judged against the neighbouring releases.
#[derive(Debug, Clone)]
pub struct Judged {
    pub(crate) tolerated: Vec<Tolerated>,
    /// argparse's verdict, with the flag set in use, on the line without the tolerated tokens.
    pub(crate) rest: SglangArgs,
}

/// Which errors of `recovered` (the best-effort parse of `args`) a neighbouring release
/// explains, and what the flag set in use says about everything else. With `open` bounds, an
/// error no embedded release explains is tolerated too unless argparse's suggestions make it a
/// misspelling of a name the install has.
pub fn judge(args: &SglangArgs, recovered: &Recovered, bounds: &Bounds) -> Judged {
    let neighbours: &[&'static str] = bounds;
    let tokens: Vec<String> = args
        .effective_tokens()
        .iter()
        .map(|t| decode_arg(t))
        .collect();
    let mut tolerated = Vec::new();
    for p in &recovered.problems {
        for span in &p.spans {
            let these = &tokens[span.start..span.end.min(tokens.len())];
            // One neighbour only (the flag set in use): the release lies outside the embedded
            // range, where no embedded parser bounds it; `release` is then empty.
            let taken = match neighbours {
                [] | [_] => Some(""),
                _ => taken_by(these, neighbours, args.flags.release())
                    .or_else(|| (bounds.open && may_be_own(args.flags, these)).then_some("")),
            };
            if let Some(release) = taken {
                let shown: Vec<String> = these.iter().map(|t| display(t)).collect();
                let error = if p.error.message.starts_with("unrecognized arguments: ") {
                    ArgError {
                        suggestions: suggestions(args.flags, these),
                        ..ArgError::usage(format!("unrecognized arguments: {}", shown.join(" ")))
                    }
                } else {
                    p.error.clone()
                };
                tolerated.push(Tolerated {
                    error,
                    tokens: shown,
                    span: span.clone(),
                    release,
                });
            }
        }
    }
    if tolerated.is_empty() {
        return Judged {
            tolerated,
            rest: args.clone(),
        };
    }
    let left: Vec<String> = tokens
        .iter()
        .enumerate()
        .filter(|(i, _)| !tolerated.iter().any(|t| t.span.contains(i)))
        .map(|(_, t)| t.clone())
        .collect();
    Judged {
        tolerated,
        rest: parse_merged(args.flags, &left),
    }
}

/// An error a modified install's own parser may not make: an option or a choice its code may
/// add. Ambiguity and bad values are the release's own. A name close to one the release has is
/// tolerated too (a fork's `--disable-x-overlap` beside `--disable-overlap-schedule`): without
/// the install's parser a misspelling is not proven, and SGLang's argparse refuses a real one at
/// once.
fn may_be_own(flags: &'static flagset::FlagSet, tokens: &[String]) -> bool {
    // Judged on these tokens alone: argparse gathers every unknown option into one error.
    // A missing required option is about the whole line, not these tokens.
    let about = problems_of(flags, tokens);
    let mut spanned = about.iter().filter(|p| !p.spans.is_empty()).peekable();
    spanned.peek().is_some()
        && spanned.all(|p| {
            let m = &p.error.message;
            m.starts_with("unrecognized arguments: ") || m.contains("invalid choice: ")
        })
}

/// argparse's "did you mean" for these tokens alone, for the warning that tolerates them.
fn suggestions(flags: &'static flagset::FlagSet, tokens: &[String]) -> Vec<String> {
    problems_of(flags, tokens)
        .into_iter()
        .flat_map(|p| p.error.suggestions)
        .collect()
}

/// The first neighbouring release (other than the one in use) whose parser takes these tokens
/// on their own: no error about them (a missing required option is about the whole line).
fn taken_by(tokens: &[String], neighbours: &[&'static str], in_use: &str) -> Option<&'static str> {
    neighbours
        .iter()
        .copied()
        .filter(|v| *v != in_use)
        .find(|v| {
            flagset::get(v).is_some_and(|flags| {
                problems_of(flags, tokens)
                    .iter()
                    .all(|p| p.spans.is_empty())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::parse;
    use std::ffi::OsString;

    #[test]
    fn neighbours_bracket_the_version() {
        let last = *KNOWN_VERSIONS.last().unwrap();
        assert_eq!(neighbours("0.5.99"), vec![last]);
        assert_eq!(neighbours(&format!("{last}+cu128")), vec![last]);
        assert_eq!(neighbours("0.0.1"), vec![KNOWN_VERSIONS[0]]);
        let (a, b) = (KNOWN_VERSIONS[0], KNOWN_VERSIONS[1]);
        assert_eq!(neighbours(&format!("{b}.dev0")), vec![a, b]);
    }

    /// An option the newer neighbour has and the older lacks is tolerated; a typo is not.
    #[test]
    fn options_of_the_newer_neighbour_are_tolerated() {
        let (a, b) = KNOWN_VERSIONS
            .windows(2)
            .map(|w| (w[0], w[1]))
            .find(|(a, b)| new_store_option(a, b).is_some())
            .expect("some release adds an option");
        let option = new_store_option(a, b).unwrap();
        let older = flagset::get(a).unwrap();
        let line = [
            "--model-path",
            "m",
            &option,
            "v",
            "--bogus-flag",
            "--tp",
            "2",
        ];
        let args = parse(older, line.iter().map(OsString::from).collect());
        assert!(!args.is_ok());
        let judged = judge(&args, &args.recover(), &closed(&[a, b]));
        assert_eq!(judged.tolerated.len(), 1, "{:?}", judged.tolerated);
        assert_eq!(judged.tolerated[0].release, b);
        assert_eq!(judged.tolerated[0].tokens, vec![option.clone(), "v".into()]);
        assert_eq!(
            judged.rest.errors[0].message,
            "unrecognized arguments: --bogus-flag"
        );
        // The flag set in use alone (a release outside the embedded range): no embedded parser
        // bounds it, so every error is tolerated, the typo too.
        let alone = judge(&args, &args.recover(), &closed(&[a]));
        assert_eq!(alone.tolerated.len(), 2, "{:?}", alone.tolerated);
        assert!(alone.tolerated.iter().all(|t| t.release.is_empty()));
    }

    /// A modified install's own parser may add options and choices: one no embedded release
    /// has is tolerated, a name close to the release's too (argparse's suggestion goes with it:
    /// a misspelling is not proven without the install's parser); a bad value is not.
    #[test]
    fn open_bounds_tolerate_what_no_release_has_but_not_bad_values() {
        let a = *KNOWN_VERSIONS.last().unwrap();
        let older = KNOWN_VERSIONS[KNOWN_VERSIONS.len() - 2];
        let line = [
            "--model-path",
            "m",
            "--zq-forked-knob",
            "1",
            "--tp-szie",
            "2",
            "--port",
            "x",
            "--attention-backend",
            "flashinfr",
        ];
        let args = parse(
            flagset::get(older).unwrap(),
            line.iter().map(OsString::from).collect(),
        );
        let open = Bounds {
            releases: vec![older, a],
            open: true,
        };
        let judged = judge(&args, &args.recover(), &open);
        let by = |name: &str| judged.tolerated.iter().find(|t| t.tokens[0] == name);
        assert_eq!(judged.tolerated.len(), 3, "{:?}", judged.tolerated);
        assert!(by("--zq-forked-knob").unwrap().error.suggestions.is_empty());
        assert_eq!(by("--tp-szie").unwrap().error.suggestions[0], "--tp-size");
        assert!(by("--attention-backend").is_some());
        assert!(
            judged.rest.errors[0].message.contains("--port"),
            "{:?}",
            judged.rest.errors
        );
        let closed_judged = judge(&args, &args.recover(), &closed(&[older, a]));
        assert!(closed_judged.tolerated.is_empty());
    }

    fn closed(releases: &[&'static str]) -> Bounds {
        Bounds {
            releases: releases.to_vec(),
            open: false,
        }
    }

    /// A `store` option with one free-text value that release `b` has and `a` lacks.
    fn new_store_option(a: &str, b: &str) -> Option<String> {
        let (fa, fb) = (flagset::get(a)?, flagset::get(b)?);
        fb.actions
            .iter()
            .filter(|x| {
                x.kind == flagset::ActionKind::Store
                    && x.nargs == flagset::Nargs::One
                    && x.choices.is_none()
                    && matches!(
                        x.value_type,
                        flagset::ValueType::Str | flagset::ValueType::None
                    )
            })
            .flat_map(|x| x.option_strings.iter())
            .find(|o| {
                o.starts_with("--")
                    && fa.action(o).is_none()
                    && !fa
                        .actions
                        .iter()
                        .flat_map(|y| y.option_strings.iter())
                        .any(|p| p.starts_with(o.as_str()))
            })
            .cloned()
    }
}
