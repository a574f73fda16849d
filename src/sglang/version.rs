//! Which SGLang flag set to use: `--sglang-version`, else the installed `sglang-*.dist-info`.

use serde::Serialize;

use super::flagset::FlagSet;

/// How the version was chosen (plan/v1 `sglang_version_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionSource {
    Detected,
    Option,
    Fallback,
}

/// The flag set chosen for a run.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The version asked for or found installed (may be newer than any known flag set).
    pub requested: String,
    pub flags: &'static FlagSet,
    pub source: VersionSource,
}

/// Release numbers of a version string (`0.5.10.post1` → [0, 5, 10, 1]; `rc`/`dev` parts sort
/// below the release, good enough for choosing flag sets and rule ranges).
fn key(v: &str) -> Vec<i64> {
    let mut out = Vec::new();
    for part in v.trim().trim_start_matches('v').split(['.', '+']) {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        let rest = &part[digits.len()..];
        if let Ok(n) = digits.parse() {
            out.push(n);
        }
        if rest.starts_with("post") {
            out.push(rest[4..].parse().unwrap_or(0));
        } else if !rest.is_empty() {
            // rc/dev/a/b: below the release it precedes
            out.push(-1);
        }
    }
    out
}

/// `a <= b` in release order.
pub fn cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (ka, kb) = (key(a), key(b));
    let n = ka.len().max(kb.len());
    let pad = |k: &Vec<i64>, i: usize| k.get(i).copied().unwrap_or(0);
    (0..n)
        .map(|i| pad(&ka, i).cmp(&pad(&kb, i)))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// `version >= min`.
pub fn at_least(version: &str, min: &str) -> bool {
    cmp(version, min).is_ge()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_like_releases() {
        assert!(at_least("0.5.23", "0.5.15"));
        assert!(at_least("0.5.10.post1", "0.5.10"));
        assert!(!at_least("0.5.10", "0.5.10.post1"));
        assert!(!at_least("0.5.9", "0.5.15"));
        assert!(!at_least("0.5.15rc1", "0.5.15"));
        assert!(at_least("0.10.0", "0.5.23"));
    }
}
