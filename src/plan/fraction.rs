//! The memory step: plan memory on the final line, settle the `--mem-fraction-static` the
//! server will get, and describe the server at exactly that value; where a start of the line
//! was kept on this machine, on what it measured (see [`super::observed`]).

use super::arguments::Parsed;
use super::fixes;
use super::fixpoint::Line;
use super::gather::{Machine, Models};
use super::memory::{self, Measured, MemoryOutcome, MemoryPlan};
use super::observed::{self, Planner, Use};
use super::v1::{MfsSource, ObservedUse, Predicted};
use crate::resolve::{Context, Server};
use crate::rules::{ArgEdit, Code, Finding};
use crate::sglang::SglangArgs;
use crate::sglang::opt;

/// The memory plan of the line that will run, the arguments carrying its fraction, and the
/// server resolved for exactly those arguments.
pub(crate) struct Settled {
    pub(crate) args: SglangArgs,
    /// What argparse makes of `args`.
    pub(crate) parsed: Parsed,
    pub(crate) memory: Option<MemoryPlan>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) server: Server,
}

/// What the pipeline asks of the memory step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ask {
    /// `--no-fix`: SGLang keeps its own default fraction.
    pub(crate) no_fix: bool,
    /// False for `--help` (SGLang prints and exits) or an impossible fraction (MEM008).
    pub(crate) plannable: bool,
}

/// The line's memory at one set of measured figures and, where given, one fraction.
struct At<'a> {
    measured: &'a Measured,
    /// The fraction the server gets, where the pipeline already knows it (the one a start
    /// ran at); else the planner's own.
    fraction: Option<f64>,
}

/// The plan on the line's facts with these arguments, `edits` the fraction this step sets on
/// top of the line's fixes.
fn plan_with(
    line: &Line,
    (args, parsed, edits): (&SglangArgs, &Parsed, &[ArgEdit]),
    (machine, models): (&Machine, &Models),
    measured: &Measured,
) -> (MemoryOutcome, Server) {
    let mut facts = line.facts(machine, models);
    facts.args = parsed.view(args);
    let mut fixed = line.fixed.clone();
    fixed.extend(fixes::set_options(edits).map(str::to_owned));
    let ctx = Context::new(facts).fixed_by(&fixed);
    (memory::plan_measured(&ctx, measured), ctx.server)
}

/// The memory step on the line as the fixes and `--fit` leave it, standing on a start of it
/// where one was kept. For arguments SGLang rejects (ARG001 says why) the planner still runs
/// on what parsed, for its findings; there is no plan to show and no fraction to set.
pub(crate) fn settle(line: &Line, machine: &Machine, models: &Models, ask: Ask) -> Settled {
    let found = (ask.plannable && line.parsed.accepted())
        .then(|| {
            let version = machine.selected.flags.version.as_str();
            observed::find(
                &machine.observations,
                version,
                &line.args,
                &machine.topology,
                &line.gpus,
            )
        })
        .flatten();
    let planner = Planner {
        plan: |measured: &Measured, fraction| {
            settle_at(line, (machine, models), ask, At { measured, fraction })
        },
        runs_at: |s: &Settled| {
            let m = s.memory.as_ref()?;
            Some((m.mem_fraction_static, m.baseline_mib))
        },
        fits: |s: &Settled| s.memory.as_ref().and_then(|m| m.fits),
    };
    let (mut settled, used) = observed::stand(found, planner);
    if let Some(used) = used {
        describe(&mut settled, used, |fraction| {
            let alone = At {
                measured: &Measured::default(),
                fraction,
            };
            settle_at(line, (machine, models), ask, alone).memory
        });
    }
    settled
}

