//! The Python values `yaml.safe_load` builds, and what Python makes of them: `str()`,
//! `repr()`, `json.dumps()` and `==` between dict keys.

use super::error::DumpError;
use crate::sglang::pytypes::{py_repr_float, py_repr_str};

/// A Python value as `yaml.safe_load` returns it.
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
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
    /// `type(v).__name__` (`datetime.date` and `datetime.datetime` with their module).
    pub fn type_name(&self) -> &'static str {
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
    pub fn py_str(&self) -> String {
        match self {
            Py::Str(s) => s.clone(),
            Py::Date(s) | Py::DateTime(s) => s.clone(),
            other => other.py_repr(),
        }
    }

    /// `repr(v)`.
    pub fn py_repr(&self) -> String {
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
    pub fn json_dumps(&self) -> Result<String, DumpError> {
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
                        other => return Err(DumpError::Key(other.short_type_name())),
                    };
                    parts.push(format!("{}: {}", json_str(&key), v.json_dumps()?));
                }
                format!("{{{}}}", parts.join(", "))
            }
            other => return Err(DumpError::NotSerializable(other.short_type_name())),
        })
    }

    /// The type's `__name__` without its module (`date` for `datetime.date`).
    pub(crate) fn short_type_name(&self) -> &'static str {
        self.type_name().rsplit('.').next().unwrap_or("object")
    }

    /// Python's `==` between dict keys (`1 == 1.0 == True`).
    pub(super) fn key_eq(&self, other: &Py) -> bool {
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
