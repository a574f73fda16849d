//! SGLang releases: how version strings order, and the releases this build embeds data for
//! ([`KNOWN_VERSIONS`], generated with the history tables by `scripts/gen-flags.py`; each
//! release's flag set and env registry are decoded by [`super::history`]).

pub use super::known_versions::KNOWN_VERSIONS;

/// Whether release `at` (an index into [`KNOWN_VERSIONS`]) is in one of the inclusive
/// `(first, last)` ranges the generated data files hold; a release this build lacks matches none.
pub(crate) fn in_ranges(ranges: &[(String, String)], at: usize) -> bool {
    let index = |v: &str| position(v).unwrap_or(usize::MAX);
    ranges
        .iter()
        .any(|(first, last)| index(first) <= at && at <= index(last))
}

/// Where exactly this version string is in [`KNOWN_VERSIONS`].
pub(crate) fn position(version: &str) -> Option<usize> {
    known_index(version)
}

/// Where in [`KNOWN_VERSIONS`] the release `version` is (in release order, so `0.5.23+cu128`
/// is `0.5.23`), else the nearest older one; the oldest for versions older than every one.
pub(crate) fn nearest(version: &str) -> usize {
    if let Some(i) = known_index(version) {
        return i;
    }
    KNOWN_VERSIONS
        .iter()
        .rposition(|k| cmp(k, version).is_le())
        .unwrap_or(0)
}

/// The embedded release `version` is (a local label such as `+cu128` names the same release),
/// or `None` for one this build does not embed.
pub(crate) fn exact(version: &str) -> Option<usize> {
    let i = nearest(version);
    cmp(KNOWN_VERSIONS[i], version).is_eq().then_some(i)
}

/// A version's place in PEP 440 order. The local label (`+cu128`) is left out: it names a
/// build of the same release, so `0.5.23+cu128` is 0.5.23.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    epoch: u64,
    /// Release numbers without trailing zeros (`0.5` is `0.5.0`).
    release: Vec<u64>,
    /// (rank, n): 0 for a dev release of the release itself (`0.5.0.dev1` comes before
    /// `0.5.0a1`), 1–3 for a/b/rc, 4 for none.
    pre: (u8, u64),
    /// `None` sorts before every `.postN`.
    post: Option<u64>,
    /// (0, n) for `.devN`, (1, 0) for none: a dev release comes before what it leads to.
    dev: (u8, u64),
    /// Whatever PEP 440 has no word for: such a version is never equal to a clean one.
    odd: String,
}

/// One suffix segment: a word (`rc`, `post`, `dev`, …) and its number.
fn segment(rest: &str) -> Option<(&str, Option<u64>, &str)> {
    let rest = rest.strip_prefix(['.', '_', '-']).unwrap_or(rest);
    let word_len = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let (word, rest) = rest.split_at(word_len);
    let rest = rest
        .strip_prefix(['.', '_', '-'])
        .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(rest);
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (n, rest) = rest.split_at(digits);
    (!word.is_empty() || !n.is_empty()).then(|| (word, n.parse().ok(), rest))
}

/// The oldest release whose code a build versioned by setuptools-scm can hold: main's builds after
/// its tag describe themselves from it (`0.5.6.post2.dev7970+pr.15207.g62f95e0c6`); no release
/// before it was versioned that way.
pub const SCM_FIRST: &str = "0.5.6.post2";

/// A build whose tree had no tag setuptools-scm could reach (`0.0.0.dev1+g11605767e.d20260615`,
/// the configured fallback `0.0.0.dev0`): release 0.0.0, which no SGLang release is. Its code is
/// at least [`SCM_FIRST`]'s, and it orders just after that release.
pub fn untagged(v: &str) -> bool {
    let v = v.trim().trim_start_matches('v');
    // Every release is 0.x with x > 0: most strings are answered by their first three bytes.
    if let [b'0', b'.', x, ..] = v.as_bytes()
        && *x != b'0'
    {
        return false;
    }
    let release = v
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .map_or(v, |i| &v[..i]);
    release.starts_with('0') && release.bytes().all(|c| c == b'0' || c == b'.')
}

