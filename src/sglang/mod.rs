//! SGLang's own argument model: the per-release flag sets (data generated from SGLang's
//! real argparse parser) and environment-variable registries, every option name once ([`opt`]),
//! a parser that behaves like argparse, SGLang's `--config FILE.yaml` merging (which runs before
//! argparse; it reads the file as SGLang does) over an emulation of PyYAML, and the releases'
//! ordering. Reading an installed SGLang is the job of the layer after this one, `install`.

pub mod advice;
pub mod approx;
pub mod architectures;
pub mod config_file;
pub mod envs;
pub mod error;
pub mod flagset;
mod history;
mod known_versions;
pub mod layout;
pub mod opt;
pub mod parser;
mod pyjson;
pub mod pytypes;
pub mod pyyaml;
pub mod quant_compat;
pub mod recover;
pub mod release;
pub mod renames;
pub mod rewrite;
pub mod vision_towers;

pub use error::{ArgError, ArgErrorKind, SkippedError};
pub use flagset::{Action, ActionKind, FlagSet, Nargs, ValueType};
pub use layout::Parallel;
pub use parser::{ConfigTokens, Occurrence, SglangArgs, parse, parse_with};
pub use recover::Recovered;
