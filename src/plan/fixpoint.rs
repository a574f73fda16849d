//! Rules to a fixpoint: apply every fix a round proposes, re-parse, re-check. Each round
//! resolves the server anew from the arguments it starts with; the GPUs are placed and the
//! models' facts derived again from them (a fix can change both), reading nothing.

use super::arguments::Parsed;
use super::fixes;
use super::gather::{Machine, Models};
use super::v1::EnvChanges;
use crate::facts::{self, Env};
use crate::resolve::{Context, Facts};
use crate::rules::{self, ArgEdit, Code, Finding, RuleSettings, Severity};
use crate::sglang::{SglangArgs, approx};

/// Most rounds of fixes before giving up: each round can only enable further fixes, and a
/// correct catalogue converges in one or two.
const MAX_FIX_ROUNDS: usize = 8;

/// The command line and environment as a round leaves them, with the GPUs they select.
#[derive(Clone)]
pub(crate) struct Line {
    pub(crate) args: SglangArgs,
    pub(crate) env: Env,
    pub(crate) changes: EnvChanges,
    pub(crate) gpus: Vec<u32>,
    /// Why no GPUs could be placed (TOP001), if so.
    pub(crate) gpu_problem: Option<String>,
    /// What argparse makes of `args`; kept in step by [`Line::set_args`].
    pub(crate) parsed: Parsed,
    /// Options a fix of this run set (rules' fixes, `--fit`): their values are the fix's.
    pub(crate) fixed: Vec<String>,
}

impl Line {
    pub(crate) fn new(args: SglangArgs, env: Env, changes: EnvChanges, machine: &Machine) -> Line {
        let mut line = Line {
            parsed: Parsed::of(&args, machine.neighbours.as_ref()),
            args,
            env,
            changes,
            gpus: Vec::new(),
            gpu_problem: None,
            fixed: Vec::new(),
        };
        line.place(machine);
        line
    }

    pub(crate) fn set_args(&mut self, args: SglangArgs, machine: &Machine) {
        self.parsed = Parsed::of(&args, machine.neighbours.as_ref());
        self.args = args;
    }

    /// What the checks read: the arguments, or the best-effort parse of a rejected line.
    pub(crate) fn view(&self) -> &SglangArgs {
        self.parsed.view(&self.args)
    }

    /// Records the options these edits set as a fix's.
    pub(crate) fn mark_fixed(&mut self, edits: &[ArgEdit]) {
        let new: Vec<String> = fixes::set_options(edits)
            .filter(|o| !self.fixed.iter().any(|f| f == o))
            .map(str::to_owned)
            .collect();
        self.fixed.extend(new);
    }

    /// The checks' and the planner's context for this line, `facts` its facts (or a variant).
    pub(crate) fn context<'a>(&self, facts: Facts<'a>) -> Context<'a> {
        Context::new(facts).fixed_by(&self.fixed)
    }

    /// The GPUs the server's ranks on this node will use, in SGLang's own layout.
    pub(crate) fn place(&mut self, machine: &Machine) {
        (self.gpus, self.gpu_problem) =
            match facts::gpus::placement(&machine.topology, &self.env, self.view()) {
                Ok(p) => (p.gpus(), None),
                Err(e) => (Vec::new(), Some(e.to_string())),
            };
    }

    /// The facts of this line, for evaluation (models read before, through `models`).
    pub(crate) fn facts<'a>(&'a self, machine: &'a Machine, models: &'a Models) -> Facts<'a> {
        Facts {
            version: machine.selected.flags.release(),
            args: self.view(),
            env: &self.env,
            topology: &machine.topology,
            gpus: &self.gpus,
            model: models.main(self.view()).and_then(|m| m.facts.as_ref()),
            draft: models.draft(self.view()),
            host: machine.host.as_ref(),
            packages: machine.packages.as_ref(),
        }
    }
}

/// What the fixpoint leaves: the fixed line and every rule finding, fixed ones first.
pub(crate) struct Fixed {
    pub(crate) line: Line,
    pub(crate) findings: Vec<Finding>,
}

/// Fixes already made, and the ones a `--config` file stands in the way of (summary → why).
#[derive(Default, Clone)]
struct Ledger {
    applied: Vec<String>,
    blocked: Vec<(String, String)>,
    /// Fixes this round's line may not take (summary → why); asked again each round.
    held: Vec<(String, String)>,
    fixed: Vec<Finding>,
}

impl Ledger {
    /// A fix not made yet that this round's line may take.
    fn is_new(&self, hit: &Finding) -> bool {
        hit.fix.as_ref().is_some_and(|f| {
            !self.applied.contains(&f.summary)
                && !self
                    .blocked
                    .iter()
                    .chain(&self.held)
                    .any(|b| b.0 == f.summary)
        })
    }

