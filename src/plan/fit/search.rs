//! The `--fit` search: lower the context length, then the request count, then the decode
//! CUDA-graph batch, each to the largest value the memory planner says fits. Pure: a function
//! of the resolved facts and the starts kept on this machine; every candidate is judged by the
//! memory planner itself, as the pipeline will judge it (on a start of that very line where one
//! was kept, see [`crate::plan::observed`]).

use crate::sglang::opt;
use serde_json::{Value, json};

use crate::facts::model::ModelFacts;
use crate::observe::Observation;
use crate::plan::fraction::floor_fraction;
use crate::plan::memory::{self, Measured, MemoryOutcome};
use crate::plan::observed::{self, Planner};
use crate::resolve::defaults::{self, Family, int_arg};
use crate::resolve::{Context, Facts};
use crate::rules::Code;
use crate::sglang::SglangArgs;

use super::ladder::{Ladder, largest};

/// Shorter contexts are not worth serving: `--fit` goes no lower.
pub(crate) const CONTEXT_FLOOR: u64 = 2048;
/// Context lengths are tried in steps of at least this many tokens (whole pages).
const CONTEXT_STEP: u64 = 1024;
/// The tokens (prompt and output) a typical request holds, unless `--fit-request-tokens` says:
/// `--max-running-requests` is sized for requests of this length, not all at full context.
pub(crate) const REQUEST_TOKENS: u64 = 4096;

/// The values `--fit` may lower, as the server would run with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Knobs {
    /// `None`: the model's context length is unknown.
    pub(crate) context_length: Option<u64>,
    /// `None`: left to SGLang's estimate.
    pub(crate) max_running_requests: Option<u64>,
    /// `None`: no decode CUDA graphs are captured.
    pub(crate) graph_max_bs: Option<u64>,
}

/// One knob, in the order `--fit` lowers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Knob {
    Context,
    Requests,
    Graphs,
}

impl Knob {
    pub(crate) const ORDER: [Knob; 3] = [Knob::Context, Knob::Requests, Knob::Graphs];

    pub(crate) fn get(self, k: &Knobs) -> Option<u64> {
        match self {
            Knob::Context => k.context_length,
            Knob::Requests => k.max_running_requests,
            Knob::Graphs => k.graph_max_bs,
        }
    }

    fn with(self, mut k: Knobs, v: u64) -> Knobs {
        match self {
            Knob::Context => k.context_length = Some(v),
            Knob::Requests => k.max_running_requests = Some(v),
            Knob::Graphs => k.graph_max_bs = Some(v),
        }
        k
    }
}

/// The planner's verdict on one setting of the knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Eval {
    pub(crate) fits: bool,
    pub(crate) kv_tokens: u64,
    /// Requests the server admits: the user's (bounded by the pool), else SGLang's estimate.
    pub(crate) requests: u64,
}

/// What the search found: the knobs before and after, and the plan at each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fitted {
    pub(crate) from: Knobs,
    pub(crate) to: Knobs,
    pub(crate) before: Eval,
    pub(crate) after: Eval,
    /// The option that sets [`Knobs::graph_max_bs`] in the flag set in use.
    pub(crate) graph_flag: &'static str,
    /// Request pools `--max-running-requests` is split over (attention DP).
    pub(crate) pools: u64,
    /// The typical request length the request count was sized for.
    pub(crate) request_tokens: u64,
    /// The longest context SGLang accepts for this model without
    /// SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN (ENV006), where the line asked for more.
    pub(crate) ceiling: Option<u64>,
}

/// The facts and what the search reads off the server resolved from them once.
pub(crate) struct Search<'a> {
    facts: Facts<'a>,
    /// The starts kept on this machine.
    observations: &'a [Observation],
    start: Knobs,
    graph_flag: &'static str,
    /// Decode batch sizes SGLang would capture, ascending.
    capture: Vec<u64>,
    page: u64,
    /// Request pools the user's `--max-running-requests` is split over (attention DP).
    pools: u64,
    request_tokens: u64,
    ceiling: Option<u64>,
}

/// What the search concludes for a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// The model is unknown: nothing to judge.
    Unplanned,
    /// The goal holds as the line is.
    Fits,
    /// The goal holds with these lower values.
    Lowered(Fitted),
    /// Not even with every knob at its floor (the weights alone are too big, say).
    Nothing,
}

