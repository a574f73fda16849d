//! What `__complete` prints: a header line `MODE<TAB>PREFIX<TAB>CURRENT`, then for `words` one
//! candidate a line, `VALUE[<TAB>DESCRIPTION]`. `PREFIX` is the part of the word being completed
//! that every candidate keeps (`--topology=`, `AR001,`), `CURRENT` the part being completed;
//! the candidates are values for `CURRENT`. For `files` and `dirs` the shell lists the paths
//! itself, so quoting, `~` and trailing slashes behave as everywhere else.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Words,
    Files,
    Dirs,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub(crate) mode: Mode,
    pub(crate) prefix: String,
    pub(crate) current: String,
    /// `(value, description)`, only those that start with `current`.
    pub(crate) items: Vec<(String, String)>,
}

impl Reply {
    /// Candidates for `current`, keeping those it starts; each value once, first description wins.
    pub(crate) fn words(
        prefix: &str,
        current: &str,
        items: impl IntoIterator<Item = (String, String)>,
    ) -> Reply {
        let mut kept: Vec<(String, String)> = Vec::new();
        for (value, about) in items {
            if value.starts_with(current) && !kept.iter().any(|(v, _)| *v == value) {
                kept.push((value, about));
            }
        }
        Reply {
            mode: Mode::Words,
            prefix: prefix.to_owned(),
            current: current.to_owned(),
            items: kept,
        }
    }

    pub(crate) fn none(current: &str) -> Reply {
        Reply::words("", current, [])
    }

    pub(crate) fn paths(mode: Mode, prefix: &str, current: &str) -> Reply {
        Reply {
            mode,
            prefix: prefix.to_owned(),
            current: current.to_owned(),
            items: Vec::new(),
        }
    }

    pub(crate) fn render(&self) -> String {
        let mode = match self.mode {
            Mode::Words => "words",
            Mode::Files => "files",
            Mode::Dirs => "dirs",
        };
        let mut s = format!(
            "{mode}\t{}\t{}\n",
            one_line(&self.prefix),
            one_line(&self.current)
        );
        for (value, about) in &self.items {
            s.push_str(&one_line(value));
            let about = one_line(about);
            if !about.is_empty() {
                s.push('\t');
                s.push_str(&about);
            }
            s.push('\n');
        }
        s
    }
}

/// The protocol is line- and tab-separated: a description is cut to its first line, and
/// tabs and newlines inside a field become spaces.
fn one_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or("")
        .replace('\t', " ")
        .trim_end()
        .to_owned()
}
