//! The shapes `build.rs` writes the embedded history tables in: plain numbers only (a string is
//! a span of one text, a list a span of a pool), since a pointer in a static is a relocation the
//! loader applies at every start, thousands of them for these tables.

use serde_json::Value;

/// A string: its offset and length in [`Pools::text`].
#[derive(Clone, Copy)]
pub(crate) struct S(pub(crate) u32, pub(crate) u32);

/// A run of a pool: its start and length.
#[derive(Clone, Copy)]
pub(crate) struct Span(pub(crate) u32, pub(crate) u32);

/// A Python value of SGLang's: a default, a const, a choice. The generator writes whichever
/// shapes the data has, so some variants may go unused.
#[allow(dead_code)]
pub(crate) enum Py {
    Null,
    Bool(bool),
    UInt(u64),
    Int(i64),
    Float(f64),
    Str(S),
    /// Items in [`Pools::values`].
    List(Span),
    /// Pairs in [`Pools::pairs`].
    Map(Span),
}

/// One generated table's text and value pools.
pub(crate) struct Pools {
    pub(crate) text: &'static str,
    pub(crate) values: &'static [Py],
    pub(crate) pairs: &'static [(S, Py)],
}

impl Span {
    pub(crate) fn of<T>(self, pool: &'static [T]) -> &'static [T] {
        &pool[self.0 as usize..(self.0 + self.1) as usize]
    }
}

impl Pools {
    pub(crate) fn str(&self, s: S) -> &'static str {
        let text: &'static str = self.text;
        &text[s.0 as usize..(s.0 + s.1) as usize]
    }

    pub(crate) fn opt_str(&self, s: Option<S>) -> Option<String> {
        s.map(|s| self.str(s).to_owned())
    }

    pub(crate) fn value(&self, py: &Py) -> Value {
        match *py {
            Py::Null => Value::Null,
            Py::Bool(b) => Value::Bool(b),
            Py::UInt(n) => n.into(),
            Py::Int(n) => n.into(),
            Py::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
            Py::Str(s) => self.str(s).into(),
            Py::List(items) => items
                .of(self.values)
                .iter()
                .map(|v| self.value(v))
                .collect(),
            Py::Map(pairs) => Value::Object(
                (pairs.of(self.pairs).iter())
                    .map(|(k, v)| (self.str(*k).to_owned(), self.value(v)))
                    .collect(),
            ),
        }
    }
}