pub(crate) fn search(facts: Facts, request_tokens: u64, observations: &[Observation]) -> Found {
    let Some(s) = Search::new(facts, request_tokens, observations) else {
        return Found::Unplanned;
    };
    let before = s.eval(s.start);
    if s.holds(s.start, before, true) {
        return Found::Fits;
    }
    match s.lowered(before) {
        Some(to) => Found::Lowered(Fitted {
            from: s.start,
            to,
            before,
            after: s.eval(to),
            graph_flag: s.graph_flag,
            pools: s.pools,
            request_tokens: s.request_tokens,
            ceiling: s.ceiling,
        }),
        None => Found::Nothing,
    }
}

impl<'a> Search<'a> {
    pub(crate) fn new(
        facts: Facts<'a>,
        request_tokens: u64,
        observations: &'a [Observation],
    ) -> Option<Search<'a>> {
        // Implausible facts (MEM013) plan nothing, so there is nothing to fit.
        let model = facts.model.filter(|m| m.plausible())?;
        if facts
            .draft
            .and_then(|d| d.facts.as_ref())
            .is_some_and(|d| !d.plausible())
        {
            return None;
        }
        let args = facts.args;
        // SGLang takes a context length of 0 or less as given (and serves nothing): the planner
        // reads the model's instead, so no value judged here is the one that runs.
        if int_arg(args, opt::CONTEXT_LENGTH).is_some_and(|c| c <= 0) {
            return None;
        }
        let ctx = Context::new(facts);
        let d = &ctx.server.defaults;
        let graph_flag = [opt::CUDA_GRAPH_MAX_BS_DECODE, opt::CUDA_GRAPH_MAX_BS]
            .into_iter()
            .find(|o| args.knows(o))
            .unwrap_or(opt::CUDA_GRAPH_MAX_BS);
        let mut capture: Vec<u64> =
            defaults::captured_decode_bs(d, ctx.server.gpu_memory_mib, None)
                .into_iter()
                .filter(|&b| b > 0)
                .map(|b| b as u64)
                .collect();
        capture.sort_unstable();
        capture.dedup();
        let graph_max_bs = d
            .decode_max_bs
            .filter(|&b| b > 0)
            .map(|b| b as u64)
            .or(capture.last().copied())
            .filter(|_| d.decode_graph && args.knows(graph_flag));
        let pools = if Family::of(facts.version) >= Family::V0510 {
            d.attn_dp_size.max(1) as u64
        } else {
            1
        };
        Some(Search {
            start: Knobs {
                context_length: model.context_length,
                max_running_requests: int_arg(args, opt::MAX_RUNNING_REQUESTS)
                    .filter(|&m| m > 0)
                    .map(|m| m as u64),
                graph_max_bs,
            },
            graph_flag,
            capture,
            page: ctx.server.page_size.max(1),
            pools,
            request_tokens: request_tokens.max(1),
            ceiling: crate::rules::refused_context_above(&ctx),
            facts,
            observations,
        })
    }

    /// The goal: SGLang accepts the context length, the model fits, and the KV cache holds one
    /// request at the context length and, when a count is set and `concurrency` holds, the
    /// requests asked for (per request pool) at the typical request length.
    pub(crate) fn holds(&self, k: Knobs, e: Eval, concurrency: bool) -> bool {
        let ctx = k.context_length.unwrap_or(0);
        if self.ceiling.is_some_and(|c| ctx > c) {
            return false;
        }
        let together = k
            .max_running_requests
            .filter(|_| concurrency)
            .map_or(0, |m| {
                (m / self.pools)
                    .max(1)
                    .saturating_mul(ctx.min(self.request_tokens))
            });
        e.fits && e.kv_tokens >= ctx.max(together)
    }

    /// Whether `k` meets the goal `knob` is lowered for: the context length is chosen for one
    /// request, the request count (and the graphs after it) for all of them.
    fn holds_at(&self, knob: Knob, k: Knobs) -> bool {
        self.holds(k, self.eval(k), knob != Knob::Context)
    }

    /// Each knob in turn to the largest value at which its goal holds with the later knobs as
    /// they are; a knob that cannot make it hold goes to its floor and the next one tries.
    fn lowered(&self, before: Eval) -> Option<Knobs> {
        let mut k = self.start;
        for knob in Knob::ORDER {
            let e = if k == self.start {
                before
            } else {
                self.eval(k)
            };
            if self.holds(k, e, true) {
                break;
            }
            if self.holds(k, e, knob != Knob::Context) {
                continue;
            }
            let below = self.below(knob, k, e);
            k = match largest(&below, |v| self.holds_at(knob, knob.with(k, v))) {
                Some(v) => knob.with(k, v),
                None => below.first_value().map_or(k, |v| knob.with(k, v)),
            };
        }
        if !self.holds_at(Knob::Graphs, k) {
            return None;
        }
        Some(self.unset_needless_requests(self.give_back(k, before)))
    }

    /// Room a later knob made goes back to the earlier ones, context first.
    fn give_back(&self, k: Knobs, before: Eval) -> Knobs {
        let mut back = k;
        for knob in [Knob::Context, Knob::Requests] {
            let later_changed = Knob::ORDER
                .iter()
                .skip_while(|&&o| o != knob)
                .skip(1)
                .any(|o| o.get(&k) != o.get(&self.start));
            if later_changed {
                let range = self.upto_start(knob, back, before);
                back = largest(&range, |v| self.holds_at(knob, knob.with(back, v)))
                    .map_or(back, |v| knob.with(back, v));
            }
        }
        if self.holds_at(Knob::Graphs, back) {
            back
        } else {
            k
        }
    }

    /// A request count the user did not give stays SGLang's when the goal holds without it.
    fn unset_needless_requests(&self, k: Knobs) -> Knobs {
        let without = Knobs {
            max_running_requests: self.start.max_running_requests,
            ..k
        };
        if self.start.max_running_requests.is_none() && self.holds_at(Knob::Requests, without) {
            without
        } else {
            k
        }
    }

    /// The values below the knob's current one that the search tries, ascending (the context
    /// no higher than SGLang accepts).
    fn below(&self, knob: Knob, k: Knobs, e: Eval) -> Ladder {
        match knob {
            Knob::Context => match k.context_length {
                Some(c) => {
                    let end = self.ceiling.map_or(c, |top| c.min(top));
                    let mut l = self.contexts(0, end);
                    l.tail.extend(self.ceiling.filter(|&top| top < c));
                    l
                }
                None => Ladder::default(),
            },
            Knob::Requests => Ladder::below(1, 1, k.max_running_requests.unwrap_or(e.requests)),
            Knob::Graphs => match k.graph_max_bs {
                Some(b) => Ladder::of(self.capture.iter().copied().filter(|&v| v < b).collect()),
                None => Ladder::default(),
            },
        }
    }

    /// The values the knob may take back: a context from the current one up to where it
    /// started, a request count from one up to the start's (or SGLang's estimate), ascending.
    fn upto_start(&self, knob: Knob, k: Knobs, before: Eval) -> Ladder {
        match (knob, knob.get(&k), knob.get(&self.start)) {
            (Knob::Context, Some(now), Some(top)) => {
                let mut l = self.contexts(now, top);
                l.head.insert(0, now);
                l.tail.push(top);
                l
            }
            (Knob::Requests, _, top) => {
                Ladder::below(1, 1, top.unwrap_or(before.requests).saturating_add(1))
            }
            _ => Ladder::default(),
        }
    }

    /// Page-aligned context lengths from the floor up, above `above` and below `end`.
    fn contexts(&self, above: u64, end: u64) -> Ladder {
        let step = CONTEXT_STEP.div_ceil(self.page).saturating_mul(self.page);
        let floor = CONTEXT_FLOOR.div_ceil(step).saturating_mul(step);
        let first = if above < floor {
            floor
        } else {
            (above / step).saturating_add(1).saturating_mul(step)
        };
        Ladder::below(first, step, end)
    }

    /// The plan for these knobs, at the fraction the pipeline would then give the server, on
    /// a start of this very line where one was kept.
    pub(crate) fn eval(&self, k: Knobs) -> Eval {
        let (args, model) = self.candidate(k);
        let facts = &self.facts;
        let found = observed::find(
            self.observations,
            facts.version,
            &args,
            facts.topology,
            facts.gpus,
        );
        let planner = Planner {
            plan: |m: &Measured, at| self.plan_at(&args, model.as_ref(), m, at),
            runs_at: |o: &MemoryOutcome| {
                let m = o.memory.as_ref()?;
                Some((m.mem_fraction_static, m.baseline_mib))
            },
            fits: |o: &MemoryOutcome| o.memory.as_ref().and_then(|m| m.fits),
        };
        eval_of(&observed::stand(found, planner).0)
    }

    /// The arguments and model facts of the line with these knobs.
    fn candidate(&self, k: Knobs) -> (SglangArgs, Option<ModelFacts>) {
        let mut args = self.facts.args.clone();
        let mut model = self.facts.model.cloned();
        if k.context_length != self.start.context_length
            && let Some(c) = k.context_length
        {
            set(&mut args, opt::CONTEXT_LENGTH, json!(c));
            if let Some(m) = model.as_mut() {
                m.context_length = Some(c);
            }
        }
        if k.max_running_requests != self.start.max_running_requests
            && let Some(m) = k.max_running_requests
        {
            set(&mut args, opt::MAX_RUNNING_REQUESTS, json!(m));
        }
        if k.graph_max_bs != self.start.graph_max_bs
            && let Some(b) = k.graph_max_bs
        {
            set(&mut args, self.graph_flag, json!(b));
        }
        (args, model)
    }

    /// The plan of a candidate on these figures, at fraction `at` where given.
    fn plan_at(
        &self,
        args: &SglangArgs,
        model: Option<&ModelFacts>,
        measured: &Measured,
        at: Option<f64>,
    ) -> MemoryOutcome {
        let plan = |args: &SglangArgs| {
            let ctx = Context::new(Facts {
                args,
                model,
                ..self.facts
            });
            memory::plan_measured(&ctx, measured)
        };
        let mut args = args.clone();
        let mut outcome = plan(&args);
        // The pipeline gives the server the planned fraction rounded down (or the one a start
        // ran at): judge that one.
        let fraction = outcome
            .planned_mem_fraction_static
            .map(|p| at.unwrap_or(floor_fraction(p)));
        if let Some(f) = fraction {
            set(&mut args, opt::MEM_FRACTION_STATIC, json!(f));
            // At SGLang's default kept (MEM005 as a warning) the plan at that fraction judges it
            // as given: the shortfall of the full reserve stays with the candidate.
            let kept: Vec<_> = outcome
                .findings
                .drain(..)
                .filter(|h| h.code == Code::MEM005)
                .collect();
            outcome = plan(&args);
            outcome.findings.extend(kept);
        }
        outcome
    }
}

