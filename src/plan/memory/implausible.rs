//! MEM013: the model's files hold a value no real model has. The plan is then made as for an
//! unknown model (SGLang's own defaults shown, no fraction of ours, no fit judged): acting on
//! garbage could only add a wrong `--mem-fraction-static` or block a command on a wrong size.

use super::MemoryOutcome;
use crate::facts::model::{Implausible, ModelFacts};
use crate::resolve::Context;
use crate::rules::{Code, Hit};

/// One MEM013 per implausible value of the model and of the separate draft.
pub(super) fn hits(ctx: &Context) -> Vec<Hit> {
    let target = ctx.model.into_iter().map(|m| ("", m));
    let draft = ctx.draft_facts().into_iter().map(|m| ("draft model ", m));
    target
        .chain(draft)
        .flat_map(|(whose, m)| m.implausible.iter().map(move |i| hit(whose, m, i)))
        .collect()
}

fn hit(whose: &str, m: &ModelFacts, i: &Implausible) -> Hit {
    Hit::new(
        Code::MEM013,
        format!(
            "{whose}{}: {} is {}, but a real model has {} there: the memory plan is not made on \
             it (no --mem-fraction-static of ours, no fit judged; SGLang's defaults shown); fix \
             {} or override the key with --json-model-override-args",
            m.dir.join(&i.file).display(),
            i.key,
            i.value,
            i.expected,
            i.file,
        ),
    )
}

/// The plan for a model whose facts are implausible: the unknown model's, with `bad` in
/// place of MEM001, and none of the findings that judge the model's size.
pub(super) fn unplanned(ctx: &Context, bad: Vec<Hit>) -> MemoryOutcome {
    let blind = Context {
        model: None,
        draft: None,
        server: ctx.server.clone(),
        ..*ctx
    };
    let mut outcome = super::plan_known(&blind);
    // MEM001 says the model is not available, MEM003 judges a fraction on stand-in activations.
    outcome
        .hits
        .retain(|h| !matches!(h.code, Code::MEM001 | Code::MEM003));
    outcome.hits.extend(bad);
    outcome.planned_mem_fraction_static = None;
    outcome
}
