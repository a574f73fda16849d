//! From invocation to plan: parse, gather facts, run the rules, apply fixes to a fixpoint,
//! plan memory, and produce the plan/v1 object.

pub mod fixes;
pub mod json;
pub mod memory;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::exit;
use crate::facts::{self, Env, Topology};
use crate::rules::{self, Context, Hit, RuleSettings, Severity};
use crate::secrets;
use crate::sglang::{self, SglangArgs, version};

use json::{EnvChanges, Finding, Plan, Verdict};

/// What the invocation asks the pipeline for. Plain data: the invocation layer fills it from
/// the command line, `SGLANG_LAUNCH_*` and (later) profiles.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// SGLang's tokens, exactly as given.
    pub tokens: Vec<OsString>,
    pub topology: Option<PathBuf>,
    pub sglang_version: Option<String>,
    pub python: Option<PathBuf>,
    pub nvml_lib: Option<PathBuf>,
    pub settings: RuleSettings,
    pub no_fix: bool,
    /// The environment the server would inherit.
    pub env: Env,
}

/// A problem with the launcher's own input: nothing is planned or launched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Fatal {
    pub code: i32,
    pub message: String,
}

impl Fatal {
    pub fn usage(message: impl Into<String>) -> Self {
        Fatal {
            code: exit::USAGE,
            message: message.into(),
        }
    }
}

/// The interpreter that would run SGLang.
#[derive(Debug, Clone)]
pub struct Interpreter {
    /// Absolute path when found, else what the user asked for.
    pub path: PathBuf,
    pub found: bool,
}

/// Everything the report and exec layers need.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub plan: Plan,
    /// Final arguments (unmasked, byte-exact) and environment for exec.
    pub args: SglangArgs,
    pub env: Env,
    pub interpreter: Interpreter,
    pub topology: Topology,
    /// The model as the planner saw it (None when unknown).
    pub model: Option<facts::model::ModelFacts>,
    /// Secret values present, for scrubbing free text in reports.
    pub secrets: Vec<String>,
    /// The interpreter's installed packages (None: offline planning or no interpreter).
    pub packages: Option<facts::Packages>,
}

impl Outcome {
    /// Exit code of `check`/`plan` for this verdict.
    pub fn exit_code(&self) -> i32 {
        match self.plan.verdict {
            Verdict::Error => exit::BLOCKED,
            _ => exit::OK,
        }
    }
}

/// Resolves `--python` (a path, or a name looked up on PATH); default `python3` on PATH.
pub fn resolve_interpreter(python: Option<&Path>) -> Interpreter {
    let wanted = python.unwrap_or(Path::new("python3"));
    if wanted.components().count() > 1 {
        return Interpreter {
            path: wanted.to_path_buf(),
            found: wanted.is_file(),
        };
    }
    match which::which(wanted) {
        Ok(path) => Interpreter { path, found: true },
        Err(_) => Interpreter {
            path: wanted.to_path_buf(),
            found: false,
        },
    }
}

/// Reads the GPUs: the topology file when given, else NVML.
pub fn load_topology(file: Option<&Path>, nvml_lib: Option<&Path>) -> Result<Topology, Fatal> {
    match file {
        Some(path) => Topology::load(path).map_err(|e| Fatal::usage(e.to_string())),
        None => {
            let lib = nvml_lib
                .map(Path::to_path_buf)
                .or_else(facts::nvml::default_lib_path);
            facts::nvml::detect(lib.as_deref()).map_err(|e| Fatal::usage(e.to_string()))
        }
    }
}

/// Most rounds of fixes before giving up: each round can only enable further fixes, and a
/// correct catalogue converges in one or two.
const MAX_FIX_ROUNDS: usize = 8;

