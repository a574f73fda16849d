//! From text to one document's node tree, as PyYAML's scanner, parser and composer read it.
//!
//! The events come from saphyr-parser, a YAML 1.2 reader; the differences from PyYAML (YAML
//! 1.1) that matter for real files are handled here: line breaks at NEL/LS/PS, two places
//! where YAML 1.2 wants a space PyYAML does not, tabs PyYAML refuses, error class names and
//! positions.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};

use super::Node;
use super::error::{Problem, YamlError};

/// The root node of the text's one document (`None`: no document). `name` labels errors.
pub(super) fn compose(name: &str, text: &str) -> Result<Option<Node>, YamlError> {
    // YAML 1.1 (PyYAML) also breaks lines at NEL, LS and PS; YAML 1.2 (saphyr) does not.
    let mut text = text.replace(['\u{85}', '\u{2028}', '\u{2029}'], "\n");
    // Two spots where saphyr's YAML 1.2 wants a space PyYAML does not: `"q"# c` (a comment
    // right after a quoted scalar) and `{a:[1]}` (a flow value right after `:`). Each retry
    // adds that space and parses again; values are unchanged by it.
    for _ in 0..64 {
        match load_once(name, &text) {
            Err(LoadErr::Retry(at)) => {
                let byte = text.char_indices().nth(at).map_or(text.len(), |(b, _)| b);
                text.insert(byte, ' ');
            }
            Err(LoadErr::Yaml(e)) => return Err(e),
            Ok(v) => return Ok(v),
        }
    }
    load_once(name, &text).map_err(|e| match e {
        LoadErr::Yaml(e) => e,
        LoadErr::Retry(_) => YamlError::TooManyRetries {
            name: name.to_owned(),
        },
    })
}

/// Why one parse attempt stopped.
enum LoadErr {
    Yaml(YamlError),
    /// Parse again with a space inserted at this character index.
    Retry(usize),
}

impl From<YamlError> for LoadErr {
    fn from(e: YamlError) -> Self {
        LoadErr::Yaml(e)
    }
}

/// Where to insert a space for the saphyr errors that PyYAML would not raise.
fn retry_at(e: &ScanError, text: &str) -> Option<usize> {
    let at = e.marker().index();
    let chars: Vec<char> = text.chars().collect();
    if e.info().starts_with("':' may not precede") && chars.get(at) == Some(&':') {
        return Some(at + 1);
    }
    if e.info().starts_with("comments must be separated") {
        // the `#` on this line that directly follows a closing quote
        let end = chars[at.min(chars.len())..]
            .iter()
            .position(|&c| c == '\n')
            .map_or(chars.len(), |p| at + p);
        let start = chars[..at.min(chars.len())]
            .iter()
            .rposition(|&c| c == '\n')
            .map_or(0, |p| p + 1);
        return (start.max(1)..end)
            .find(|&i| chars[i] == '#' && matches!(chars[i - 1], '"' | '\''));
    }
    None
}

/// One parse of the text: saphyr's events through the composer.
fn load_once(name: &str, text: &str) -> Result<Option<Node>, LoadErr> {
    let mut composer = Composer::new(name, text);
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| composer.scan_error(&e))?;
        composer.event(event, &span)?;
    }
    if let Some(tab) = stray_tab(name, text, &composer.quoted, None) {
        return Err(tab.into());
    }
    Ok(composer.docs.into_iter().next())
}

/// A collection whose end event has not come yet.
struct Open {
    anchor: usize,
    tag: Option<Tag>,
    is_map: bool,
    /// Its items so far (keys and values alternating for a mapping).
    items: Vec<Node>,
}

/// PyYAML's composer over saphyr's events: nodes, anchors and aliases, one document.
struct Composer<'t> {
    name: &'t str,
    text: &'t str,
    anchors: HashMap<usize, Node>,
    stack: Vec<Open>,
    docs: Vec<Node>,
    doc_count: usize,
    /// Start of the first document's root node (PyYAML's context mark for a second document).
    root_mark: (usize, usize),
    /// Character ranges of quoted and block scalars: the only places PyYAML allows a tab.
    quoted: Vec<(usize, usize)>,
}

impl<'t> Composer<'t> {
    fn new(name: &'t str, text: &'t str) -> Self {
        Composer {
            name,
            text,
            anchors: HashMap::new(),
            stack: Vec::new(),
            docs: Vec::new(),
            doc_count: 0,
            root_mark: (0, 0),
            quoted: Vec::new(),
        }
    }

