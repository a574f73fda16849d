//! The checks, one function per rule, grouped by family. Each looks at the state after any
//! fix it proposes would be applied, so a fixed command line no longer fires (the planning
//! pipeline's fixpoint loop converges).

pub mod ar;
pub mod arch;
pub mod attn;
pub mod auto;
pub mod cache;
pub mod cg;
pub mod comm;
pub mod dpa;
pub mod env;
pub mod ep;
pub mod flag;
pub mod matrix;
pub mod model;
pub mod par;
pub mod pkg;
pub mod quant;
pub mod quant_block;
pub mod quant_compat;
pub mod spec;
pub mod srv;
pub mod top;

pub(crate) use super::view::*;
pub(crate) use super::{Context, Fired};
