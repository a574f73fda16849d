//! From text to one document's node tree, as PyYAML's scanner, parser and composer read it.
//!
//! The events come from saphyr-parser, a YAML 1.2 reader; the differences from PyYAML (YAML
//! 1.1) that matter for real files are handled here: line breaks at NEL/LS/PS, two places
//! where YAML 1.2 wants a space PyYAML does not, tabs PyYAML refuses, error class names and
//! positions.

use std::collections::HashMap;
use std::rc::Rc;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};

use super::budget::{self, Budget};
use super::error::{YamlError, YamlProblem};
use super::spaces::{Outcome, Seen, Spaces};
use super::{Document, Node};

/// The root node of the text's one document (`None`: no document). `name` labels errors.
pub(super) fn compose(name: &str, text: &str) -> Result<Option<Document>, YamlError> {
    compose_counted(name, text).0
}

/// [`compose`], and how many times it parsed the text.
fn compose_counted(name: &str, text: &str) -> (Result<Option<Document>, YamlError>, usize) {
    // YAML 1.1 (PyYAML) also breaks lines at NEL, LS and PS; YAML 1.2 (saphyr) does not.
    let text = text.replace(['\u{85}', '\u{2028}', '\u{2029}'], "\n");
    // Spaces where saphyr's YAML 1.2 wants one and PyYAML does not (see `spaces`).
    let mut spaces = Spaces::new(&text);
    for parses in 0.. {
        let Some(edited) = spaces.edited() else {
            return (Err(Spaces::exhausted(name)), parses);
        };
        let mut composer = Composer::new(name, &edited);
        let result = composer.run(&spaces);
        let outcome = match &result {
            Ok(_) => Outcome::Parsed,
            Err(LoadErr::Retry(at)) => Outcome::Retry(*at),
            Err(LoadErr::Yaml(_, at)) => Outcome::Failed(*at),
        };
        if spaces.settle(outcome, &composer.seen) {
            let result = match result {
                Ok(doc) => Ok(doc),
                Err(LoadErr::Yaml(e, _)) => Err(e),
                Err(LoadErr::Retry(_)) => Err(Spaces::exhausted(name)),
            };
            return (result, parses + 1);
        }
    }
    unreachable!("the work budget ends the loop")
}

/// Why one parse attempt stopped.
enum LoadErr {
    /// The error, and the character of the text where the parse stopped.
    Yaml(YamlError, usize),
    /// Parse again with a space inserted at this character index.
    Retry(usize),
}

/// Where to insert a space for the saphyr errors that PyYAML would not raise.
fn retry_at(e: &ScanError, chars: &[char]) -> Option<usize> {
    let at = e.marker().index();
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

/// A collection whose end event has not come yet.
struct Open {
    anchor: usize,
    tag: Option<Tag>,
    is_map: bool,
    /// Where a flow collection's bracket is (`None`: a block collection).
    flow_start: Option<usize>,
    /// Its items so far (keys and values alternating for a mapping).
    items: Vec<Node>,
}

/// PyYAML's composer over saphyr's events: nodes, anchors and aliases, one document.
struct Composer<'t> {
    name: &'t str,
    chars: Vec<char>,
    text: &'t str,
    anchors: HashMap<usize, Rc<Node>>,
    /// The same nodes in anchor order (see `Document`).
    anchor_order: Vec<Rc<Node>>,
    stack: Vec<Open>,
    root: Option<Node>,
    doc_count: usize,
    /// Start of the first document's root node (PyYAML's context mark for a second document).
    root_mark: (usize, usize),
    /// Scalar and flow collection ranges (see `spaces`; quoted ones also for `stray_tab`).
    seen: Seen,
}

impl<'t> Composer<'t> {
    fn new(name: &'t str, text: &'t str) -> Self {
        Composer {
            name,
            chars: text.chars().collect(),
            text,
            anchors: HashMap::new(),
            anchor_order: Vec::new(),
            stack: Vec::new(),
            root: None,
            doc_count: 0,
            root_mark: (0, 0),
            seen: Seen::default(),
        }
    }