    /// The error PyYAML raises where saphyr stopped (or a retry with a space inserted).
    fn scan_error(&self, e: &ScanError) -> LoadErr {
        if let Some(at) = retry_at(e, self.text) {
            return LoadErr::Retry(at);
        }
        // saphyr may stop just before the tab it objects to: then look past its mark.
        let limit = (!e.info().contains("tab")).then(|| e.marker().index());
        if let Some(tab) = stray_tab(self.name, self.text, &self.quoted, limit) {
            return tab.into();
        }
        // saphyr reports scanner and parser problems alike; PyYAML names them apart.
        let info = e.info().to_owned();
        let problem = if info.starts_with("while parsing") {
            Problem::Parser(info)
        } else {
            Problem::Scanner(info)
        };
        let (line, col) = (e.marker().line(), e.marker().col() + 1);
        YamlError::at(problem, self.name, line, col).into()
    }

    /// Takes one event: a finished node goes to its parent collection (or is a document).
    fn event(&mut self, event: Event, span: &Span) -> Result<(), YamlError> {
        let (line, col) = (span.start.line(), span.start.col() + 1);
        let starts_node = matches!(
            event,
            Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..)
        );
        if starts_node && self.docs.is_empty() && self.stack.is_empty() && self.root_mark == (0, 0)
        {
            self.root_mark = (line, col);
        }
        let done = match event {
            Event::DocumentStart(_) => {
                self.document_start(line, col)?;
                None
            }
            Event::Scalar(value, style, anchor, tag) => {
                if style != ScalarStyle::Plain {
                    self.quoted.push((span.start.index(), span.end.index()));
                }
                let node = Node::Scalar {
                    value: value.into_owned(),
                    plain: style == ScalarStyle::Plain,
                    tag: tag.map(|t| t.into_owned()),
                    line,
                    col,
                };
                Some((anchor, node))
            }
            Event::Alias(id) => match self.anchors.get(&id) {
                Some(n) => Some((0, n.clone())),
                None => {
                    return Err(YamlError::at(Problem::UndefinedAlias, self.name, line, col));
                }
            },
            Event::SequenceStart(anchor, tag) => {
                self.open(anchor, tag.map(|t| t.into_owned()), false);
                None
            }
            Event::MappingStart(anchor, tag) => {
                self.open(anchor, tag.map(|t| t.into_owned()), true);
                None
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(),
            _ => None,
        };
        if let Some((anchor, node)) = done {
            self.add(anchor, node);
        }
        Ok(())
    }

    /// A second document is an error: `safe_load` reads exactly one.
    fn document_start(&mut self, line: usize, col: usize) -> Result<(), YamlError> {
        self.doc_count += 1;
        if self.doc_count > 1 {
            let (first_line, first_col) = self.root_mark;
            return Err(YamlError::SecondDocument {
                name: self.name.to_owned(),
                first_line,
                first_col,
                line,
                col,
            });
        }
        Ok(())
    }

    fn open(&mut self, anchor: usize, tag: Option<Tag>, is_map: bool) {
        self.stack.push(Open {
            anchor,
            tag,
            is_map,
            items: Vec::new(),
        });
    }

    /// The collection that just ended, with its anchor.
    fn close(&mut self) -> Option<(usize, Node)> {
        let Open {
            anchor,
            tag,
            is_map,
            items,
        } = self.stack.pop()?;
        let node = if is_map {
            let mut pairs = Vec::new();
            let mut it = items.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                pairs.push((k, v));
            }
            Node::Map(pairs, tag)
        } else {
            Node::Seq(items, tag)
        };
        Some((anchor, node))
    }

    /// Records an anchored node and hands the node to its parent (or makes it a document).
    fn add(&mut self, anchor: usize, node: Node) {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            Some(top) => top.items.push(node),
            None => self.docs.push(node),
        }
    }
}

/// PyYAML (YAML 1.1) takes only spaces as white space between tokens: a tab outside quoted and
/// block scalars and comments (after a plain scalar, as indentation, inside a plain scalar) is a
/// ScannerError, where YAML 1.2 readers accept it. Checks up to character `limit` if given.
fn stray_tab(
    name: &str,
    text: &str,
    quoted: &[(usize, usize)],
    limit: Option<usize>,
) -> Option<YamlError> {
    let (mut line, mut col, mut prev, mut comment) = (1, 0, '\n', false);
    for (i, c) in text.chars().enumerate() {
        if limit.is_some_and(|l| i > l) {
            break;
        }
        if c == '\n' {
            (line, col, prev, comment) = (line + 1, 0, '\n', false);
            continue;
        }
        if !comment && !quoted.iter().any(|&(a, b)| (a..b).contains(&i)) {
            if c == '#' && matches!(prev, ' ' | '\n') {
                comment = true;
            } else if c == '\t' {
                return Some(YamlError::Tab {
                    name: name.to_owned(),
                    line,
                    col: col + 1,
                });
            }
        }
        prev = c;
        col += 1;
    }
    None
}