pub fn build(req: &Request) -> Result<Outcome, Fatal> {
    req.settings
        .validate()
        .map_err(|e| Fatal::usage(e.to_string()))?;
    // Empty means unset (as an empty SGLANG_LAUNCH_SGLANG_VERSION= in a unit file does).
    if let Some(v) = req
        .sglang_version
        .as_deref()
        .filter(|v| !v.trim().is_empty())
        && !version::looks_like_version(v)
    {
        return Err(Fatal::usage(format!(
            "--sglang-version {v:?} is not a version number (like 0.5.23); embedded flag sets: {}",
            sglang::flagset::KNOWN_VERSIONS.join(", ")
        )));
    }
    let interpreter = resolve_interpreter(req.python.as_deref());
    let selected = version::select(
        req.sglang_version.as_deref(),
        interpreter.found.then_some(interpreter.path.as_path()),
    );
    // Installed packages describe the local machine: read once, and not at all when planning
    // offline for another machine (`--topology` with `--sglang-version`), nor for an
    // interpreter that does not exist. `None` keeps the PKG rules silent.
    let offline = req.topology.is_some() && req.sglang_version.is_some();
    let packages = (!offline && interpreter.found)
        .then(|| facts::Packages::detect(Some(interpreter.path.as_path())).with_toolkit(&req.env));
    let topology = load_topology(req.topology.as_deref(), req.nvml_lib.as_deref())?;

    let mut findings: Vec<Finding> = Vec::new();
    let settings = &req.settings;
    let pipeline = |findings: &mut Vec<Finding>, code: &str, message: String| {
        findings.extend(pipeline_finding(settings, code, message));
    };
    if !selected.detected() {
        pipeline(
            &mut findings,
            "VER002",
            format!(
                "no installed SGLang found for {} and no --sglang-version; using the newest flag set, {}",
                interpreter.path.display(),
                selected.flags.version
            ),
        );
    } else if selected.source == version::VersionSource::Fallback {
        let which = if version::cmp(&selected.requested, &selected.flags.version).is_lt() {
            "it is older than every embedded one; using the oldest"
        } else {
            "using the nearest older one"
        };
        pipeline(
            &mut findings,
            "VER001",
            format!(
                "SGLang {} has no embedded flag set; {which}, {}",
                selected.requested, selected.flags.version
            ),
        );
    }
    let flags = selected.flags;
    let mut args = sglang::parse(flags, req.tokens.clone());
    let mut env = req.env.clone();
    // Host facts (/dev/shm, container) describe this machine: only when planning for it.
    let host = req.topology.is_none().then(facts::host::HostFacts::probe);
    let mut changes = EnvChanges::default();

    // Rules to a fixpoint: apply every fix a round proposes, re-parse, re-check. Under
    // --no-fix the same loop runs on a scratch copy, so the report shows everything the fixed
    // line would reveal too, and then the user's own line and environment are restored.
    let original_args = args.clone();
    let mut applied: Vec<String> = Vec::new();
    // Fixes the config file stands in the way of (summary → why), reported unfixed.
    let mut blocked: Vec<(String, String)> = Vec::new();
    let mut rule_hits: Vec<Hit>;
    let mut rounds = 0;
    // GPUs and model follow the arguments: a fix (say, a renamed flag that made the line
    // unparsable) can change what they are, so they are re-derived each round.
    let mut gpus: Vec<u32>;
    let mut gpu_problem: Option<String>;
    let mut model: Option<facts::model::ModelLoad> = None;
    let mut model_path: Option<String> = None;
    loop {
        (gpus, gpu_problem) = select_gpus(&topology, &env, &args);
        let path = args.str("--model-path").map(str::to_owned);
        if path != model_path {
            model = path.as_deref().map(|p| facts::model::load(p, &env, &args));
            model_path = path;
        }
        let ctx = Context {
            version: flags.version.as_str(),
            args: &args,
            env: &env,
            topology: &topology,
            gpus: &gpus,
            model: model.as_ref().and_then(|m| m.facts.as_ref()),
            host: host.as_ref(),
            packages: packages.as_ref(),
        };
        rule_hits = rules::evaluate(&ctx, &req.settings);
        if !args.is_ok() {
            // Facts read from a command line argparse rejects are wrong (every option reads as
            // its default): only the argument-level rules, which can repair it, may speak.
            rule_hits.retain(|h| rules::lookup(h.code).is_ok_and(|r| r.family() == "FLAG"));
        }
        rounds += 1;
        let fixable: Vec<&Hit> = rule_hits
            .iter()
            .filter(|h| {
                h.fix.as_ref().is_some_and(|f| {
                    !applied.contains(&f.summary) && !blocked.iter().any(|b| b.0 == f.summary)
                })
            })
            .collect();
        if fixable.is_empty() || rounds > MAX_FIX_ROUNDS {
            break;
        }
        for hit in fixable {
            let fix = hit.fix.as_ref().expect("filtered on fix");
            match fixes::try_apply_args(&args, &fix.args) {
                Ok(a) => args = a,
                Err(b) => {
                    blocked.push((fix.summary.clone(), b.to_string()));
                    continue;
                }
            }
            fixes::apply_env(&mut env, &mut changes, &fix.env);
            applied.push(fix.summary.clone());
            findings.push(finding_from_hit(hit, true));
        }
    }
    findings.extend(
        rule_hits
            .iter()
            .filter(|h| !h.fix.as_ref().is_some_and(|f| applied.contains(&f.summary)))
            .map(|h| {
                let mut f = finding_from_hit(h, false);
                let why = h
                    .fix
                    .as_ref()
                    .and_then(|fix| blocked.iter().find(|b| b.0 == fix.summary));
                if let Some((_, why)) = why {
                    f.message = format!("{} ({why})", f.message);
                }
                f
            }),
    );

    if req.no_fix {
        for f in findings.iter_mut().filter(|f| f.fixed) {
            f.fixed = false;
            f.fix = None;
        }
        args = original_args;
        env = req.env.clone();
        changes = EnvChanges::default();
        // A line argparse rejects selects nothing: keep the repaired line's view then.
        if args.is_ok() {
            (gpus, gpu_problem) = select_gpus(&topology, &env, &args);
            let path = args.str("--model-path").map(str::to_owned);
            if path != model_path {
                model = path.as_deref().map(|p| facts::model::load(p, &env, &args));
            }
        }
    }
    if let Some(problem) = gpu_problem {
        pipeline(&mut findings, "TOP001", problem);
    }
    // Memory, on the final arguments.
    if let Some(problem) = model.as_ref().and_then(|m| m.problem.as_ref()) {
        let code = match problem {
            facts::model::ModelProblem::Unavailable(_) => "MEM001",
            facts::model::ModelProblem::Invalid(_) => "MEM002",
        };
        pipeline(&mut findings, code, problem.to_string());
    }
    let model_facts = model.as_ref().and_then(|m| m.facts.as_ref());
    let plan_memory = |args: &SglangArgs| {
        memory::plan(&memory::MemoryInput {
            version: flags.version.as_str(),
            args,
            env: &env,
            topology: &topology,
            gpus: &gpus,
            model: model_facts,
        })
    };
    let outcome = plan_memory(&args);
    // A fraction outside (0, 1) leaves nothing to plan: say so instead of printing nonsense.
    let bad_fraction = args
        .is_set("--mem-fraction-static")
        .then(|| args.float("--mem-fraction-static"))
        .flatten()
        .filter(|f| !(f.is_finite() && *f > 0.0 && *f < 1.0));
    if let Some(f) = bad_fraction {
        let f = if f.is_nan() {
            "nan".to_owned()
        } else if f.abs() >= 1e4 {
            format!("{f:e}")
        } else {
            f.to_string()
        };
        pipeline(
            &mut findings,
            "MEM008",
            format!(
                "--mem-fraction-static {f} is not a fraction of GPU memory: SGLang needs a value between 0 \
                 and 1 (its own default here is about 0.8); leave it out to get the planned value"
            ),
        );
    }
    // No memory plan for arguments SGLang would reject (ARG001 says why) or an impossible fraction.
    // `--help` makes SGLang print and exit: there is no server to plan for.
    let (mut memory, mut memory_hits) = if args.is_ok() && !args.help && bad_fraction.is_none() {
        (outcome.memory, outcome.hits)
    } else {
        (None, Vec::new())
    };
    if model_facts.is_none() {
        // Without model facts our activation estimate is a stand-in: not enough to call the
        // user's (or SGLang's) fraction too high.
        memory_hits.retain(|h| h.code != "MEM003");
    }
    if let Some(m) = memory
        .as_ref()
        .filter(|_| !args.is_set("--mem-fraction-static"))
    {
        let default = m.sglang_default_mem_fraction_static;
        // The value the server will really get: ours only when we know the model and may
        // change the command line; otherwise SGLang keeps its own default.
        let chosen = match outcome.planned_mem_fraction_static {
            Some(p) if model_facts.is_some() && !req.no_fix => Some(floor_fraction(p)),
            _ => default,
        };
        if let Some(v) = chosen {
            let with_value = fixes::apply_args(
                &args,
                &[rules::ArgEdit::Set {
                    option: "--mem-fraction-static".into(),
                    value: format_fraction(v),
                }],
            );
            // The table describes the server that will run: recompute at exactly that value.
            let again = plan_memory(&with_value);
            if let Some(mut m) = again.memory {
                m.mem_fraction_static_source = json::MfsSource::Planned;
                memory = Some(m);
            }
            // Report only, but the risk stays visible: SGLang's default judged like a user's.
            if req.no_fix && model_facts.is_some() {
                memory_hits.extend(again.hits.into_iter().filter(|h| h.code == "MEM003").map(
                    |mut h| {
                        h.message = format!("{} (SGLang's default, kept by --no-fix)", h.message);
                        h
                    },
                ));
            }
            let same_as_default = default.is_some_and(|d| (d - v).abs() < 0.0005);
            if model_facts.is_some() && !req.no_fix && !same_as_default {
                args = with_value;
            }
        }
    }
    // (A server that does not fit at all is MEM005's.)
    if let (Some(m), Some(ctx_len)) = (
        memory.as_ref().filter(|m| m.fits != Some(false)),
        model_facts.and_then(|f| f.context_length),
    ) && let Some(tokens) = m.kv_cache_tokens.filter(|&t| t < ctx_len)
    {
        pipeline(
            &mut findings,
            "MEM007",
            format!(
                "the KV cache holds about {tokens} tokens, less than one request at the context length \
                 {ctx_len}; shorten --context-length, use --kv-cache-dtype fp8_e5m2, a larger --tp, or an FP8 / \
                 4-bit checkpoint"
            ),
        );
    }
    // The loader's MEM001/MEM002 name the path and the problem; the planner's generic
    // "model unavailable" would only repeat it.
    let model_reported = model.as_ref().is_some_and(|m| m.problem.is_some());
    // CG001 already says the CUDA-graph batch eats KV cache; MEM006 would say it again.
    let graphs_reported = findings.iter().any(|f| f.code == "CG001");
    for hit in memory_hits.iter().filter(|h| {
        let repeats =
            (model_reported && h.code == "MEM001") || (graphs_reported && h.code == "MEM006");
        !repeats
    }) {
        pipeline(&mut findings, hit.code, hit.message.clone());
    }
    for err in &args.errors {
        let hint = match err.suggestions.as_slice() {
            [] => String::new(),
            [one] => format!("; did you mean {one}?"),
            many => format!("; did you mean one of {}?", many.join(", ")),
        };
        pipeline(
            &mut findings,
            "ARG001",
            format!("{}{hint}{}", err.message, config_context(&args, err)),
        );
    }

    let secrets = secrets::secret_values(&args, &env);
    for f in &mut findings {
        f.message = secrets::scrub(&f.message, &secrets);
    }
    let verdict = verdict(&findings, req.settings.strict);
    let plan = Plan {
        schema: json::SCHEMA,
        sglang_version: flags.version.clone(),
        sglang_version_source: selected.source,
        verdict,
        program: interpreter.path.to_string_lossy().into_owned(),
        sglang_args: secrets::mask_tokens(&args, &args.tokens),
        sglang_parsed: args.is_ok().then(|| secrets::mask_values(&args.values)),
        env: EnvChanges {
            set: changes
                .set
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        if secrets::is_secret_env(k) {
                            secrets::MASK.to_owned()
                        } else {
                            v.clone()
                        },
                    )
                })
                .collect(),
            unset: changes.unset.clone(),
        },
        findings,
        gpus,
        memory,
    };
    Ok(Outcome {
        plan,
        args,
        env,
        interpreter,
        topology,
        model: model.and_then(|m| m.facts),
        secrets,
        packages,
    })
}

