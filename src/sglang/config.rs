//! SGLang's `--config FILE.yaml` (0.5.5 and later): before argparse runs, SGLang reads the YAML
//! file and turns its top-level keys into command-line tokens placed *before* the user's own
//! (so explicit arguments win), dropping `--config FILE` from the line.
//!
//! The rules, as SGLang's `ConfigArgumentMerger` applies them (reimplemented, checked against
//! SGLang's real code through the oracle goldens in tests/conformance/config-*.jsonl):
//! * only an exact `--config` token triggers it (`--config=f.yaml` or an abbreviation is a plain
//!   argparse option); a second exact `--config`, or one in last place, is a `ValueError`; an
//!   empty file name means "no config";
//! * the file must end in `.yaml`/`.yml` (any case) and exist; it is read with PyYAML's
//!   `safe_load` (YAML 1.1 scalars: `yes`/`on` are booleans, `1e3` is a string, `0x10` is 16, …);
//!   an empty document is `{}`, any other non-mapping is a `ValueError`;
//! * each key becomes `--KEY` spelled exactly as written (underscores stay underscores);
//!   `true` on a `store_true` option gives the bare flag, `false` on one gives nothing, other
//!   booleans give `true`/`false` as a value (0.5.5: `true` → bare flag, `false` → nothing, for
//!   every key); a non-empty list gives one token per item, an empty one nothing; a mapping gives
//!   one token, Python's `str()` of it (0.5.23: `json.dumps`); anything else `str(value)`;
//! * 0.5.10+: a key naming an option whose action takes no single value (other than
//!   `store_true`) is a `ValueError` ("Unsupported config option …"); 0.5.10 matches keys to
//!   dests, 0.5.23 to the dest or any long option spelling with `-` read as `_`.

use std::collections::HashMap;
use std::path::Path;

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};

use super::flagset::{Action, ActionKind, FlagSet, Nargs};
use super::parser::ArgError;
use super::pytypes::{py_float, py_repr_float, py_repr_str};
use super::version;

/// The option SGLang looks for.
pub const CONFIG_OPTION: &str = "--config";

/// How one SGLang version turns the file into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// 0.5.5–0.5.9: no option table; `true` → bare flag, `false` → nothing; mappings via `str()`.
    Legacy,
    /// 0.5.10–0.5.22: store_true / unsupported actions looked up by dest; mappings via `str()`.
    DestKeys,
    /// 0.5.23+: looked up by dest or any long spelling; mappings via `json.dumps`.
    AllSpellings,
}

/// The dialect of this flag set, or `None` when the version has no `--config` merging.
pub fn dialect(flags: &FlagSet) -> Option<Dialect> {
    flags.action(CONFIG_OPTION)?;
    let v = flags.version.as_str();
    Some(if version::at_least(v, "0.5.23") {
        Dialect::AllSpellings
    } else if version::at_least(v, "0.5.10") {
        Dialect::DestKeys
    } else {
        Dialect::Legacy
    })
}

/// Where `--config FILE` sits in the user's tokens, as SGLang finds it.
/// `Ok(None)`: no merging (no exact `--config` token, an empty file name, or a version without
/// the feature).
pub fn locate(flags: &FlagSet, tokens: &[String]) -> Result<Option<(usize, String)>, ArgError> {
    if dialect(flags).is_none() {
        return Ok(None);
    }
    let at: Vec<usize> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| *t == CONFIG_OPTION)
        .map(|(i, _)| i)
        .collect();
    match at.as_slice() {
        [] => Ok(None),
        [_, _, ..] => Err(ArgError::exception(
            "ValueError: Multiple config files specified! Only one allowed.",
        )),
        [i] if *i + 1 == tokens.len() => Err(ArgError::exception(
            "ValueError: No config file specified after --config flag!",
        )),
        [i] if tokens[*i + 1].is_empty() => Ok(None),
        [i] => Ok(Some((*i, tokens[*i + 1].clone()))),
    }
}

/// Reads the file as SGLang does and returns the tokens it stands for.
pub fn load(flags: &FlagSet, path: &str) -> Result<Vec<String>, ArgError> {
    let suffix = py_suffix(path);
    if !matches!(suffix.to_lowercase().as_str(), ".yaml" | ".yml") {
        return Err(ArgError::exception(format!(
            "ValueError: Config file must be YAML format, got: {suffix}"
        )));
    }
    let p = Path::new(path);
    if !p.exists() {
        return Err(ArgError::exception(format!(
            "ValueError: Config file not found: {path}"
        )));
    }
    let bytes = std::fs::read(p).map_err(|e| {
        let (class, errno) = match e.kind() {
            std::io::ErrorKind::IsADirectory => ("IsADirectoryError", 21),
            std::io::ErrorKind::PermissionDenied => ("PermissionError", 13),
            _ => ("OSError", e.raw_os_error().unwrap_or(5)),
        };
        let what = match class {
            "IsADirectoryError" => "Is a directory".to_owned(),
            "PermissionError" => "Permission denied".to_owned(),
            _ => e.to_string(),
        };
        ArgError::exception(format!(
            "{class}: [Errno {errno}] {what}: {}",
            py_repr_str(path)
        ))
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let pos = e.utf8_error().valid_up_to();
        let byte = e.as_bytes()[pos];
        ArgError::exception(format!(
            "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x{byte:02x} in position {pos}: invalid start byte (config file {path})"
        ))
    })?;
    convert(flags, path, &text)
}

