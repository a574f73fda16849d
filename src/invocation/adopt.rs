//! Launcher options among SGLang's tokens. In the drop-in form a token that is a `run` option
//! and no option of the SGLang release in use (argparse's abbreviations included) is the
//! launcher's; and a near miss of a launcher option that SGLang does not know either is a typo
//! worth a "did you mean" rather than an SGLang argument.

use std::ffi::OsString;

use clap::FromArgMatches;

use super::cli::{self, Cli, Command};
use super::context::Context;
use super::split::{Form, launcher_option};
use crate::install::select;
use crate::sglang::FlagSet;

/// The launcher options that choose the flag set: never SGLang's in any release.
const SELECTING: [&str; 4] = [
    "--sglang-version",
    "--python",
    "--profile",
    "--profiles-dir",
];

/// The launcher's argv, SGLang's tokens, and the run context built on the way (if any).
pub(crate) type Adopted = (Vec<OsString>, Vec<OsString>, Option<Context>);

/// Why the command line cannot go on: the message, already printed.
pub(crate) struct Typo;

/// `(launcher argv, SGLang tokens, context)` after taking the launcher's options out of the
/// drop-in form's tokens, with the run context built to choose the flag set (if one was);
/// `Err` after printing a did-you-mean for a mistyped launcher option.
pub(crate) fn adopt(
    launcher: Vec<OsString>,
    tokens: Vec<OsString>,
    form: Form,
) -> Result<Adopted, Typo> {
    let sub_name = match form {
        Form::DropIn => "run".to_owned(),
        Form::Implicit => launcher[1].to_string_lossy().into_owned(),
        Form::Separated | Form::Other => return Ok((launcher, tokens, None)),
    };
    let cmd = cli::command_ref();
    let Some(sub) = cmd.find_subcommand(&sub_name) else {
        return Ok((launcher, tokens, None));
    };
    adopt_for(sub, launcher, tokens, form)
}

fn adopt_for(
    sub: &clap::Command,
    mut launcher: Vec<OsString>,
    tokens: Vec<OsString>,
    form: Form,
) -> Result<Adopted, Typo> {
    let longs: Vec<String> = sub
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let ours = |t: &OsString| form == Form::DropIn && is_ours(sub, t);
    let near = |t: &OsString| nearest(&longs, t).is_some();
    if !tokens.iter().any(|t| ours(t) || near(t)) {
        return Ok((launcher, tokens, None));
    }
    let (ctx, chosen) = flag_set(&launcher, &tokens, form);
    let Some((flags, exact)) = chosen else {
        return Ok((launcher, tokens, ctx));
    };
    let mut sglang = Vec::with_capacity(tokens.len());
    let mut taken: Vec<String> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        let name = option_name(t);
        if ours(t) && !sglang_accepts(flags, &name) {
            let inline = t.to_str().is_some_and(|t| t.contains('='));
            let n = match launcher_option(sub, t) {
                Some(true) if !inline => 2,
                _ => 1,
            };
            launcher.extend(tokens[i..(i + n).min(tokens.len())].iter().cloned());
            taken.push(name);
            i += n;
            continue;
        }
        if exact
            && let Some(wanted) = nearest(&longs, t)
            && !sglang_claims(flags, &name)
        {
            crate::out::report_line(&format!(
                "sglang-launch: error: unknown option '{name}': neither sglang-launch's nor SGLang {}'s; did you mean the launcher's '{wanted}'?",
                flags.version
            ));
            return Err(Typo);
        }
        sglang.push(t.clone());
        i += 1;
    }
    if !taken.is_empty() {
        taken.dedup();
        crate::out::report_line(&format!(
            "sglang-launch: note: {} taken as sglang-launch's (not an option of SGLang {}); `sglang-launch run [OPTIONS] -- [SGLANG_ARGS]` says so explicitly",
            taken.join(", "),
            flags.version
        ));
    }
    Ok((launcher, sglang, ctx))
}

/// `--name` of an option token (`--name=value` → `--name`).
fn option_name(t: &OsString) -> String {
    let t = t.to_string_lossy();
    t.split('=').next().unwrap_or(&t).to_owned()
}

/// A long option of the subcommand, spelled exactly (help stays SGLang's in the drop-in form).
fn is_ours(sub: &clap::Command, t: &OsString) -> bool {
    !matches!(t.to_str(), Some("-h" | "--help")) && launcher_option(sub, t).is_some()
}

/// The launcher option `t` misspells (one edit for short names, two for long ones), if any.
fn nearest<'a>(longs: &'a [String], t: &OsString) -> Option<&'a str> {
    let name = option_name(t);
    if !name.starts_with("--") || name.len() < 5 || longs.contains(&name) {
        return None;
    }
    longs
        .iter()
        .map(|l| (strsim::damerau_levenshtein(&name, l), l))
        .filter(|(d, l)| *d <= if l.len() < 10 { 1 } else { 2 })
        .min_by_key(|(d, _)| *d)
        .map(|(_, l)| l.as_str())
}