    /// One parse of the text: saphyr's events through the composer.
    fn run(&mut self, spaces: &Spaces) -> Result<Option<Document>, LoadErr> {
        for item in Parser::new_from_str(self.text) {
            let (event, span) = match item {
                Ok(ok) => ok,
                Err(e) => return Err(self.scan_error(&e, spaces)),
            };
            if let Err(e) = self.event(event, &span) {
                self.seen.sort();
                return Err(LoadErr::Yaml(e, span.start.index()));
            }
        }
        let end = self.chars.len();
        self.seen.sort();
        if let Some(tab) = stray_tab(self.name, &self.chars, &self.seen.quoted, None) {
            return Err(LoadErr::Yaml(tab, end));
        }
        Ok(self.root.take().map(|root| Document {
            root,
            anchors: std::mem::take(&mut self.anchor_order),
        }))
    }

    /// The error PyYAML raises where saphyr stopped (or a retry with a space inserted).
    fn scan_error(&mut self, e: &ScanError, spaces: &Spaces) -> LoadErr {
        let at = e.marker().index();
        self.seen.sort();
        if let Some(at) = retry_at(e, &self.chars) {
            return LoadErr::Retry(at);
        }
        // saphyr may stop just before the tab it objects to: then look past its mark.
        let limit = (!e.info().contains("tab")).then_some(at);
        if let Some(tab) = stray_tab(self.name, &self.chars, &self.seen.quoted, limit) {
            return LoadErr::Yaml(tab, at);
        }
        // saphyr reports scanner and parser problems alike; PyYAML names them apart.
        let info = e.info().to_owned();
        let problem = if info.starts_with("while parsing") {
            YamlProblem::Parser(info)
        } else {
            YamlProblem::Scanner(info)
        };
        // The column in the file as written, without the spaces put in for saphyr.
        let (line, col) = (e.marker().line(), spaces.original_col(at));
        LoadErr::Yaml(YamlError::at(problem, self.name, line, col), at)
    }

