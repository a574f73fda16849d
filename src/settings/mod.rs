//! Layered launcher settings: built-in defaults, `/etc/sglang-launch/config.toml`, the user's
//! `config.toml`, the selected profile's `[launcher]` table, `SGLANG_LAUNCH_*` variables and the
//! command line, each overriding only what it sets.

mod cli;
mod combine;
pub mod env;
pub mod files;
mod layer;
pub mod registry;
mod show;

pub use combine::{Inputs, Resolved, check, combine};
pub use layer::{Layer, Source};
pub use registry::{Mode, Settings};
pub use show::{render_json, render_text};

use clap::ArgMatches;

/// Reads the files and the environment, and takes the options typed in `matches`: every layer
/// but the profile's, which the caller adds.
pub fn inputs(matches: &ArgMatches) -> Result<Inputs, String> {
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