/// Whether SGLang's parser takes `name` as one of its options: exactly, or as an abbreviation
/// (unique or ambiguous: either way argparse does not call it unknown).
fn sglang_claims(flags: &FlagSet, name: &str) -> bool {
    flags.position(name).is_some()
        || (flags.allow_abbrev
            && name.starts_with("--")
            && flags
                .actions
                .iter()
                .flat_map(|a| &a.option_strings)
                .any(|o| o.starts_with(name)))
}

/// Whether SGLang's parser would take `name` as one of its options: exactly, or as an
/// abbreviation of a single option. An ambiguous prefix (`--mode`: `--model-path`,
/// `--model-impl`, …) is an argparse error, so the launcher's option of that name wins.
fn sglang_accepts(flags: &FlagSet, name: &str) -> bool {
    if flags.position(name).is_some() {
        return true;
    }
    if !flags.allow_abbrev || !name.starts_with("--") {
        return false;
    }
    let mut dests = flags
        .actions
        .iter()
        .filter(|a| a.option_strings.iter().any(|o| o.starts_with(name)))
        .map(|a| a.dest.as_str());
    dests.next().is_some_and(|d| dests.all(|o| o == d))
}

/// The run context of the launcher's options (and, in the drop-in form, the ones among the
/// tokens that choose the release); the flag set in use and whether it is that release's own:
/// a neighbour's set cannot say an option is unknown.
fn flag_set(
    launcher: &[OsString],
    tokens: &[OsString],
    form: Form,
) -> (Option<Context>, Option<(&'static FlagSet, bool)>) {
    let mut argv = launcher.to_vec();
    if form == Form::DropIn {
        let mut i = 0;
        while i < tokens.len() {
            if SELECTING.contains(&option_name(&tokens[i]).as_str()) {
                let inline = tokens[i].to_str().is_some_and(|t| t.contains('='));
                let n = if inline { 1 } else { 2 };
                argv.extend(tokens[i..(i + n).min(tokens.len())].iter().cloned());
                i += n;
            } else {
                i += 1;
            }
        }
    }
    // A selecting option clap refuses, a broken profile or config file: the newest set
    // decides, so that the launcher's own parse and load name the culprit instead of SGLang
    // getting the launcher's options.
    let newest = (None, Some((select::select(None, None).flags, false)));
    let Ok(matches) = cli::command().try_get_matches_from(&argv) else {
        return newest;
    };
    let profile = match Cli::from_arg_matches(&matches).map(|c| c.command) {
        Ok(Command::Run(a)) => a.opts.profile,
        Ok(Command::Check(a)) => a.opts.profile,
        Ok(Command::Plan(a)) => a.opts.profile,
        _ => return (None, None),
    };
    let Ok(ctx) = Context::build(&matches, &profile) else {
        return newest;
    };
    let selected = ctx.release();
    // Nothing installed or asked for: the newest set stands in, as the plan assumes too.
    let exact = selected.source != select::VersionSource::Fallback || !selected.detected();
    let flags = selected.flags;
    (Some(ctx), Some((flags, exact)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn near_misses_are_one_or_two_edits_from_a_launcher_option() {
        let longs: Vec<String> = ["--sglang-version", "--profile", "--topology", "--fit"]
            .map(String::from)
            .to_vec();
        let near = |t: &str| nearest(&longs, &OsString::from(t));
        assert_eq!(near("--sglang-verion"), Some("--sglang-version"));
        assert_eq!(near("--profle"), Some("--profile"));
        assert_eq!(near("--topolgy=x.json"), Some("--topology"));
        assert_eq!(near("--profile"), None);
        assert_eq!(near("--fix"), Some("--fit"));
        assert_eq!(near("--tp"), None);
        assert_eq!(near("--model-path"), None);
    }

    #[test]
    fn sglang_abbreviations_count_as_sglangs() {
        let flags = crate::sglang::flagset::get("0.5.23").unwrap();
        assert!(sglang_claims(flags, "--json"));
        assert!(sglang_claims(flags, "--mode"));
        assert!(sglang_claims(flags, "--tp"));
        assert!(!sglang_claims(flags, "--sglang-version"));
        assert!(!sglang_claims(flags, "--topology"));
        // Only an ambiguous prefix is left to the launcher.
        assert!(!sglang_accepts(flags, "--mode"));
        assert!(sglang_accepts(flags, "--json"));
        assert!(sglang_accepts(flags, "--tp"));
        assert!(!sglang_accepts(flags, "--topology"));
    }

    #[test]
    fn the_drop_in_form_takes_launcher_options_sglang_does_not_know() {
        let (l, g, _) = adopt(
            s(&["sl", "run"]),
            s(&[
                "--sglang-version",
                "0.5.23",
                "--model-path",
                "m",
                "--json",
                "--strict",
                "--mode",
                "warn",
                "--tp",
                "2",
            ]),
            Form::DropIn,
        )
        .ok()
        .unwrap();
        assert_eq!(
            l,
            s(&[
                "sl",
                "run",
                "--sglang-version",
                "0.5.23",
                "--strict",
                "--mode",
                "warn"
            ])
        );
        assert_eq!(g, s(&["--model-path", "m", "--json", "--tp", "2"]));
    }
}
