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

pub(crate) use load::{Profile, Setting, load};
pub(crate) use source::Search;
pub(crate) use tokens::tokens;
