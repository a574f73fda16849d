//! SGLang's own argument model: the per-release flag sets (data generated from SGLang's
//! real argparse parser) and environment-variable registries, every option name once ([`opt`]),
//! a parser that behaves like argparse, SGLang's `--config FILE.yaml` merging (which runs before
//! argparse; it reads the file as SGLang does) over an emulation of PyYAML, and the releases'
//! ordering. Reading an installed SGLang is the job of the layer after this one, `install`.

pub(crate) mod advice;
pub mod approx;
pub(crate) mod architectures;
pub mod config_file;
pub(crate) mod encoder_split;
pub mod envs;
pub(crate) mod error;
pub mod flagset;
mod history;
mod known_versions;
pub(crate) mod layout;
pub(crate) mod model_types;
pub mod opt;
pub mod parser;
mod pool;
pub(crate) mod pyjson;
pub(crate) mod pytypes;
pub mod pyyaml;
pub(crate) mod quant_compat;
pub(crate) mod recover;
pub mod release;
pub(crate) mod renames;
pub mod rewrite;
pub(crate) mod vision_towers;

pub(crate) use error::SkippedError;
pub use error::{ArgError, ArgErrorKind};
pub use flagset::FlagSet;
pub(crate) use flagset::{Action, ActionKind, Nargs, ValueType};
pub use layout::Parallel;
pub(crate) use parser::Occurrence;
pub use parser::{SglangArgs, parse, parse_with};
pub(crate) use recover::Recovered;
