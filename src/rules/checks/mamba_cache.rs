//! The Mamba state cache's own settings SGLang validates while it resolves the arguments:
//! stochastic rounding, the Philox rounds and states per path (0.5.15+), and the int8
//! checkpoint (0.5.14+).

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// CACHE022: Mamba cache settings the release refuses, one finding each.
pub(crate) fn mamba_cache_settings(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let v = ctx.version;
    let mut out = vec![];
    let rounds = opt::MAMBA_CACHE_PHILOX_ROUNDS;
    if let Some(r) = u.int(rounds).filter(|r| *r < 0 && at_least(v, "0.5.15")) {
        out.push(format!("{rounds} {r}: it must not be negative"));
    }
    let states = opt::MAMBA_MAX_STATES_PER_PATH;
    if let Some(s) = u
        .int(states)
        .filter(|s| (*s == 0 || *s < -1) && at_least(v, "0.5.17"))
    {
        out.push(format!(
            "{states} {s}: it takes -1 (no limit) or a positive count"
        ));
    }
    out.extend(stochastic_rounding(ctx));
    out.extend(int8_checkpoint(ctx));
    refused_at_start(ctx, out)
}

/// Stochastic rounding writes FP16 states: a Mamba state dtype other than float16, and the
/// Triton kernel off SM100 (its rounding instruction is Blackwell's).
fn stochastic_rounding(ctx: &Context) -> Vec<String> {
    let u = ctx.user();
    let name = opt::ENABLE_MAMBA_CACHE_STOCHASTIC_ROUNDING;
    if !u.flag(name) {
        return vec![];
    }
    let mut out = vec![];
    // SGLang reads the option before it fills the state dtype in from the model: unset fails too.
    match u.sval(opt::MAMBA_SSM_DTYPE) {
        Some(d) if d == "float16" => {}
        Some(d) => out.push(format!(
            "{name} with {} {d}: it needs float16",
            opt::MAMBA_SSM_DTYPE
        )),
        None => out.push(format!("{name} without {} float16", opt::MAMBA_SSM_DTYPE)),
    }
    let triton = u.str(opt::MAMBA_BACKEND).unwrap_or("triton") == "triton";
    let majors = ctx.majors();
    if triton && !majors.is_empty() && majors.iter().any(|m| *m != 10) {
        out.push(format!(
            "{name} on the Triton Mamba kernel off SM100 ({}): use {} flashinfer",
            ctx.describe_used(),
            opt::MAMBA_BACKEND
        ));
    }
    out
}

/// The int8 checkpoint slots only the built-in Mamba radix cache reads: not with HiCache or
/// another radix cache (0.5.14+), nor LMCache (0.5.21+).
fn int8_checkpoint(ctx: &Context) -> Vec<String> {
    let u = ctx.user();
    let name = opt::ENABLE_INT8_MAMBA_CHECKPOINT;
    if !u.flag(name) {
        return vec![];
    }
    let lmcache = u.flag(opt::ENABLE_LMCACHE) && at_least(ctx.version, "0.5.21");
    let checks = [
        (
            u.flag(opt::ENABLE_HIERARCHICAL_CACHE),
            opt::ENABLE_HIERARCHICAL_CACHE,
        ),
        (u.is_set(opt::RADIX_CACHE_BACKEND), opt::RADIX_CACHE_BACKEND),
        (lmcache, opt::ENABLE_LMCACHE),
    ];
    holding(checks)
        .map(|what| format!("{name} with {what}, which does not read int8 states"))
        .collect()
}
