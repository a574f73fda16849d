//! The weight-loading peak of online quantisation (MEM010, MEM012): SGLang holds the whole
//! checkpoint in its own dtype before quantising it (see `facts::model::online`), so the peak,
//! not the quantised size, must fit in the free memory.

use super::Context;
use super::terms::{MIB, fmt_gib};
use crate::facts::model::WeightSource;
use crate::rules::{Code, Finding};
use crate::sglang::opt;

/// The load peak per GPU, MiB, when it is above the steady weights `weights_mib`.
pub(crate) fn per_gpu_mib(ctx: &Context, weights_mib: f64) -> Option<f64> {
    let m = ctx.model?;
    let peak = m.online_quant_load_bytes?;
    // `--load-format layered` quantises each layer before loading the next.
    if ctx.args.str(opt::LOAD_FORMAT) == Some("layered") {
        return None;
    }
    let p = &ctx.server.parallel;
    let split = p.tp.max(1) as f64 * p.pp.max(1) as f64;
    let extra = peak.saturating_sub(m.weight_bytes?) as f64 / split / MIB;
    (extra > 0.0).then_some(weights_mib + extra)
}

/// MEM010 (checkpoint sizes read from its files) or MEM012 (estimated): the steady state fits
/// but the load peak does not.
pub(crate) fn finding(
    ctx: &Context,
    peak_mib: f64,
    weights_mib: f64,
    free_mib: f64,
    steady_fits: bool,
) -> Option<Finding> {
    if !steady_fits || peak_mib <= free_mib {
        return None;
    }
    let m = ctx.model?;
    let (code, how) = match m.weight_source {
        WeightSource::Estimate => (Code::MEM012, "estimated from the config"),
        _ => (Code::MEM010, "read from the checkpoint"),
    };
    Some(Finding::new(
        code,
        format!(
            "--quantization {} loads the {}-bit checkpoint whole before quantising it: {} per \
             GPU at load ({how}) vs {} free after start-up, though the quantised {} would fit; \
             use --load-format layered, a larger --tp-size or a pre-quantised checkpoint",
            m.quant_method.as_deref().unwrap_or("?"),
            m.dtype_bytes() * 8,
            fmt_gib(peak_mib),
            fmt_gib(free_mib),
            fmt_gib(weights_mib),
        ),
    ))
}
