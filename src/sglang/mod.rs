//! SGLang's own argument model: the per-version flag sets (data generated from SGLang's real
//! argparse parser), a parser that behaves like argparse, SGLang's `--config FILE.yaml`
//! merging (which runs before argparse), and version detection.

pub mod config;
pub mod flagset;
pub mod layout;
pub mod parser;
mod pyjson;
pub mod pytypes;
pub mod version;

pub use flagset::{Action, ActionKind, FlagSet, Nargs, ValueType};
pub use layout::Parallel;
pub use parser::{ArgError, ArgErrorKind, ConfigTokens, Occurrence, SglangArgs, parse, parse_with};
