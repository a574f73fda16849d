//! The spaces inserted into the text where saphyr (YAML 1.2) wants one and PyYAML (YAML 1.1)
//! does not: after a flow value's `:` before `[`/`{` (`{a:[1]}`), and between a closing quote
//! and a comment (`"q"# c`). A space there never changes a value.
//!
//! Finding each spot by parsing until saphyr stops there would take one parse per spot, so a
//! file with many of them would take time quadratic in its length. Instead, once saphyr has
//! asked for one, every later look-alike in the text gets a space on speculation, and the parse
//! that follows says which of them were real (outside every scalar, and inside a flow
//! collection or right after a quoted scalar): real ones stay, the others are taken out and
//! the text parsed again. A file with any number of such spots takes two or three parses.

use std::collections::{BTreeSet, HashSet};

use super::error::YamlError;

/// What the composer saw in one parse, as character ranges of the edited text (sorted).
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// Plain scalars.
    pub(crate) plain: Vec<(usize, usize)>,
    /// Quoted and block scalars.
    pub(crate) quoted: Vec<(usize, usize)>,
    /// Flow collections not inside another flow collection.
    pub(crate) flows: Vec<(usize, usize)>,
    /// Start of such a flow collection still open where the parse stopped.
    pub(crate) open_flow: Option<usize>,
}

impl Seen {
    /// Sorts the ranges (they come in text order; this makes sure, cheaply).
    pub(super) fn sort(&mut self) {
        self.plain.sort_unstable();
        self.quoted.sort_unstable();
        self.flows.sort_unstable();
    }
}

/// How one parse ended.
pub(super) enum Outcome {
    Parsed,
    /// saphyr wants a space before this character of the edited text.
    Retry(usize),
    /// Any other error, at this character of the edited text.
    Failed(usize),
}

/// The spot kinds (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    FlowValue,
    Comment,
}

/// The text this may parse, all rounds together, before giving up: 64 times the file or
/// 16 Mi characters, whichever is more. Each look-alike where a space would change the
/// document and make the parse fail costs two rounds, so only contrived files get there.
fn work_budget(len: usize) -> usize {
    (64 * len).max(16 << 20)
}

/// The spaces for one text: characters of the original text a space goes before.
pub(super) struct Spaces {
    chars: Vec<char>,
    /// Every look-alike spot, in text order.
    candidates: Vec<(usize, Kind)>,
    confirmed: BTreeSet<usize>,
    speculative: BTreeSet<usize>,
    rejected: HashSet<usize>,
    /// `confirmed ∪ speculative`, sorted: the spaces in the current edited text.
    points: Vec<usize>,
    /// Characters parsed so far.
    parsed: usize,
}

impl Spaces {
    pub(super) fn new(text: &str) -> Spaces {
        let chars: Vec<char> = text.chars().collect();
        let candidates = (1..chars.len())
            .filter_map(|i| match (chars[i - 1], chars[i]) {
                (':', '[' | '{') => Some((i, Kind::FlowValue)),
                ('"' | '\'', '#') => Some((i, Kind::Comment)),
                _ => None,
            })
            .collect();
        Spaces {
            chars,
            candidates,
            confirmed: BTreeSet::new(),
            speculative: BTreeSet::new(),
            rejected: HashSet::new(),
            points: Vec::new(),
            parsed: 0,
        }
    }

    /// The text with the current spaces in, or `None` once the work budget is spent.
    pub(super) fn edited(&mut self) -> Option<String> {
        if self.parsed > work_budget(self.chars.len()) {
            return None;
        }
        self.parsed += self.chars.len().max(1);
        self.points = self.confirmed.union(&self.speculative).copied().collect();
        let mut out = String::with_capacity(self.chars.len() + self.points.len());
        let mut next = self.points.iter().peekable();
        for (i, &c) in self.chars.iter().enumerate() {
            if next.next_if(|&&p| p == i).is_some() {
                out.push(' ');
            }
            out.push(c);
        }
        Some(out)
    }

