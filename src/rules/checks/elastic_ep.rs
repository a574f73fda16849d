//! Elastic EP (`--elastic-ep-backend`): what SGLang holds every elastic server to, scale-up or
//! not.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// EP026: an elastic server with EPLB on an algorithm that does not follow the ranks it loses
/// (0.5.4+), or with pipeline parallelism (0.5.11+).
pub(crate) fn elastic_ep_basics(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let Some(backend) = u.sval(opt::ELASTIC_EP_BACKEND).filter(|b| b != "none") else {
        return vec![];
    };
    let v = ctx.version;
    let algo = u.sval(opt::EPLB_ALGORITHM).unwrap_or_else(|| "auto".into());
    let allowed: &[&str] = if at_least(v, "0.5.10rc0") {
        &["auto", "elasticity_aware", "elasticity_aware_hierarchical"]
    } else {
        &["auto", "elasticity_aware"]
    };
    let name = format!("{} {backend}", opt::ELASTIC_EP_BACKEND);
    let why = holding([
        (
            u.flag(opt::ENABLE_EPLB) && !allowed.contains(&algo.as_str()),
            format!(
                "{name} with {} and {} {algo} (it takes {})",
                opt::ENABLE_EPLB,
                opt::EPLB_ALGORITHM,
                allowed.join(", ")
            ),
        ),
        (
            at_least(v, "0.5.11") && ctx.pp() > 1,
            format!("{name} with pipeline parallelism (PP {})", ctx.pp()),
        ),
    ])
    .collect();
    refused_at_start(ctx, why)
}