    fn apply(&mut self, line: &mut Line, hit: &Finding, machine: &Machine) {
        let Some(fix) = hit.fix.as_ref() else { return };
        match fixes::try_apply_args(&line.args, &fix.args) {
            Ok(a) => {
                line.set_args(a, machine);
                line.mark_fixed(&fix.args);
            }
            Err(b) => {
                self.blocked.push((fix.summary.clone(), b.to_string()));
                return;
            }
        }
        fixes::apply_env(&mut line.env, &mut line.changes, &fix.env);
        self.applied.push(fix.summary.clone());
        self.fixed.push(hit.clone().fixed(true));
    }

    /// The last round's findings that were not fixed, with why a blocked fix was not made.
    fn unfixed(&self, hits: &[Finding]) -> Vec<Finding> {
        hits.iter()
            .filter(|h| {
                !h.fix
                    .as_ref()
                    .is_some_and(|f| self.applied.contains(&f.summary))
            })
            .map(|h| {
                let mut f = h.clone();
                let why = h.fix.as_ref().and_then(|fix| {
                    self.blocked
                        .iter()
                        .chain(&self.held)
                        .find(|b| b.0 == fix.summary)
                });
                if let Some((_, why)) = why {
                    f.message = format!("{} ({why})", f.message);
                }
                f
            })
            .collect()
    }
}

/// One round's checks on a line (on its best-effort parse when SGLang rejects it).
fn check(line: &Line, machine: &Machine, models: &Models, settings: &RuleSettings) -> Vec<Finding> {
    let ctx = line.context(line.facts(machine, models));
    for_install(&ctx, line, machine, rules::evaluate(&ctx, settings))
}

/// The catalogue's findings as they stand for this install: an install that is not an embedded
/// release is judged only as far as the data reaches (the plan's and the pass-through's alike).
pub(crate) fn for_install(
    ctx: &Context,
    line: &Line,
    machine: &Machine,
    mut hits: Vec<Finding>,
) -> Vec<Finding> {
    if machine.neighbours.is_some() || machine.selected.modified.is_some() {
        // The model registry is known for the embedded releases only: a release this build
        // lacks, or a checkout, dev image or fork, may have classes the data does not.
        hits.retain(|h| !matches!(h.code, Code::MODEL001 | Code::MODEL002));
        // Likewise the architectures a backend is validated for: such an install may list more.
        hits = hits.into_iter().map(allow_list_unproven).collect();
    }
    if machine.selected.may_run_later_code() {
        hits = hits.into_iter().map(|h| unproven_later(ctx, h)).collect();
    }
    if machine.neighbours.is_some() {
        // Approximate mode: FLAG004–006 judge spellings by a release that is not the user's
        // (the argument findings judge them by the releases around it), and FLAG001 may not
        // call an option wrong that a neighbouring release has.
        hits.retain(|h| {
            let spelling = matches!(
                h.code,
                Code::FLAG004 | Code::FLAG005 | Code::FLAG006 | Code::FLAG007
            );
            let tolerated_rename = h.code == Code::FLAG001
                && renames_from(h).is_some_and(|o| line.parsed.tolerates(o));
            !(spelling || tolerated_rename)
        });
    }
    hits
}

/// An install that may run code newer than the release its version names (a source checkout, a
/// dev image, a fork, a build of main between releases): an error a later release no longer
/// reports on these facts (its rule's versions end, or its check stays quiet there) is not proven
/// for it, so it warns instead and says why; `--deny` still makes it an error.
pub(crate) fn unproven_later(ctx: &Context, mut hit: Finding) -> Finding {
    if hit.severity != Severity::Error {
        return hit;
    }
    if let Some(v) = rules::quiet_later(ctx, hit.code) {
        hit.severity = Severity::Warning;
        let named =
            crate::sglang::release::KNOWN_VERSIONS[crate::sglang::release::nearest(ctx.version)];
        hit.message.push_str(&format!(
            " (not proven for this install, so a warning: it is not the {named} release, and SGLang {v} no longer fails this way)"
        ));
    }
    hit
}

/// An error that a model is missing from a release's own list of validated architectures
/// (EP027) warns on an install whose list the data does not know.
fn allow_list_unproven(mut hit: Finding) -> Finding {
    if hit.code == Code::EP027 && hit.severity == Severity::Error {
        hit.severity = Severity::Warning;
        hit.message.push_str(
            " (not proven for this install, so a warning: a checkout, dev image or fork may validate architectures the release's list lacks)",
        );
    }
    hit
}

fn renames_from(hit: &Finding) -> Option<&str> {
    hit.fix.as_ref()?.args.iter().find_map(|e| match e {
        ArgEdit::Rename { from, .. } => Some(from.as_str()),
        _ => None,
    })
}