    /// Where a space before original character `p` sits in the edited text.
    fn space_at(&self, p: usize) -> usize {
        p + self.points.partition_point(|&q| q < p)
    }

    /// The original character at edited position `x` (or the one after, for an inserted space).
    fn original(&self, x: usize) -> usize {
        // edited(j) = j + #{q ≤ j} grows strictly with j: the first j with edited(j) ≥ x.
        let (mut lo, mut hi) = (0, x);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if mid + self.points.partition_point(|&q| q <= mid) >= x {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// Column (1-based) in the original text of edited position `x`.
    pub(super) fn original_col(&self, x: usize) -> usize {
        let j = self.original(x).min(self.chars.len());
        let line_start = self.chars[..j]
            .iter()
            .rposition(|&c| c == '\n')
            .map_or(0, |p| p + 1);
        j - line_start + 1
    }

    /// Whether the speculative space before `p` was real, judged by what the parse saw.
    fn real(&self, p: usize, kind: Kind, seen: &Seen, stop: usize) -> bool {
        let at = self.space_at(p);
        match kind {
            Kind::FlowValue => {
                let in_flow = within(&seen.flows, at, false)
                    || seen.open_flow.is_some_and(|s| s < at && at < stop);
                in_flow && !within(&seen.plain, at, true) && !within(&seen.quoted, at, true)
            }
            Kind::Comment => {
                let i = seen.quoted.partition_point(|&(s, _)| s < at);
                i > 0 && seen.quoted[i - 1].1 == at
            }
        }
    }

    fn kind(&self, p: usize) -> Kind {
        let i = self.candidates.partition_point(|&(c, _)| c < p);
        self.candidates.get(i).map_or(Kind::FlowValue, |&(_, k)| k)
    }

    /// Judges the speculative spaces before edited position `stop`: real ones are kept for
    /// good, the others never tried again. Whether any was not real.
    fn judge(&mut self, seen: &Seen, stop: usize) -> bool {
        let mut any_false = false;
        let judged: Vec<usize> = self
            .speculative
            .iter()
            .copied()
            .filter(|&p| self.space_at(p) < stop)
            .collect();
        for p in judged {
            self.speculative.remove(&p);
            if self.real(p, self.kind(p), seen, stop) {
                self.confirmed.insert(p);
            } else {
                self.rejected.insert(p);
                any_false = true;
            }
        }
        any_false
    }

    /// After a parse: `true` when its result stands (the document, or a real error), `false`
    /// when the text must be parsed again with the spaces as now decided.
    pub(super) fn settle(&mut self, outcome: Outcome, seen: &Seen) -> bool {
        match outcome {
            Outcome::Parsed => !self.judge(seen, usize::MAX),
            Outcome::Retry(x) => {
                let p = self.original(x);
                if !self.confirmed.insert(p) {
                    return true; // a space already there: give up (cannot happen)
                }
                self.speculative.remove(&p);
                let later = self.candidates.iter().map(|&(c, _)| c).filter(|&c| {
                    c > p && !self.confirmed.contains(&c) && !self.rejected.contains(&c)
                });
                let later: Vec<usize> = later.collect();
                self.speculative.extend(later);
                false
            }
            Outcome::Failed(x) => {
                if self.speculative.is_empty() {
                    return true;
                }
                self.judge(seen, x);
                // Spaces past the error are unknown: parse again without them.
                self.speculative.clear();
                false
            }
        }
    }

    /// The error for a text that kept needing parses.
    pub(super) fn exhausted(name: &str) -> YamlError {
        YamlError::TooManyRetries {
            name: name.to_owned(),
        }
    }
}

/// Whether `at` lies in one of the sorted, disjoint `ranges` (`start` itself counts only when
/// `with_start`; a flow collection's own bracket is not inside it).
fn within(ranges: &[(usize, usize)], at: usize, with_start: bool) -> bool {
    let i = ranges.partition_point(|&(s, _)| s <= at);
    i > 0 && {
        let (s, e) = ranges[i - 1];
        (with_start || s < at) && at < e
    }
}
