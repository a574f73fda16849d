//! What `yaml.safe_load` raises, each error displayed as the last line of the traceback
//! SGLang would print: `ExceptionClass: message`.

use super::budget::Budget;
use crate::sglang::pytypes::py_repr_str;

/// Why PyYAML could not read a document.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum YamlError {
    /// A `MarkedYAMLError`: the problem and where it is.
    #[error(
        "{}: {problem}\n  in \"{name}\", line {line}, column {col}",
        .problem.class()
    )]
    Marked {
        problem: YamlProblem,
        /// The file name, as the message names it.
        name: String,
        line: usize,
        col: usize,
    },
    /// A second document in the stream (`safe_load` reads exactly one).
    #[error(
        "ComposerError: expected a single document in the stream\n  in \"{name}\", line {first_line}, column {first_col}\nbut found another document\n  in \"{name}\", line {line}, column {col}"
    )]
    SecondDocument {
        name: String,
        /// Where the first document's root node starts.
        first_line: usize,
        first_col: usize,
        /// Where the second document starts.
        line: usize,
        col: usize,
    },
    /// A tab where YAML 1.1 wants a space (see `compose::stray_tab`).
    #[error(
        "ScannerError: while scanning for the next token\nfound character '\\t' that cannot start any token\n  in \"{name}\", line {line}, column {col}"
    )]
    Tab {
        name: String,
        line: usize,
        col: usize,
    },
    /// The YAML 1.2 reader kept asking for spaces PyYAML does not need in places where a space
    /// would change the document (see `spaces`): only contrived files get here.
    #[error("ScannerError: too many adjacent tokens\n  in \"{name}\"")]
    TooManyRetries { name: String },
    /// The file goes past one of the loader's limits (not a PyYAML exception: PyYAML would run
    /// out of memory or recursion depth instead).
    #[error("YAML budget exceeded: \"{name}\": {budget}")]
    Budget { name: String, budget: Budget },
    /// A scalar the constructor's Python code fails on (not a `MarkedYAMLError`).
    #[error(transparent)]
    Scalar(#[from] ScalarError),
}

impl YamlError {
    pub(super) fn budget(name: &str, budget: Budget) -> Self {
        YamlError::Budget {
            name: name.to_owned(),
            budget,
        }
    }

    /// A `MarkedYAMLError` for `problem` at `line`, `col` (1-based) of the file `name`.
    pub(super) fn at(problem: impl Into<YamlProblem>, name: &str, line: usize, col: usize) -> Self {
        YamlError::Marked {
            problem: problem.into(),
            name: name.to_owned(),
            line,
            col,
        }
    }
}

/// What a `MarkedYAMLError` says went wrong; [`YamlProblem::class`] names its exception class.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum YamlProblem {
    /// A token the scanner cannot read (the YAML reader's own words).
    #[error("{0}")]
    Scanner(String),
    /// Tokens in an order the grammar does not allow (the YAML reader's own words).
    #[error("{0}")]
    Parser(String),
    #[error("found a recursive or undefined alias")]
    UndefinedAlias,
    /// A tag `safe_load` has no constructor for, spelled out in full.
    #[error("could not determine a constructor for the tag '{0}'")]
    UnknownTag(String),
    /// An `!!omap` / `!!pairs` item that is not a one-pair mapping (the tag, spelled out).
    #[error("while constructing an ordered map: expected a single mapping item ({0})")]
    NotAPair(String),
    /// A list, mapping or set used as a mapping key.
    #[error("found unhashable key")]
    UnhashableKey,
    /// A `<<` merge key whose value is not a mapping or a list of mappings.
    #[error("while constructing a mapping: expected a mapping or list of mappings for merging")]
    BadMerge,
    #[error(transparent)]
    Base64(#[from] Base64Error),
}

impl YamlProblem {
    /// PyYAML's exception class for the problem.
    pub(crate) fn class(&self) -> &'static str {
        match self {
            YamlProblem::Scanner(_) => "ScannerError",
            YamlProblem::Parser(_) => "ParserError",
            YamlProblem::UndefinedAlias => "ComposerError",
            YamlProblem::UnknownTag(_)
            | YamlProblem::NotAPair(_)
            | YamlProblem::UnhashableKey
            | YamlProblem::BadMerge
            | YamlProblem::Base64(_) => "ConstructorError",
        }
    }
}

/// `base64.decodebytes` failures on a `!!binary` scalar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Base64Error {
    #[error(
        "failed to decode base64 data: Invalid base64-encoded string: number of data characters ({0}) cannot be 1 more than a multiple of 4"
    )]
    Length(usize),
    #[error("failed to decode base64 data: Incorrect padding")]
    Padding,
}

/// The Python exceptions SafeConstructor's scalar code raises, unwrapped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScalarError {
    /// `!!bool` on a word the resolver does not know (the lower-cased word).
    #[error("KeyError: {}", py_repr_str(.0))]
    BoolWord(String),
    /// An empty `!!int` or `!!float` (PyYAML looks at its first character).
    #[error("IndexError: string index out of range")]
    Empty,
    /// `int(text, base)` refused the digits.
    #[error("ValueError: invalid literal for int() with base {base}: {}", py_repr_str(.text))]
    IntLiteral { text: String, base: u32 },
    /// `float(text)` refused the text.
    #[error("ValueError: could not convert string to float: {}", py_repr_str(.0))]
    FloatLiteral(String),
    /// An explicit `!!timestamp` that matches no timestamp pattern.
    #[error("AttributeError: 'NoneType' object has no attribute 'groupdict'")]
    NotATimestamp,
    /// A timestamp whose fields `datetime` refuses.
    #[error("ValueError: {0}")]
    Date(#[from] DateError),
}

/// `datetime.date` / `datetime.datetime` / `datetime.timezone` range checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DateError {
    #[error("year {0} is out of range")]
    Year(u32),
    #[error("month must be in 1..12")]
    Month,
    #[error("day is out of range for month")]
    Day,
    #[error("hour must be in 0..23")]
    Hour,
    #[error("minute must be in 0..59")]
    Minute,
    #[error("second must be in 0..59")]
    Second,
    #[error(
        "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)."
    )]
    Offset,
}

/// `json.dumps` failures (a `TypeError`), named by the value's Python type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DumpError {
    #[error("TypeError: keys must be str, int, float, bool or None, not {0}")]
    Key(&'static str),
    #[error("TypeError: Object of type {0} is not JSON serializable")]
    NotSerializable(&'static str),
}
