//! Splits the argv into the launcher's part (for clap) and SGLang's tokens (never seen by clap).

use std::ffi::{OsStr, OsString};

/// Subcommands that take SGLang arguments after their options.
const PLANNING: &[&str] = &["run", "check", "plan", "upgrade"];

/// How the SGLang tokens were told apart from the launcher's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `sglang-launch <SGLang args>`: every token was given to SGLang.
    DropIn,
    /// `run`/`check`/`plan` with `--`: the user said where SGLang's part starts.
    Separated,
    /// `run`/`check`/`plan` without `--`: SGLang's part starts at the first foreign token.
    Implicit,
    /// Another subcommand, or no SGLang tokens at all.
    Other,
}

/// `(argv for clap, SGLang tokens)`.
///
/// * No subcommand name first (and not the launcher's own `--help`/`--version` alone): drop-in
///   mode, every token is SGLang's and the command is `run`.
/// * `run`/`check`/`plan`: with a `--`, everything before it is the launcher's (clap rejects
///   what it doesn't know) and everything after is SGLang's; without one, the launcher's
///   options end at the first token that is not one of them.
pub fn split(argv: &[OsString]) -> (Vec<OsString>, Vec<OsString>) {
    let (l, g, _) = split_form(argv);
    (l, g)
}

/// [`split`], and the form the command line had.
pub(crate) fn split_form(argv: &[OsString]) -> (Vec<OsString>, Vec<OsString>, Form) {
    let prog = argv
        .first()
        .cloned()
        .unwrap_or_else(|| "sglang-launch".into());
    let Some(first) = argv.get(1) else {
        return (vec![prog], Vec::new(), Form::Other);
    };
    let cmd = super::cli::command_ref();
    let first_str = first.to_str().unwrap_or("");
    let is_sub = cmd.get_subcommands().any(|s| s.get_name() == first_str);
    let launcher_flag =
        matches!(first_str, "-h" | "--help" | "-V" | "--version") && argv.len() == 2;
    if !is_sub && !launcher_flag {
        return (vec![prog, "run".into()], argv[1..].to_vec(), Form::DropIn);
    }
    if !PLANNING.contains(&first_str) {
        return (argv.to_vec(), Vec::new(), Form::Other);
    }
    let rest = &argv[2..];
    let mut launcher = vec![prog, first.clone()];
    if let Some(pos) = rest.iter().position(|t| t == "--") {
        launcher.extend_from_slice(&rest[..pos]);
        return (launcher, rest[pos + 1..].to_vec(), Form::Separated);
    }
    let sub = cmd
        .get_subcommands()
        .find(|s| s.get_name() == first_str)
        .expect("checked above");
    let mut i = 0;
    while i < rest.len() {
        match launcher_option(sub, &rest[i]) {
            Some(takes_value) => {
                let inline = rest[i].to_str().is_some_and(|t| t.contains('='));
                let n = if takes_value && !inline { 2 } else { 1 };
                launcher.extend(rest[i..(i + n).min(rest.len())].iter().cloned());
                i += n;
            }
            None => break,
        }
    }
    (launcher, rest[i..].to_vec(), Form::Implicit)
}

/// `Some(takes_value)` when `token` is one of the subcommand's own options.
pub(crate) fn launcher_option(sub: &clap::Command, token: &OsStr) -> Option<bool> {
    // Lossy: a value that is not UTF-8 (`--topology=\xff`) still names the option it is for.
    let t = token.to_string_lossy();
    if t == "-h" || t == "--help" {
        return Some(false);
    }
    let name = t.strip_prefix("--")?.split('=').next()?;
    sub.get_arguments()
        .find(|a| a.get_long() == Some(name))
        .map(|a| a.get_action().takes_values())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn drop_in_takes_every_token_for_sglang() {
        let (l, g) = split(&s(&["sl", "--model-path", "m", "--tp", "8"]));
        assert_eq!(l, s(&["sl", "run"]));
        assert_eq!(g, s(&["--model-path", "m", "--tp", "8"]));
    }

    #[test]
    fn launcher_options_end_at_first_foreign_token() {
        let (l, g) = split(&s(&[
            "sl",
            "check",
            "--topology",
            "t.json",
            "--json",
            "--model-path",
            "m",
            "--json",
        ]));
        assert_eq!(l, s(&["sl", "check", "--topology", "t.json", "--json"]));
        assert_eq!(g, s(&["--model-path", "m", "--json"]));
    }

    #[test]
    fn double_dash_separates_and_lets_clap_judge_the_left() {
        let (l, g) = split(&s(&[
            "sl",
            "plan",
            "--topolgy",
            "t.json",
            "--",
            "--model-path",
            "m",
        ]));
        assert_eq!(l, s(&["sl", "plan", "--topolgy", "t.json"]));
        assert_eq!(g, s(&["--model-path", "m"]));
    }

    #[test]
    fn inline_values_and_other_subcommands() {
        let (l, g) = split(&s(&[
            "sl",
            "check",
            "--sglang-version=0.5.23",
            "--model-path",
            "m",
        ]));
        assert_eq!(l, s(&["sl", "check", "--sglang-version=0.5.23"]));
        assert_eq!(g, s(&["--model-path", "m"]));
        let (l, g) = split(&s(&["sl", "explain", "AR002"]));
        assert_eq!(l, s(&["sl", "explain", "AR002"]));
        assert!(g.is_empty());
        let (l, _) = split(&s(&["sl", "--help"]));
        assert_eq!(l, s(&["sl", "--help"]));
    }
}
