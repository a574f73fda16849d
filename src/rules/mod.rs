//! The catalogue of known-bad flag / environment / hardware combinations.
//!
//! One rule = a stable code, a kebab-case name, a default severity, the SGLang versions it
//! applies to, its texts (data: `data/rules/<CODE>.md`, a small header then markdown), and a
//! check over the facts (Rust, `checks/`). A check reports a one-line message naming the facts
//! and, where safe, a [`Fix`]. Codes are never reused; renamed codes go through [`REDIRECTS`].
//!
//! The planning pipeline calls [`evaluate`] (checks) and [`Finding::new`] (codes it emits itself);
//! the commands call [`lookup`], [`render_list`] and [`render_explain`].

mod catalogue;
mod checks;
mod finding;
pub(crate) mod fix;
mod user;
mod versions;
mod view;

pub(crate) use checks::serve_cli::serve_model_path;
pub(crate) use view::ranges;

use std::fmt;

use serde::Serialize;

pub use crate::resolve::Context;

pub use crate::facts::host::HostFacts;
pub use catalogue::{Code, REDIRECTS};
pub use finding::Finding;
pub use fix::{ArgEdit, EnvEdit, Fix};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a check reports, without its rule: [`evaluate`] makes it the rule's [`Finding`].
#[derive(Debug, Clone, PartialEq)]
pub struct Fired {
    pub message: String,
    pub(crate) fix: Option<Fix>,
}

impl Fired {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Fired {
            message: message.into(),
            fix: None,
        }
    }

    pub(crate) fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }
}

pub(crate) type CheckFn = fn(&Context) -> Vec<Fired>;

/// How a failure an `error` rule predicts is known to be the release's own (`evidence:` in the
/// rule's header, `;`-separated). Anything less makes a rule a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// Goldens recorded by running the release's own code on the inputs the rule fires on (and
    /// near misses it must not fire on): a JSON-lines file in the repository.
    Golden(&'static str),
    /// The release's argument parser refuses: the conformance goldens recorded from its argparse.
    Parser,
    /// A version-pinned public failure with its exact error text, checked against that
    /// release's source: `report URL RELEASE "text"` (RELEASE is SGLang's, or `pkg==VER` for a
    /// failure of another package whatever SGLang's release).
    Report {
        url: &'static str,
        release: &'static str,
        text: &'static str,
    },
    /// Real start-up logs (memory): a file in the repository with what SGLang logged.
    Logs(&'static str),
    /// The launcher meets the failure itself while checking: the request SGLang would make at
    /// start-up (the Hub's answer for the model's files) is refused, and how.
    Observed(&'static str),
}

impl Evidence {
    /// An `evidence:` header: items separated by `;` (none when empty).
    pub(crate) fn parse_all(header: &'static str) -> Result<Vec<Evidence>, String> {
        if header.trim().is_empty() {
            return Ok(Vec::new());
        }
        header.split(';').map(Evidence::parse).collect()
    }

    pub(crate) fn parse(item: &'static str) -> Result<Evidence, String> {
        let item = item.trim();
        let (kind, rest) = item.split_once(' ').unwrap_or((item, ""));
        let rest = rest.trim();
        match kind {
            "golden" if !rest.is_empty() => Ok(Evidence::Golden(rest)),
            "logs" if !rest.is_empty() => Ok(Evidence::Logs(rest)),
            "observed" if !rest.is_empty() => Ok(Evidence::Observed(rest)),
            "parser" => Ok(Evidence::Parser),
            "report" => {
                let (url, rest) = rest.split_once(' ').ok_or("report: URL RELEASE \"text\"")?;
                let (release, text) = rest
                    .trim()
                    .split_once(' ')
                    .ok_or("report: URL RELEASE \"text\"")?;
                let text = text
                    .trim()
                    .strip_prefix('"')
                    .and_then(|t| t.strip_suffix('"'))
                    .filter(|t| !t.is_empty())
                    .ok_or("report: the error text in double quotes")?;
                if !url.starts_with("https://") {
                    return Err(format!("report: {url} is not a URL"));
                }
                Ok(Evidence::Report { url, release, text })
            }
            _ => Err(format!("unknown evidence {item:?}")),
        }
    }
}

/// Whether a rule can repair what it finds (ruff's fix availability).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FixAvailability {
    None,
    Sometimes,
    Always,
}

/// One catalogue entry. Texts come from `data/rules/<CODE>.md`.
#[derive(Debug, Clone)]
pub struct Rule {
    pub id: Code,
    /// `id` as text.
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    /// SGLang versions the rule applies to, e.g. `all`, `>=0.5.15`, `>=0.5.5,<0.5.20`.
    pub versions: &'static str,
    pub fix: FixAvailability,
    /// One line for `rules` listings.
    pub summary: &'static str,
    /// Issue / PR / doc URLs the rule is drawn from, space-separated ([`Rule::sources`]).
    pub(crate) sources_text: &'static str,
    /// Why a rule has no source URL (derived from SGLang's code, say).
    pub no_source: Option<&'static str>,
    /// The `evidence:` header, `;`-separated ([`Rule::evidence`]).
    pub(crate) evidence_text: &'static str,
    /// Markdown: what, why, example, fix.
    pub explanation: &'static str,
    /// `None`: the planning pipeline or the memory planner emits this code ([`Finding::new`]).
    pub check: Option<CheckFn>,
}

impl Rule {
    /// Whether the rule applies to this SGLang version.
    pub fn applies_to(&self, version: &str) -> bool {
        versions::version_matches(self.versions, version)
    }

    /// Issue / PR / doc URLs the rule is drawn from.
    pub fn sources(&self) -> Vec<&'static str> {
        self.sources_text.split_whitespace().collect()
    }

    /// How it is known that the user's release itself fails where an `error` rule fires. Read
    /// when asked (a check never asks); the catalogue's tests prove every header parses.
    pub fn evidence(&self) -> Vec<Evidence> {
        Evidence::parse_all(self.evidence_text).unwrap_or_default()
    }

    /// The rule's family: the letters of its code (`AR` for `AR001`).
    pub fn family(&self) -> &'static str {
        let end = self
            .code
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(self.code.len());
        &self.code[..end]
    }

    pub fn emitted_by_pipeline(&self) -> bool {
        self.check.is_none()
    }
}