/// Why this line may not take this fix now, if so. A line SGLang rejects takes only the
/// argument-level repairs (FLAG): the rest of it is a best-effort reading, not the user's
/// intent to build on. In approximate mode no FLAG repair is made (each is one release's
/// spelling for another's), and any other fix may only name options every neighbouring
/// release has.
fn held(line: &Line, hit: &Finding, machine: &Machine) -> Option<String> {
    let fix = hit.fix.as_ref()?;
    let flag = rules::rule(hit.code).family() == "FLAG";
    if !line.parsed.accepted() && !flag {
        return Some("not fixed: SGLang rejects the arguments (ARG001); fix those first".into());
    }
    if let Some(why) = later_reads(fix, machine) {
        return Some(why);
    }
    let neighbours = machine.neighbours.as_deref()?;
    let requested = &machine.selected.requested;
    let renames = fix.args.iter().any(|e| matches!(e, ArgEdit::Rename { .. }));
    if flag || renames {
        return Some(format!(
            "not fixed: the check for SGLang {requested} is approximate, and its spelling is not known"
        ));
    }
    let odd = fix.args.iter().find_map(|e| {
        let option = match e {
            ArgEdit::Remove { option } | ArgEdit::Set { option, .. } => option,
            ArgEdit::AddFlag { option } | ArgEdit::Rename { to: option, .. } => option,
            ArgEdit::NamePositional { option } => option,
            ArgEdit::Drop { written } => written,
            // An option no release's parser has: dropping it names nothing.
            ArgEdit::DropOption { .. } => return None,
        };
        (!approx::all_have(neighbours, option)).then_some(option)
    })?;
    Some(format!(
        "not fixed: the check for SGLang {requested} is approximate, and {odd} is not in every \
         embedded release around it"
    ))
}

/// An install that may run code from after its release, whose own environment registry was not
/// read: a variable a later release reads may be this install's too, so it is not unset.
fn later_reads(fix: &crate::rules::Fix, machine: &Machine) -> Option<String> {
    use crate::sglang::release::{KNOWN_VERSIONS, cmp, nearest};
    let s = &machine.selected;
    let read_own = s.modified.is_some() && s.extract_error.is_none();
    if !s.may_run_later_code() || read_own {
        return None;
    }
    let named = KNOWN_VERSIONS[nearest(s.flags.release())];
    fix.env.iter().find_map(|e| {
        let crate::rules::EnvEdit::Unset { name } = e else {
            return None;
        };
        let later = crate::sglang::envs::releases_knowing(name)
            .into_iter()
            .find(|v| cmp(v, named).is_gt())?;
        Some(format!(
            "not fixed: this install is not the {named} release, and SGLang {later} reads {name}"
        ))
    })
}

pub(crate) fn run(
    mut line: Line,
    machine: &Machine,
    models: &mut Models,
    settings: &RuleSettings,
) -> Fixed {
    let mut ledger = Ledger::default();
    let mut rounds = 0;
    // The line and ledger before the last round's fixes, and the fixes it made.
    let mut before: Option<(Unfixed, Ledger, Vec<String>)> = None;
    loop {
        line.place(machine);
        models.derive_for(line.view());
        let hits = check(&line, machine, models, settings);
        rounds += 1;
        if let Some((l, g, made)) = before.take() {
            let stale = ineffective(&hits, &made);
            if !stale.is_empty() {
                // Undo the round and make it again without the fixes that left their finding.
                l.restore(&mut line, machine);
                ledger = g;
                ledger.blocked.extend(stale);
                continue;
            }
        }
        ledger.held = hits
            .iter()
            .filter_map(|h| Some((h.fix.as_ref()?.summary.clone(), held(&line, h, machine)?)))
            .collect();
        let fixable: Vec<&Finding> = hits.iter().filter(|h| ledger.is_new(h)).collect();
        if fixable.is_empty() || rounds > MAX_FIX_ROUNDS {
            let mut findings = std::mem::take(&mut ledger.fixed);
            findings.extend(ledger.unfixed(&hits));
            return Fixed { line, findings };
        }
        let (state, kept) = (Unfixed::of(&line), ledger.clone());
        for hit in fixable {
            ledger.apply(&mut line, hit, machine);
        }
        // Only the fixes made: one a `--config` file stands in the way of is reported as such.
        let made = ledger.applied[kept.applied.len()..].to_vec();
        before = Some((state, kept, made));
    }
}

/// What a round's fixes change on a line, kept to undo them (the parse is redone on undo, which
/// is rare, rather than copied every round).
struct Unfixed {
    args: SglangArgs,
    env: Env,
    changes: EnvChanges,
    fixed: Vec<String>,
}

impl Unfixed {
    fn of(line: &Line) -> Unfixed {
        Unfixed {
            args: line.args.clone(),
            env: line.env.clone(),
            changes: line.changes.clone(),
            fixed: line.fixed.clone(),
        }
    }

    fn restore(self, line: &mut Line, machine: &Machine) {
        line.set_args(self.args, machine);
        (line.env, line.changes, line.fixed) = (self.env, self.changes, self.fixed);
    }
}

/// The fixes `made` whose own finding the fixed line still raises, unchanged: SGLang would
/// refuse it just the same (a model that pins the option the fix sets), so the fix is not made.
fn ineffective(hits: &[Finding], made: &[String]) -> Vec<(String, String)> {
    hits.iter()
        .filter_map(|h| h.fix.as_ref())
        .filter(|f| made.contains(&f.summary))
        .map(|f| {
            let why = format!(
                "not fixed: with `{}` made, the line still fails the same way",
                f.summary
            );
            (f.summary.clone(), why)
        })
        .collect()
}