fn key(v: &str) -> Key {
    if untagged(v) {
        return Key {
            odd: "untagged".into(),
            ..key(SCM_FIRST)
        };
    }
    let v = v.trim().to_ascii_lowercase();
    let v = v.strip_prefix('v').unwrap_or(&v);
    let public = v.split('+').next().unwrap_or_default();
    let (epoch, public) = match public.split_once('!') {
        Some((e, p)) if e.parse::<u64>().is_ok() => (e.parse().unwrap_or(0), p),
        _ => (0, public),
    };
    let mut release = Vec::new();
    let mut rest = public;
    loop {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let Ok(n) = rest[..digits].parse() else { break };
        release.push(n);
        rest = &rest[digits..];
        match rest.strip_prefix('.') {
            Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => rest = r,
            _ => break,
        }
    }
    while release.last() == Some(&0) {
        release.pop();
    }
    let (mut pre, mut post, mut dev) = (None, None, None);
    let mut odd = String::new();
    while !rest.is_empty() {
        // `1.0-1` is an implicit post release.
        let implicit = rest
            .strip_prefix('-')
            .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()));
        let Some((word, n, after)) = segment(rest) else {
            odd = rest.to_owned();
            break;
        };
        let n = n.unwrap_or(0);
        match word {
            _ if implicit.is_some() => post = Some(n),
            "a" | "alpha" => pre = Some((1, n)),
            "b" | "beta" => pre = Some((2, n)),
            "c" | "rc" | "pre" | "preview" => pre = Some((3, n)),
            "post" | "rev" | "r" => post = Some(n),
            "dev" => dev = Some(n),
            _ => {
                odd = rest.to_owned();
                break;
            }
        }
        rest = after;
    }
    if !odd.is_empty() {
        // Unknown words sort like a dev release: below the release they decorate.
        dev = dev.or(Some(0));
    }
    let pre = match (pre, post, dev) {
        (Some(p), _, _) => p,
        (None, None, Some(_)) => (0, 0),
        (None, _, _) => (4, 0),
    };
    Key {
        epoch,
        release,
        pre,
        post,
        dev: dev.map_or((1, 0), |n| (0, n)),
        odd,
    }
}

/// `a` against `b` in PEP 440 release order, local labels ignored.
pub fn cmp(a: &str, b: &str) -> std::cmp::Ordering {
    // Rules compare releases thousands of times per check: embedded ones by their place in
    // the (ordered) list, plain ones (`0.5.23`) part by part, only the rest by their keys.
    if let (Some(x), Some(y)) = (known_index(a), known_index(b)) {
        return x.cmp(&y);
    }
    if untagged(a) || untagged(b) {
        return key(a).cmp(&key(b));
    }
    plain_cmp(a, b).unwrap_or_else(|| key(a).cmp(&key(b)))
}

/// The place of an embedded release in [`KNOWN_VERSIONS`] (release order).
fn known_index(v: &str) -> Option<usize> {
    static INDEX: std::sync::LazyLock<foldhash::HashMap<&'static str, usize>> =
        std::sync::LazyLock::new(|| {
            KNOWN_VERSIONS
                .iter()
                .enumerate()
                .map(|(i, v)| (*v, i))
                .collect()
        });
    INDEX.get(v).copied()
}

/// `a` against `b` when both are only digits and dots (`0.5.10` > `0.5.9`, `0.5` = `0.5.0`).
fn plain_cmp(a: &str, b: &str) -> Option<std::cmp::Ordering> {
    let plain = |v: &str| {
        !v.is_empty()
            && v.bytes().all(|c| c.is_ascii_digit() || c == b'.')
            && v.split('.').all(|p| !p.is_empty() && p.len() <= 18)
    };
    if !(plain(a) && plain(b)) {
        return None;
    }
    let (mut x, mut y) = (a.split('.'), b.split('.'));
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Some(std::cmp::Ordering::Equal),
            (p, q) => {
                let n = |s: Option<&str>| s.map_or(0, |s| s.parse::<u64>().unwrap_or(0));
                let o = n(p).cmp(&n(q));
                if o.is_ne() {
                    return Some(o);
                }
            }
        }
    }
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

/// A version setuptools-scm gives a build from between tags (`0.5.10.post2.dev346+g680bd4b42`,
/// `0.5.6.post2.dev7970+pr.15207.g62f95e0c6`): a `.devN` part, or a local part naming a commit.
/// A release's own local tag (`+cu128`) is not one.
pub fn is_source_build(v: &str) -> bool {
    let (public, local) = v.split_once('+').unwrap_or((v, ""));
    let commit = local.split('.').any(|p| {
        p.len() >= 8 && p.starts_with('g') && p[1..].chars().all(|c| c.is_ascii_hexdigit())
    });
    public.contains(".dev") || commit || untagged(v)
}

/// `version >= min`.
pub fn at_least(version: &str, min: &str) -> bool {
    cmp(version, min).is_ge()
}