/// Every rule, in code order.
pub fn all() -> &'static [Rule] {
    catalogue::rules()
}

/// The catalogue entry of a code. Every [`Code`] has one: the enum and the table are declared
/// by the same macro invocation, in the same order, so a code is its entry's index.
pub(crate) fn rule(code: Code) -> &'static Rule {
    &all()[code as usize]
}

/// An unknown rule code or name; `Display` suggests the nearest one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupError {
    pub(crate) query: String,
    /// `CODE (name)` of the closest rule, when one is close enough.
    pub suggestion: Option<String>,
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown rule `{}`", self.query)?;
        if let Some(s) = &self.suggestion {
            write!(f, "; did you mean {s}?")?;
        }
        write!(f, " (`sglang-launch rules` lists them all)")
    }
}

impl std::error::Error for LookupError {}

/// A rule by code (any case, following [`REDIRECTS`]) or by name.
pub fn lookup(code_or_name: &str) -> Result<&'static Rule, LookupError> {
    let q = code_or_name.trim();
    let upper = q.to_ascii_uppercase();
    let code = REDIRECTS
        .iter()
        .find(|(old, _)| *old == upper)
        .map(|(_, new)| *new)
        .unwrap_or(upper.as_str());
    if let Some(r) = all().iter().find(|r| r.code == code || r.name == q) {
        return Ok(r);
    }
    Err(LookupError {
        query: q.to_owned(),
        suggestion: nearest(q),
    })
}

fn nearest(q: &str) -> Option<String> {
    let ql = q.to_ascii_lowercase();
    let mut best: Option<(f64, &Rule)> = None;
    for r in all() {
        let s = strsim::jaro_winkler(&ql, &r.code.to_ascii_lowercase())
            .max(strsim::jaro_winkler(&ql, r.name));
        if best.is_none_or(|(b, _)| s > b) {
            best = Some((s, r));
        }
    }
    best.filter(|(s, _)| *s >= 0.75)
        .map(|(_, r)| format!("`{}` ({})", r.code, r.name))
}