    /// Takes one event: a finished node goes to its parent collection (or is the document).
    fn event(&mut self, event: Event, span: &Span) -> Result<(), YamlError> {
        let (line, col) = (span.start.line(), span.start.col() + 1);
        let starts_node = matches!(
            event,
            Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..)
        );
        if starts_node && self.root.is_none() && self.stack.is_empty() && self.root_mark == (0, 0) {
            self.root_mark = (line, col);
        }
        let done = match event {
            Event::DocumentStart(_) => {
                self.document_start(line, col)?;
                None
            }
            Event::Scalar(value, style, anchor, tag) => {
                let (start, end) = (span.start.index(), span.end.index());
                match style {
                    ScalarStyle::Plain => self.seen.plain.push((start, end)),
                    // saphyr's span runs on past the closing quote (over blanks and a comment)
                    ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
                        let end = closing_quote(&self.chars, start).map_or(end, |c| c + 1);
                        self.seen.quoted.push((start, end));
                    }
                    _ => self.seen.quoted.push((start, end)),
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
                Some(n) => Some((0, Node::Alias(Rc::clone(n)))),
                None => {
                    return Err(YamlError::at(
                        YamlProblem::UndefinedAlias,
                        self.name,
                        line,
                        col,
                    ));
                }
            },
            Event::SequenceStart(anchor, tag) => {
                self.open(anchor, tag.map(|t| t.into_owned()), false, span)?;
                None
            }
            Event::MappingStart(anchor, tag) => {
                self.open(anchor, tag.map(|t| t.into_owned()), true, span)?;
                None
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(span),
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

    fn open(
        &mut self,
        anchor: usize,
        tag: Option<Tag>,
        is_map: bool,
        span: &Span,
    ) -> Result<(), YamlError> {
        if self.stack.len() >= budget::DEPTH {
            return Err(YamlError::budget(self.name, Budget::Depth));
        }
        let at = span.start.index();
        let flow_start = matches!(self.chars.get(at), Some('[' | '{')).then_some(at);
        if flow_start.is_some() && self.seen.open_flow.is_none() {
            self.seen.open_flow = flow_start;
        }
        self.stack.push(Open {
            anchor,
            tag,
            is_map,
            flow_start,
            items: Vec::new(),
        });
        Ok(())
    }

    /// The collection that just ended, with its anchor.
    fn close(&mut self, span: &Span) -> Option<(usize, Node)> {
        let Open {
            anchor,
            tag,
            is_map,
            flow_start,
            items,
        } = self.stack.pop()?;
        // The outermost flow collection (its end is at its closing bracket).
        let end = span.start.index();
        if let Some(start) = flow_start
            && self.seen.open_flow == Some(start)
            && matches!(self.chars.get(end), Some(']' | '}'))
        {
            self.seen.flows.push((start, end + 1));
            self.seen.open_flow = None;
        }
        let node = if is_map {
            let mut pairs = Vec::with_capacity(items.len() / 2);
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

    /// Records an anchored node and hands the node to its parent (or makes it the document).
    fn add(&mut self, anchor: usize, node: Node) {
        let node = if anchor != 0 {
            let shared = Rc::new(node);
            self.anchors.insert(anchor, Rc::clone(&shared));
            self.anchor_order.push(Rc::clone(&shared));
            Node::Anchor(shared)
        } else {
            node
        };
        match self.stack.last_mut() {
            Some(top) => top.items.push(node),
            None if self.root.is_none() => self.root = Some(node),
            None => {}
        }
    }
}

/// The closing quote of the quoted scalar whose opening quote is at `start`.
fn closing_quote(chars: &[char], start: usize) -> Option<usize> {
    let quote = *chars.get(start).filter(|&&c| c == '"' || c == '\'')?;
    let mut i = start + 1;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' if quote == '"' => i += 2,
            '\'' if quote == '\'' && chars.get(i + 1) == Some(&'\'') => i += 2,
            c if c == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// PyYAML (YAML 1.1) takes only spaces as white space between tokens: a tab outside quoted and
/// block scalars and comments (after a plain scalar, as indentation, inside a plain scalar) is a
/// ScannerError, where YAML 1.2 readers accept it. Checks up to character `limit` if given.
/// `quoted` is sorted, so one pass over the text does it.
fn stray_tab(
    name: &str,
    chars: &[char],
    quoted: &[(usize, usize)],
    limit: Option<usize>,
) -> Option<YamlError> {
    let (mut line, mut col, mut prev, mut comment) = (1, 0, '\n', false);
    let mut next_quoted = 0;
    for (i, &c) in chars.iter().enumerate() {
        if limit.is_some_and(|l| i > l) {
            break;
        }
        if c == '\n' {
            (line, col, prev, comment) = (line + 1, 0, '\n', false);
            continue;
        }
        while quoted.get(next_quoted).is_some_and(|&(_, b)| b <= i) {
            next_quoted += 1;
        }
        let in_quoted = quoted.get(next_quoted).is_some_and(|&(a, _)| a <= i);
        if !comment && !in_quoted {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Spots where saphyr wants a space, and look-alikes where a space would change the value:
    /// a few parses for any number of them, not one per spot.
    #[test]
    fn many_spots_take_a_few_parses() {
        let mut text = String::new();
        for i in 0..3000 {
            text.push_str(&format!(
                "f{i}: {{a:[{i}], b:{{c: 1}}}}\nq{i}: \"x:[y]\"# c\ns{i}: 'a''#'# c {{a:[1]}}\n"
            ));
        }
        let (doc, parses) = compose_counted("t.yaml", &text);
        assert!(doc.is_ok());
        assert!(parses <= 3, "{parses}");
        // The same with an error at the end: found, and reported without a parse per spot.
        text.push_str("bad: [1\n");
        let (doc, parses) = compose_counted("t.yaml", &text);
        assert!(doc.is_err_and(|e| e.to_string().starts_with("ParserError")));
        assert!(parses <= 4, "{parses}");
    }
}
