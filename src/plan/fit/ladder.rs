//! The values a `--fit` knob may take, ascending, and the search for the largest that holds.
//! Never materialised: a knob's range can be as long as the number the user typed, so the
//! search is a binary search over indices (at most 64 probes, whatever the range).

/// `head`, then `first, first + step, …` (`count` values), then `tail`; ascending overall.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ladder {
    pub(crate) head: Vec<u64>,
    pub(crate) first: u64,
    pub(crate) step: u64,
    pub(crate) count: u64,
    pub(crate) tail: Vec<u64>,
}

impl Ladder {
    /// These values, in this order.
    pub(crate) fn of(values: Vec<u64>) -> Ladder {
        Ladder {
            head: values,
            ..Ladder::default()
        }
    }

    /// `first, first + step, …` below `end` (exclusive); `step` at least 1.
    pub(crate) fn below(first: u64, step: u64, end: u64) -> Ladder {
        let step = step.max(1);
        Ladder {
            first,
            step,
            count: end.saturating_sub(first).div_ceil(step),
            ..Ladder::default()
        }
    }

    pub(crate) fn len(&self) -> u64 {
        (self.head.len() as u64)
            .saturating_add(self.count)
            .saturating_add(self.tail.len() as u64)
    }

    pub(crate) fn at(&self, i: u64) -> u64 {
        let head = self.head.len() as u64;
        if i < head {
            return self.head[i as usize];
        }
        let i = i - head;
        if i < self.count {
            return self.first.saturating_add(i.saturating_mul(self.step));
        }
        self.tail[(i - self.count) as usize]
    }

    pub(crate) fn first_value(&self) -> Option<u64> {
        (self.len() > 0).then(|| self.at(0))
    }
}

/// The largest value of `ladder` at which `ok` holds, by binary search: `ok` is taken to hold
/// up to some point and fail above it. `None` when it fails at the smallest.
pub(crate) fn largest(ladder: &Ladder, ok: impl Fn(u64) -> bool) -> Option<u64> {
    let first = ladder.first_value()?;
    if !ok(first) {
        return None;
    }
    // ok(at(lo)) holds; from `hi` on it fails (or the ladder ends).
    let (mut lo, mut hi) = (0, ladder.len());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(ladder.at(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(ladder.at(lo))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_scan(l: &Ladder, ok: impl Fn(u64) -> bool) -> Option<u64> {
        (0..l.len()).map(|i| l.at(i)).take_while(|&x| ok(x)).last()
    }

    #[test]
    fn binary_search_finds_the_last_value_that_holds() {
        let ladder = Ladder {
            head: vec![1, 3],
            tail: vec![2200, 2300],
            ..Ladder::below(7, 7, 2101)
        };
        assert_eq!(ladder.len(), 2 + 300 + 2);
        for limit in [0, 1, 2, 6, 7, 8, 700, 2099, 2100, 2250, 5000] {
            let ok = |v: u64| v <= limit;
            assert_eq!(largest(&ladder, ok), by_scan(&ladder, ok), "{limit}");
        }
        assert_eq!(largest(&Ladder::default(), |_| true), None);
    }

    #[test]
    fn a_ladder_as_long_as_any_number_costs_64_probes_at_most() {
        let ladder = Ladder::below(2048, 1024, u64::MAX);
        let probes = std::cell::Cell::new(0);
        let found = largest(&ladder, |v| {
            probes.set(probes.get() + 1);
            v <= 1_000_000_000_000
        });
        assert_eq!(found, Some(1_000_000_000_000));
        assert!(probes.get() <= 65, "{}", probes.get());
        assert_eq!(ladder.at(ladder.len() - 1) / 1024, (u64::MAX - 1) / 1024);
    }
}