/// Where a `--config` file is involved in an argument error, says so: SGLang's own messages
/// for a file it cannot use do not always name it, and options the file adds are not on the
/// command line the user sees. Never quotes the file's values (they may be secrets).
fn config_context(args: &SglangArgs, err: &sglang::ArgError) -> String {
    if let Some(c) = &args.config {
        return format!(" (the arguments include those from --config {})", c.file);
    }
    let strs: Vec<String> = args
        .tokens
        .iter()
        .map(|t| t.to_string_lossy().into_owned())
        .collect();
    match sglang::config::locate(args.flags, &strs) {
        Ok(Some((_, file))) if !err.message.contains(&file) => {
            format!(" (reading --config {file})")
        }
        _ => String::new(),
    }
}

/// Rounded down to three decimals: rounding must never raise a planned fraction.
fn floor_fraction(v: f64) -> f64 {
    (v * 1000.0).floor() / 1000.0
}

/// `0.83` rather than `0.8300000001`.
fn format_fraction(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The GPUs the server's ranks on this node will use, in SGLang's own layout (TP, PP and DP
/// replicas over `CUDA_VISIBLE_DEVICES`, `--base-gpu-id`, `--gpu-id-step`).
fn select_gpus(topology: &Topology, env: &Env, args: &SglangArgs) -> (Vec<u32>, Option<String>) {
    match facts::gpus::placement(topology, env, args) {
        Ok(p) => (p.gpus(), None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    }
}

fn finding_from_hit(hit: &Hit, fixed: bool) -> Finding {
    Finding {
        code: hit.code.to_owned(),
        name: hit.name.to_owned(),
        severity: hit.severity,
        message: hit.message.clone(),
        fixed,
        fix: if fixed {
            hit.fix.as_ref().map(|f| f.summary.clone())
        } else {
            None
        },
    }
}

/// A finding the pipeline itself raises, with the catalogue's name and the user's allow/deny.
fn pipeline_finding(settings: &RuleSettings, code: &str, message: String) -> Option<Finding> {
    rules::emit(code, message, None, settings).map(|h| finding_from_hit(&h, false))
}

fn verdict(findings: &[Finding], strict: bool) -> Verdict {
    // A fixed finding no longer applies to the command that will run.
    findings
        .iter()
        .filter(|f| !f.fixed)
        .fold(Verdict::Ok, |v, f| {
            let this = match f.severity {
                Severity::Error => Verdict::Error,
                Severity::Warning if strict => Verdict::Error,
                Severity::Warning => Verdict::Warning,
                Severity::Info => Verdict::Ok,
            };
            v.max(this)
        })
}
