//! The memory step: plan memory on the final line, settle the `--mem-fraction-static` the
//! server will get, and describe the server at exactly that value.

use super::arguments::Parsed;
use super::fixes;
use super::fixpoint::Line;
use super::gather::{Machine, Models};
use super::json::{Memory, MfsSource};
use super::memory::{self, MemoryOutcome};
use crate::resolve::{Context, Server};
use crate::rules::{ArgEdit, Code, Hit};
use crate::sglang::SglangArgs;

/// The memory plan of the line that will run, the arguments carrying its fraction, and the
/// server resolved for exactly those arguments.
pub struct Settled {
    pub args: SglangArgs,
    /// What argparse makes of `args`.
    pub parsed: Parsed,
    pub memory: Option<Memory>,
    pub hits: Vec<Hit>,
    pub server: Server,
}

fn plan_with(
    line: &Line,
    (args, parsed): (&SglangArgs, &Parsed),
    machine: &Machine,
    models: &Models,
) -> (MemoryOutcome, Server) {
    let mut facts = line.facts(machine, models);
    facts.args = parsed.view(args);
    let ctx = Context::new(facts);
    (memory::plan(&ctx), ctx.server)
}

/// `plannable`: false for `--help` (SGLang prints and exits) or an impossible fraction
/// (MEM008). For arguments SGLang rejects (ARG001 says why) the planner still runs on what
/// parsed, for its findings; there is no plan to show and no fraction to set.
pub fn settle(
    line: &Line,
    machine: &Machine,
    models: &Models,
    no_fix: bool,
    plannable: bool,
) -> Settled {
    let args = line.args.clone();
    let parsed = line.parsed.clone();
    let (outcome, server) = plan_with(line, (&args, &parsed), machine, models);
    if !plannable {
        return Settled {
            args,
            parsed,
            memory: None,
            hits: Vec::new(),
            server,
        };
    }
    let known_model = models
        .main(parsed.view(&args))
        .is_some_and(|m| m.facts.is_some());
    let mut hits = outcome.hits;
    let mut memory = outcome.memory;
    if !known_model {
        // Without model facts our activation estimate is a stand-in: not enough to call the
        // user's (or SGLang's) fraction too high.
        hits.retain(|h| h.code != Code::MEM003);
    }
    if !parsed.accepted() {
        memory = None;
    }
    let Some(m) = memory
        .as_ref()
        .filter(|_| !parsed.view(&args).is_set("--mem-fraction-static"))
    else {
        return Settled {
            args,
            parsed,
            memory,
            hits,
            server,
        };
    };
    let default = m.sglang_default_mem_fraction_static;
    // The value the server will really get: ours only when we know the model and may change
    // the command line; otherwise SGLang keeps its own default.
    let chosen = match outcome.planned_mem_fraction_static {
        Some(p) if known_model && !no_fix => Some(floor_fraction(p)),
        _ => default,
    };
    let Some(v) = chosen else {
        return Settled {
            args,
            parsed,
            memory,
            hits,
            server,
        };
    };
    let with_value = fixes::apply_args(
        &args,
        &[ArgEdit::Set {
            option: "--mem-fraction-static".into(),
            value: format_fraction(v),
        }],
    );
    let with_parsed = Parsed::of(&with_value, machine.neighbours.as_deref());
    // The table describes the server that will run: recompute at exactly that value.
    let (again, server_with_value) = plan_with(line, (&with_value, &with_parsed), machine, models);
    if let Some(mut m) = again.memory {
        m.mem_fraction_static_source = MfsSource::Planned;
        memory = Some(m);
    }
    // Report only, but the risk stays visible: SGLang's default judged like a user's.
    if no_fix && known_model {
        hits.extend(
            again
                .hits
                .into_iter()
                .filter(|h| h.code == Code::MEM003)
                .map(|mut h| {
                    h.message = format!("{} (SGLang's default, kept by --no-fix)", h.message);
                    h
                }),
        );
    }
    let same_as_default = default.is_some_and(|d| (d - v).abs() < 0.0005);
    if known_model && !no_fix && !same_as_default {
        return Settled {
            args: with_value,
            parsed: with_parsed,
            memory,
            hits,
            server: server_with_value,
        };
    }
    Settled {
        args,
        parsed,
        memory,
        hits,
        server,
    }
}

/// Rounded down to three decimals: rounding must never raise a planned fraction.
pub(super) fn floor_fraction(v: f64) -> f64 {
    (v * 1000.0).floor() / 1000.0
}

/// `0.83` rather than `0.8300000001`.
fn format_fraction(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}
