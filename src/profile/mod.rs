//! Named profiles: TOML files of SGLang arguments, server environment, launcher settings and
//! hardware conditions (`--profile NAME`). Finding and reading them is I/O (`source`, `load`);
//! turning them into tokens and checking the hardware is pure (`tokens`, `hardware`).

mod cc;
mod error;
pub(crate) mod hardware;
mod load;
mod schema;
pub(crate) mod source;
mod tokens;

pub(crate) use error::ProfileError;
pub(crate) use load::{Profile, Setting, load};
pub(crate) use source::Search;
pub(crate) use tokens::tokens;

/// The profile's `[launcher]` table after `extends`, as raw data (kebab-case keys, only what
/// the profile sets): the "profile" layer of the launcher's layered configuration.
pub(crate) fn launcher_table(search: &Search, name: &str) -> Result<toml::Table, ProfileError> {
    let profile = load(search, name)?;
    Ok(toml::Table::try_from(&profile.launcher).expect("launcher settings serialize"))
}
