//! SGLang releases: how version strings order, and the releases this build embeds data for
//! ([`KNOWN_VERSIONS`], generated with the history tables by `scripts/gen-flags.py`; each
//! release's flag set and env registry are decoded by [`super::history`]).

pub use super::known_versions::KNOWN_VERSIONS;

/// Where exactly this version string is in [`KNOWN_VERSIONS`].
pub(crate) fn position(version: &str) -> Option<usize> {
    KNOWN_VERSIONS.iter().position(|k| *k == version)
}

/// Where in [`KNOWN_VERSIONS`] the release `version` is (in release order, so `0.5.23+cu128`
/// is `0.5.23`), else the nearest older one; the oldest for versions older than every one.
pub(crate) fn nearest(version: &str) -> usize {
    KNOWN_VERSIONS
        .iter()
        .rposition(|k| cmp(k, version).is_le())
        .unwrap_or(0)
}

/// Release numbers of a version string (`0.5.10.post1` → [0, 5, 10, 1]; `rc`/`dev` parts sort
/// below the release, good enough for choosing flag sets and rule ranges).
fn key(v: &str) -> Vec<i64> {
    let mut out = Vec::new();
    // A local label (`+cu128`) does not change which release it is.
    let public = v
        .trim()
        .trim_start_matches('v')
        .split('+')
        .next()
        .unwrap_or_default();
    for part in public.split('.') {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        let rest = &part[digits.len()..];
        if let Ok(n) = digits.parse() {
            out.push(n);
        }
        if let Some(post) = rest.strip_prefix("post") {
            out.push(post.parse().unwrap_or(0));
        } else if !rest.is_empty() {
            // rc/dev/a/b: below the release it precedes, in their own order (rc0 < rc1)
            out.push(-1);
            let n: String = rest.chars().skip_while(|c| !c.is_ascii_digit()).collect();
            out.push(n.parse().unwrap_or(0));
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

/// A PEP 440-style release: digits, then dot-separated parts (`0.5.23`, `0.5.10.post1`,
/// `0.5.24rc1`, `0.5.23+cu128`).
pub fn looks_like_version(v: &str) -> bool {
    let v = v.trim().trim_start_matches('v');
    let release = v.split(['+', '-']).next().unwrap_or("");
    let mut parts = release.split('.');
    parts
        .next()
        .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && parts.all(|p| {
            !p.is_empty()
                && p.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
                && p.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

/// `version >= min`.
pub fn at_least(version: &str, min: &str) -> bool {
    cmp(version, min).is_ge()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_numbers_are_told_from_garbage() {
        for ok in [
            "0.5.23",
            "0.5.10.post1",
            "0.5.24rc1",
            "0.5.23+cu128",
            "1",
            "v0.5.5",
        ] {
            assert!(looks_like_version(ok), "{ok}");
        }
        for bad in ["", "garbage", "latest", "0..5", ".5", "0.5.", "0.5 .2"] {
            assert!(!looks_like_version(bad), "{bad}");
        }
    }

    #[test]
    fn versions_order_like_releases() {
        assert!(at_least("0.5.23", "0.5.15"));
        assert!(at_least("0.5.10.post1", "0.5.10"));
        assert!(!at_least("0.5.10", "0.5.10.post1"));
        assert!(!at_least("0.5.9", "0.5.15"));
        assert!(!at_least("0.5.15rc1", "0.5.15"));
        assert!(at_least("0.10.0", "0.5.23"));
        assert!(cmp("0.5.23+cu128", "0.5.23").is_eq());
    }

    #[test]
    fn known_versions_are_in_release_order() {
        assert!(KNOWN_VERSIONS.windows(2).all(|w| cmp(w[0], w[1]).is_lt()));
    }

    #[test]
    fn nearest_is_the_same_release_or_the_nearest_older() {
        let at = |v: &str| KNOWN_VERSIONS.iter().position(|k| *k == v).unwrap();
        assert_eq!(nearest("0.5.23+cu128"), at("0.5.23"));
        assert_eq!(position("0.5.23+cu128"), None);
        assert_eq!(nearest("0.5.7.post9"), at("0.5.7"));
        assert_eq!(nearest("0.9.0"), at("0.5.23"));
        assert_eq!(nearest("0.3.0"), 0);
        assert_eq!(position("0.5.10.post1"), Some(at("0.5.10.post1")));
    }
}
