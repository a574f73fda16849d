//! SafeConstructor: from a node tree to Python values (tags, merge keys, duplicate keys,
//! `!!omap`/`!!pairs`/`!!set`).

use std::collections::HashMap;

use saphyr_parser::Tag;

use super::Node;
use super::budget::{Budget, DEPTH, Spent};
use super::error::{YamlError, YamlProblem};
use super::resolve::resolve;
use super::scalar::scalar;
use super::value::Py;

fn is_core(tag: &Tag, suffix: &str) -> bool {
    tag.is_yaml_core_schema() && tag.suffix == suffix
}

/// The non-specific tag `!` (saphyr: empty handle, suffix `!`): the node keeps its plain kind.
fn non_specific(tag: &Tag) -> bool {
    tag.handle.is_empty() && tag.suffix == "!"
}

fn tag_text(tag: &Tag) -> String {
    if tag.is_yaml_core_schema() {
        format!("tag:yaml.org,2002:{}", tag.suffix)
    } else {
        tag.to_string()
    }
}

/// "could not determine a constructor for the tag …" at `line`, `col`.
fn unknown(name: &str, tag: &Tag, line: usize, col: usize) -> YamlError {
    YamlError::at(YamlProblem::UnknownTag(tag_text(tag)), name, line, col)
}

/// The Python value of a document's root node (`name` labels error messages).
pub(super) fn construct_document(name: &str, root: &Node) -> Result<Py, YamlError> {
    Builder {
        name,
        spent: Spent::default(),
        depth: 0,
        aliased: 0,
    }
    .construct(root)
}

/// Builds values from nodes, counting what aliases and merge keys copy (see `budget`).
struct Builder<'n> {
    name: &'n str,
    spent: Spent,
    /// Collections being built, one inside the other.
    depth: usize,
    /// Aliases being expanded, one inside the other: what is built while it is above 0 (past
    /// the anchor's own first use) is a copy.
    aliased: usize,
}

impl Builder<'_> {
    fn over(&self, budget: Budget) -> YamlError {
        YamlError::budget(self.name, budget)
    }

    /// Counts one value, if it is a copy.
    fn count(&mut self, bytes: usize) -> Result<(), YamlError> {
        if self.aliased > 0 {
            self.spent.copy(bytes).map_err(|b| self.over(b))?;
        }
        Ok(())
    }

    /// The value of a node. Kept small (the scalar work is in `scalar_value`): it is on the
    /// stack once per level of nesting.
    fn construct(&mut self, node: &Node) -> Result<Py, YamlError> {
        match node {
            Node::Anchor(target) => self.construct(target),
            Node::Alias(target) => {
                self.aliased += 1;
                let v = self.construct(target);
                self.aliased -= 1;
                v
            }
            Node::Scalar { .. } => self.scalar_value(node),
            Node::Seq(..) | Node::Map(..) => {
                self.count(0)?;
                if self.depth >= DEPTH {
                    return Err(self.over(Budget::Depth));
                }
                self.depth += 1;
                let v = match node {
                    Node::Seq(items, tag) => self.construct_seq(items, tag.as_ref()),
                    Node::Map(pairs, tag) => self.construct_map(pairs, tag.as_ref()),
                    _ => unreachable!("a collection"),
                };
                self.depth -= 1;
                v
            }
        }
    }

    #[inline(never)]
    fn scalar_value(&mut self, node: &Node) -> Result<Py, YamlError> {
        let Node::Scalar {
            value,
            plain,
            tag,
            line,
            col,
        } = node
        else {
            unreachable!("a scalar")
        };
        let name = self.name;
        self.count(value.len())?;
        let kind = match tag {
            None if *plain => resolve(value),
            None => "str",
            // PyYAML resolves `! x` as if plain, whatever its quoting.
            Some(t) if non_specific(t) => resolve(value),
            Some(t) if t.is_yaml_core_schema() => match t.suffix.as_str() {
                s @ ("str" | "int" | "float" | "bool" | "null" | "binary" | "timestamp") => s,
                _ => return Err(unknown(name, t, *line, *col)),
            },
            Some(t) => return Err(unknown(name, t, *line, *col)),
        };
        scalar(name, kind, value, *line)
    }

    /// A sequence: a list, or for `!!omap` / `!!pairs` a list of (key, value) tuples.
    fn construct_seq(&mut self, items: &[Node], tag: Option<&Tag>) -> Result<Py, YamlError> {
        let name = self.name;
        if let Some(t) = tag.filter(|t| is_core(t, "omap") || is_core(t, "pairs")) {
            // A list of one-pair mappings: a list of (key, value) tuples.
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item.resolved() {
                    Node::Map(pairs, _) if pairs.len() == 1 => {
                        let k = self.construct(&pairs[0].0)?;
                        let v = self.construct(&pairs[0].1)?;
                        out.push(Py::Tuple(Box::new(k), Box::new(v)));
                    }
                    other => {
                        let problem = YamlProblem::NotAPair(tag_text(t));
                        return Err(YamlError::at(problem, name, node_line(other), 1));
                    }
                }
            }
            return Ok(Py::List(out));
        }
        if let Some(t) = tag.filter(|t| !is_core(t, "seq") && !non_specific(t)) {
            return Err(unknown(name, t, 0, 0));
        }
        let mut out = Vec::with_capacity(items.len());
        for n in items {
            out.push(self.construct(n)?);
        }
        Ok(Py::List(out))
    }

    /// A mapping: a dict (merge keys flattened, a repeated key taking the last value), or for
    /// `!!set` a set of its keys.
    fn construct_map(
        &mut self,
        pairs: &[(Node, Node)],
        tag: Option<&Tag>,
    ) -> Result<Py, YamlError> {
        let name = self.name;
        let set = tag.is_some_and(|t| is_core(t, "set"));
        if let Some(t) = tag.filter(|t| !is_core(t, "map") && !set && !non_specific(t)) {
            return Err(unknown(name, t, 0, 0));
        }
        let mut flat = Vec::new();
        self.flatten(pairs, &mut flat)?;
        let mut out = Dict::default();
        for (k, v) in flat {
            let key = self.construct(k)?;
            if matches!(key, Py::List(_) | Py::Dict(_) | Py::Set(_)) {
                return Err(YamlError::at(
                    YamlProblem::UnhashableKey,
                    name,
                    node_line(k),
                    1,
                ));
            }
            let value = self.construct(v)?;
            out.insert(key, value);
        }
        Ok(if set {
            Py::Set(out.pairs.into_iter().map(|(k, _)| k).collect())
        } else {
            Py::Dict(out.pairs)
        })
    }

    /// SafeConstructor.flatten_mapping: `<<` merge keys become ordinary pairs placed first, so
    /// the mapping's own keys override them. Each pair a merge brings in is counted as a copy.
    fn flatten<'a>(
        &mut self,
        pairs: &'a [(Node, Node)],
        out: &mut Vec<(&'a Node, &'a Node)>,
    ) -> Result<(), YamlError> {
        let name = self.name;
        let bad = |n: &Node| YamlError::at(YamlProblem::BadMerge, name, node_line(n), 1);
        let mut own = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            if !is_merge_key(k) {
                own.push((k, v));
                continue;
            }
            let before = out.len();
            match v.resolved() {
                Node::Map(sub, _) => self.merged(sub, out)?,
                Node::Seq(items, _) => {
                    // Later mappings in the list come first, so earlier ones override them.
                    for item in items.iter().rev() {
                        match item.resolved() {
                            Node::Map(sub, _) => self.merged(sub, out)?,
                            other => return Err(bad(other)),
                        }
                    }
                }
                other => return Err(bad(other)),
            }
            for _ in before..out.len() {
                self.spent.copy(0).map_err(|b| self.over(b))?;
            }
        }
        out.extend(own);
        Ok(())
    }

    /// The pairs of one mapping a merge key names, itself flattened.
    fn merged<'a>(
        &mut self,
        sub: &'a [(Node, Node)],
        out: &mut Vec<(&'a Node, &'a Node)>,
    ) -> Result<(), YamlError> {
        if self.depth >= DEPTH {
            return Err(self.over(Budget::Depth));
        }
        self.depth += 1;
        let r = self.flatten(sub, out);
        self.depth -= 1;
        r
    }
}

