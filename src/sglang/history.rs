//! What the embedded history tables (the flag and environment histories, written by `scripts/`
//! and turned into Rust statics by `build.rs`) share: a release lists its items as runs of item
//! indices, and answers about names that scan every release are kept.

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
