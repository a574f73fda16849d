//! The embedded environment history table (`data/envs/history.jsonl`, written by `scripts/`;
//! the flag history is Rust data `build.rs` writes, see `flagset`): a header line, one line per release in [`KNOWN_VERSIONS`] order listing its
//! items as runs of item indices, then one line per distinct item. A release is decoded from its
//! own line and its items' lines only, once, on first use; nothing else is parsed.

use std::sync::OnceLock;

use serde::de::DeserializeOwned;

use super::known_versions::KNOWN_VERSIONS;

const COUNT: usize = KNOWN_VERSIONS.len();

/// One embedded history table and the releases decoded from it so far.
pub(crate) struct History<T> {
    text: &'static str,
    /// What the table holds, for the message of a decode failure (a build bug: the tables are
    /// generated, and every release of them is decoded by tests).
    what: &'static str,
    /// Byte offset where each line starts, found on first use.
    starts: OnceLock<Vec<usize>>,
    decoded: [OnceLock<T>; COUNT],
}

impl<T> History<T> {
    pub(crate) const fn new(text: &'static str, what: &'static str) -> Self {
        History {
            text,
            what,
            starts: OnceLock::new(),
            decoded: [const { OnceLock::new() }; COUNT],
        }
    }

    fn starts(&self) -> &[usize] {
        self.starts.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|i| i + 1))
                .filter(|&i| i < self.text.len())
                .collect()
        })
    }

    fn line(&self, n: usize) -> &'static str {
        let starts = self.starts();
        let (Some(&from), to) = (starts.get(n), starts.get(n + 1)) else {
            panic!("embedded {} has no line {n}", self.what);
        };
        let text: &'static str = self.text;
        text[from..to.copied().unwrap_or(text.len())].trim_end_matches('\n')
    }

    /// Release `KNOWN_VERSIONS[i]`'s own line.
    pub(crate) fn release_line(&self, i: usize) -> &'static str {
        self.line(1 + i)
    }

    /// The line of item `k`.
    pub(crate) fn item_line(&self, k: usize) -> &'static str {
        self.line(1 + COUNT + k)
    }

    /// The items whose line contains `needle` (a cheap pre-filter: callers decode the lines to
    /// be sure).
    pub(crate) fn items_containing(&self, needle: &str) -> Vec<usize> {
        let starts = self.starts();
        let first_item = starts.get(1 + COUNT).copied().unwrap_or(self.text.len());
        let mut out: Vec<usize> =
            memchr::memmem::find_iter(&self.text.as_bytes()[first_item..], needle)
                .map(|at| starts.partition_point(|&s| s <= first_item + at) - 1 - (1 + COUNT))
                .collect();
        out.dedup();
        out
    }

    /// Decodes a JSON line, naming the table and line on failure.
    pub(crate) fn parse<L: DeserializeOwned>(&self, line: &'static str) -> L {
        serde_json::from_str(line).unwrap_or_else(|e| {
            let head: String = line.chars().take(80).collect();
            panic!("embedded {} is invalid at {head:?}: {e}", self.what)
        })
    }

    /// Release `i`'s decoded value, built by `decode` on first use.
    pub(crate) fn get(&self, i: usize, decode: impl FnOnce(&Self) -> T) -> &T {
        self.decoded[i].get_or_init(|| decode(self))
    }

    /// Checks that release line `i` names `KNOWN_VERSIONS[i]`.
    pub(crate) fn check_version(&self, i: usize, version: &str) {
        assert_eq!(
            version, KNOWN_VERSIONS[i],
            "embedded {} is out of step with KNOWN_VERSIONS",
            self.what
        );
    }
}

/// Item indices from runs: `[start, count, start, count, …]`.
pub(crate) fn expand(runs: &[usize]) -> impl Iterator<Item = usize> + '_ {
    runs.chunks(2)
        .flat_map(|r| r[0]..r[0] + r.get(1).copied().unwrap_or(0))
}

/// Answers about names kept for the life of the process (bounded: a line can name thousands),
/// for the questions each fix round asks again and that read every release to answer.
pub(crate) type Answers =
    std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<String, Vec<&'static str>>>>;

/// The kept answer for `name`, else `scan`'s, kept.
pub(crate) fn remembered(
    answers: &Answers,
    name: &str,
    scan: impl FnOnce(&str) -> Vec<&'static str>,
) -> Vec<&'static str> {
    if let Some(v) = answers.lock().ok().and_then(|m| m.get(name).cloned()) {
        return v;
    }
    let v = scan(name);
    if let Ok(mut m) = answers.lock()
        && m.len() < 4096
    {
        m.insert(name.to_owned(), v.clone());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_expand_in_order() {
        assert_eq!(
            expand(&[5, 3, 0, 2, 9, 1]).collect::<Vec<_>>(),
            [5, 6, 7, 0, 1, 9]
        );
        assert_eq!(expand(&[]).count(), 0);
    }
}
