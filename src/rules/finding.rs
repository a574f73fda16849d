//! One finding, from the check or pipeline step that raises it to the report and the exit
//! code. Its code is the typed [`Code`]: only the plan/v1 projection writes it as text.

use super::{Code, Fix, Severity, rule};

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub code: Code,
    /// The catalogue's until the plan applies `--allow`/`--deny` (once, to every finding).
    pub severity: Severity,
    pub message: String,
    /// The repair the finding proposes, if any.
    pub fix: Option<Fix>,
    /// `fix` was made on the line that runs.
    pub fixed: bool,
}

impl Finding {
    /// The one way to make a finding: the code's default severity from the catalogue, open.
    pub fn new(code: Code, message: impl Into<String>) -> Finding {
        Finding {
            code,
            severity: rule(code).severity,
            message: message.into(),
            fix: None,
            fixed: false,
        }
    }

    pub(crate) fn with_fix(mut self, fix: Option<Fix>) -> Finding {
        self.fix = fix;
        self
    }

    /// The same finding with its fix made (or, with `false`, not made).
    pub(crate) fn fixed(mut self, fixed: bool) -> Finding {
        self.fixed = fixed;
        self
    }

    /// The rule's kebab-case name.
    pub fn name(&self) -> &'static str {
        rule(self.code).name
    }

    /// What was changed, for a finding whose fix was made.
    pub(crate) fn applied(&self) -> Option<&str> {
        self.fix
            .as_ref()
            .filter(|_| self.fixed)
            .map(|f| f.summary.as_str())
    }
}
