//! One layer of settings: where it comes from and the keys it sets, as a figment provider whose
//! metadata name is the source shown by `config show`.

use std::fmt;
use std::path::PathBuf;

use figment::value::{Dict, Map, Value};
use figment::{Metadata, Profile, Provider};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    Default,
    File(PathBuf),
    Profile(String),
    Env(&'static str),
    CommandLine,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Profile(n) => write!(f, "profile {n}"),
            Source::Env(v) => write!(f, "env {v}"),
            Source::CommandLine => f.write_str("command line"),
        }
    }
}

/// A layer whose keys were already checked against the settings (see `combine::check`).
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    pub(crate) source: Source,
    pub(crate) values: toml::Table,
}

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.source.to_string())
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        let dict = Value::serialize(&self.values)?
            .into_dict()
            .ok_or_else(|| figment::Error::from("a layer is a table".to_owned()))?;
        Ok(Profile::Default.collect(dict))
    }
}
