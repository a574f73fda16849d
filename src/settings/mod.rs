//! Layered launcher settings: built-in defaults, `/etc/sglang-launch/config.toml`, the user's
//! `config.toml`, the selected profile's `[launcher]` table, `SGLANG_LAUNCH_*` variables and the
//! command line, each overriding only what it sets.

mod cli;
mod combine;
pub(crate) mod env;
pub(crate) mod files;
mod layer;
pub mod registry;
mod show;

pub(crate) use combine::{Inputs, Resolved, check, combine};
pub(crate) use layer::{Layer, Source};
pub(crate) use registry::{Mode, Settings};
pub(crate) use show::{render_json, render_text};

use clap::ArgMatches;

/// Reads the files and the environment, and takes the options typed in `matches`: every layer
/// but the profile's, which the caller adds.
pub(crate) fn inputs(matches: &ArgMatches) -> Result<Inputs, String> {
    let files = files::paths(|n| std::env::var_os(n))
        .iter()
        .filter_map(|p| files::read(p).transpose())
        .collect::<Result<Vec<_>, _>>()?;
    let env = env::layers(|n| std::env::var(n).ok())?;
    Ok(Inputs {
        files,
        profile: None,
        env,
        cli: Some(cli::layer(matches)),
    })
}

/// [`inputs`] for a line being completed, never an error: `typed` are the settings typed on
/// it so far (`(key, value)`, each read as its variable would be), and a file, a variable or a
/// typed value that cannot be read or is invalid is left out alone (the run reports it).
pub(crate) fn inputs_lenient(typed: &[(&str, &str)]) -> Inputs {
    let valid = |l: &Layer| check(l).is_ok();
    let files = files::paths(|n| std::env::var_os(n))
        .iter()
        .filter_map(|p| files::read(p).ok().flatten())
        .collect();
    let env = registry::settings()
        .flat_map(|(_, v)| {
            let one = |n: &str| std::env::var(n).ok().filter(|_| n == v.name);
            env::layers(one).unwrap_or_default()
        })
        .filter(valid)
        .collect();
    let mut cli = Layer {
        source: Source::CommandLine,
        values: toml::Table::new(),
    };
    for &(key, raw) in typed {
        let Some(value) = registry::by_key(key).and_then(|v| env::parse(v.kind, raw)) else {
            continue;
        };
        let alone = Layer {
            source: Source::CommandLine,
            values: toml::Table::from_iter([(key.to_owned(), value.clone())]),
        };
        if valid(&alone) {
            cli.values.insert(key.to_owned(), value);
        }
    }
    Inputs {
        files,
        profile: None,
        env,
        cli: Some(cli),
    }
}