/// What the plan took from the start, next to what the planner alone gives (`alone(at)`: its
/// memory plan at that fraction, else at its own).
fn describe(s: &mut Settled, used: Use, alone: impl Fn(Option<f64>) -> Option<MemoryPlan>) {
    let Some(m) = s.memory.as_ref() else { return };
    let (Some(own), Some(here)) = (alone(None), alone(Some(m.mem_fraction_static))) else {
        return;
    };
    let o = used.observation;
    let observed_use = ObservedUse {
        at: o.at,
        weights: here.weights_per_gpu_gib.is_some(),
        cuda_graphs: o.real.cuda_graphs_gib.is_some(),
        started: used.started,
        predicted: Predicted {
            mem_fraction_static: own.mem_fraction_static,
            weights_per_gpu_gib: here.weights_per_gpu_gib,
            cuda_graphs_mib: here.captured_mib(),
            kv_cache_tokens: here.kv_cache_tokens,
            fits: here.fits,
        },
    };
    if let Some(m) = s.memory.as_mut() {
        m.stand_on(o.clone(), observed_use);
    }
}

/// The memory step at `at`: the plan, the fraction the server gets, and the server at it.
fn settle_at(
    line: &Line,
    (machine, models): (&Machine, &Models),
    Ask { no_fix, plannable }: Ask,
    at: At,
) -> Settled {
    let args = line.args.clone();
    let parsed = line.parsed.clone();
    let facts = (machine, models);
    let (outcome, server) = plan_with(line, (&args, &parsed, &[]), facts, at.measured);
    if !plannable {
        return Settled {
            args,
            parsed,
            memory: None,
            findings: Vec::new(),
            server,
        };
    }
    let known_model = models
        .main(parsed.view(&args))
        .is_some_and(|m| m.facts.is_some());
    let mut findings = outcome.findings;
    let mut memory = outcome.memory;
    if !known_model {
        // Without model facts our activation estimate is a stand-in: not enough to call the
        // user's (or SGLang's) fraction too high.
        findings.retain(|h| h.code != Code::MEM003);
    }
    if !parsed.accepted() {
        memory = None;
    }
    let Some(m) = memory
        .as_ref()
        .filter(|_| !parsed.view(&args).is_set(opt::MEM_FRACTION_STATIC))
    else {
        return Settled {
            args,
            parsed,
            memory,
            findings,
            server,
        };
    };
    let default = m.sglang_default_mem_fraction_static;
    // The value the server will really get: ours only when we know the model and may change
    // the command line; otherwise SGLang keeps its own default.
    let ours = known_model && !no_fix;
    let chosen = match (at.fraction, outcome.planned_mem_fraction_static) {
        (Some(f), _) if ours => {
            // Not the planner's fraction: what it says of its own (MEM016) does not hold.
            findings.retain(|h| h.code != Code::MEM016);
            Some(f)
        }
        (_, Some(p)) if ours => Some(floor_fraction(p)),
        _ => default,
    };
    let Some(v) = chosen else {
        return Settled {
            args,
            parsed,
            memory,
            findings,
            server,
        };
    };
    let set = [ArgEdit::Set {
        option: opt::MEM_FRACTION_STATIC.into(),
        value: format_fraction(v),
    }];
    let with_value = fixes::apply_args(&args, &set);
    let with_parsed = Parsed::of(&with_value, machine.neighbours.as_ref());
    // The table describes the server that will run: recompute at exactly that value.
    let (again, server_with_value) =
        plan_with(line, (&with_value, &with_parsed, &set), facts, at.measured);
    if let Some(mut m) = again.memory {
        m.mem_fraction_static_source = MfsSource::Planned;
        memory = Some(m);
    }
    // Report only, but the risk stays visible: SGLang's default judged like a user's.
    if no_fix && known_model {
        findings.extend(
            again
                .findings
                .into_iter()
                .filter(|h| h.code == Code::MEM003)
                .map(|mut h| {
                    h.message = format!("{} (SGLang's default, kept by --no-fix)", h.message);
                    h
                }),
        );
    }
    let same_as_default = default.is_some_and(|d| (d - v).abs() < 0.0005);
    if ours && !same_as_default {
        return Settled {
            args: with_value,
            parsed: with_parsed,
            memory,
            findings,
            server: server_with_value,
        };
    }
    Settled {
        args,
        parsed,
        memory,
        findings,
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
