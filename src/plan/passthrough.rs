//! A server the launcher does not plan (not for an NVIDIA GPU): `check` and `plan` still read
//! the line with the release's own parser and judge what does not depend on the hardware
//! (spellings, the environment, SGLang's own argument checks), so a line SGLang would refuse
//! is still an error; nothing is fixed, since the drop-in passes the command through unchanged.

use super::fixpoint::Line;
use super::json::{self, Plan, Verdict};
use super::{Error, Fatal, Outcome, Request, findings, gather};
use crate::facts::Topology;
use crate::resolve::Context;
use crate::rules::{self, Code, Hit};
use crate::{secrets, sglang};

/// Rule families whose truth does not depend on the accelerator.
const FAMILIES: &[&str] = &["FLAG", "ENV", "SRV"];

/// The plan of a pass-through line: findings and a verdict, no GPUs, memory or changes.
pub fn build(req: &Request, why: &str) -> Result<Outcome, Fatal> {
    super::validate(req)?;
    let mut local = req.clone();
    local.gpus = Some(no_gpus());
    local.hub = false;
    let machine = gather::machine(&local).map_err(Error::into_fatal)?;
    let models = gather::Models::none();
    let args = sglang::parse(machine.selected.flags, req.tokens.clone());
    let line = Line::new(args, req.env.clone(), req.env_changes.clone(), &machine);
    let ctx = Context::new(line.facts(&machine, &models));
    let mut hits: Vec<Hit> = findings::version(&machine).into_iter().collect();
    hits.push(Hit::new(
        Code::TOP005,
        format!("{why}: the launcher does not plan this server; the drop-in passes the command to SGLang unchanged"),
    ));
    hits.extend(findings::arguments(&line.args, &line.parsed, &machine));
    let mut all: Vec<json::Finding> = req
        .settings
        .apply(hits)
        .iter()
        .map(|h| findings::from_hit(h, false))
        .collect();
    all.extend(
        rules::evaluate(&ctx, &req.settings)
            .iter()
            .filter(|h| FAMILIES.contains(&rules::rule(h.code).family()))
            .map(|h| findings::from_hit(h, false)),
    );
    let secrets = secrets::redactor(&line.args, &line.env);
    for f in &mut all {
        f.message = secrets.redact(&f.message);
    }
    let verdict = match findings::verdict(&all, req.settings.strict) {
        Verdict::Error => Verdict::Error,
        _ => Verdict::PassThrough,
    };
    let args = line.args;
    let plan = Plan {
        schema: json::SCHEMA,
        sglang_version: machine.selected.flags.version.clone(),
        sglang_version_source: machine.selected.source,
        verdict,
        program: machine.interpreter.path.to_string_lossy().into_owned(),
        sglang_args: secrets::mask_tokens_lossy(&args, &args.tokens),
        sglang_parsed: args.is_ok().then(|| secrets::mask_values(&args.values)),
        env: line.changes.masked(),
        findings: all,
        gpus: Vec::new(),
        memory: None,
        resolved: None,
    };
    Ok(Outcome {
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

fn no_gpus() -> Topology {
    Topology::without_gpus("pass-through", Vec::new())
}
