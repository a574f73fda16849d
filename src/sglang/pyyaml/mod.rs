//! PyYAML's `yaml.safe_load`, reduced to the Python values it builds and the exceptions it
//! raises, for reading SGLang's `--config` files the way SGLang does.
//!
//! * `compose`: text → one document's node tree (saphyr-parser's events, adjusted to YAML 1.1
//!   where PyYAML reads differently); `spaces`: where that adjustment inserts a space;
//! * `resolve`: the implicit resolver, which type a plain scalar is;
//! * `construct` and `scalar`: nodes → [`Py`] values;
//! * `value`: the values, and Python's `str()`, `repr()`, `json.dumps()`;
//! * `error`: what goes wrong, as Python's exception lines.
//!
//! Aliases share their anchor's node (as PyYAML's composer does), so composing is linear in the
//! text; building the values copies them out, and that copying is held to [`budget`]s, since a
//! few hundred bytes of nested aliases or merge keys stand for billions of values.
//!
//! Checked against PyYAML itself by the goldens in `tests/conformance/yaml-scalars.jsonl`.

pub(crate) mod budget;
mod compose;
mod construct;
pub(crate) mod error;
mod resolve;
mod scalar;
mod spaces;
mod value;

use std::rc::Rc;

use saphyr_parser::Tag;

pub(crate) use error::{DumpError, YamlError};
pub(crate) use value::Py;

/// One YAML node before construction.
#[derive(Debug, Clone)]
enum Node {
    Scalar {
        value: String,
        plain: bool,
        tag: Option<Tag>,
        line: usize,
        col: usize,
    },
    Seq(Vec<Node>, Option<Tag>),
    Map(Vec<(Node, Node)>, Option<Tag>),
    /// An anchored node where it is written (`&a`).
    Anchor(Rc<Node>),
    /// The same node used again (`*a`): shared here, copied when values are built.
    Alias(Rc<Node>),
}

impl Node {
    /// The node itself, or the one its anchor stands for.
    fn resolved(&self) -> &Node {
        match self {
            Node::Anchor(n) | Node::Alias(n) => n.resolved(),
            other => other,
        }
    }
}

/// One document's root and the anchored nodes it shares.
struct Document {
    root: Node,
    /// In anchor order: a node refers only to anchors defined before it.
    anchors: Vec<Rc<Node>>,
}

impl Drop for Document {
    /// The root first, then the anchors from last to first: each node is then freed with only
    /// its own written nesting on the stack, never a whole chain of aliases.
    fn drop(&mut self) {
        self.root = Node::Seq(Vec::new(), None);
        while let Some(n) = self.anchors.pop() {
            drop(n);
        }
    }
}

/// `yaml.safe_load(text)`: the one document's value (no document → `None`). `name` labels
/// error messages, as PyYAML's marks name the stream.
pub fn safe_load(name: &str, text: &str) -> Result<Py, YamlError> {
    match compose::compose(name, text)? {
        None => Ok(Py::None),
        Some(doc) => construct::construct_document(name, &doc.root),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PyYAML's own answers (tests/conformance/yaml-scalars.jsonl, made by
    /// `scripts/gen-conformance.py --yaml-scalars`): the value's type and `str()`, or the
    /// exception class (YAML errors compared by family).
    #[test]
    fn scalars_read_like_pyyaml() {
        let text = include_str!("../../../tests/conformance/yaml-scalars.jsonl");
        let (n, bad) = replay_yaml_goldens(text);
        assert!(n > 1000, "{n}");
        assert!(bad.is_empty(), "{} of {n}:\n{}", bad.len(), bad.join("\n"));
    }

    /// PyYAML's answers on documents with many spots where saphyr wants a space PyYAML does not,
    /// and look-alikes where one would change the document (tests/conformance/yaml-spaces.jsonl,
    /// `scripts/gen-conformance.py --yaml-spaces`).
    #[test]
    fn spaces_for_saphyr_change_nothing_pyyaml_reads() {
        let text = include_str!("../../../tests/conformance/yaml-spaces.jsonl");
        let (n, bad) = replay_yaml_goldens(text);
        assert_eq!(n, 25);
        assert!(bad.is_empty(), "{} of {n}:\n{}", bad.len(), bad.join("\n"));
    }

    /// An extra round from a file of the same format (`YAML_GOLDENS=path`), not committed.
    #[test]
    fn extra_yaml_goldens() {
        let Ok(path) = std::env::var("YAML_GOLDENS") else {
            return;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let (n, bad) = replay_yaml_goldens(&text);
        assert!(bad.is_empty(), "{} of {n}:\n{}", bad.len(), bad.join("\n"));
    }

    fn replay_yaml_goldens(text: &str) -> (usize, Vec<String>) {
        let mut bad = Vec::new();
        let mut n = 0;
        for line in text.lines() {
            let case: serde_json::Value = serde_json::from_str(line).unwrap();
            let doc = case["doc"].as_str().unwrap();
            n += 1;
            // The value under "k" when there is one, else the whole document (as the probe).
            let got = safe_load("t.yaml", doc).map(|v| match v {
                Py::Dict(pairs) if pairs.iter().any(|(k, _)| *k == Py::Str("k".into())) => pairs
                    .into_iter()
                    .find(|(k, _)| *k == Py::Str("k".into()))
                    .map_or(Py::None, |(_, v)| v),
                other => other,
            });
            match (&case["error"], got) {
                (serde_json::Value::String(class), Err(e)) => {
                    let yaml_family = |c: &str| {
                        [
                            "ScannerError",
                            "ParserError",
                            "ComposerError",
                            "ConstructorError",
                        ]
                        .contains(&c)
                    };
                    let message = e.to_string();
                    let ours = message.split(':').next().unwrap_or_default().to_owned();
                    if !(ours == *class || yaml_family(&ours) && yaml_family(class)) {
                        bad.push(format!("{doc:?}: golden {class}, ours {message}"));
                    }
                }
                (serde_json::Value::String(class), Ok(v)) => {
                    bad.push(format!("{doc:?}: golden {class}, ours {v:?}"))
                }
                (_, Err(e)) => bad.push(format!("{doc:?}: golden {case}, ours {e}")),
                (_, Ok(v)) => {
                    let ty = v.short_type_name();
                    // A set's order is Python's string-hash order, random per run.
                    let same_str = ty == "set" || v.py_str() == case["str"].as_str().unwrap();
                    if !same_str || ty != case["type"] {
                        bad.push(format!(
                            "{doc:?}: golden {case}, ours {ty} {:?}",
                            v.py_str()
                        ));
                    }
                }
            }
        }
        (n, bad)
    }

    #[test]
    fn tabs_only_inside_quoted_and_block_scalars_and_comments() {
        for ok in [
            "k: \"a\tb\"\n",
            "k: 'a\tb'\n",
            "k: |\n  a\tb\n",
            "k: 1 # c\td\n",
            "# \t\nk: 1\n",
        ] {
            assert!(safe_load("t.yaml", ok).is_ok(), "{ok:?}");
        }
        for bad in ["k: 1\t\n", "k: a\tb\n", "k: [1,\t2]\n", "k: 1\nj: 2\t# c\n"] {
            let e = safe_load("t.yaml", bad).unwrap_err().to_string();
            assert!(
                e.starts_with("ScannerError: while scanning for the next token"),
                "{bad:?}: {e}"
            );
        }
        assert!(
            safe_load("t.yaml", "k: 1\nj: 2\t\n")
                .unwrap_err()
                .to_string()
                .ends_with("line 2, column 5")
        );
    }
}
