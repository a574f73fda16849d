//! The rules catalogue, one file per rule family (`ar.rs` for `AR001`, …): a firing and a quiet
//! case per checked rule over the fixture topologies, and a snapshot of every rule's message
//! (`snapshots/`). Around them: catalogue data and checks agree, fixes converge, no rule panics
//! on odd facts, the pipeline's own codes from the real binary, and the API the planning pipeline uses.
//!
//! `support.rs` holds the scenario builder and explains how to write a case.

#[path = "../common/mod.rs"]
mod common;
mod support;

mod api;
mod catalogue;
mod odd_facts;
mod pipeline;
mod seed;

mod ar;
mod arch;
mod attn;
mod auto;
mod cache;
mod cg;
mod comm;
mod dpa;
mod env;
mod ep;
mod flag;
mod mem;
mod mix;
mod model;
mod par;
mod pkg;
mod quant;
mod quant_compat;
mod spec;
mod srv;
mod top;

/// Every family's cases, in family order.
fn all_cases() -> Vec<support::Case> {
    [
        ar::cases(),
        arch::cases(),
        attn::cases(),
        auto::cases(),
        cache::cases(),
        cg::cases(),
        comm::cases(),
        dpa::cases(),
        ep::cases(),
        env::cases(),
        flag::cases(),
        mem::cases(),
        mix::cases(),
        model::cases(),
        par::cases(),
        pkg::cases(),
        quant::cases(),
        spec::cases(),
        srv::cases(),
        top::cases(),
    ]
    .concat()
}
