//! Release gates for the formulas: where only a constant changed, the change is data here.

use crate::sglang::release::at_least;

/// `version` is `first` or a later release, in PEP 440 order (`0.5.3rc0` < `0.5.3rc2` <
/// `0.5.3`: one formula changed between two release candidates).
pub(super) fn since(version: &str, first: &str) -> bool {
    at_least(version, first)
}

/// The value in force for `version`: the last `(first release, value)` at or before it (the
/// first entry's value for anything older). Entries are oldest first.
pub(super) fn pick<T: Copy>(version: &str, table: &[(&str, T)]) -> T {
    table
        .iter()
        .rev()
        .find(|(first, _)| since(version, first))
        .unwrap_or(&table[0])
        .1
}

/// Decode CUDA-graph max batch size on GPUs under 35 GiB (tp < 4, tp ≥ 4), 0.5.3rc2 on.
pub(super) const SMALL_GPU_DECODE_BS: &[(&str, (i64, i64))] = &[
    ("0.5.3rc2", (16, 80)),
    ("0.5.4.post1", (24, 80)),
    ("0.5.20", (48, 160)),
];

/// Chunked prefill size on GPUs under 35 GiB, 0.5.3rc2 on.
pub(super) const SMALL_GPU_CHUNK: &[(&str, i64)] = &[("0.5.3rc2", 2048), ("0.5.20", 4096)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_candidates_are_ordered_by_number() {
        assert!(since("0.5.3rc2", "0.5.3rc2"));
        assert!(!since("0.5.3rc0", "0.5.3rc2"));
        assert!(since("0.5.3", "0.5.3rc2"));
        assert!(since("0.5.3.post1", "0.5.3rc2"));
        assert!(!since("0.5.2", "0.5.3rc2"));
        assert!(!since("0.5.3rc2", "0.5.3"));
    }

    #[test]
    fn pick_takes_the_last_gate_passed() {
        assert_eq!(pick("0.5.4", SMALL_GPU_DECODE_BS), (16, 80));
        assert_eq!(pick("0.5.4.post1", SMALL_GPU_DECODE_BS), (24, 80));
        assert_eq!(pick("0.5.23", SMALL_GPU_DECODE_BS), (48, 160));
        assert_eq!(pick("0.5.2", SMALL_GPU_CHUNK), 2048);
    }
}
