//! The MIX family: features SGLang rejects or breaks together, per release, as data.
//!
//! `data/matrix.json` lists rows of (features that must all hold, SGLang version range,
//! outcome, what happens, what to do, evidence). Each row names its code; a code's severity
//! says the outcome (error: that release rejects or crashes at start-up; warning: known to
//! break), which the catalogue tests hold the table to. One evaluator runs every code's rows.

pub(crate) mod features;

use std::sync::OnceLock;

use serde::Deserialize;

use super::*;
use crate::rules::Code;
use crate::rules::versions::{valid_versions, version_matches};
use features::Feature;

/// What the release does with the combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Outcome {
    /// Refused at start-up (an assertion or `ValueError` in SGLang's own checks).
    Rejected,
    /// Starts, then fails or misbehaves, by public reports.
    Breaks,
}

/// A repair that makes the row stop holding without changing what the user asked for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum RowFix {
    AddFlag(String),
    /// Set an option the user left to SGLang's default.
    Set(String, String),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    code: String,
    features: Vec<String>,
    versions: String,
    outcome: Outcome,
    effect: String,
    advice: String,
    #[serde(default)]
    fix: Option<RowFix>,
    evidence: Vec<String>,
}

/// One row of the matrix, checked and parsed.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) code: Code,
    pub(crate) features: Vec<Feature>,
    pub(crate) versions: String,
    pub(crate) outcome: Outcome,
    pub(crate) effect: String,
    pub(crate) advice: String,
    pub(crate) fix: Option<RowFix>,
    /// URLs of public reports, or `sglang: <file>` for checks read in SGLang's own code.
    pub(crate) evidence: Vec<String>,
}

/// The table as embedded, every row checked.
pub(crate) fn parse(text: &str) -> Result<Vec<Row>, String> {
    let raw: Vec<RawRow> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    raw.into_iter()
        .enumerate()
        .map(|(i, r)| row(r).map_err(|e| format!("row {i}: {e}")))
        .collect()
}

fn row(r: RawRow) -> Result<Row, String> {
    let code = *Code::ALL
        .iter()
        .find(|c| c.as_str() == r.code)
        .ok_or_else(|| format!("unknown code {}", r.code))?;
    if r.features.len() < 2 {
        return Err("a row combines at least two features".into());
    }
    if !valid_versions(&r.versions) {
        return Err(format!("bad versions {}", r.versions));
    }
    if r.evidence.is_empty() {
        return Err("no evidence".into());
    }
    Ok(Row {
        code,
        features: r
            .features
            .iter()
            .map(|f| Feature::parse(f))
            .collect::<Result<_, _>>()?,
        versions: r.versions,
        outcome: r.outcome,
        effect: r.effect,
        advice: r.advice,
        fix: r.fix,
        evidence: r.evidence,
    })
}

/// Every row of `data/matrix.json`.
pub(crate) fn table() -> &'static [Row] {
    static ROWS: OnceLock<Vec<Row>> = OnceLock::new();
    ROWS.get_or_init(|| {
        // Embedded data, validated by tests: a malformed table is a build bug.
        parse(include_str!("../../../../data/matrix.json"))
            .unwrap_or_else(|e| panic!("data/matrix.json: {e}"))
    })
}

/// The rows of `code` that hold for this server and release.
fn eval(ctx: &Context, code: Code) -> Vec<Fired> {
    table()
        .iter()
        .filter(|r| r.code == code && version_matches(&r.versions, ctx.version))
        .filter_map(|r| fire(ctx, r))
        .collect()
}

fn fire(ctx: &Context, row: &Row) -> Option<Fired> {
    let held: Vec<String> = row
        .features
        .iter()
        .map(|f| f.holds(ctx))
        .collect::<Option<_>>()?;
    let (last, rest) = held.split_last()?;
    let what = match rest.len() {
        1 => format!("{} with {last}", rest[0]),
        _ => format!("{} and {last}", rest.join(", ")),
    };
    let fired = Fired::new(format!(
        "{what}: {} (SGLang {}); {}",
        row.effect, ctx.version, row.advice
    ));
    Some(match fix(ctx, row) {
        Some(f) => fired.with_fix(f),
        None => fired,
    })
}

fn fix(ctx: &Context, row: &Row) -> Option<crate::rules::Fix> {
    match row.fix.as_ref()? {
        RowFix::AddFlag(o) => ctx.user().knows(o).then(|| add_flag(o)),
        RowFix::Set(o, v) => (ctx.user().knows(o) && !ctx.user().given(o)).then(|| set_arg(o, v)),
    }
}

/// The rows of `code` as a markdown section for `explain`; `None` for codes outside the matrix.
pub(crate) fn explain_rows(code: Code) -> Option<String> {
    let rows: Vec<&Row> = table().iter().filter(|r| r.code == code).collect();
    if rows.is_empty() {
        return None;
    }
    let mut s = String::from(
        "## Rows\n\n| features (all of) | SGLang versions | outcome | evidence |\n|---|---|---|---|\n",
    );
    for r in rows {
        let features: Vec<String> = r
            .features
            .iter()
            .map(|f| format!("`{}`", f.spelling()))
            .collect();
        let evidence: Vec<String> = r
            .evidence
            .iter()
            .map(|e| match e.strip_prefix("sglang: ") {
                Some(code) => format!("SGLang's code: {code}"),
                None => format!("<{e}>"),
            })
            .collect();
        s.push_str(&format!(
            "| {} | `{}` | {} | {} |\n",
            features.join(" + "),
            r.versions,
            match r.outcome {
                Outcome::Rejected => "rejected at start-up",
                Outcome::Breaks => "known to break",
            },
            evidence.join(", ")
        ));
    }
    Some(s)
}