/// `--allow`, `--deny`, `--strict`: how the user tunes the catalogue. Entries are codes, names,
/// or a family prefix (`AR`). `--deny` wins over `--allow`.
#[derive(Debug, Clone, Default)]
pub struct RuleSettings {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub strict: bool,
}

impl RuleSettings {
    /// Every entry in `allow`/`deny` must name a rule or a family.
    pub fn validate(&self) -> Result<(), LookupError> {
        for s in self.allow.iter().chain(&self.deny) {
            if !is_family(s) {
                lookup(s)?;
            }
        }
        Ok(())
    }

    /// `--allow`/`--deny` on findings: allowed ones are dropped, denied ones become errors.
    /// Order is kept. The plan applies it once, to every finding it collected.
    pub fn apply(&self, findings: Vec<Finding>) -> Vec<Finding> {
        findings
            .into_iter()
            .filter_map(|mut f| {
                let rule = rule(f.code);
                let effective = self.effective(rule)?;
                // The pipeline may have lowered a finding (an error not proven for a modified
                // install); it keeps that unless the user's --deny says otherwise.
                let denied = self.deny.iter().any(|s| selects(s, rule));
                if denied || f.severity == rule.severity {
                    f.severity = effective;
                }
                Some(f)
            })
            .collect()
    }

    /// Whether the rule is on: an allowed rule's check does not run, and nothing makes its fix.
    pub(crate) fn enabled(&self, code: Code) -> bool {
        self.effective(rule(code)).is_some()
    }

    /// The severity a finding of this rule gets, or `None` when the rule is allowed (skipped).
    pub(crate) fn effective(&self, rule: &Rule) -> Option<Severity> {
        if self.deny.iter().any(|s| selects(s, rule)) {
            return Some(Severity::Error);
        }
        if self.allow.iter().any(|s| selects(s, rule)) {
            return None;
        }
        Some(rule.severity)
    }
}

fn is_family(s: &str) -> bool {
    let u = s.trim().to_ascii_uppercase();
    !u.is_empty() && all().iter().any(|r| r.family() == u)
}

fn selects(entry: &str, rule: &Rule) -> bool {
    let e = entry.trim();
    if e.eq_ignore_ascii_case(rule.family()) || e == rule.name {
        return true;
    }
    lookup(e).is_ok_and(|r| r.code == rule.code)
}

/// The longest context this release accepts for the model, where the line asks for more and
/// SGLang refuses it at start-up (ENV006); `None` when the line's context is accepted.
pub(crate) fn refused_context_above(ctx: &Context) -> Option<u64> {
    rule(Code::ENV006)
        .applies_to(ctx.version)
        .then(|| checks::env::longer_context(ctx))
        .flatten()
        .map(|(_, max)| max)
}

/// Runs every check that applies to `ctx.version`, skipping the rules `settings` switch off.
/// Severities are the catalogue's: `--deny` is the plan's to apply, with the other findings.
/// Order: code order, then the check's own order.
pub fn evaluate(ctx: &Context, settings: &RuleSettings) -> Vec<Finding> {
    let mut out = Vec::new();
    let applying = versions::applying(ctx.version);
    for rule in all() {
        let Some(check) = rule.check else { continue };
        if !applying[rule.id as usize] || !settings.enabled(rule.id) {
            continue;
        }
        for f in check(ctx) {
            out.push(Finding::new(rule.id, f.message).with_fix(f.fix));
        }
    }
    out
}

/// The first embedded release after `ctx.version` whose version of `code`'s check stays quiet
/// on these facts: an install that is not the release it names (a source checkout, a dev image)
/// may run that code, so an error the check reports is not proven for it. Costly (a check per
/// later release): for such installs' errors only.
pub(crate) fn quiet_later(ctx: &Context, code: Code) -> Option<&'static str> {
    use crate::sglang::release::{KNOWN_VERSIONS, cmp};
    let rule = rule(code);
    let check = rule.check?;
    KNOWN_VERSIONS
        .iter()
        .copied()
        .filter(|v| cmp(v, ctx.version).is_gt())
        .find(|v| !rule.applies_to(v) || check(&ctx.at_version(v)).is_empty())
}

