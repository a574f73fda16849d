//! From invocation to plan, in stages: gather the facts (all I/O, each path read once) →
//! rules to a fixpoint over the resolved server (pure) → memory → assemble the plan/v1 object.

mod arguments;
mod collect;
mod findings;
mod fit;
pub mod fixes;
mod fixpoint;
mod fraction;
pub(crate) mod gather;
pub mod memory;
mod multinode;
mod observed;
mod passthrough;
pub mod v1;
mod verdict;

use std::ffi::OsString;
use std::path::PathBuf;

use crate::exit;
use crate::facts::{self, Env, Topology};
use crate::install::select;
use crate::rules::{Code, Finding, LookupError, RuleSettings};
use crate::secrets;
use crate::sglang::{self, SglangArgs, release};

use collect::{Collector, Stage};
use fixpoint::Line;
pub(crate) use gather::{Interpreter, load_topology, resolve_interpreter};
use v1::{EnvChanges, Plan};
pub(crate) use verdict::Verdict;

/// What the invocation asks the pipeline for. Plain data: the invocation layer fills it from
/// the command line, `SGLANG_LAUNCH_*` and (later) profiles.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// SGLang's tokens, exactly as given.
    pub tokens: Vec<OsString>,
    pub topology: Option<PathBuf>,
    pub sglang_version: Option<String>,
    /// Where `sglang_version` comes from, as the report names it.
    pub sglang_version_from: Option<String>,
    pub python: Option<PathBuf>,
    /// The interpreter and release the invocation already chose from `python` and
    /// `sglang_version` (one choice per run); `None`: chosen here from them.
    pub chosen: Option<(Interpreter, select::Selected)>,
    pub nvml_lib: Option<PathBuf>,
    /// The GPUs, when the caller already read them (NVML is read once per run).
    pub gpus: Option<Topology>,
    pub settings: RuleSettings,
    pub no_fix: bool,
    /// The Hugging Face Hub may be asked for a model not on disk (`HF_HUB_OFFLINE` still
    /// turns it off).
    pub hub: bool,
    /// `--fit`: lower the context length, request count and graph batch until the server fits.
    pub fit: bool,
    /// `--fit-request-tokens`: the length a typical request is sized at (else the default).
    pub fit_request_tokens: Option<std::num::NonZeroU64>,
    /// The environment the server would inherit.
    pub env: Env,
    /// What the invocation already changed in `env` (a profile's `[env]`): shown with the
    /// fixes' changes wherever the plan prints what exec sets.
    pub env_changes: EnvChanges,
    /// Not a server for an NVIDIA GPU (why): judged without hardware, nothing planned or fixed.
    pub pass_through: Option<String>,
    /// Read the starts `run` and `wait-ready --pid` kept on this machine: the plan of a line
    /// that started here stands on what it measured.
    pub observations: bool,
}

/// A problem with the launcher's own input: nothing is planned or launched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Fatal {
    pub(crate) code: i32,
    /// One line: printed with every control in it escaped, since it quotes data.
    pub message: String,
    /// The launcher's hints under the message, one line each.
    pub(crate) notes: Vec<String>,
}

impl Fatal {
    pub(crate) fn new(code: i32, message: impl Into<String>) -> Self {
        Fatal {
            code,
            message: message.into(),
            notes: Vec::new(),
        }
    }

    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Fatal::new(exit::USAGE, message)
    }

    /// The error with a hint line under its message.
    pub(crate) fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// Why nothing could be planned: the launcher's own input is wrong.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// An `--allow`/`--deny` entry (or its variable or config key) naming no rule.
    #[error("--allow/--deny: {0}")]
    Rules(#[from] LookupError),
    #[error(
        "--sglang-version {0:?} is not a version number (like 0.5.23); embedded flag sets: {first} to {last}, {n} releases (`sglang-launch flags list`)",
        first = sglang::flagset::KNOWN_VERSIONS[0],
        last = sglang::flagset::KNOWN_VERSIONS[sglang::flagset::KNOWN_VERSIONS.len() - 1],
        n = sglang::flagset::KNOWN_VERSIONS.len()
    )]
    NotAVersion(String),
    #[error(transparent)]
    Topology(#[from] facts::topology::TopologyError),
    #[error(transparent)]
    Nvml(#[from] facts::nvml::NvmlError),
}

/// The one boundary where the launcher's errors become an exit code.
impl From<Error> for Fatal {
    fn from(e: Error) -> Fatal {
        Fatal::usage(e.to_string())
    }
}

impl Error {
    fn into_fatal(self) -> Fatal {
        self.into()
    }
}

/// Everything the report and exec layers need.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Every finding, in report order, under `--allow`/`--deny`, secrets hidden.
    pub(crate) findings: Vec<Finding>,
    /// What the findings make of the launch.
    pub(crate) verdict: Verdict,
    /// The memory plan (None: nothing planned).
    pub(crate) memory: Option<memory::MemoryPlan>,
    /// The plan/v1 projection, for the JSON outputs.
    pub plan: Plan,
    /// Final arguments (unmasked, byte-exact) and environment for exec.
    pub args: SglangArgs,
    pub env: Env,
    pub(crate) interpreter: Interpreter,
    pub(crate) topology: Topology,
    /// The model as the planner saw it (None when unknown).
    pub(crate) model: Option<facts::model::ModelFacts>,
    /// The secrets of these arguments and this environment, hidden in everything printed.
    pub(crate) secrets: crate::out::Redactor,
    /// The interpreter's installed packages (None: offline planning or no interpreter).
    pub packages: Option<facts::Packages>,
    /// Where a given SGLang version came from (`--sglang-version`, a variable, a file).
    pub(crate) version_from: Option<String>,
    /// The key a start of this line is kept under; `None` when no memory is planned.
    pub(crate) line_key: Option<String>,
}