/// A dict under construction: insertion order, and Python's key equality found through a hash
/// index, so a mapping of n keys takes n steps, not n².
#[derive(Default)]
struct Dict {
    pairs: Vec<(Py, Py)>,
    /// Key class → places in `pairs` of the keys in it (equal keys share a class).
    index: HashMap<KeyClass, Vec<usize>>,
}

impl Dict {
    /// `d[key] = value`: a repeated key keeps its first place and takes the last value.
    fn insert(&mut self, key: Py, value: Py) {
        if matches!(key, Py::Float(f) if f.is_nan()) {
            // NaN equals nothing, itself included: always a new key.
            self.pairs.push((key, value));
            return;
        }
        let places = self.index.entry(KeyClass::of(&key)).or_default();
        match places.iter().find(|&&i| self.pairs[i].0.key_eq(&key)) {
            Some(&i) => self.pairs[i].1 = value,
            None => {
                places.push(self.pairs.len());
                self.pairs.push((key, value));
            }
        }
    }
}

/// What equal keys ([`Py::key_eq`]) have in common: numbers (`1`, `1.0`, `True`) by value,
/// strings by text, anything else by `repr()` (equal values have equal reprs).
#[derive(PartialEq, Eq, Hash)]
enum KeyClass {
    Number(u64),
    Str(String),
    Other(String),
}

impl KeyClass {
    fn of(key: &Py) -> KeyClass {
        let number = match key {
            Py::Bool(b) => Some(f64::from(u8::from(*b))),
            Py::Int(s) => Some(s.parse().unwrap_or(f64::NAN)),
            Py::Float(f) => Some(*f),
            _ => None,
        };
        match (number, key) {
            // `+ 0.0` makes -0.0 and 0.0 one class.
            (Some(f), _) => KeyClass::Number((f + 0.0).to_bits()),
            (None, Py::Str(s)) => KeyClass::Str(s.clone()),
            (None, other) => KeyClass::Other(other.py_repr()),
        }
    }
}

fn node_line(n: &Node) -> usize {
    match n.resolved() {
        Node::Scalar { line, .. } => *line,
        _ => 0,
    }
}

fn is_merge_key(n: &Node) -> bool {
    match n.resolved() {
        Node::Scalar {
            value, plain, tag, ..
        } => match tag {
            None => *plain && value == "<<",
            Some(t) => is_core(t, "merge"),
        },
        _ => false,
    }
}