/// The tokens a config file's text stands for (`name` only labels error messages).
pub fn convert(flags: &FlagSet, name: &str, text: &str) -> Result<Vec<String>, ArgError> {
    let dialect = dialect(flags).unwrap_or(Dialect::AllSpellings);
    let data = safe_load(name, text)?;
    let pairs = match data {
        Py::None => Vec::new(),
        Py::Dict(pairs) => pairs,
        _ => {
            return Err(ArgError::exception(
                "ValueError: Config file must contain a dictionary at root level",
            ));
        }
    };
    let table = Table::new(flags, dialect);
    let mut out = Vec::new();
    for (key, value) in pairs {
        let key_text = match (&key, dialect) {
            (Py::Str(s), _) => s.clone(),
            (other, Dialect::Legacy) => other.py_str(),
            (other, _) => {
                return Err(ArgError::exception(format!(
                    "AttributeError: '{}' object has no attribute 'replace'",
                    other.type_name()
                )));
            }
        };
        let norm = key_text.replace('-', "_");
        if let Some(class) = table.unsupported.get(&norm) {
            return Err(ArgError::exception(format!(
                "ValueError: Unsupported config option '{norm}' with action '{class}'"
            )));
        }
        let option = format!("--{key_text}");
        match value {
            Py::Bool(b) => {
                let bare = dialect == Dialect::Legacy || table.store_true.contains(&norm);
                if bare {
                    if b {
                        out.push(option);
                    }
                } else {
                    out.push(option);
                    out.push(if b { "true" } else { "false" }.to_owned());
                }
            }
            Py::List(items) => {
                if !items.is_empty() {
                    out.push(option);
                    out.extend(items.iter().map(Py::py_str));
                }
            }
            Py::Dict(_) if dialect == Dialect::AllSpellings => {
                out.push(option);
                out.push(value.json_dumps()?);
            }
            other => {
                out.push(option);
                out.push(other.py_str());
            }
        }
    }
    Ok(out)
}

/// `pathlib.PurePosixPath(path).suffix` (Python 3.11).
fn py_suffix(path: &str) -> String {
    let name = path
        .split('/')
        .rfind(|c| !c.is_empty() && *c != ".")
        .unwrap_or("");
    match name.rfind('.') {
        Some(i) if i > 0 && i + 1 < name.len() => name[i..].to_owned(),
        _ => String::new(),
    }
}

/// The option table SGLang's merger builds from its parser.
struct Table {
    store_true: Vec<String>,
    /// normalized key → action class name
    unsupported: HashMap<String, &'static str>,
}

/// The Python class behind an action kind (SGLang's deprecated store_true is its own class,
/// not a `_StoreTrueAction`).
fn class_name(a: &Action) -> &'static str {
    match a.kind {
        ActionKind::Store => "_StoreAction",
        ActionKind::StoreTrue if a.deprecated_for.is_some() => "DeprecatedStoreTrueAction",
        ActionKind::StoreTrue => "_StoreTrueAction",
        ActionKind::StoreFalse => "_StoreFalseAction",
        ActionKind::StoreConst => "_StoreConstAction",
        ActionKind::BooleanOptional => "BooleanOptionalAction",
        ActionKind::Help => "_HelpAction",
        ActionKind::LoraPaths => "LoRAPathAction",
        ActionKind::Deprecated => "DeprecatedAction",
        ActionKind::DeprecatedStoreConst => "DeprecatedStoreConstAction",
    }
}