#[derive(Serialize)]
struct ListEntry {
    code: &'static str,
    name: &'static str,
    severity: Severity,
    versions: &'static str,
    fix: FixAvailability,
    emitted_by: &'static str,
    summary: &'static str,
    sources: Vec<&'static str>,
}

/// `sglang-launch rules [--json]`: code, name, severity, versions, summary.
pub fn render_list(json: bool) -> String {
    if json {
        let list: Vec<ListEntry> = all()
            .iter()
            .map(|r| ListEntry {
                code: r.code,
                name: r.name,
                severity: r.severity,
                versions: r.versions,
                fix: r.fix,
                emitted_by: if r.check.is_some() {
                    "check"
                } else {
                    "pipeline"
                },
                summary: r.summary,
                sources: r.sources(),
            })
            .collect();
        // Plain data of strings: serialisation cannot fail.
        return crate::out::json_safe(serde_json::to_string_pretty(&list).unwrap_or_default())
            + "\n";
    }
    let wn = all().iter().map(|r| r.name.len()).max().unwrap_or(0);
    let wv = all().iter().map(|r| r.versions.len()).max().unwrap_or(0);
    let mut s = String::new();
    for r in all() {
        s.push_str(&format!(
            "{:<8} {:<wn$}  {:<7}  {:<wv$}  {}\n",
            r.code,
            r.name,
            r.severity.as_str(),
            r.versions,
            r.summary,
        ));
    }
    s
}

/// `sglang-launch explain CODE|NAME`: the rule's markdown.
pub fn render_explain(rule: &Rule) -> String {
    let mut s = format!("# {} ({})\n\n{}\n\n", rule.name, rule.code, rule.summary);
    s.push_str(&format!("- Default severity: {}\n", rule.severity));
    s.push_str(&format!("- SGLang versions: {}\n", rule.versions));
    let fix = match rule.fix {
        FixAvailability::None => "no automatic fix (reported only)",
        FixAvailability::Sometimes => "sometimes fixable automatically",
        FixAvailability::Always => "fixable automatically",
    };
    s.push_str(&format!("- Fix: {fix}\n"));
    if rule.check.is_none() {
        s.push_str("- Emitted by the launcher's pipeline, not by a catalogue check\n");
    }
    s.push('\n');
    s.push_str(rule.explanation.trim());
    if let Some(rows) = checks::matrix::explain_rows(rule.id) {
        s.push_str("\n\n");
        s.push_str(rows.trim_end());
    }
    let evidence = rule.evidence();
    if !evidence.is_empty() {
        s.push_str("\n\n## Evidence\n\n");
        for e in &evidence {
            s.push_str(&match e {
                Evidence::Golden(path) => {
                    format!("- goldens recorded by running each release's own code: `{path}`\n")
                }
                Evidence::Parser => {
                    "- the release's own argparse parser (conformance goldens)\n".to_owned()
                }
                // `nccl==2.26.2`: a failure pinned to another package's release.
                Evidence::Report { url, release, text } if release.contains("==") => {
                    format!("- {release}: \"{text}\" <{url}>\n")
                }
                Evidence::Report { url, release, text } => {
                    format!("- SGLang {release}: \"{text}\" <{url}>\n")
                }
                Evidence::Logs(path) => format!("- real start-up logs: `{path}`\n"),
                Evidence::Observed(what) => format!("- observed while checking: {what}\n"),
            });
        }
        s.truncate(s.trim_end().len());
    }
    s.push_str("\n\n## Sources\n\n");
    let sources = rule.sources();
    if sources.is_empty() {
        s.push_str(rule.no_source.unwrap_or("none"));
        s.push('\n');
    }
    for u in &sources {
        s.push_str(&format!("- <{u}>\n"));
    }
    s
}
