//! How SGLang fails on a command line: an argparse usage error, or an exception one of its
//! own actions (or its `--config` merger) raises.

/// How SGLang would fail on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArgErrorKind {
    /// argparse prints usage and this message, and exits with status 2.
    #[default]
    Usage,
    /// An SGLang action raised an exception while parsing (a traceback, exit status 1); the
    /// message reads `ExceptionType: text`.
    Exception,
}

/// A problem argparse would report (it would exit 2 with this message). The message is
/// argparse's (or the exception's) own text, word for word, which is why it is a string.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}{}", did_you_mean(.suggestions))]
pub struct ArgError {
    /// argparse-style message, e.g. `ambiguous option: --pp could match --pp-size, …`.
    pub message: String,
    /// Close option names for an unknown option ("did you mean").
    pub suggestions: Vec<String>,
    pub kind: ArgErrorKind,
}

impl ArgError {
    pub(crate) fn usage(message: impl Into<String>) -> ArgError {
        ArgError {
            message: message.into(),
            suggestions: Vec::new(),
            kind: ArgErrorKind::Usage,
        }
    }

    pub(crate) fn exception(message: impl Into<String>) -> ArgError {
        ArgError {
            message: message.into(),
            suggestions: Vec::new(),
            kind: ArgErrorKind::Exception,
        }
    }
}

/// ` (did you mean --a, --b?)`, or nothing without suggestions.
fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", suggestions.join(", "))
    }
}

/// An error a best-effort parse stepped over ([`super::SglangArgs::recover`]), and the
/// tokens it left out for it.
#[derive(Debug, Clone, PartialEq)]
pub struct SkippedError {
    pub error: ArgError,
    /// Ranges of [`super::SglangArgs::effective_tokens`] left out: the option that failed with
    /// the arguments after it, each unrecognized option with the stray arguments after it.
    /// None for a missing required option or a config file SGLang cannot use.
    pub(crate) spans: Vec<std::ops::Range<usize>>,
}

impl SkippedError {
    pub(crate) fn at(error: ArgError, span: std::ops::Range<usize>) -> SkippedError {
        SkippedError {
            error,
            spans: vec![span],
        }
    }

    pub(crate) fn whole(error: ArgError) -> SkippedError {
        SkippedError {
            error,
            spans: Vec::new(),
        }
    }
}
