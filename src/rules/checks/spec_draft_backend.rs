//! The EAGLE draft builds its own attention backends from a table of the backends it supports,
//! and stops at start-up on one the table lacks: cutlass_mla in every release that offers it,
//! flashmla before 0.4.6.post5.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// Whether release `v`'s draft backend table lacks `backend`.
fn unsupported(v: &str, backend: &str) -> bool {
    match backend {
        "cutlass_mla" => true,
        "flashmla" => !at_least(v, "0.4.6.post5"),
        _ => false,
    }
}

/// SPEC032: EAGLE, EAGLE3 or NEXTN with a backend the draft's table lacks.
pub(crate) fn draft_backend_missing(ctx: &Context) -> Vec<Fired> {
    if !ctx.spec_eagle() {
        return vec![];
    }
    let v = ctx.version;
    let uses: Vec<String> = looked_up(ctx)
        .into_iter()
        .filter(|(_, b)| unsupported(v, b))
        .map(|(what, b)| format!("{what} {b}"))
        .collect();
    if uses.is_empty() {
        return vec![];
    }
    let remedy = if ctx.user().knows(opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND) {
        "name one for the draft with --speculative-draft-attention-backend (flashinfer, fa3 or triton), or use another backend"
    } else {
        "use another attention backend (flashinfer, fa3 or triton)"
    };
    vec![Fired::new(format!(
        "--speculative-algorithm {} with {}: SGLang {v}'s EAGLE draft has no attention backend of that kind and stops with 'EAGLE is not supported in attention backend …' when it starts, after loading the weights; {remedy}",
        ctx.spec_algo().unwrap_or_default(),
        uses.join(", "),
    ))]
}

/// The backends the draft looks up, labelled: the draft's own (0.5.7+) for both tables; else
/// from 0.5.2 the prefill one for draft extend (the decode one under `--speculative-attention-mode
/// decode`) and the decode one for multi-step draft decode; before, the main backend.
fn looked_up(ctx: &Context) -> Vec<(String, String)> {
    if let Some(own) = ctx.user().sval(opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND) {
        return vec![(opt::SPECULATIVE_DRAFT_ATTENTION_BACKEND.into(), own)];
    }
    let b = &ctx.server.backends;
    let label = |c: &crate::resolve::Chosen, role: &str| match c.source {
        crate::resolve::ChoiceSource::User => format!("the {role} backend"),
        crate::resolve::ChoiceSource::Sglang => format!("SGLang's pick for the {role} backend"),
    };
    if !at_least(ctx.version, "0.5.2") {
        return b
            .attention
            .iter()
            .map(|c| (label(c, "main"), c.value.clone()))
            .collect();
    }
    let decode_mode = ctx.user().str(opt::SPECULATIVE_ATTENTION_MODE) == Some("decode");
    let extend = if decode_mode { b.decode() } else { b.prefill() };
    let steps = ctx.server.spec_params.map_or(1, |p| p.num_steps.value);
    let mut out: Vec<(String, String)> = extend
        .map(|c| (label(c, "draft-extend"), c.value.clone()))
        .into_iter()
        .collect();
    if steps > 1 {
        out.extend(
            b.decode()
                .map(|c| (label(c, "draft-decode"), c.value.clone())),
        );
    }
    out.dedup_by(|a, b| a.1 == b.1);
    out
}
