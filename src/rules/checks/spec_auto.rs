//! SGLang's own pick of the speculative parameters (steps, top-k, draft tokens), made when the
//! line leaves all three out.

use super::*;
use crate::rules::{ArgEdit, Fix};
use crate::sglang::opt;

/// SPEC030: 0.4.4.post4 – 0.4.5.post3 pick the parameters through a helper that reads a
/// ServerArgs field those releases do not define, so EAGLE, EAGLE3 or NEXTN with none of the
/// three given stops with an AttributeError before the server starts.
pub(crate) fn auto_params_missing_field(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.spec_algo() else {
        return vec![];
    };
    let u = ctx.user();
    let any_given = [
        opt::SPECULATIVE_NUM_STEPS,
        opt::SPECULATIVE_EAGLE_TOPK,
        opt::SPECULATIVE_NUM_DRAFT_TOKENS,
    ]
    .into_iter()
    .any(|o| u.given(o));
    // With some given and the steps missing, SPEC016's assertion comes first.
    if !matches!(a.as_str(), "EAGLE" | "EAGLE3") || any_given {
        return vec![];
    }
    // What the helper returns, for every architecture, in each of these releases.
    let args = [
        (opt::SPECULATIVE_NUM_STEPS, "5"),
        (opt::SPECULATIVE_EAGLE_TOPK, "4"),
        (opt::SPECULATIVE_NUM_DRAFT_TOKENS, "8"),
    ]
    .map(|(option, value)| ArgEdit::Set {
        option: option.into(),
        value: value.into(),
    })
    .to_vec();
    vec![Fired::new(format!(
        "--speculative-algorithm {} without --speculative-num-steps, --speculative-eagle-topk or --speculative-num-draft-tokens: SGLang {} picks them through a helper that reads a field its ServerArgs lacks ('decrypted_config_file'), and stops with an AttributeError before the server starts; give all three (5 steps, top-k 4 and 8 draft tokens are what the helper would pick for any model)",
        a, ctx.version
    ))
    .with_fix(Fix {
        summary: "set --speculative-num-steps 5, --speculative-eagle-topk 4, --speculative-num-draft-tokens 8 (the release's own pick)".into(),
        args,
        env: vec![],
    })]
}