/// `from <= version < until` (`until` `None`: no end yet).
pub(crate) fn within(version: &str, from: &str, until: Option<&str>) -> bool {
    at_least(version, from) && until.is_none_or(|u| !at_least(version, u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_releases_are_listed_in_key_order() {
        for w in KNOWN_VERSIONS.windows(2) {
            assert!(key(w[0]) < key(w[1]), "{} {}", w[0], w[1]);
        }
    }

    #[test]
    fn every_embedded_release_is_found_at_its_place() {
        for (i, v) in KNOWN_VERSIONS.iter().enumerate() {
            assert_eq!(known_index(v), Some(i), "{v}");
        }
        for other in ["0.5.24", "", "0.5.23 ", "0.4", "zzz"] {
            assert_eq!(known_index(other), None, "{other:?}");
        }
    }

    #[test]
    fn plain_releases_compare_as_their_keys_do() {
        let vs = [
            "0.5", "0.5.0", "0.5.9", "0.5.10", "0.5.10.1", "1.0", "10.0", "0.4.10", "00.5.1",
            "0.5.01",
        ];
        // Release 0.0.0 is an untagged build's, never compared this way (see `cmp`).
        for a in vs {
            for b in vs {
                assert_eq!(plain_cmp(a, b), Some(key(a).cmp(&key(b))), "{a} {b}");
            }
        }
        assert_eq!(plain_cmp("0.5.10.post1", "0.5.10"), None);
        assert_eq!(plain_cmp("0.5..1", "0.5"), None);
    }

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
    fn pep440_order_and_identity() {
        use std::cmp::Ordering::{Equal, Greater, Less};
        // Each strictly before the next.
        let ordered = [
            "0.4.10.post2",
            "0.5.0.dev1",
            "0.5.0a1",
            "0.5.0b2",
            "0.5.0rc1",
            "0.5.0rc2.dev1",
            "0.5.0rc2",
            "0.5.0",
            "0.5.0.post1.dev3",
            "0.5.0.post1",
            "0.5.10",
            "0.5.10.post1",
            "0.5.23",
            "0.5.23.post1.dev2",
            "0.5.23.post1",
            "0.5.24.dev3+gabc123",
            "0.5.24rc1",
            "0.5.24",
            "1!0.1",
        ];
        for w in ordered.windows(2) {
            assert_eq!(cmp(w[0], w[1]), Less, "{} < {}", w[0], w[1]);
            assert_eq!(cmp(w[1], w[0]), Greater, "{} > {}", w[1], w[0]);
        }
        for (a, b) in [
            ("0.5.23+cu128", "0.5.23"),
            ("v0.5.23", "0.5.23"),
            ("0.5", "0.5.0"),
            ("0.5.0-rc2", "0.5.0rc2"),
            ("0.5.0.RC2", "0.5.0rc2"),
            ("0.5.0c2", "0.5.0rc2"),
            ("0.5.10-1", "0.5.10.post1"),
            ("0.5.10.rev1", "0.5.10.post1"),
            ("0.5.10.post1+local.7", "0.5.10.post1"),
        ] {
            assert_eq!(cmp(a, b), Equal, "{a} == {b}");
        }
        for (a, b) in [
            ("0.5.10", "0.5.10.post1"),
            ("0.5.0rc2", "0.5.0"),
            ("0.5.24.dev3+gabc123", "0.5.24"),
            ("0.5.23.post1.dev2", "0.5.23.post1"),
            ("0.5.23.x", "0.5.23"),
        ] {
            assert_ne!(cmp(a, b), Equal, "{a} != {b}");
        }
        // Words PEP 440 lacks sort below the release they decorate, without panicking.
        assert_eq!(cmp("0.5.23.x", "0.5.23"), Less);
        assert_eq!(cmp("0.5.23.x", "0.5.22"), Greater);
        assert_eq!(cmp("latest", "0.0.1"), Less);
    }

    #[test]
    fn builds_from_between_tags_are_told_from_releases() {
        for v in [
            "0.5.10.post2.dev346+g680bd4b42",
            "0.5.6.post2.dev7970+pr.15207.g62f95e0c6",
            "0.5.24.dev3",
        ] {
            assert!(is_source_build(v), "{v}");
        }
        for v in ["0.5.23", "0.5.23+cu128", "0.5.10.post1", "0.5.24rc1"] {
            assert!(!is_source_build(v), "{v}");
        }
    }

    #[test]
    fn source_checkouts_and_local_builds_find_the_right_release() {
        let at = |v: &str| KNOWN_VERSIONS[nearest(v)];
        assert_eq!(at("0.5.23+cu128"), "0.5.23");
        assert_eq!(at("0.5.24.dev3+gabc123"), "0.5.23");
        assert_eq!(at("0.5.23.post1.dev2"), "0.5.23");
        // Whatever the embedded list: the nearest is at or before, the next one after.
        for v in [
            "0.5.10",
            "0.5.10.post1.dev1",
            "0.5.10.post2",
            "0.5.2rc2",
            "0.5.0rc2",
            "0.5.23.post1.dev2",
        ] {
            let i = nearest(v);
            assert!(cmp(KNOWN_VERSIONS[i], v).is_le() || i == 0, "{v}");
            if let Some(next) = KNOWN_VERSIONS.get(i + 1) {
                assert!(cmp(next, v).is_gt(), "{v}: {next}");
            }
        }
    }

    #[test]
    fn a_build_without_a_reachable_tag_is_read_as_the_first_scm_release() {
        let at = |v: &str| KNOWN_VERSIONS[nearest(v)];
        for v in ["0.0.0.dev1+g11605767e.d20260615", "0.0.0.dev0", "0.0.0"] {
            assert!(untagged(v) && is_source_build(v), "{v}");
            assert_eq!(at(v), SCM_FIRST, "{v}");
            assert_eq!(exact(v), None, "{v}");
            assert!(at_least(v, "0.5.6") && !at_least(v, "0.5.7"), "{v}");
        }
        for v in ["0.0.1", "0.5.0", "latest", "0.5.10.post2.dev346+g680bd4b42"] {
            assert!(!untagged(v), "{v}");
        }
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
