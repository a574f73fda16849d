//! What the findings make of the launch: the plan's verdict, and so the exit code.

use serde::Serialize;

use crate::rules::{Finding, Severity};

// No doc comment: it would be the plan/v1 schema's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    Warning,
    Error,
    /// Not a server for an NVIDIA GPU: not planned; the drop-in passes it through unchanged
    /// (findings that do not depend on the hardware are still listed; an error is `error`).
    #[serde(rename = "pass-through")]
    PassThrough,
}

/// The verdict over every finding; a fixed one no longer applies to the command that runs.
pub(crate) fn of(findings: &[Finding], strict: bool) -> Verdict {
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
