//! A server the launcher does not plan (not for an NVIDIA GPU): `check` and `plan` still read
//! the line with the release's own parser and judge what does not depend on the hardware
//! (spellings, the environment, SGLang's own argument checks), so a line SGLang would refuse
//! is still an error; nothing is fixed, since the drop-in passes the command through unchanged.

use super::collect::{Collector, Stage};
use super::fixpoint::Line;
use super::v1::Verdict;
use super::{Error, Fatal, Outcome, Request, findings, gather, verdict};
use crate::facts::Topology;
use crate::resolve::Context;
use crate::rules::{self, Code, Finding};
use crate::sglang::opt;
use crate::{facts, secrets, sglang};

/// Rule families whose truth does not depend on the accelerator.
const FAMILIES: &[&str] = &["FLAG", "ENV", "SRV"];

/// Model-shape rules that hold on every accelerator SGLang shards a model over (ROCm, NPU, XPU
/// build the same layers); SGLang's CPU engine pads the heads to the TP size instead. QUANT020
/// reads the accelerators themselves.
const ACCELERATOR_MODEL_RULES: &[Code] = &[Code::PAR001, Code::QUANT020];

/// The plan of a pass-through line: findings and a verdict, no GPUs, memory or changes.
pub(crate) fn build(req: &Request, why: &str) -> Result<Outcome, Fatal> {
    super::validate(req)?;
    let mut local = req.clone();
    local.gpus = Some(no_gpus(req));
    local.hub = false;
    let machine = gather::machine(&local).map_err(Error::into_fatal)?;
    let args = sglang::parse(machine.selected.flags, req.tokens.clone());
    let line = Line::new(args, req.env.clone(), req.env_changes.clone(), &machine);
    let on_cpu = runs_on_cpu(&line);
    let models = if on_cpu {
        gather::Models::none()
    } else {
        let hub = facts::hub::Settings::from_env(&req.env, false);
        gather::Models::gather(line.view(), &line.env, hub)
    };
    let ctx = Context::new(line.facts(&machine, &models));
    let mut found = Collector::default();
    found.add(Stage::Version, findings::version(&machine));
    found.add(Stage::Pipeline, [Finding::new(
        Code::TOP005,
        format!("{why}: the launcher does not plan this server; the drop-in passes the command to SGLang unchanged"),
    )]);
    found.add(
        Stage::Pipeline,
        findings::arguments(&line.args, &line.parsed, &machine),
    );
    // The catalogue's after the launcher's own, as a pass-through report lists them, judged
    // for this install as a plan's are.
    let evaluated = rules::evaluate(&ctx, &req.settings)
        .into_iter()
        .filter(|f| {
            FAMILIES.contains(&rules::rule(f.code).family())
                || (!on_cpu && ACCELERATOR_MODEL_RULES.contains(&f.code))
        })
        .collect();
    let judged = super::fixpoint::for_install(&ctx, &line, &machine, evaluated);
    found.add(Stage::Pipeline, judged);
    let secrets = secrets::redactor(&line.args, &line.env);
    let all = found.finish(&req.settings, &secrets);
    let verdict = match verdict::of(&all, req.settings.strict) {
        Verdict::Error => Verdict::Error,
        _ => Verdict::PassThrough,
    };
    let args = line.args;
    let plan = super::plan_of(&machine, verdict, &args, &line.changes, &all);
    Ok(Outcome {
        findings: all,
        verdict,
        memory: None,
        plan,
        model: None,
        args,
        env: line.env,
        interpreter: machine.interpreter,
        topology: machine.topology,
        secrets,
        packages: machine.packages,
        version_from: req.sglang_version_from.clone(),
        line_key: None,
    })
}

/// SGLang's CPU engine: `--device cpu`, or `SGLANG_USE_CPU_ENGINE=1` without a device.
fn runs_on_cpu(line: &Line) -> bool {
    match line.view().str(opt::DEVICE) {
        Some(d) => d == "cpu",
        None => line
            .env
            .get("SGLANG_USE_CPU_ENGINE")
            .is_some_and(|v| v.trim() == "1"),
    }
}

/// No GPUs to plan for, with the accelerators the host has: those its topology file lists, or
/// the ones this host's device nodes show.
fn no_gpus(req: &Request) -> Topology {
    let accelerators = match req.topology.as_deref() {
        Some(path) => Topology::load(path)
            .map(|t| t.accelerators)
            .unwrap_or_default(),
        None => facts::accelerators::listed(&facts::accelerators::other(std::path::Path::new("/"))),
    };
    Topology::without_gpus("pass-through", accelerators)
}
