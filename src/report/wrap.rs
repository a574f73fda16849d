//! Wrapping report lines to the terminal's width, with a hanging indent, never inside a word:
//! flags, paths and values stay whole so they can be copied.

use textwrap::{Options, WordSplitter};

/// Narrower than this, wrapping does more harm than good (the finding column alone is 17).
const MIN_WIDTH: usize = 40;

/// The width to wrap to: `COLUMNS` when set to a number (even when not writing to a terminal:
/// the user asked), else the terminal's own width, else none (a pipe or a file is not wrapped).
pub(crate) fn width(columns: Option<&str>, terminal: Option<usize>) -> Option<usize> {
    let asked = columns.and_then(|c| c.trim().parse::<usize>().ok());
    asked.or(terminal).map(|w| w.max(MIN_WIDTH))
}

/// `line` (no newline) wrapped to `width`, continuation lines indented by `indent` columns;
/// unchanged when `width` is `None` or the line fits. Colour escapes take no width.
pub(crate) fn line(line: &str, width: Option<usize>, indent: usize) -> String {
    let Some(w) = width else {
        return line.to_owned();
    };
    if textwrap::core::display_width(line) <= w {
        return line.to_owned();
    }
    let lead = line.len() - line.trim_start_matches(' ').len();
    let first = " ".repeat(lead);
    let rest = " ".repeat(indent.min(w / 2));
    let opts = Options::new(w)
        .initial_indent(&first)
        .subsequent_indent(&rest)
        .break_words(false)
        .word_splitter(WordSplitter::NoHyphenation);
    textwrap::wrap(line.trim_start_matches(' '), opts).join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_wins_then_the_terminal_then_nothing() {
        assert_eq!(width(Some("100"), Some(80)), Some(100));
        assert_eq!(width(Some("junk"), Some(80)), Some(80));
        assert_eq!(width(None, None), None);
        assert_eq!(width(Some("10"), None), Some(MIN_WIDTH));
    }

    #[test]
    fn wraps_between_words_with_a_hanging_indent() {
        let text = "  warning AR002  custom-allreduce-pcie: --enable-custom-all-reduce-over-pcie is \
                    slow on these GPUs";
        let out = line(text, Some(56), 17);
        assert!(out.lines().count() > 1, "{out}");
        for l in out.lines() {
            assert!(l.chars().count() <= 56, "{l:?}");
        }
        assert!(out.lines().skip(1).all(|l| l.starts_with(&" ".repeat(17))));
        // Words, flags included, are never split; joined back they are the line.
        assert!(
            out.contains("--enable-custom-all-reduce-over-pcie"),
            "{out}"
        );
        let words = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(words(&out), words(text));
        assert_eq!(line(text, None, 17), text);
    }
}