impl Outcome {
    /// Exit code of `check`/`plan` for this verdict.
    pub fn exit_code(&self) -> i32 {
        match self.verdict {
            Verdict::Error => exit::BLOCKED,
            _ => exit::OK,
        }
    }
}

/// The planning pipeline: facts, fixpoint, memory, plan.
pub fn build(req: &Request) -> Result<Outcome, Fatal> {
    if let Some(why) = &req.pass_through {
        return passthrough::build(req, why);
    }
    validate(req)?;
    let machine = gather::machine(req)?;
    // Planned for another machine, a `--config` file missing here may be there (ARG003).
    let elsewhere = req
        .topology
        .as_ref()
        .and_then(|_| arguments::config_elsewhere(machine.selected.flags, &req.tokens));
    let args = match &elsewhere {
        Some(_) => sglang::parse_with(machine.selected.flags, req.tokens.clone(), &mut |_| {
            Ok(Vec::new())
        }),
        None => sglang::parse(machine.selected.flags, req.tokens.clone()),
    };
    let scheduler = scheduler_step(req, &machine, args)?;
    let original = Line::new(
        scheduler.args,
        req.env.clone(),
        req.env_changes.clone(),
        &machine,
    );
    let hub = facts::hub::Settings::from_env(&req.env, req.hub);
    let mut models = gather::Models::gather(original.view(), &original.env, hub);
    let fixed = fixpoint::run(original.clone(), &machine, &mut models, &req.settings);
    let mut found = Collector::default();
    found.add(Stage::Version, findings::version(&machine));
    found.add(Stage::Scheduler, scheduler.findings);
    let mut rule_findings = fixed.findings;
    let line = if req.no_fix {
        restore(original, &mut rule_findings, &machine, &mut models)
    } else {
        fixed.line
    };
    let mut pipeline: Vec<Finding> = line
        .gpu_problem
        .clone()
        .map(|p| Finding::new(Code::TOP001, p))
        .into_iter()
        .chain(elsewhere.map(findings::config_elsewhere))
        .collect();
    let bad_fraction = findings::bad_fraction(line.view());
    let plannable = !line.args.help && bad_fraction.is_none();
    let accepted = line.parsed.accepted();
    let fitted = fit::step(
        line,
        &machine,
        &mut models,
        fit::Ask {
            apply: req.fit && !req.no_fix,
            plannable: plannable && accepted,
            request_tokens: req.fit_request_tokens,
        },
        &req.settings,
    );
    let line = if fitted.changes.is_empty() {
        fitted.line
    } else {
        recheck(
            fitted.line,
            &machine,
            &mut models,
            &req.settings,
            &mut rule_findings,
        )
    };
    found.add(Stage::Rules, rule_findings);
    found.add(Stage::Fit, fitted.changes);
    let model_load = models.main(line.view());
    // Planned for another machine from its topology file, a path not here proves nothing.
    pipeline.extend(findings::model(model_load, req.topology.is_none()));
    pipeline.extend(findings::draft(models.draft(line.view())));
    pipeline.extend(bad_fraction.map(findings::fraction));
    let ask = fraction::Ask {
        no_fix: req.no_fix,
        plannable,
    };
    let mut settled = fraction::settle(&line, &machine, &models, ask);
    let context_len = settled.server.context_length();
    let kv_dtype = settled.server.kv_cache_dtype();
    let version = machine.selected.flags.release();
    let fp8_kv = (model_load.and_then(|l| l.facts.as_ref()))
        .map_or("fp8_e5m2", |m| m.fp8_kv_cache_dtype(version));
    pipeline.extend(findings::one_request(
        settled.memory.as_ref(),
        context_len,
        kv_dtype,
        fp8_kv,
    ));
    let memory_findings = std::mem::take(&mut settled.findings);
    pipeline.extend(
        memory_findings
            .into_iter()
            .filter(|f| !repeated(f, model_load, &found)),
    );
    let rules_now: Vec<Finding> = found.of(Stage::Rules).into_iter().cloned().collect();
    pipeline.extend(findings::unexplained(
        findings::arguments(&settled.args, &settled.parsed, &machine),
        &rules_now,
    ));
    fit::annotate(&mut pipeline, fitted.note.as_deref());
    found.add(Stage::Pipeline, pipeline);
    let resolved = settled
        .parsed
        .accepted()
        .then(|| v1::Resolved::from(&settled.server));
    Ok(assemble(
        req, machine, &models, line, settled, found, resolved,
    ))
}

