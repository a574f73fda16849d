//! Every finding of one plan, from wherever it is raised (the flag set, the scheduler, the
//! rules' fixpoint, `--fit`, the pipeline and the memory planner), in report order. The
//! user's `--allow`/`--deny` and the secret redaction are applied here, once, to all of them.

use crate::out::Redactor;
use crate::rules::{Code, Finding, RuleSettings};

/// Where a finding comes from: the report lists them in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    /// The flag set in use (VER).
    Version,
    /// The scheduler's multi-node options (PAR009, PAR010, PAR012).
    Scheduler,
    /// The catalogue's checks, fixed ones first.
    Rules,
    /// `--fit`'s changes.
    Fit,
    /// The pipeline's own: GPU placement, model files, memory, arguments.
    Pipeline,
}

#[derive(Debug, Default)]
pub(crate) struct Collector {
    found: Vec<(Stage, Finding)>,
}

impl Collector {
    pub(crate) fn add(&mut self, stage: Stage, found: impl IntoIterator<Item = Finding>) {
        self.found.extend(found.into_iter().map(|f| (stage, f)));
    }

    /// The findings of one stage so far, as raised.
    pub(crate) fn of(&self, stage: Stage) -> Vec<&Finding> {
        self.found
            .iter()
            .filter(|(s, _)| *s == stage)
            .map(|(_, f)| f)
            .collect()
    }

    /// Whether a finding of this code was raised.
    pub(crate) fn raised(&self, code: Code) -> bool {
        self.found.iter().any(|(_, f)| f.code == code)
    }

    /// Every finding in report order, under the user's `--allow`/`--deny`, secrets hidden.
    pub(crate) fn finish(mut self, settings: &RuleSettings, secrets: &Redactor) -> Vec<Finding> {
        // Stable: within a stage, the order each was raised in.
        self.found.sort_by_key(|(s, _)| *s);
        let mut all = settings.apply(self.found.into_iter().map(|(_, f)| f).collect());
        for f in &mut all {
            f.message = secrets.redact(&f.message);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_order_the_report_and_settings_apply_to_every_finding() {
        let mut c = Collector::default();
        c.add(Stage::Pipeline, [Finding::new(Code::MEM005, "p")]);
        c.add(Stage::Rules, [Finding::new(Code::CG001, "r")]);
        c.add(Stage::Version, [Finding::new(Code::VER002, "v")]);
        assert!(c.raised(Code::CG001) && !c.raised(Code::AR001));
        let settings = RuleSettings {
            allow: vec!["MEM005".into()],
            deny: vec!["CG".into()],
            ..Default::default()
        };
        let all = c.finish(&settings, &Redactor::default());
        let got: Vec<_> = all.iter().map(|f| (f.code, f.severity)).collect();
        assert_eq!(
            got,
            [
                (Code::VER002, crate::rules::Severity::Warning),
                (Code::CG001, crate::rules::Severity::Error)
            ]
        );
    }
}