fn eval_of(o: &MemoryOutcome) -> Eval {
    let m = o.memory.as_ref();
    // SGLang's default kept where our full-load reserve does not fit (MEM005 as a warning)
    // starts, but `--fit` asks for the reserve too.
    let reserve_short = o.findings.iter().any(|h| h.code == Code::MEM005);
    Eval {
        fits: m.is_some_and(|m| m.fits == Some(true)) && !reserve_short,
        kv_tokens: m.and_then(|m| m.kv_cache_tokens).unwrap_or(0),
        requests: m.and_then(|m| m.max_running_requests).unwrap_or(0),
    }
}

/// The option as given, with this value (what the planner reads; the tokens are edited only
/// for the values chosen).
fn set(args: &mut SglangArgs, option: &str, value: Value) {
    if let Some(dest) = args.flags.dest_of(option) {
        args.values.insert(dest.to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::model::{self, ModelFacts};
    use crate::facts::{Env, Topology};
    use crate::sglang::{self, flagset};

    struct Case {
        topology: Topology,
        args: sglang::SglangArgs,
        model: ModelFacts,
        gpus: Vec<u32>,
        env: Env,
    }

    fn case(topology: &str, version: &str, line: &[&str]) -> Case {
        let root = env!("CARGO_MANIFEST_DIR");
        let file = format!("{root}/tests/fixtures/topologies/{topology}.json");
        let topology = Topology::load(std::path::Path::new(&file)).unwrap();
        let mut tokens = vec![
            "--model-path".to_owned(),
            format!("{root}/tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct"),
        ];
        tokens.extend(line.iter().map(|s| s.to_string()));
        let args = sglang::parse(
            flagset::get(version).unwrap(),
            tokens.into_iter().map(Into::into).collect(),
        );
        let path = args.str("--model-path").unwrap().to_owned();
        let model = model::load(&path, &Env::default(), &args).facts.unwrap();
        Case {
            topology,
            args,
            model,
            gpus: vec![0],
            env: Env::default(),
        }
    }

    impl Case {
        fn facts(&self, version: &'static str) -> Facts<'_> {
            Facts {
                version,
                args: &self.args,
                env: &self.env,
                topology: &self.topology,
                gpus: &self.gpus,
                model: Some(&self.model),
                draft: None,
                host: None,
                packages: None,
            }
        }
    }

    #[test]
    fn the_context_found_is_the_largest_step_that_holds() {
        let c = case("2x-rtx-4090-pcie", "0.5.23", &[]);
        let facts = c.facts("0.5.23");
        let Found::Lowered(f) = search(facts, REQUEST_TOKENS, &[]) else {
            panic!("expected a fit")
        };
        let s = Search::new(facts, REQUEST_TOKENS, &[]).unwrap();
        assert_eq!(
            (f.to.max_running_requests, f.to.graph_max_bs),
            (None, f.from.graph_max_bs)
        );
        let ctx = f.to.context_length.unwrap();
        assert!(s.holds(f.to, s.eval(f.to), true));
        let longer = Knob::Context.with(f.to, ctx + 1024);
        assert!(!s.holds(longer, s.eval(longer), true));
        assert_eq!(f.after, s.eval(f.to));
    }

    #[test]
    fn a_line_that_fits_or_cannot_fit_is_left_alone() {
        let short = case("2x-rtx-4090-pcie", "0.5.23", &["--context-length", "8192"]);
        assert_eq!(
            search(short.facts("0.5.23"), REQUEST_TOKENS, &[]),
            Found::Fits
        );
        // Four full-length requests do not fit at 8192, but a count does.
        let busy = case(
            "2x-rtx-4090-pcie",
            "0.5.23",
            &["--context-length", "8192", "--max-running-requests", "4"],
        );
        let Found::Lowered(f) = search(busy.facts("0.5.23"), 8192, &[]) else {
            panic!("expected a fit")
        };
        assert_eq!(f.to.context_length, Some(8192));
        assert_eq!(f.to.max_running_requests, Some(f.after.kv_tokens / 8192));
        // A fraction the user set on an L4 at 0.5.23 that leaves under 2048 tokens: not even one graph
        // and one request fit, and a fraction the user chose is not --fit's to change.
        let l4 = case("1x-l4", "0.5.23", &["--mem-fraction-static", "0.68"]);
        assert_eq!(
            search(l4.facts("0.5.23"), REQUEST_TOKENS, &[]),
            Found::Nothing
        );
        // Left to SGLang's default (773 tokens), the planner lifts the fraction (MEM016), and
        // the context that then fits is found.
        let l4 = case("1x-l4", "0.5.23", &[]);
        let Found::Lowered(f) = search(l4.facts("0.5.23"), REQUEST_TOKENS, &[]) else {
            panic!("expected a fit once the fraction is lifted")
        };
        assert!(f.to.context_length.is_some_and(|c| c >= 8192), "{f:?}");
    }

    #[test]
    fn requests_are_sized_at_the_typical_length_not_at_full_context() {
        // 32 requests asked at a 32k context on one 24 GB GPU: sized at full context the count
        // would drop to what holds 32k tokens each; at 4096 tokens a request, eight times more.
        let line = ["--context-length", "32768", "--max-running-requests", "32"];
        let c = case("2x-rtx-4090-pcie", "0.5.23", &line);
        let full = search(c.facts("0.5.23"), 32768, &[]);
        let typical = search(c.facts("0.5.23"), REQUEST_TOKENS, &[]);
        let (Found::Lowered(full), Found::Lowered(typical)) = (full, typical) else {
            panic!("expected both to lower the count")
        };
        let count = |f: &Fitted| f.to.max_running_requests.unwrap();
        assert_eq!(count(&full), (full.after.kv_tokens / 32768).max(1));
        assert_eq!(count(&typical), typical.after.kv_tokens / REQUEST_TOKENS);
        assert!(count(&typical) >= 8 * count(&full), "{typical:?} {full:?}");
        assert_eq!(typical.to.context_length, Some(32768));
    }

    #[test]
    fn a_context_sglang_refuses_is_never_kept() {
        // 200k on a 128k model fits an H200's memory, but 0.5.23 refuses it (ENV006).
        let c = case("8x-h200-nvlink", "0.5.23", &["--context-length", "200000"]);
        let Found::Lowered(f) = search(c.facts("0.5.23"), REQUEST_TOKENS, &[]) else {
            panic!("expected the context to come down")
        };
        assert_eq!(
            (f.ceiling, f.to.context_length),
            (Some(131072), Some(131072))
        );
        // With the override set, SGLang takes it and there is nothing to lower.
        let mut allowed = case("8x-h200-nvlink", "0.5.23", &["--context-length", "200000"]);
        allowed.env = Env::from_pairs([("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")]);
        assert_eq!(
            search(allowed.facts("0.5.23"), REQUEST_TOKENS, &[]),
            Found::Fits
        );
    }

    #[test]
    fn an_absurd_context_is_searched_by_arithmetic() {
        let mut c = case("1x-l4", "0.5.23", &["--context-length", "1000000000000"]);
        c.env = Env::from_pairs([("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")]);
        match search(c.facts("0.5.23"), REQUEST_TOKENS, &[]) {
            Found::Lowered(f) => assert!(f.to.context_length.unwrap() < 100_000, "{f:?}"),
            other => assert_eq!(other, Found::Nothing),
        }
    }
}
