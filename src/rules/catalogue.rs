//! The code table: each code's texts (`data/rules/<CODE>.md`) and its check. Texts are data;
//! the header of each file carries the metadata, the body the explanation:
//!
//! ```text
//! code: AR001
//! name: custom-allreduce-no-p2p
//! severity: error
//! versions: all
//! fix: always
//! check: ar::no_p2p (the check's function under `checks/`)
//! summary: one line
//! sources: https://… https://…
//! no-source: why there is no URL (instead of sources)
//! emitted-by: pipeline (codes without a check: the pipeline or memory planner emits them)
//! ---
//! ## What it does …
//! ```

use std::sync::OnceLock;

use super::checks::*;
use super::versions::valid_versions;
use super::{CheckFn, Evidence, FixAvailability, Rule, Severity};

/// Old code → new code, for codes that were renamed. Codes are never reused.
pub const REDIRECTS: &[(&str, &str)] = &[];

const fn c(f: CheckFn) -> Option<CheckFn> {
    Some(f)
}
/// Emitted by the pipeline or the memory planner, not by a check.
const P: Option<CheckFn> = None;

/// Declares [`Code`] (one variant per rule) and the table of texts and checks, from one list.
macro_rules! catalogue {
    ($($code:ident => $check:expr, $fields:expr, $body:expr);* $(;)?) => {
        /// A rule code. Every finding carries one; no code exists outside this enum.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(clippy::upper_case_acronyms)]
        pub enum Code {
            $($code),*
        }

        impl Code {
            pub(crate) const ALL: &[Code] = &[$(Code::$code),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$code => stringify!($code)),*
                }
            }
        }

        impl std::fmt::Display for Code {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        pub(super) const ENTRIES: &[(Code, Text, Option<CheckFn>)] = &[
            $((Code::$code, Text {
                text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/data/rules/", stringify!($code), ".md")),
                fields: $fields,
                body: $body,
            }, $check)),*
        ];
    };
}

// The code table, generated from the rule texts' headers by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/catalogue.rs"));

pub(super) fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        // `build.rs` writes the table family by family, number by number: the order listed.
        ENTRIES
            .iter()
            .map(|(id, text, check)| {
                // Embedded data, validated by tests: a malformed header is a build bug.
                parse(*id, text, *check)
                    .unwrap_or_else(|e| panic!("data/rules/{}.md: {e}", id.as_str()))
            })
            .collect()
    })
}

include!("header_keys.rs");

/// A rule's text as `build.rs` splits it: the byte range of each header field's (trimmed)
/// value, by [`HEADER_KEYS`] order (`(0, 0)`: no such line), and where the body starts.
pub(super) struct Text {
    pub(super) text: &'static str,
    pub(super) fields: [(usize, usize); HEADER_KEYS.len()],
    pub(super) body: usize,
}

impl Text {
    fn field(&self, key: &str) -> Option<&'static str> {
        let i = HEADER_KEYS.iter().position(|k| *k == key)?;
        let (from, to) = self.fields[i];
        let text: &'static str = self.text;
        (from, to).ne(&(0, 0)).then(|| text.get(from..to)).flatten()
    }
}

/// A catalogue entry from its text.
pub(super) fn parse(id: Code, text: &Text, check: Option<CheckFn>) -> Result<Rule, String> {
    let field = |key: &str| text.field(key);
    let body = text.text.get(text.body..).ok_or("no body")?;
    let code = id.as_str();
    let file_code = field("code").ok_or("no code")?;
    if file_code != code {
        return Err(format!("header says code {file_code}"));
    }
    let severity = match field("severity").ok_or("no severity")? {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        "info" => Severity::Info,
        s => return Err(format!("bad severity {s}")),
    };
    let fix = match field("fix").unwrap_or("none") {
        "none" => FixAvailability::None,
        "sometimes" => FixAvailability::Sometimes,
        "always" => FixAvailability::Always,
        s => return Err(format!("bad fix {s}")),
    };
    // The data says which codes the pipeline emits; the table must agree.
    let pipeline = field("emitted-by") == Some("pipeline");
    if pipeline != check.is_none() {
        return Err(if pipeline {
            "header says emitted-by: pipeline, but the code table has a check".into()
        } else {
            "no check in the code table and no `emitted-by: pipeline` header".into()
        });
    }
    let versions = field("versions").ok_or("no versions")?;
    let evidence_text = field("evidence").unwrap_or("");
    // Embedded data: every test build checks it here (and `headers_are_well_formed` in any
    // build); a release build's check skips the work.
    if cfg!(debug_assertions) {
        well_formed(versions, evidence_text)?;
    }
    Ok(Rule {
        id,
        code,
        name: field("name").ok_or("no name")?,
        severity,
        versions,
        fix,
        summary: field("summary").ok_or("no summary")?,
        sources_text: field("sources").unwrap_or(""),
        no_source: field("no-source"),
        evidence_text,
        explanation: body,
        check,
    })
}

