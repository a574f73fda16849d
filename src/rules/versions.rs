//! SGLang version ranges as rules state them: `all`, `>=0.5.15`, `>=0.5.5,<0.5.20`, or a union
//! of such ranges joined by `||`.

use std::sync::Mutex;

use crate::sglang::release;

fn constraints(spec: &str) -> impl Iterator<Item = (&str, &str)> {
    spec.split(',').map(str::trim).map(|c| {
        for op in [">=", "<=", "==", ">", "<"] {
            if let Some(v) = c.strip_prefix(op) {
                return (op, v.trim());
            }
        }
        ("?", c)
    })
}

pub(super) fn valid_versions(spec: &str) -> bool {
    spec == "all"
        || spec.split("||").all(|alt| {
            constraints(alt).all(|(op, v)| {
                op != "?" && !v.is_empty() && v.chars().next().is_some_and(|c| c.is_ascii_digit())
            })
        })
}

/// Whether each rule (by code) applies to `version`. A check evaluates every rule on every
/// pass of the fixpoint, always for the same release; the answer is worked out once. (A
/// single rule's question, [`super::Rule::applies_to`], is answered directly: some callers
/// walk every later release for one rule.)
pub(super) fn applying(version: &str) -> &'static [bool] {
    type Seen = Vec<(String, &'static [bool])>;
    static SEEN: Mutex<Seen> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, known)) = seen.iter().find(|(v, _)| v == version) {
        return known;
    }
    let answers: Vec<bool> = super::all()
        .iter()
        .map(|r| version_matches(r.versions, version))
        .collect();
    // One small table per release asked about, kept for the process's life.
    let answers: &'static [bool] = Box::leak(answers.into_boxed_slice());
    seen.push((version.to_owned(), answers));
    answers
}

/// Whether `version` satisfies a range like `>=0.5.5,<0.5.20`, a union of ranges joined by
/// `||`, or `all`.
pub(crate) fn version_matches(spec: &str, v: &str) -> bool {
    spec == "all" || spec.split("||").any(|alt| range_matches(alt, v))
}

fn range_matches(spec: &str, v: &str) -> bool {
    constraints(spec).all(|(op, bound)| {
        let o = release::cmp(v, bound);
        match op {
            ">=" => o.is_ge(),
            "<=" => o.is_le(),
            "==" => o.is_eq(),
            ">" => o.is_gt(),
            "<" => o.is_lt(),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remembered_answers_are_the_ranges_own() {
        let odd = ["0.5.10.post2.dev346+g1a2b3c", "0.3.0", "9.9.9", "0.5.23"];
        let versions = release::KNOWN_VERSIONS.iter().copied().chain(odd);
        for v in versions.clone().chain(versions) {
            let table = applying(v);
            for rule in super::super::all() {
                let direct = version_matches(rule.versions, v);
                assert_eq!(table[rule.id as usize], direct, "{} on {v}", rule.code);
            }
        }
    }

    #[test]
    fn version_ranges() {
        assert!(version_matches("all", "0.4.10.post2"));
        assert!(version_matches(">=0.5.15", "0.5.23"));
        assert!(!version_matches(">=0.5.15", "0.5.10.post1"));
        assert!(version_matches(">=0.5.5,<0.5.20", "0.5.10.post1"));
        assert!(!version_matches(">=0.5.5,<0.5.20", "0.5.23"));
        assert!(!valid_versions("0.5.5"));
        assert!(valid_versions("<0.5.10"));
        assert!(valid_versions("<0.5.6 || >=0.5.10,<0.5.20"));
        assert!(!valid_versions("<0.5.6 ||"));
        assert!(version_matches(
            "<0.5.6 || >=0.5.10,<0.5.20",
            "0.5.10.post1"
        ));
        assert!(version_matches("<0.5.6 || >=0.5.10,<0.5.20", "0.5.5"));
        assert!(!version_matches("<0.5.6 || >=0.5.10,<0.5.20", "0.5.8"));
        assert!(!version_matches("<0.5.6 || >=0.5.10,<0.5.20", "0.5.23"));
    }
}
