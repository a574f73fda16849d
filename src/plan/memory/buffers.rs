//! Buffers a backend allocates once at its first forward pass, after SGLang has sized the KV
//! pool: fixed sizes that must fit outside the static pool next to the graphs and activations.
//! Each is a term of its own; a new one is a [`Role`] and a line in [`at_first_use`].

use super::model::Role;
use crate::resolve::Context;

/// One buffer, per GPU.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Buffer {
    pub(crate) role: Role,
    /// As the table names it.
    pub(crate) label: &'static str,
    pub(crate) mib: u64,
}

/// The buffers the line's backends allocate at their first use (none sized yet).
pub(super) fn at_first_use(_ctx: &Context) -> Vec<Buffer> {
    Vec::new()
}