/// One check per MIX code, each running its rows of the table.
macro_rules! codes {
    ($($f:ident => $code:ident),* $(,)?) => {
        $(pub fn $f(ctx: &Context) -> Vec<Fired> {
            eval(ctx, Code::$code)
        })*
    };
}

codes! {
    pdmux => MIX001,
    deepep_auto_dp_attention => MIX002,
    trtllm_mla_spec => MIX003,
    a2a_batch_overlap => MIX004,
    dflash_dp_attention => MIX005,
    pp_spec_dp_attention => MIX006,
    pp_dp_attention => MIX007,
    pp_a2a => MIX008,
    dp_attention_ep_no_a2a => MIX009,
    eagle_dp_attention_early => MIX010,
    pdmux_sm100 => MIX011,
    pd_decode_radix_spec => MIX012,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Severity, rule};

    /// SGLang releases on PyPI from 0.4.0 to 0.5.23, for checking ranges against each other.
    const RELEASES: &[&str] = &[
        "0.4.0",
        "0.4.1",
        "0.4.2",
        "0.4.3",
        "0.4.4",
        "0.4.4.post1",
        "0.4.4.post4",
        "0.4.5",
        "0.4.6",
        "0.4.6.post5",
        "0.4.7",
        "0.4.8",
        "0.4.8.post1",
        "0.4.9",
        "0.4.9.post6",
        "0.4.10",
        "0.4.10.post1",
        "0.4.10.post2",
        "0.5.0rc0",
        "0.5.0rc2",
        "0.5.1",
        "0.5.1.post3",
        "0.5.2",
        "0.5.3",
        "0.5.3.post1",
        "0.5.3.post2",
        "0.5.4",
        "0.5.4.post1",
        "0.5.4.post2",
        "0.5.5",
        "0.5.6",
        "0.5.7",
        "0.5.8",
        "0.5.9",
        "0.5.10",
        "0.5.10.post1",
        "0.5.11",
        "0.5.12",
        "0.5.13",
        "0.5.14",
        "0.5.15",
        "0.5.16",
        "0.5.17",
        "0.5.18",
        "0.5.19",
        "0.5.20",
        "0.5.21",
        "0.5.22",
        "0.5.23",
    ];

    #[test]
    fn every_row_agrees_with_its_code() {
        for r in table() {
            let rule = rule(r.code);
            assert_eq!(rule.family(), "MIX", "{}", r.code);
            let want = match r.outcome {
                Outcome::Rejected => Severity::Error,
                Outcome::Breaks => Severity::Warning,
            };
            assert_eq!(rule.severity, want, "{}: severity says the outcome", r.code);
            for v in RELEASES {
                assert!(
                    !version_matches(&r.versions, v) || rule.applies_to(v),
                    "{}: row range {} reaches {v}, outside the code's {}",
                    r.code,
                    r.versions,
                    rule.versions
                );
            }
            let urls: Vec<&String> = r
                .evidence
                .iter()
                .filter(|e| e.starts_with("https://"))
                .collect();
            if r.outcome == Outcome::Breaks {
                assert!(!urls.is_empty(), "{}: a report backs a known break", r.code);
            }
            for u in urls {
                assert!(
                    rule.sources().contains(&u.as_str()),
                    "{}: {u} missing from sources",
                    r.code
                );
            }
            for e in r.evidence.iter().filter(|e| !e.starts_with("https://")) {
                assert!(e.starts_with("sglang: "), "{}: evidence {e}", r.code);
            }
            assert!(
                r.fix.is_none() || rule.fix != crate::rules::FixAvailability::None,
                "{}",
                r.code
            );
        }
        for c in Code::ALL.iter().filter(|c| rule(**c).family() == "MIX") {
            assert!(table().iter().any(|r| r.code == *c), "{c} has no row");
        }
    }

    #[test]
    fn every_option_a_row_reads_exists_in_some_release() {
        use crate::sglang::flagset::{self, KNOWN_VERSIONS};
        for r in table() {
            for f in &r.features {
                if let Some(o) = f.option() {
                    assert!(
                        KNOWN_VERSIONS
                            .iter()
                            .any(|v| flagset::get(v).unwrap().action(o).is_some()),
                        "{}: {o} is in no embedded flag set",
                        r.code
                    );
                }
            }
            if let Some(RowFix::AddFlag(o) | RowFix::Set(o, _)) = &r.fix {
                assert!(o.starts_with("--"), "{o}");
            }
        }
    }

    #[test]
    fn malformed_rows_are_refused() {
        let row = |code: &str, features: &str, versions: &str| {
            format!(
                r#"[{{"code":"{code}","features":{features},"versions":"{versions}","outcome":"breaks","effect":"e","advice":"a","evidence":["x"]}}]"#
            )
        };
        assert!(parse(&row("MIX001", r#"["pp","ep"]"#, "all")).is_ok());
        assert!(parse(&row("NOPE001", r#"["pp","ep"]"#, "all")).is_err());
        assert!(parse(&row("MIX001", r#"["pp"]"#, "all")).is_err());
        assert!(parse(&row("MIX001", r#"["pp","tbo"]"#, "all")).is_err());
        assert!(parse(&row("MIX001", r#"["pp","ep"]"#, "soon")).is_err());
        assert!(parse(r#"[{"code":"MIX001"}]"#).is_err());
        assert!(parse("not json").is_err());
    }
}
