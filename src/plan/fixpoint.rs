//! Rules to a fixpoint: apply every fix a round proposes, re-parse, re-check. Each round
//! resolves the server anew from the arguments it starts with; GPUs and models follow the
//! arguments (a fix can change what they are).

use super::gather::{Machine, Models};
use super::json::{EnvChanges, Finding};
use super::{findings, fixes};
use crate::facts::{self, Env};
use crate::resolve::{Context, Facts};
use crate::rules::{self, Hit, RuleSettings};
use crate::sglang::SglangArgs;

/// Most rounds of fixes before giving up: each round can only enable further fixes, and a
/// correct catalogue converges in one or two.
const MAX_FIX_ROUNDS: usize = 8;

/// The command line and environment as a round leaves them, with the GPUs they select.
#[derive(Clone)]
pub struct Line {
    pub args: SglangArgs,
    pub env: Env,
    pub changes: EnvChanges,
    pub gpus: Vec<u32>,
    /// Why no GPUs could be placed (TOP001), if so.
    pub gpu_problem: Option<String>,
}

impl Line {
    pub fn new(args: SglangArgs, env: Env, machine: &Machine) -> Line {
        let mut line = Line {
            args,
            env,
            changes: EnvChanges::default(),
            gpus: Vec::new(),
            gpu_problem: None,
        };
        line.place(machine);
        line
    }

    /// The GPUs the server's ranks on this node will use, in SGLang's own layout.
    pub fn place(&mut self, machine: &Machine) {
        (self.gpus, self.gpu_problem) =
            match facts::gpus::placement(&machine.topology, &self.env, &self.args) {
                Ok(p) => (p.gpus(), None),
                Err(e) => (Vec::new(), Some(e.to_string())),
            };
    }

    /// The facts of this line, for evaluation (models read before, through `models`).
    pub fn facts<'a>(&'a self, machine: &'a Machine, models: &'a Models) -> Facts<'a> {
        Facts {
            version: machine.selected.flags.version.as_str(),
            args: &self.args,
            env: &self.env,
            topology: &machine.topology,
            gpus: &self.gpus,
            model: models.main(&self.args).and_then(|m| m.facts.as_ref()),
            draft: models.draft(&self.args),
            host: machine.host.as_ref(),
            packages: machine.packages.as_ref(),
        }
    }
}

/// What the fixpoint leaves: the fixed line and every rule finding, fixed ones first.
pub struct Fixed {
    pub line: Line,
    pub findings: Vec<Finding>,
}

/// Fixes already made, and the ones a `--config` file stands in the way of (summary → why).
#[derive(Default)]
struct Ledger {
    applied: Vec<String>,
    blocked: Vec<(String, String)>,
    fixed: Vec<Finding>,
}

impl Ledger {
    fn is_new(&self, hit: &Hit) -> bool {
        hit.fix.as_ref().is_some_and(|f| {
            !self.applied.contains(&f.summary) && !self.blocked.iter().any(|b| b.0 == f.summary)
        })
    }

    fn apply(&mut self, line: &mut Line, hit: &Hit) {
        let Some(fix) = hit.fix.as_ref() else { return };
        match fixes::try_apply_args(&line.args, &fix.args) {
            Ok(a) => line.args = a,
            Err(b) => {
                self.blocked.push((fix.summary.clone(), b.to_string()));
                return;
            }
        }
        fixes::apply_env(&mut line.env, &mut line.changes, &fix.env);
        self.applied.push(fix.summary.clone());
        self.fixed.push(findings::from_hit(hit, true));
    }

    /// The last round's findings that were not fixed, with why a blocked fix was not made.
    fn unfixed(&self, hits: &[Hit]) -> Vec<Finding> {
        hits.iter()
            .filter(|h| {
                !h.fix
                    .as_ref()
                    .is_some_and(|f| self.applied.contains(&f.summary))
            })
            .map(|h| {
                let mut f = findings::from_hit(h, false);
                let why = h
                    .fix
                    .as_ref()
                    .and_then(|fix| self.blocked.iter().find(|b| b.0 == fix.summary));
                if let Some((_, why)) = why {
                    f.message = format!("{} ({why})", f.message);
                }
                f
            })
            .collect()
    }
}

/// One round's checks on a line.
fn check(line: &Line, machine: &Machine, models: &Models, settings: &RuleSettings) -> Vec<Hit> {
    let ctx = Context::new(line.facts(machine, models));
    let mut hits = rules::evaluate(&ctx, settings);
    if !line.args.is_ok() {
        // Facts read from a command line argparse rejects are wrong (every option reads as
        // its default): only the argument-level rules, which can repair it, may speak.
        hits.retain(|h| rules::rule(h.code).family() == "FLAG");
    }
    hits
}

pub fn run(
    mut line: Line,
    machine: &Machine,
    models: &mut Models,
    settings: &RuleSettings,
) -> Fixed {
    let mut ledger = Ledger::default();
    let mut rounds = 0;
    loop {
        line.place(machine);
        models.read_for(&line.args, &line.env);
        let hits = check(&line, machine, models, settings);
        rounds += 1;
        let fixable: Vec<&Hit> = hits.iter().filter(|h| ledger.is_new(h)).collect();
        if fixable.is_empty() || rounds > MAX_FIX_ROUNDS {
            let mut findings = std::mem::take(&mut ledger.fixed);
            findings.extend(ledger.unfixed(&hits));
            return Fixed { line, findings };
        }
        for hit in fixable {
            ledger.apply(&mut line, hit);
        }
    }
}
