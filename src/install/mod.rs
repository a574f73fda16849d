//! The installed SGLang and the Python that would run it, read from disk: the interpreter's
//! `site-packages` ([`site`]), whether an install is the release its version string names
//! ([`provenance`]), the flag set of an install this build has no data for (its own parser,
//! run once and cached: [`extract`]), and which flag set a run uses ([`select`]).

pub(crate) mod extract;
pub(crate) mod provenance;
pub mod select;
pub(crate) mod site;
