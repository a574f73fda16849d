//! Best-effort parsing after an argument error: what argparse would make of the rest of the
//! line once the offending tokens are gone, so the checks can still speak about it.
//!
//! The recovered arguments are never what SGLang runs: argparse stops at its first error, and
//! that error (`SglangArgs::errors`) is what the launcher reports as blocking.

use std::ffi::OsString;

use super::config_file;
use super::error::{ArgError, SkippedError};
use super::flagset::FlagSet;
use super::parser::{SglangArgs, parse_inner};

/// A line argparse rejects, parsed as far as it goes.
#[derive(Debug, Clone)]
pub struct Recovered {
    /// Everything that parsed (argparse's namespace without the offending tokens); its
    /// `errors` are those of `problems`, so it is never mistaken for an accepted line.
    pub args: SglangArgs,
    /// Every error met, in argparse's order: the first is the one SGLang reports; each later
    /// one is what SGLang reports once those before it are fixed.
    pub problems: Vec<SkippedError>,
}

impl SglangArgs {
    /// argparse-like recovery: a token argparse cannot use (an unknown or ambiguous option, an
    /// option whose value fails, with the arguments that follow it) is stepped over and the
    /// rest parsed as usual; a `--config` file SGLang cannot use is left unmerged. An accepted
    /// line comes back as it is, without problems.
    pub fn recover(&self) -> Recovered {
        if self.is_ok() {
            return Recovered {
                args: self.clone(),
                problems: Vec::new(),
            };
        }
        let mut problems = Vec::new();
        let cached = self.config.clone();
        let flags = self.flags;
        let mut args = parse_inner(
            flags,
            self.tokens.clone(),
            &mut |path| match &cached {
                Some(c) if c.file == path => Ok(c.tokens.clone()),
                _ => config_file::load(flags, path).map_err(ArgError::from),
            },
            Some(&mut problems),
        );
        args.errors = problems.iter().map(|p| p.error.clone()).collect();
        Recovered { args, problems }
    }
}

/// What a flag set's parser says about these tokens alone (no `--config` merging): the
/// problems a best-effort parse meets.
pub(crate) fn problems_of(flags: &'static FlagSet, tokens: &[String]) -> Vec<SkippedError> {
    let mut problems = Vec::new();
    let tokens = tokens.iter().map(OsString::from).collect();
    parse_inner(
        flags,
        tokens,
        &mut |_| Err(ArgError::usage("no config file here")),
        Some(&mut problems),
    );
    problems
}

/// Exactly what argparse says about these already merged tokens (`effective_tokens`).
pub(crate) fn parse_merged(flags: &'static FlagSet, tokens: &[String]) -> SglangArgs {
    let tokens = tokens.iter().map(OsString::from).collect();
    parse_inner(
        flags,
        tokens,
        &mut |path| config_file::load(flags, path).map_err(ArgError::from),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::{flagset, parse};
    use serde_json::json;

    fn toks(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    fn recover(line: &str) -> Recovered {
        let args = parse(flagset::get("0.5.23").unwrap(), toks(line));
        let r = args.recover();
        // The first problem is argparse's own error, word for word.
        if let Some(e) = args.errors.first() {
            assert_eq!(&r.problems[0].error, e, "{line}");
        }
        r
    }

    #[test]
    fn an_accepted_line_comes_back_unchanged() {
        let r = recover("--model-path m --tp 2");
        assert!(r.problems.is_empty());
        assert!(r.args.is_ok());
        assert_eq!(r.args.get("--tp-size"), Some(&json!(2)));
    }

    #[test]
    fn unknown_options_are_left_out_and_the_rest_kept() {
        let r = recover("--model-path m --bogus-flag 3 --tp 8 --mem-fraction-static 0.8");
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].spans, vec![2..4]);
        assert_eq!(r.args.get("--tp-size"), Some(&json!(8)));
        assert_eq!(r.args.float("--mem-fraction-static"), Some(0.8));
        assert!(!r.args.is_ok());
    }

    #[test]
    fn a_bad_value_skips_its_option_and_parsing_goes_on() {
        let r = recover(
            "--model-path m --attention-backend nope --tp 8 --dp-size x --kv-cache-dtype fp8_e5m2",
        );
        let messages: Vec<&str> = r
            .problems
            .iter()
            .map(|p| p.error.message.as_str())
            .collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].starts_with("argument --attention-backend: invalid choice: 'nope'"));
        assert!(
            messages[1].contains("invalid int value: 'x'"),
            "{messages:?}"
        );
        assert_eq!(r.problems[0].spans, vec![2..4]);
        assert_eq!(r.args.get("--tp-size"), Some(&json!(8)));
        assert_eq!(r.args.str("--kv-cache-dtype"), Some("fp8_e5m2"));
        assert_eq!(r.args.get("--attention-backend"), None);
        assert_eq!(r.args.errors.len(), 2);
    }

    #[test]
    fn an_ambiguous_abbreviation_is_stepped_over_with_its_value() {
        let r = recover("--model-path m --cuda-graph-max-bs 128 --tp 4 stray");
        assert!(r.problems[0].error.message.starts_with("ambiguous option"));
        assert_eq!(r.problems[0].spans, vec![2..4]);
        assert_eq!(r.args.get("--tp-size"), Some(&json!(4)));
        // What argparse says once the ambiguity is fixed: the stray argument.
        assert_eq!(r.problems[1].error.message, "unrecognized arguments: stray");
    }

    #[test]
    fn missing_required_option_keeps_everything_else() {
        let r = recover("--tp 2 --model_path m");
        assert!(
            r.problems[0]
                .error
                .message
                .contains("required: --model-path")
        );
        assert!(r.problems[0].spans.is_empty());
        assert_eq!(r.problems[1].spans, vec![2..4]);
        assert_eq!(r.args.get("--tp-size"), Some(&json!(2)));
    }

    #[test]
    fn an_unusable_config_file_is_left_unmerged() {
        let r = recover("--model-path m --config /nonexistent/c.yaml --tp 2");
        assert!(
            r.problems[0].error.message.contains("c.yaml"),
            "{:?}",
            r.problems
        );
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.args.get("--tp-size"), Some(&json!(2)));
    }

    #[test]
    fn help_still_ends_parsing() {
        let r = recover("--model-path m --tp x -h --dp 2");
        assert!(r.args.help);
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.args.get("--dp-size"), None);
    }
}
