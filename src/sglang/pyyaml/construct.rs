//! SafeConstructor: from a node tree to Python values (tags, merge keys, duplicate keys,
//! `!!omap`/`!!pairs`/`!!set`).

use saphyr_parser::Tag;

use super::Node;
use super::error::{Problem, YamlError};
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
    YamlError::at(Problem::UnknownTag(tag_text(tag)), name, line, col)
}

/// The Python value of a node (`name` labels error messages).
pub(super) fn construct(name: &str, node: &Node) -> Result<Py, YamlError> {
    match node {
        Node::Scalar {
            value,
            plain,
            tag,
            line,
            col,
        } => {
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
        Node::Seq(items, tag) => construct_seq(name, items, tag.as_ref()),
        Node::Map(pairs, tag) => construct_map(name, pairs, tag.as_ref()),
    }
}

/// A sequence: a list, or for `!!omap` / `!!pairs` a list of (key, value) tuples.
fn construct_seq(name: &str, items: &[Node], tag: Option<&Tag>) -> Result<Py, YamlError> {
    if let Some(t) = tag.filter(|t| is_core(t, "omap") || is_core(t, "pairs")) {
        // A list of one-pair mappings: a list of (key, value) tuples.
        let mut out = Vec::new();
        for item in items {
            match item {
                Node::Map(pairs, _) if pairs.len() == 1 => out.push(Py::Tuple(
                    Box::new(construct(name, &pairs[0].0)?),
                    Box::new(construct(name, &pairs[0].1)?),
                )),
                other => {
                    let problem = Problem::NotAPair(tag_text(t));
                    return Err(YamlError::at(problem, name, node_line(other), 1));
                }
            }
        }
        return Ok(Py::List(out));
    }
    if let Some(t) = tag.filter(|t| !is_core(t, "seq") && !non_specific(t)) {
        return Err(unknown(name, t, 0, 0));
    }
    Ok(Py::List(
        items
            .iter()
            .map(|n| construct(name, n))
            .collect::<Result<_, _>>()?,
    ))
}

/// A mapping: a dict (merge keys flattened, a repeated key taking the last value), or for
/// `!!set` a set of its keys.
fn construct_map(name: &str, pairs: &[(Node, Node)], tag: Option<&Tag>) -> Result<Py, YamlError> {
    let set = tag.is_some_and(|t| is_core(t, "set"));
    if let Some(t) = tag.filter(|t| !is_core(t, "map") && !set && !non_specific(t)) {
        return Err(unknown(name, t, 0, 0));
    }
    let flat = flatten(name, pairs)?;
    let mut out: Vec<(Py, Py)> = Vec::new();
    for (k, v) in flat {
        let key = construct(name, k)?;
        if matches!(key, Py::List(_) | Py::Dict(_) | Py::Set(_)) {
            return Err(YamlError::at(Problem::UnhashableKey, name, node_line(k), 1));
        }
        let value = construct(name, v)?;
        // A repeated key keeps its first place and takes the last value (dict update).
        match out.iter_mut().find(|(ek, _)| ek.key_eq(&key)) {
            Some(slot) => slot.1 = value,
            None => out.push((key, value)),
        }
    }
    Ok(if set {
        Py::Set(out.into_iter().map(|(k, _)| k).collect())
    } else {
        Py::Dict(out)
    })
}

fn node_line(n: &Node) -> usize {
    match n {
        Node::Scalar { line, .. } => *line,
        _ => 0,
    }
}

fn is_merge_key(n: &Node) -> bool {
    match n {
        Node::Scalar {
            value, plain, tag, ..
        } => match tag {
            None => *plain && value == "<<",
            Some(t) => is_core(t, "merge"),
        },
        _ => false,
    }
}

/// SafeConstructor.flatten_mapping: `<<` merge keys become ordinary pairs placed first, so the
/// mapping's own keys override them.
fn flatten<'a>(
    name: &str,
    pairs: &'a [(Node, Node)],
) -> Result<Vec<(&'a Node, &'a Node)>, YamlError> {
    let mut merged: Vec<(&Node, &Node)> = Vec::new();
    let mut own: Vec<(&Node, &Node)> = Vec::new();
    let bad = |n: &Node| YamlError::at(Problem::BadMerge, name, node_line(n), 1);
    for (k, v) in pairs {
        if !is_merge_key(k) {
            own.push((k, v));
            continue;
        }
        match v {
            Node::Map(sub, _) => merged.extend(flatten(name, sub)?),
            Node::Seq(items, _) => {
                let mut subs = Vec::new();
                for item in items {
                    match item {
                        Node::Map(sub, _) => subs.push(flatten(name, sub)?),
                        other => return Err(bad(other)),
                    }
                }
                for sub in subs.into_iter().rev() {
                    merged.extend(sub);
                }
            }
            other => return Err(bad(other)),
        }
    }
    merged.extend(own);
    Ok(merged)
}