impl Table {
    fn new(flags: &FlagSet, dialect: Dialect) -> Table {
        let is_store_true = |a: &Action| class_name(a) == "_StoreTrueAction";
        let excluded = |a: &Action| {
            a.option_strings.is_empty()
                || a.option_strings
                    .iter()
                    .any(|o| o == CONFIG_OPTION || o == "--help" || o == "-h")
        };
        match dialect {
            Dialect::Legacy => Table {
                store_true: Vec::new(),
                unsupported: HashMap::new(),
            },
            Dialect::DestKeys => {
                let store_true = flags
                    .actions
                    .iter()
                    .filter(|a| is_store_true(a))
                    .map(|a| a.dest.clone())
                    .collect();
                let mut unsupported = HashMap::new();
                for a in &flags.actions {
                    if !excluded(a) && !is_store_true(a) && a.kind != ActionKind::Store {
                        unsupported.insert(a.dest.clone(), class_name(a));
                    }
                }
                Table {
                    store_true,
                    unsupported,
                }
            }
            Dialect::AllSpellings => {
                let keys = |a: &Action| -> Vec<String> {
                    let mut k = vec![a.dest.clone()];
                    k.extend(
                        a.option_strings
                            .iter()
                            .filter_map(|o| o.strip_prefix("--"))
                            .map(|o| o.replace('-', "_")),
                    );
                    k
                };
                let supported = |a: &Action| {
                    is_store_true(a) || a.kind == ActionKind::Store || a.nargs == Nargs::One
                };
                let store_true = flags
                    .actions
                    .iter()
                    .filter(|a| is_store_true(a))
                    .flat_map(keys)
                    .collect();
                let supported_keys: Vec<String> = flags
                    .actions
                    .iter()
                    .filter(|a| supported(a))
                    .flat_map(keys)
                    .collect();
                let mut unsupported = HashMap::new();
                for a in &flags.actions {
                    if excluded(a) || supported(a) {
                        continue;
                    }
                    for k in keys(a) {
                        if !supported_keys.contains(&k) {
                            unsupported.insert(k, class_name(a));
                        }
                    }
                }
                Table {
                    store_true,
                    unsupported,
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// PyYAML's safe_load, reduced to the Python values it builds.

/// A Python value as `yaml.safe_load` returns it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Py {
    None,
    Bool(bool),
    /// Decimal text of an int of any size (`-12`).
    Int(String),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    /// `str()` of a `datetime.date` / `datetime.datetime`.
    Date(String),
    DateTime(String),
    List(Vec<Py>),
    /// A pair from `!!omap` / `!!pairs`.
    Tuple(Box<Py>, Box<Py>),
    /// `!!set`, in file order (Python prints a set in hash order, which for strings changes
    /// from run to run).
    Set(Vec<Py>),
    /// Insertion-ordered, keys unique in Python's sense.
    Dict(Vec<(Py, Py)>),
}

impl Py {
    fn type_name(&self) -> &'static str {
        match self {
            Py::None => "NoneType",
            Py::Bool(_) => "bool",
            Py::Int(_) => "int",
            Py::Float(_) => "float",
            Py::Str(_) => "str",
            Py::Bytes(_) => "bytes",
            Py::Date(_) => "datetime.date",
            Py::DateTime(_) => "datetime.datetime",
            Py::List(_) => "list",
            Py::Tuple(..) => "tuple",
            Py::Set(_) => "set",
            Py::Dict(_) => "dict",
        }
    }

    /// `str(v)`.
    pub(crate) fn py_str(&self) -> String {
        match self {
            Py::Str(s) => s.clone(),
            Py::Date(s) | Py::DateTime(s) => s.clone(),
            other => other.py_repr(),
        }
    }

    /// `repr(v)`.
    fn py_repr(&self) -> String {
        match self {
            Py::None => "None".into(),
            Py::Bool(true) => "True".into(),
            Py::Bool(false) => "False".into(),
            Py::Int(s) => s.clone(),
            Py::Float(f) => py_repr_float(*f),
            Py::Str(s) => py_repr_str(s),
            Py::Bytes(b) => bytes_repr(b),
            Py::Date(s) => {
                let p: Vec<&str> = s.split('-').collect();
                let n = |x: &str| x.trim_start_matches('0').to_owned();
                let n = |x: &str| {
                    let t = n(x);
                    if t.is_empty() { "0".to_owned() } else { t }
                };
                format!("datetime.date({}, {}, {})", n(p[0]), n(p[1]), n(p[2]))
            }
            Py::DateTime(s) => format!("datetime.datetime.fromisoformat('{s}')"),
            Py::List(items) => format!(
                "[{}]",
                items.iter().map(Py::py_repr).collect::<Vec<_>>().join(", ")
            ),
            Py::Tuple(a, b) => format!("({}, {})", a.py_repr(), b.py_repr()),
            Py::Set(items) if items.is_empty() => "set()".into(),
            Py::Set(items) => format!(
                "{{{}}}",
                items.iter().map(Py::py_repr).collect::<Vec<_>>().join(", ")
            ),
            Py::Dict(pairs) => format!(
                "{{{}}}",
                pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.py_repr(), v.py_repr()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// `json.dumps(v)` with its defaults (ASCII output, `", "` / `": "` separators).
    fn json_dumps(&self) -> Result<String, ArgError> {
        Ok(match self {
            Py::None => "null".into(),
            Py::Bool(b) => b.to_string(),
            Py::Int(s) => s.clone(),
            Py::Float(f) if f.is_nan() => "NaN".into(),
            Py::Float(f) if f.is_infinite() => {
                if *f > 0.0 { "Infinity" } else { "-Infinity" }.into()
            }
            Py::Float(f) => py_repr_float(*f),
            Py::Str(s) => json_str(s),
            Py::Tuple(a, b) => format!("[{}, {}]", a.json_dumps()?, b.json_dumps()?),
            Py::List(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(Py::json_dumps)
                    .collect::<Result<Vec<_>, _>>()?
                    .join(", ")
            ),
            Py::Dict(pairs) => {
                let mut parts = Vec::new();
                for (k, v) in pairs {
                    let key = match k {
                        Py::Str(s) => s.clone(),
                        Py::None => "null".into(),
                        Py::Bool(b) => b.to_string(),
                        Py::Int(_) | Py::Float(_) => k.json_dumps()?,
                        other => {
                            return Err(ArgError::exception(format!(
                                "TypeError: keys must be str, int, float, bool or None, not {}",
                                other.type_name().rsplit('.').next().unwrap_or("object")
                            )));
                        }
                    };
                    parts.push(format!("{}: {}", json_str(&key), v.json_dumps()?));
                }
                format!("{{{}}}", parts.join(", "))
            }
            other => {
                return Err(ArgError::exception(format!(
                    "TypeError: Object of type {} is not JSON serializable",
                    other.type_name().rsplit('.').next().unwrap_or("object")
                )));
            }
        })
    }

    /// Python's `==` between dict keys (`1 == 1.0 == True`).
    fn key_eq(&self, other: &Py) -> bool {
        fn num(p: &Py) -> Option<f64> {
            match p {
                Py::Bool(b) => Some(f64::from(u8::from(*b))),
                Py::Int(s) => s.parse().ok(),
                Py::Float(f) => Some(*f),
                _ => None,
            }
        }
        match (self, other) {
            (Py::Int(a), Py::Int(b)) => a == b,
            _ => match (num(self), num(other)) {
                (Some(a), Some(b)) => a == b,
                (None, None) => self == other,
                _ => false,
            },
        }
    }
}

fn bytes_repr(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut out = format!("b{quote}");
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            c if char::from(c) == quote => {
                out.push('\\');
                out.push(quote);
            }
            0x20..=0x7e => out.push(char::from(c)),
            c => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push(quote);
    out
}

fn json_str(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

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
}

fn yaml_error(class: &str, name: &str, line: usize, col: usize, problem: &str) -> ArgError {
    ArgError::exception(format!(
        "{class}: {problem}\n  in \"{name}\", line {line}, column {col}"
    ))
}

/// `yaml.safe_load(text)`: one document (none → `None`).
pub(crate) fn safe_load(name: &str, text: &str) -> Result<Py, ArgError> {
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
        LoadErr::Retry(_) => ArgError::exception(format!(
            "ScannerError: too many adjacent tokens\n  in \"{name}\""
        )),
    })
}

/// Why one parse attempt stopped.
enum LoadErr {
    Yaml(ArgError),
    /// Parse again with a space inserted at this character index.
    Retry(usize),
}

/// Where to insert a space for the saphyr errors that PyYAML would not raise.
fn retry_at(e: &saphyr_parser::ScanError, text: &str) -> Option<usize> {
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

fn load_once(name: &str, text: &str) -> Result<Py, LoadErr> {
    let text = text.to_owned();
    let mut parser = Parser::new_from_str(&text);
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    // Open collections: (anchor, tag, is_map, items)
    let mut stack: Vec<(usize, Option<Tag>, bool, Vec<Node>)> = Vec::new();
    let mut docs: Vec<Node> = Vec::new();
    let mut doc_count = 0;
    // Start of the first document's root node (PyYAML's context mark for a second document).
    let mut root_mark: (usize, usize) = (0, 0);
    // Character ranges of quoted and block scalars: the only places PyYAML allows a tab.
    let mut quoted: Vec<(usize, usize)> = Vec::new();
    for item in parser.by_ref() {
        let (event, span) = match item {
            Ok(x) => x,
            Err(e) => {
                if let Some(at) = retry_at(&e, &text) {
                    return Err(LoadErr::Retry(at));
                }
                // saphyr may stop just before the tab it objects to: then look past its mark.
                let limit = (!e.info().contains("tab")).then(|| e.marker().index());
                if let Some(tab) = stray_tab(name, &text, &quoted, limit) {
                    return Err(LoadErr::Yaml(tab));
                }
                // saphyr reports scanner and parser problems alike; PyYAML names them apart.
                let class = if e.info().starts_with("while parsing") {
                    "ParserError"
                } else {
                    "ScannerError"
                };
                let (line, col) = (e.marker().line(), e.marker().col() + 1);
                return Err(LoadErr::Yaml(yaml_error(class, name, line, col, e.info())));
            }
        };
        let line = span.start.line();
        if docs.is_empty()
            && stack.is_empty()
            && root_mark == (0, 0)
            && matches!(
                event,
                Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..)
            )
        {
            root_mark = (line, span.start.col() + 1);
        }
        let done: Option<(usize, Node)> = match event {
            Event::DocumentStart(_) => {
                doc_count += 1;
                if doc_count > 1 {
                    let (l, c) = root_mark;
                    return Err(LoadErr::Yaml(ArgError::exception(format!(
                        "ComposerError: expected a single document in the stream\n  in \"{name}\", line {l}, column {c}\nbut found another document\n  in \"{name}\", line {line}, column {}",
                        span.start.col() + 1
                    ))));
                }
                None
            }
            Event::Scalar(value, style, anchor, tag) => {
                if style != ScalarStyle::Plain {
                    quoted.push((span.start.index(), span.end.index()));
                }
                Some((
                    anchor,
                    Node::Scalar {
                        value: value.into_owned(),
                        plain: style == ScalarStyle::Plain,
                        tag: tag.map(|t| t.into_owned()),
                        line,
                        col: span.start.col() + 1,
                    },
                ))
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(n) => Some((0, n.clone())),
                None => {
                    return Err(LoadErr::Yaml(yaml_error(
                        "ComposerError",
                        name,
                        line,
                        span.start.col() + 1,
                        "found a recursive or undefined alias",
                    )));
                }
            },
            Event::SequenceStart(anchor, tag) => {
                stack.push((anchor, tag.map(|t| t.into_owned()), false, Vec::new()));
                None
            }
            Event::MappingStart(anchor, tag) => {
                stack.push((anchor, tag.map(|t| t.into_owned()), true, Vec::new()));
                None
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some((anchor, tag, is_map, items)) = stack.pop() else {
                    continue;
                };
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
            _ => None,
        };
        if let Some((anchor, node)) = done {
            if anchor != 0 {
                anchors.insert(anchor, node.clone());
            }
            match stack.last_mut() {
                Some(top) => top.3.push(node),
                None => docs.push(node),
            }
        }
    }
    if let Some(tab) = stray_tab(name, &text, &quoted, None) {
        return Err(LoadErr::Yaml(tab));
    }
    match docs.into_iter().next() {
        None => Ok(Py::None),
        Some(root) => construct(name, &root).map_err(LoadErr::Yaml),
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
) -> Option<ArgError> {
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
                return Some(ArgError::exception(format!(
                    "ScannerError: while scanning for the next token\nfound character '\\t' that cannot start any token\n  in \"{name}\", line {line}, column {}",
                    col + 1
                )));
            }
        }
        prev = c;
        col += 1;
    }
    None
}

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

fn construct(name: &str, node: &Node) -> Result<Py, ArgError> {
    let unknown = |tag: &Tag, line: usize, col: usize| {
        yaml_error(
            "ConstructorError",
            name,
            line,
            col,
            &format!(
                "could not determine a constructor for the tag '{}'",
                tag_text(tag)
            ),
        )
    };
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
                    _ => return Err(unknown(t, *line, *col)),
                },
                Some(t) => return Err(unknown(t, *line, *col)),
            };
            scalar(name, kind, value, *line)
        }
        Node::Seq(items, tag) => {
            if let Some(t) = tag
                .as_ref()
                .filter(|t| is_core(t, "omap") || is_core(t, "pairs"))
            {
                // A list of one-pair mappings: a list of (key, value) tuples.
                let mut out = Vec::new();
                for item in items {
                    match item {
                        Node::Map(pairs, _) if pairs.len() == 1 => out.push(Py::Tuple(
                            Box::new(construct(name, &pairs[0].0)?),
                            Box::new(construct(name, &pairs[0].1)?),
                        )),
                        other => {
                            return Err(yaml_error(
                                "ConstructorError",
                                name,
                                node_line(other),
                                1,
                                &format!(
                                    "while constructing an ordered map: expected a single mapping item ({})",
                                    tag_text(t)
                                ),
                            ));
                        }
                    }
                }
                return Ok(Py::List(out));
            }
            if let Some(t) = tag
                .as_ref()
                .filter(|t| !is_core(t, "seq") && !non_specific(t))
            {
                return Err(unknown(t, 0, 0));
            }
            Ok(Py::List(
                items
                    .iter()
                    .map(|n| construct(name, n))
                    .collect::<Result<_, _>>()?,
            ))
        }
        Node::Map(pairs, tag) => {
            let set = tag.as_ref().is_some_and(|t| is_core(t, "set"));
            if let Some(t) = tag
                .as_ref()
                .filter(|t| !is_core(t, "map") && !set && !non_specific(t))
            {
                return Err(unknown(t, 0, 0));
            }
            let flat = flatten(name, pairs)?;
            let mut out: Vec<(Py, Py)> = Vec::new();
            for (k, v) in flat {
                let key = construct(name, k)?;
                if matches!(key, Py::List(_) | Py::Dict(_) | Py::Set(_)) {
                    return Err(yaml_error(
                        "ConstructorError",
                        name,
                        node_line(k),
                        1,
                        "found unhashable key",
                    ));
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
    }
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
) -> Result<Vec<(&'a Node, &'a Node)>, ArgError> {
    let mut merged: Vec<(&Node, &Node)> = Vec::new();
    let mut own: Vec<(&Node, &Node)> = Vec::new();
    let bad = |n: &Node| {
        yaml_error(
            "ConstructorError",
            name,
            node_line(n),
            1,
            "while constructing a mapping: expected a mapping or list of mappings for merging",
        )
    };
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

/// PyYAML's implicit resolver for a plain scalar (YAML 1.1 rules).
fn resolve(v: &str) -> &'static str {
    if v.is_empty() || matches!(v, "~" | "null" | "Null" | "NULL") {
        return "null";
    }
    if matches!(
        v,
        "yes"
            | "Yes"
            | "YES"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
    ) {
        return "bool";
    }
    if is_yaml_float(v) {
        return "float";
    }
    if is_yaml_int(v) {
        return "int";
    }
    if v == "<<" {
        return "merge";
    }
    if timestamp_parts(v).is_some() {
        return "timestamp";
    }
    if matches!(v, "=" | "!" | "&" | "*") {
        return if v == "=" { "value" } else { "yaml" };
    }
    "str"
}

fn strip_sign(v: &str) -> &str {
    v.strip_prefix(['-', '+']).unwrap_or(v)
}

fn all(s: &str, f: impl Fn(char) -> bool) -> bool {
    s.chars().all(f)
}

fn is_digits_us(s: &str) -> bool {
    // [0-9][0-9_]*
    s.starts_with(|c: char| c.is_ascii_digit()) && all(s, |c| c.is_ascii_digit() || c == '_')
}

/// `(?::[0-5]?[0-9])+` after a leading part.
fn sexagesimal_tail(parts: &[&str]) -> bool {
    !parts.is_empty()
        && parts.iter().all(|p| {
            let b = p.as_bytes();
            match b.len() {
                1 => b[0].is_ascii_digit(),
                2 => (b'0'..=b'5').contains(&b[0]) && b[1].is_ascii_digit(),
                _ => false,
            }
        })
}

fn exponent_ok(e: &str) -> bool {
    // [eE][-+][0-9]+ (the sign is required in YAML 1.1)
    let mut c = e.chars();
    matches!(c.next(), Some('e' | 'E'))
        && matches!(c.next(), Some('-' | '+'))
        && !c.as_str().is_empty()
        && all(c.as_str(), |c| c.is_ascii_digit())
}

fn is_yaml_float(v: &str) -> bool {
    let body = strip_sign(v);
    let signed = body.len() != v.len();
    if matches!(body, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    if !signed && matches!(v, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let split_exp = |s: &str| -> Option<(String, bool)> {
        match s.find(['e', 'E']) {
            Some(i) => exponent_ok(&s[i..]).then(|| (s[..i].to_owned(), true)),
            None => Some((s.to_owned(), false)),
        }
    };
    // [0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?
    if let Some((int, frac)) = body.split_once('.')
        && is_digits_us(int)
        && let Some((frac, _)) = split_exp(frac)
        && all(&frac, |c| c.is_ascii_digit() || c == '_')
    {
        return true;
    }
    // \.[0-9][0-9_]*([eE][-+][0-9]+)?  (no sign)
    if !signed
        && let Some(rest) = body.strip_prefix('.')
        && let Some((frac, _)) = split_exp(rest)
        && is_digits_us(&frac)
    {
        return true;
    }
    // [0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
    if let Some((head, frac)) = body.rsplit_once('.')
        && all(frac, |c| c.is_ascii_digit() || c == '_')
    {
        let parts: Vec<&str> = head.split(':').collect();
        if parts.len() > 1 && is_digits_us(parts[0]) && sexagesimal_tail(&parts[1..]) {
            return true;
        }
    }
    false
}

fn is_yaml_int(v: &str) -> bool {
    let body = strip_sign(v);
    if let Some(b) = body.strip_prefix("0b") {
        return !b.is_empty() && all(b, |c| matches!(c, '0' | '1' | '_'));
    }
    if let Some(h) = body.strip_prefix("0x") {
        return !h.is_empty() && all(h, |c| c.is_ascii_hexdigit() || c == '_');
    }
    if body == "0" {
        return true;
    }
    if let Some(o) = body.strip_prefix('0') {
        return !o.is_empty() && all(o, |c| matches!(c, '0'..='7' | '_'));
    }
    let parts: Vec<&str> = body.split(':').collect();
    let first = parts[0];
    let lead = first.starts_with(|c: char| ('1'..='9').contains(&c))
        && all(first, |c| c.is_ascii_digit() || c == '_');
    lead && (parts.len() == 1 || sexagesimal_tail(&parts[1..]))
}

struct Stamp {
    year: u32,
    month: u32,
    day: u32,
    time: Option<(u32, u32, u32, String, Option<String>)>,
}

/// Splits a YAML 1.1 timestamp into its fields (`None` when the text is not one).
fn timestamp_parts(v: &str) -> Option<Stamp> {
    let num = |s: &str, min: usize, max: usize| -> Option<u32> {
        (s.len() >= min && s.len() <= max && all(s, |c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let b = v.as_bytes();
    // (the `-` bytes are ASCII, so these slices fall on character boundaries)
    if b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && let (Some(y), Some(m), Some(d)) =
            (num(&v[..4], 4, 4), num(&v[5..7], 2, 2), num(&v[8..], 2, 2))
    {
        return Some(Stamp {
            year: y,
            month: m,
            day: d,
            time: None,
        });
    }
    // YYYY-M[M]-D[D](T|t|[ \t]+)H[H]:MM:SS(.f*)?([ \t]*(Z|[-+]H[H](:MM)?))?
    let year = num(v.get(..4)?, 4, 4)?;
    let rest = v.get(4..)?.strip_prefix('-')?;
    let (month, rest) = rest.split_once('-')?;
    let month = num(month, 1, 2)?;
    let dlen = rest.chars().take_while(char::is_ascii_digit).count();
    let day = num(&rest[..dlen], 1, 2)?;
    let rest = &rest[dlen..];
    let rest = if let Some(r) = rest.strip_prefix(['T', 't']) {
        r
    } else {
        let r = rest.trim_start_matches([' ', '\t']);
        if r.len() == rest.len() {
            return None;
        }
        r
    };
    let hlen = rest.chars().take_while(char::is_ascii_digit).count();
    let hour = num(&rest[..hlen], 1, 2)?;
    let rest = rest[hlen..].strip_prefix(':')?;
    let minute = num(rest.get(..2)?, 2, 2)?;
    let rest = rest[2..].strip_prefix(':')?;
    let second = num(rest.get(..2)?, 2, 2)?;
    let mut rest = &rest[2..];
    let mut fraction = String::new();
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.chars().take_while(char::is_ascii_digit).count();
        fraction = r[..n].to_owned();
        rest = &r[n..];
    }
    let tz_part = rest.trim_start_matches([' ', '\t']);
    let tz = if tz_part.is_empty() {
        if !rest.is_empty() {
            return None;
        }
        None
    } else if tz_part == "Z" {
        Some("Z".to_owned())
    } else {
        let sign = tz_part.chars().next()?;
        if !matches!(sign, '-' | '+') {
            return None;
        }
        let body = &tz_part[1..];
        let (h, m) = body.split_once(':').unwrap_or((body, "00"));
        num(h, 1, 2)?;
        num(m, 2, 2)?;
        Some(tz_part.to_owned())
    };
    Some(Stamp {
        year,
        month,
        day,
        time: Some((hour, minute, second, fraction, tz)),
    })
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        _ => 28,
    }
}

/// `YYYY-M[M]-D[D]` alone, which the constructor's pattern accepts for an explicit
/// `!!timestamp` (the resolver wants two-digit month and day).
fn loose_date(v: &str) -> Option<Stamp> {
    let mut it = v.splitn(3, '-');
    let (y, m, d) = (it.next()?, it.next()?, it.next()?);
    let ok = |s: &str, lo: usize, hi: usize| {
        (lo..=hi).contains(&s.len()) && s.chars().all(|c| c.is_ascii_digit())
    };
    (ok(y, 4, 4) && ok(m, 1, 2) && ok(d, 1, 2)).then(|| Stamp {
        year: y.parse().unwrap_or(0),
        month: m.parse().unwrap_or(0),
        day: d.parse().unwrap_or(0),
        time: None,
    })
}

fn construct_timestamp(v: &str) -> Result<Py, ArgError> {
    let s = timestamp_parts(v)
        .or_else(|| loose_date(v))
        .ok_or_else(|| {
            ArgError::exception("AttributeError: 'NoneType' object has no attribute 'groupdict'")
        })?;
    stamp_value(s).map_err(|e| ArgError::exception(format!("ValueError: {e}")))
}

fn stamp_value(s: Stamp) -> Result<Py, String> {
    if !(1..=9999).contains(&s.year) {
        return Err(format!("year {} is out of range", s.year));
    }
    if !(1..=12).contains(&s.month) {
        return Err("month must be in 1..12".into());
    }
    if s.day < 1 || s.day > days_in_month(s.year, s.month) {
        return Err("day is out of range for month".into());
    }
    let date = format!("{:04}-{:02}-{:02}", s.year, s.month, s.day);
    let Some((h, mi, sec, frac, tz)) = s.time else {
        return Ok(Py::Date(date));
    };
    if h > 23 {
        return Err("hour must be in 0..23".into());
    }
    if mi > 59 {
        return Err("minute must be in 0..59".into());
    }
    if sec > 59 {
        return Err("second must be in 0..59".into());
    }
    let mut out = format!("{date} {h:02}:{mi:02}:{sec:02}");
    if !frac.is_empty() {
        let mut f: String = frac.chars().take(6).collect();
        while f.len() < 6 {
            f.push('0');
        }
        if f != "000000" {
            out.push('.');
            out.push_str(&f);
        }
    }
    match tz.as_deref() {
        None => {}
        Some("Z") => out.push_str("+00:00"),
        Some(t) => {
            let (sign, body) = t.split_at(1);
            let (hh, mm) = body.split_once(':').unwrap_or((body, "0"));
            let (hh, mm): (u32, u32) = (hh.parse().unwrap_or(0), mm.parse().unwrap_or(0));
            let total = hh * 60 + mm;
            if total >= 24 * 60 {
                return Err("offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24).".into());
            }
            let sign = if total == 0 { "+" } else { sign };
            out.push_str(&format!("{sign}{:02}:{:02}", total / 60, total % 60));
        }
    }
    Ok(Py::DateTime(out))
}

/// Digits in `radix` → decimal text, any size.
fn big_to_decimal(digits: &str, radix: u32) -> Option<String> {
    // little-endian limbs in base 10^9
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let d = u64::from(c.to_digit(radix)?);
        let mut carry = d;
        for l in &mut limbs {
            let x = *l * u64::from(radix) + carry;
            *l = x % 1_000_000_000;
            carry = x / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = limbs.last().copied().unwrap_or(0).to_string();
    for l in limbs.iter().rev().skip(1) {
        out.push_str(&format!("{l:09}"));
    }
    Some(out)
}

/// Python's `int(text, base)` error.
fn int_error(text: &str, base: u32) -> String {
    format!(
        "ValueError: invalid literal for int() with base {base}: {}",
        py_repr_str(text)
    )
}

const INDEX_ERROR: &str = "IndexError: string index out of range";

/// `int(text, base)` for ASCII digits (whitespace around is allowed, as in Python), any size.
fn py_int_text(text: &str, base: u32) -> Result<String, String> {
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if t.is_empty() || !t.chars().all(|c| c.is_digit(base)) {
        return Err(int_error(text, base));
    }
    big_to_decimal(t, base).ok_or_else(|| int_error(text, base))
}

/// SafeConstructor.construct_yaml_int, step by step (its errors included).
fn construct_int(v: &str) -> Result<String, String> {
    let v = v.replace('_', "");
    let (neg, body) = match v.as_bytes().first() {
        None => return Err(INDEX_ERROR.into()),
        Some(b'-') => (true, &v[1..]),
        Some(b'+') => (false, &v[1..]),
        _ => (false, &v[..]),
    };
    let magnitude = if body == "0" {
        "0".to_owned()
    } else if let Some(b) = body.strip_prefix("0b") {
        py_int_text(b, 2)?
    } else if let Some(h) = body.strip_prefix("0x") {
        py_int_text(h, 16)?
    } else if body.is_empty() {
        return Err(INDEX_ERROR.into());
    } else if body.starts_with('0') {
        py_int_text(body, 8)?
    } else if body.contains(':') {
        // base 60, most significant first
        let mut total: u128 = 0;
        for part in body.split(':') {
            let p: u128 = py_int_text(part, 10)?
                .parse()
                .map_err(|_| int_error(part, 10))?;
            total = total
                .checked_mul(60)
                .and_then(|t| t.checked_add(p))
                .ok_or_else(|| int_error(part, 10))?;
        }
        total.to_string()
    } else {
        py_int_text(body, 10)?
    };
    Ok(if neg && magnitude != "0" {
        format!("-{magnitude}")
    } else {
        magnitude
    })
}

/// SafeConstructor.construct_yaml_float.
fn construct_float(v: &str) -> Result<f64, String> {
    let v = v.replace('_', "").to_lowercase();
    let (sign, body) = match v.as_bytes().first() {
        None => return Err(INDEX_ERROR.into()),
        Some(b'-') => (-1.0, &v[1..]),
        Some(b'+') => (1.0, &v[1..]),
        _ => (1.0, &v[..]),
    };
    let err = |t: &str| {
        format!(
            "ValueError: could not convert string to float: {}",
            py_repr_str(t)
        )
    };
    if body == ".inf" {
        return Ok(sign * f64::INFINITY);
    }
    if body == ".nan" {
        return Ok(f64::NAN);
    }
    if body.contains(':') {
        let mut total = 0.0;
        for part in body.split(':') {
            total = total * 60.0 + py_float(part).ok_or_else(|| err(part))?;
        }
        return Ok(sign * total);
    }
    py_float(body).map(|f| sign * f).ok_or_else(|| err(body))
}

/// `base64.decodebytes` (non-strict: characters outside the alphabet are skipped).
fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    let mut data: Vec<u32> = Vec::new();
    let mut pads = 0;
    for c in s.chars() {
        let v = match c {
            'A'..='Z' => c as u32 - 'A' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 26,
            '0'..='9' => c as u32 - '0' as u32 + 52,
            '+' => 62,
            '/' => 63,
            '=' => {
                pads += 1;
                if data.len() % 4 >= 2 && pads >= 4 - data.len() % 4 {
                    break;
                }
                continue;
            }
            _ => continue,
        };
        data.push(v);
    }
    let rem = data.len() % 4;
    if rem == 1 {
        return Err(format!(
            "failed to decode base64 data: Invalid base64-encoded string: number of data characters ({}) cannot be 1 more than a multiple of 4",
            data.len()
        ));
    }
    if rem != 0 && pads < 4 - rem {
        return Err("failed to decode base64 data: Incorrect padding".into());
    }
    let mut out = Vec::new();
    let (mut bits, mut n) = (0u32, 0);
    for v in data {
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    Ok(out)
}

fn scalar(name: &str, kind: &str, v: &str, line: usize) -> Result<Py, ArgError> {
    let fail = |what: &str| yaml_error("ConstructorError", name, line, 1, what);
    Ok(match kind {
        "null" => Py::None,
        // `!!bool` accepts exactly the resolver's words (lower-cased lookup).
        "bool" => match v.to_lowercase().as_str() {
            "yes" | "true" | "on" => Py::Bool(true),
            "no" | "false" | "off" => Py::Bool(false),
            other => {
                return Err(ArgError::exception(format!(
                    "KeyError: {}",
                    py_repr_str(other)
                )));
            }
        },
        "int" => Py::Int(construct_int(v).map_err(ArgError::exception)?),
        "float" => Py::Float(construct_float(v).map_err(ArgError::exception)?),
        "binary" => Py::Bytes(decode_base64(v).map_err(|e| fail(&e))?),
        "timestamp" => construct_timestamp(v)?,
        "str" => Py::Str(v.to_owned()),
        other => {
            return Err(yaml_error(
                "ConstructorError",
                name,
                line,
                1,
                &format!(
                    "could not determine a constructor for the tag 'tag:yaml.org,2002:{other}'"
                ),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::flagset;

    fn conv(version: &str, yaml: &str) -> Result<Vec<String>, String> {
        convert(flagset::get(version).unwrap(), "t.yaml", yaml).map_err(|e| e.message)
    }

    #[test]
    fn versions_without_config_do_not_merge() {
        let toks = vec!["--config".to_owned(), "a.yaml".to_owned()];
        assert_eq!(locate(flagset::get("0.5.2").unwrap(), &toks), Ok(None));
        assert_eq!(
            locate(flagset::get("0.5.23").unwrap(), &toks),
            Ok(Some((0, "a.yaml".to_owned())))
        );
        assert_eq!(
            dialect(flagset::get("0.5.5").unwrap()),
            Some(Dialect::Legacy)
        );
        assert_eq!(
            dialect(flagset::get("0.5.10.post1").unwrap()),
            Some(Dialect::DestKeys)
        );
    }

    #[test]
    fn locate_errors_and_empty_name() {
        let f = flagset::get("0.5.23").unwrap();
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(
            locate(f, &t(&["--config"]))
                .unwrap_err()
                .message
                .contains("No config file")
        );
        assert!(
            locate(f, &t(&["--config", "a.yaml", "--config", "b.yaml"]))
                .unwrap_err()
                .message
                .contains("Multiple")
        );
        assert_eq!(locate(f, &t(&["--config", ""])), Ok(None));
        assert_eq!(locate(f, &t(&["--config=a.yaml"])), Ok(None));
    }

    #[test]
    fn yaml_1_1_scalars_become_python_strings() {
        let got = conv(
            "0.5.23",
            "served-model-name: 1e3\nrevision: 0x1F\nmodel-path: 012\nseed: 1_000\nport: 1:30\n\
             context-length: ~\nchat-template: 2024-01-02\nload-format: .5\nquantization: 1.0e+3\n",
        )
        .unwrap();
        assert_eq!(
            got,
            [
                "--served-model-name",
                "1e3",
                "--revision",
                "31",
                "--model-path",
                "10",
                "--seed",
                "1000",
                "--port",
                "90",
                "--context-length",
                "None",
                "--chat-template",
                "2024-01-02",
                "--load-format",
                "0.5",
                "--quantization",
                "1000.0"
            ]
        );
    }

    #[test]
    fn booleans_depend_on_the_action_and_version() {
        let y = "trust-remote-code: yes\nenable-metrics: off\nrevision: true\n";
        assert_eq!(
            conv("0.5.23", y).unwrap(),
            ["--trust-remote-code", "--revision", "true"]
        );
        // 0.5.10 matches dests only: the dashed key is not found, so it gets a value.
        assert_eq!(
            conv(
                "0.5.10.post1",
                "trust_remote_code: true\ntrust-remote-code: true\n"
            )
            .unwrap(),
            ["--trust_remote_code", "--trust-remote-code"]
        );
        assert_eq!(
            conv("0.5.5", y).unwrap(),
            ["--trust-remote-code", "--revision"]
        );
    }

    #[test]
    fn lists_and_mappings() {
        let y = "cuda-graph-bs: [1, 2, 4]\nlora-target-modules: []\njson-model-override-args: {a: 1, b: [1, 2.5], c: null, d: 'x'}\n";
        assert_eq!(
            conv("0.5.10.post1", y).unwrap(),
            [
                "--cuda-graph-bs",
                "1",
                "2",
                "4",
                "--json-model-override-args",
                "{'a': 1, 'b': [1, 2.5], 'c': None, 'd': 'x'}"
            ]
        );
        let y = "json-model-override-args: {a: 1, b: [1, 2.5], c: null, d: \"é\"}\n";
        assert_eq!(
            conv("0.5.23", y).unwrap(),
            [
                "--json-model-override-args",
                r#"{"a": 1, "b": [1, 2.5], "c": null, "d": "\u00e9"}"#
            ]
        );
    }

    #[test]
    fn unsupported_actions_are_value_errors() {
        assert_eq!(
            conv("0.5.23", "disable_cuda_graph: true\n").unwrap_err(),
            "ValueError: Unsupported config option 'disable_cuda_graph' with action 'DeprecatedStoreTrueAction'"
        );
        assert_eq!(
            conv("0.5.23", "no-enable-tf32-matmul: true\n").unwrap_err(),
            "ValueError: Unsupported config option 'no_enable_tf32_matmul' with action 'BooleanOptionalAction'"
        );
        assert!(
            conv("0.5.10.post1", "lora_paths: [a]\n")
                .unwrap_err()
                .contains("LoRAPathAction")
        );
        assert!(conv("0.5.5", "lora_paths: [a]\n").is_ok());
    }

    #[test]
    fn document_shape_errors() {
        assert_eq!(conv("0.5.23", "").unwrap(), Vec::<String>::new());
        assert_eq!(
            conv("0.5.23", "- a\n").unwrap_err(),
            "ValueError: Config file must contain a dictionary at root level"
        );
        assert_eq!(
            conv("0.5.23", "1: x\n").unwrap_err(),
            "AttributeError: 'int' object has no attribute 'replace'"
        );
        assert_eq!(conv("0.5.5", "1: x\n").unwrap(), ["--1", "x"]);
        assert!(
            conv("0.5.23", "a: [1\n")
                .unwrap_err()
                .starts_with("ParserError")
        );
        assert!(
            conv("0.5.23", "a: 1\n---\nb: 2\n")
                .unwrap_err()
                .starts_with("ComposerError")
        );
        assert!(
            conv("0.5.23", "a: !foo x\n")
                .unwrap_err()
                .contains("'!foo'")
        );
    }

    #[test]
    fn duplicates_anchors_and_merge_keys() {
        assert_eq!(
            conv("0.5.23", "a: 1\nb: 2\na: 3\n").unwrap(),
            ["--a", "3", "--b", "2"]
        );
        let y = "base: &b {tp-size: 2, port: 1}\nx: *b\n<<: *b\nport: 5\n";
        assert_eq!(
            conv("0.5.5", y).unwrap(),
            [
                "--tp-size",
                "2",
                "--port",
                "5",
                "--base",
                "{'tp-size': 2, 'port': 1}",
                "--x",
                "{'tp-size': 2, 'port': 1}"
            ]
        );
    }

    /// PyYAML's own answers (tests/conformance/yaml-scalars.jsonl, made by
    /// `scripts/gen-conformance.py --yaml-scalars`): the value's type and `str()`, or the
    /// exception class (YAML errors compared by family).
    #[test]
    fn scalars_read_like_pyyaml() {
        let text = include_str!("../../tests/conformance/yaml-scalars.jsonl");
        let (n, bad) = replay_yaml_goldens(text);
        assert!(n > 1000, "{n}");
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
                    let ours = e.message.split(':').next().unwrap_or_default().to_owned();
                    if !(ours == *class || yaml_family(&ours) && yaml_family(class)) {
                        bad.push(format!("{doc:?}: golden {class}, ours {}", e.message));
                    }
                }
                (serde_json::Value::String(class), Ok(v)) => {
                    bad.push(format!("{doc:?}: golden {class}, ours {v:?}"))
                }
                (_, Err(e)) => bad.push(format!("{doc:?}: golden {case}, ours {}", e.message)),
                (_, Ok(v)) => {
                    let ty = v
                        .type_name()
                        .rsplit('.')
                        .next()
                        .unwrap_or_default()
                        .to_owned();
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
            let e = safe_load("t.yaml", bad).unwrap_err().message;
            assert!(
                e.starts_with("ScannerError: while scanning for the next token"),
                "{bad:?}: {e}"
            );
        }
        assert!(
            safe_load("t.yaml", "k: 1\nj: 2\t\n")
                .unwrap_err()
                .message
                .ends_with("line 2, column 5")
        );
    }

    #[test]
    fn suffix_like_pathlib() {
        assert_eq!(py_suffix("a/b.YAML"), ".YAML");
        assert_eq!(py_suffix(".yaml"), "");
        assert_eq!(py_suffix("x.yaml/"), ".yaml");
        assert_eq!(py_suffix("x."), "");
        assert_eq!(py_suffix("a.b.yml"), ".yml");
    }

    #[test]
    fn timestamps_and_big_ints() {
        assert_eq!(
            conv(
                "0.5.5",
                "a: 2001-12-14t21:59:43.10-05:00\nb: 123456789012345678901234567890\nc: -0x10\n"
            )
            .unwrap(),
            [
                "--a",
                "2001-12-14 21:59:43.100000-05:00",
                "--b",
                "123456789012345678901234567890",
                "--c",
                "-16"
            ]
        );
        assert!(
            conv("0.5.5", "a: 2024-02-30\n")
                .unwrap_err()
                .contains("day is out of range")
        );
    }
}