/// The rules again on the line `--fit` changed: what they said of the values it replaced (a
/// context SGLang refuses, say) no longer holds. Fixes already made stay reported.
fn recheck(
    line: Line,
    machine: &gather::Machine,
    models: &mut gather::Models,
    settings: &RuleSettings,
    rule_findings: &mut Vec<Finding>,
) -> Line {
    let again = fixpoint::run(line, machine, models, settings);
    rule_findings.retain(|f| f.fixed);
    rule_findings.extend(again.findings);
    again.line
}

/// The multi-node options the scheduler gives (see [`multinode`]).
fn scheduler_step(
    req: &Request,
    machine: &gather::Machine,
    args: SglangArgs,
) -> Result<multinode::Step, Fatal> {
    let visible = (!machine.topology.gpus.is_empty())
        .then(|| facts::gpus::visible(&machine.topology, &req.env).gpus.len());
    multinode::step(
        args,
        (&req.env, visible),
        machine.neighbours.as_ref(),
        req.no_fix,
        &req.settings,
    )
    .map_err(Fatal::usage)
}

/// The launcher's own settings, before anything is read.
fn validate(req: &Request) -> Result<(), Error> {
    req.settings.validate()?;
    // Empty means unset (as an empty SGLANG_LAUNCH_SGLANG_VERSION= in a unit file does).
    if let Some(v) = req
        .sglang_version
        .as_deref()
        .filter(|v| !v.trim().is_empty())
        && !release::looks_like_version(v)
    {
        return Err(Error::NotAVersion(v.to_owned()));
    }
    Ok(())
}

/// `--no-fix`: the fixes ran on a scratch copy so the report shows everything the fixed line
/// would reveal; the user's own line and environment are what runs.
fn restore(
    original: Line,
    rule_findings: &mut [Finding],
    machine: &gather::Machine,
    models: &mut gather::Models,
) -> Line {
    for f in rule_findings.iter_mut() {
        f.fixed = false;
    }
    let mut line = original;
    line.place(machine);
    models.derive_for(line.view());
    line
}

/// A finding of the memory planner that another finding already makes.
fn repeated(f: &Finding, model: Option<&facts::model::ModelLoad>, found: &Collector) -> bool {
    // The loader's MEM001/MEM002 name the path and the problem; the planner's generic
    // "model unavailable" would only repeat it.
    let model_reported = model.is_some_and(|m| m.problem.is_some());
    // CG001 already says the CUDA-graph batch eats KV cache; MEM006 would say it again.
    (model_reported && f.code == Code::MEM001)
        || (f.code == Code::MEM006 && found.raised(Code::CG001))
}

/// The plan/v1 fields a plan and a pass-through fill alike (secrets masked); no GPUs, memory or
/// resolution.
fn plan_of(
    machine: &gather::Machine,
    verdict: v1::Verdict,
    args: &SglangArgs,
    changes: &EnvChanges,
    findings: &[Finding],
) -> Plan {
    Plan {
        schema: v1::SCHEMA,
        sglang_version: machine.selected.flags.version.clone(),
        sglang_version_source: machine.selected.source,
        verdict,
        program: machine.interpreter.path.to_string_lossy().into_owned(),
        sglang_args: secrets::mask_tokens_lossy(args, &args.tokens),
        sglang_parsed: args.is_ok().then(|| secrets::mask_values(&args.values)),
        env: changes.masked(),
        findings: findings.iter().map(v1::Finding::from).collect(),
        gpus: Vec::new(),
        memory: None,
        resolved: None,
    }
}

fn assemble(
    req: &Request,
    machine: gather::Machine,
    models: &gather::Models,
    line: Line,
    settled: fraction::Settled,
    found: Collector,
    resolved: Option<v1::Resolved>,
) -> Outcome {
    // Before the launcher's fraction: that is its answer for the line, not part of it.
    let line_key = settled.memory.as_ref().map(|_| {
        let version = machine.selected.flags.version.as_str();
        crate::observe::key::of(version, &line.args, &machine.topology, &line.gpus)
    });
    let args = settled.args;
    let parsed = settled.parsed;
    let env = line.env;
    let secrets = secrets::redactor(&args, &env);
    let all = found.finish(&req.settings, &secrets);
    let verdict = verdict::of(&all, req.settings.strict);
    let plan = Plan {
        gpus: line.gpus,
        memory: settled.memory.as_ref().map(v1::Memory::from),
        resolved,
        ..plan_of(&machine, verdict, &args, &line.changes, &all)
    };
    Outcome {
        findings: all,
        verdict,
        memory: settled.memory,
        plan,
        model: models
            .main(parsed.view(&args))
            .and_then(|m| m.facts.clone()),
        args,
        env,
        interpreter: machine.interpreter,
        topology: machine.topology,
        secrets,
        packages: machine.packages,
        version_from: req.sglang_version_from.clone(),
        line_key,
    }
}
