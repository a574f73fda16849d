//! `--fit`: when the server does not fit, or its KV cache cannot hold one request at the
//! context length (or the `--max-running-requests` asked for), lower the context length, then
//! the request count, then the decode CUDA-graph batch to the largest values that fit, and
//! report each change (MEM015). Never TP/PP, the model, the quantisation or any dtype.
//! Without `--fit`, or under `--no-fix`, the same values are only suggested in MEM005/MEM007.

mod ladder;
mod search;
mod text;

use super::fixes;
use super::fixpoint::Line;
use super::gather::{Machine, Models};
use crate::rules::{ArgEdit, Code, Finding, Fix, RuleSettings};
use crate::sglang::approx;

use std::num::NonZeroU64;

use search::{Found, REQUEST_TOKENS, search};

/// What the fit step leaves for the rest of the pipeline.
pub(crate) struct Step {
    pub(crate) line: Line,
    /// One fixed MEM015 finding per value changed.
    pub(crate) changes: Vec<Finding>,
    /// What MEM005 and MEM007 add: the values `--fit` would choose, or why it chose none.
    pub(crate) note: Option<String>,
}

/// What the pipeline asks of the fit step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ask {
    /// `--fit` without `--no-fix`.
    pub(crate) apply: bool,
    /// The memory plan is meaningful for this line (SGLang accepts it, no `--help`, a real
    /// fraction).
    pub(crate) plannable: bool,
    /// `--fit-request-tokens`.
    pub(crate) request_tokens: Option<NonZeroU64>,
}

pub(crate) fn step(
    line: Line,
    machine: &Machine,
    models: &mut Models,
    ask: Ask,
    settings: &RuleSettings,
) -> Step {
    let Ask {
        apply, plannable, ..
    } = ask;
    let found = if plannable {
        let tokens = ask.request_tokens.map_or(REQUEST_TOKENS, NonZeroU64::get);
        search(line.facts(machine, models), tokens, &machine.observations)
    } else {
        Found::Unplanned
    };
    let fitted = match found {
        Found::Lowered(f) => f,
        Found::Nothing if apply => return unchanged(line, Some(text::nothing_fits())),
        _ => return unchanged(line, None),
    };
    // `--allow MEM015` turns the fit off: no change goes unreported.
    let hits = if settings.enabled(Code::MEM015) {
        changes(&line, &fitted)
    } else {
        Vec::new()
    };
    let edits: Vec<ArgEdit> = hits
        .iter()
        .flat_map(|h| h.fix.iter().flat_map(|f| f.args.clone()))
        .collect();
    // In approximate mode only options every neighbouring release has are set, as for the
    // rules' fixes.
    if !apply || hits.is_empty() || !known_around(&edits, machine) {
        return unchanged(line, Some(text::suggestion(&fitted)));
    }
    let mut line = line;
    line.set_args(fixes::apply_args(&line.args, &edits), machine);
    line.mark_fixed(&edits);
    models.derive_for(line.view());
    Step {
        line,
        changes: hits.into_iter().map(|h| h.fixed(true)).collect(),
        note: None,
    }
}

fn known_around(edits: &[ArgEdit], machine: &Machine) -> bool {
    let Some(neighbours) = machine.neighbours.as_deref() else {
        return true;
    };
    edits.iter().all(|e| match e {
        ArgEdit::Set { option, .. } => approx::all_have(neighbours, option),
        _ => false,
    })
}

fn unchanged(line: Line, note: Option<String>) -> Step {
    Step {
        line,
        changes: Vec::new(),
        note,
    }
}

/// One MEM015 finding per knob the search lowered, its edit as the fix.
fn changes(line: &Line, f: &search::Fitted) -> Vec<Finding> {
    search::Knob::ORDER
        .into_iter()
        .filter_map(|knob| {
            let value = knob.get(&f.to).filter(|v| knob.get(&f.from) != Some(*v))?;
            let option = text::option(knob, f);
            let mut hit = Finding::new(Code::MEM015, format!("--fit: {}", text::why(knob, f)));
            hit.fix = Some(Fix {
                summary: text::change(knob, f, line.view()),
                args: vec![ArgEdit::Set {
                    option: option.to_owned(),
                    value: value.to_string(),
                }],
                env: Vec::new(),
            });
            Some(hit)
        })
        .collect()
}

/// MEM005 and MEM007 carry the note.
pub(crate) fn annotate(hits: &mut [Finding], note: Option<&str>) {
    let Some(note) = note else { return };
    for h in hits
        .iter_mut()
        .filter(|h| h.code == Code::MEM005 || h.code == Code::MEM007)
    {
        h.message = format!("{}; {note}", h.message);
    }
}