/// What the header's versions and evidence must be.
fn well_formed(versions: &str, evidence: &'static str) -> Result<(), String> {
    if !valid_versions(versions) {
        return Err(format!("bad versions {versions}"));
    }
    Evidence::parse_all(evidence).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_well_formed() {
        for rule in rules() {
            let checked = well_formed(rule.versions, rule.evidence_text);
            assert_eq!(checked, Ok(()), "{}", rule.code);
        }
    }

    #[test]
    fn a_code_is_the_index_of_its_entry() {
        // `rules::rule` looks a code up by its place; the macro must keep the two in step.
        for (i, rule) in rules().iter().enumerate() {
            assert_eq!(rule.id as usize, i, "{}", rule.code);
            assert_eq!(crate::rules::rule(rule.id).code, rule.code);
        }
        assert_eq!(rules().len(), Code::ALL.len());
    }

    /// `text` split as `build.rs` splits a rule's file.
    fn split(text: &'static str) -> Text {
        let end = text.find("\n---\n").unwrap();
        let at = |part: &str| part.as_ptr() as usize - text.as_ptr() as usize;
        let mut fields = [(0, 0); HEADER_KEYS.len()];
        for (k, v) in text[..end].lines().filter_map(|l| l.split_once(':')) {
            let i = HEADER_KEYS.iter().position(|h| *h == k).unwrap();
            let v = v.trim();
            fields[i] = (at(v), at(v) + v.len());
        }
        Text {
            text,
            fields,
            body: end + 5,
        }
    }

    #[test]
    fn header_and_table_must_agree_on_pipeline_codes() {
        let with = split(
            "code: AR001\nname: x\nseverity: info\nversions: all\nsummary: s\nemitted-by: pipeline\n---\nbody",
        );
        let without =
            split("code: AR001\nname: x\nseverity: info\nversions: all\nsummary: s\n---\nbody");
        fn check(_: &super::super::Context) -> Vec<super::super::Fired> {
            vec![]
        }
        assert!(parse(Code::AR001, &with, None).is_ok());
        assert!(parse(Code::AR001, &with, Some(check)).is_err());
        assert!(parse(Code::AR001, &without, None).is_err());
        assert!(parse(Code::AR001, &without, Some(check)).is_ok());
        assert!(parse(Code::AR002, &without, Some(check)).is_err());
        assert!(parse(Code::AR001, &split("code: AR001\n---\n"), None).is_err());
    }

    /// The ranges build.rs writes are the header's fields and the body of each rule's file.
    #[test]
    fn entries_carry_each_texts_header_and_body() {
        for (id, text, _) in ENTRIES {
            let want = split(text.text);
            assert_eq!(text.fields, want.fields, "{id}");
            assert_eq!(text.body, want.body, "{id}");
            assert!(
                text.text[text.body..].starts_with("## What it does"),
                "{id}"
            );
        }
    }

    /// Family, then number: `AR2` < `AR10` < `ARCH1`.
    fn code_key(code: &str) -> (String, u32) {
        let i = code
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(code.len());
        (code[..i].to_owned(), code[i..].parse().unwrap_or(0))
    }

    #[test]
    fn codes_sort_by_family_then_number() {
        assert!(code_key("AR2") < code_key("AR10"));
        assert!(code_key("AR10") < code_key("ARCH1"));
        let keys: Vec<_> = rules().iter().map(|r| code_key(r.code)).collect();
        assert!(
            keys.windows(2).all(|w| w[0] < w[1]),
            "the table is out of order"
        );
    }
}
