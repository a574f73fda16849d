//! The command-line layer: only what the user typed. clap fills every absent option with its
//! default (and reads `env =` variables itself), so each value's source is checked and anything
//! not from the command line is left to the lower layers.

use std::num::NonZeroU64;
use std::path::PathBuf;

use clap::ArgMatches;
use clap::parser::ValueSource;
use toml::Value;

use super::env::list;
use super::layer::{Layer, Source};
use super::registry::{self, Kind};

pub(crate) fn layer(matches: &ArgMatches) -> Layer {
    let mut values = toml::Table::new();
    for (key, var) in registry::settings() {
        let id = key.replace('-', "_");
        let typed = matches.try_contains_id(&id).is_ok()
            && matches.value_source(&id) == Some(ValueSource::CommandLine);
        if let Some(value) = typed.then(|| value(matches, &id, var.kind)).flatten() {
            values.insert(key.to_owned(), value);
        }
    }
    Layer {
        source: Source::CommandLine,
        values,
    }
}

fn value(m: &ArgMatches, id: &str, kind: Kind) -> Option<Value> {
    Some(match kind {
        Kind::Bool => Value::Boolean(m.get_flag(id)),
        Kind::Text => Value::String(m.get_one::<String>(id)?.clone()),
        Kind::Path => Value::String(m.get_one::<PathBuf>(id)?.to_string_lossy().into_owned()),
        Kind::Count => Value::Integer(i64::try_from(m.get_one::<NonZeroU64>(id)?.get()).ok()?),
        Kind::List => {
            let items = m.get_many::<String>(id)?.map(String::as_str);
            Value::Array(list(items).into_iter().map(Value::String).collect())
        }
    })
}
