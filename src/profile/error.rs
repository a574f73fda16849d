//! One error type for every way a profile can be wrong: each names the file (and line:column
//! where there is one) and says what to do. All are the launcher's input errors (exit 2).

use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ProfileError(pub String);

impl ProfileError {
    pub(crate) fn at(origin: &str, text: &str, span: Option<Range<usize>>, message: &str) -> Self {
        match span {
            Some(s) => {
                let (line, col) = line_col(text, s.start);
                ProfileError(format!("{origin}:{line}:{col}: {message}"))
            }
            None => ProfileError(format!("{origin}: {message}")),
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let text = "a = 1\n[args]\nxy = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, text.find("xy").unwrap()), (3, 1));
        assert_eq!(line_col(text, text.find("2").unwrap()), (3, 6));
    }
}
