//! SGLang's own argument model: the per-version flag sets (data generated from SGLang's real
//! argparse parser) and environment-variable registries, a parser that behaves like argparse,
//! SGLang's `--config FILE.yaml` merging (which runs before argparse) over an emulation of
//! PyYAML, and version detection (through a scanner of the interpreter's installed
//! distributions that the package facts share).

pub mod approx;
pub mod architectures;
pub mod config;
pub mod envs;
pub mod error;
pub mod extract;
pub mod flagset;
mod history;
pub mod install;
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
pub mod site;
pub mod upgrade;
pub mod version;
pub mod vision_towers;

pub use error::{ArgError, ArgErrorKind, Problem};
pub use flagset::{Action, ActionKind, FlagSet, Nargs, ValueType};
pub use layout::Parallel;
pub use parser::{ConfigTokens, Occurrence, SglangArgs, parse, parse_with};
pub use recover::Recovered;
