//! From invocation to plan: parse, gather facts, run the rules, apply fixes to a fixpoint,
//! plan memory, and produce the plan/v1 object.

pub mod fixes;
pub mod json;
pub mod memory;
