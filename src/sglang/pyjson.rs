//! `json.loads` as CPython 3.11's C scanner behaves: the accepted language (NaN and Infinity
//! included, exact integers), the resulting values, and the `JSONDecodeError` messages with
//! their `line/column/char` positions (counted in code points), which SGLang passes on to the
//! user in some of its argument errors.

use serde_json::{Map, Value};

use super::pytypes::{float_value, int_value};

/// A decode failure: `msg` plus the code-point position it refers to; displayed as Python's
/// `JSONDecodeError` text, `msg: line L column C (char P)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{msg}: line {line} column {column} (char {pos})")]
pub(crate) struct JsonError {
    pub(crate) msg: &'static str,
    pub(crate) pos: usize,
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// Python hits its recursion limit a little under 1000 nested containers; the exact depth
/// depends on the caller's stack, so this only keeps the scanner from overflowing.
const MAX_DEPTH: usize = 990;

struct Scanner<'a> {
    s: &'a [char],
    depth: usize,
    /// orjson's stricter reading (RFC 8259): no NaN/Infinity, no number that overflows to
    /// infinity, no lone surrogate escapes.
    strict: bool,
}

type Res<T> = Result<T, (&'static str, usize)>;

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

impl Scanner<'_> {
    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        while self.at(i).is_some_and(is_ws) {
            i += 1;
        }
        i
    }

    fn starts(&self, i: usize, lit: &str) -> bool {
        let n = lit.chars().count();
        i + n <= self.s.len() && self.s[i..i + n].iter().copied().eq(lit.chars())
    }

    /// One value at `i`: Err(("Expecting value", i)) when nothing there starts a value.
    fn value(&mut self, i: usize) -> Res<(Value, usize)> {
        let Some(c) = self.at(i) else {
            return Err(("Expecting value", i));
        };
        match c {
            '"' => {
                let (s, end) = self.string(i + 1)?;
                Ok((Value::String(s), end))
            }
            '{' | '[' => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err((
                        "maximum recursion depth exceeded while decoding a JSON document",
                        i,
                    ));
                }
                let r = if c == '{' {
                    self.object(i + 1)
                } else {
                    self.array(i + 1)
                };
                self.depth -= 1;
                r
            }
            'n' if self.starts(i, "null") => Ok((Value::Null, i + 4)),
            't' if self.starts(i, "true") => Ok((Value::Bool(true), i + 4)),
            'f' if self.starts(i, "false") => Ok((Value::Bool(false), i + 5)),
            'N' | 'I' | '-'
                if self.strict
                    && !matches!(self.at(i + usize::from(c == '-')), Some('0'..='9')) =>
            {
                Err(("Expecting value", i))
            }
            'N' if self.starts(i, "NaN") => Ok((float_value(f64::NAN), i + 3)),
            'I' if self.starts(i, "Infinity") => Ok((float_value(f64::INFINITY), i + 8)),
            '-' if self.starts(i, "-Infinity") => Ok((float_value(f64::NEG_INFINITY), i + 9)),
            _ => self.number(i),
        }
    }

    fn number(&self, start: usize) -> Res<(Value, usize)> {
        let digit = |i: usize| self.at(i).is_some_and(|c| c.is_ascii_digit());
        let mut i = start;
        let neg = self.at(i) == Some('-');
        if neg {
            i += 1;
        }
        match self.at(i) {
            Some('1'..='9') => {
                while digit(i) {
                    i += 1;
                }
            }
            Some('0') => i += 1,
            _ => return Err(("Expecting value", start)),
        }
        let int_end = i;
        let mut is_float = false;
        if self.at(i) == Some('.') && digit(i + 1) {
            is_float = true;
            i += 2;
            while digit(i) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some('e' | 'E')) {
            let e_start = i;
            i += 1;
            if matches!(self.at(i), Some('-' | '+')) {
                i += 1;
            }
            let d0 = i;
            while digit(i) {
                i += 1;
            }
            if i > d0 {
                is_float = true;
            } else {
                i = e_start;
            }
        }
        let text: String = self.s[start..i].iter().collect();
        let v = if is_float {
            let f = text.parse::<f64>().unwrap_or(f64::NAN);
            if self.strict && !f.is_finite() {
                return Err(("number is infinity when parsed as double", start));
            }
            float_value(f)
        } else {
            let digits: String = self.s[start + usize::from(neg)..int_end].iter().collect();
            int_value(neg, &digits)
        };
        Ok((v, i))
    }

    /// The string whose opening quote is at `end - 1`.
    fn string(&self, mut end: usize) -> Res<(String, usize)> {
        let begin = end - 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.at(end) else {
                return Err(("Unterminated string starting at", begin));
            };
            match c {
                '"' => return Ok((out, end + 1)),
                '\\' => {
                    let Some(e) = self.at(end + 1) else {
                        return Err(("Unterminated string starting at", begin));
                    };
                    let simple = match e {
                        '"' => Some('"'),
                        '\\' => Some('\\'),
                        '/' => Some('/'),
                        'b' => Some('\u{8}'),
                        'f' => Some('\u{c}'),
                        'n' => Some('\n'),
                        'r' => Some('\r'),
                        't' => Some('\t'),
                        'u' => None,
                        _ => return Err(("Invalid \\escape", end)),
                    };
                    if let Some(ch) = simple {
                        out.push(ch);
                        end += 2;
                        continue;
                    }
                    let u = self.hex4(end + 1)?;
                    end += 6;
                    let mut cp = u;
                    if (0xD800..=0xDBFF).contains(&u) && self.starts(end, "\\u") {
                        let u2 = self.hex4(end + 1)?;
                        if (0xDC00..=0xDFFF).contains(&u2) {
                            cp = 0x10000 + (((u - 0xD800) << 10) | (u2 - 0xDC00));
                            end += 6;
                        }
                    }
                    if self.strict && (0xD800..=0xDFFF).contains(&cp) {
                        return Err(("lone surrogate", end));
                    }
                    // A lone surrogate is a valid Python str but not a Rust one.
                    out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                }
                c if u32::from(c) < 0x20 => return Err(("Invalid control character at", end)),
                c => {
                    out.push(c);
                    end += 1;
                }
            }
        }
    }

    /// Four hex digits after the `u` at `u_pos`.
    fn hex4(&self, u_pos: usize) -> Res<u32> {
        let mut v = 0;
        for k in 1..=4 {
            match self.at(u_pos + k).and_then(|c| c.to_digit(16)) {
                Some(d) => v = v * 16 + d,
                None => return Err(("Invalid \\uXXXX escape", u_pos)),
            }
        }
        Ok(v)
    }

    fn object(&mut self, mut end: usize) -> Res<(Value, usize)> {
        let mut map = Map::new();
        end = self.skip_ws(end);
        match self.at(end) {
            Some('}') => return Ok((Value::Object(map), end + 1)),
            Some('"') => {}
            _ => return Err(("Expecting property name enclosed in double quotes", end)),
        }
        end += 1;
        loop {
            let (key, e) = self.string(end)?;
            end = self.skip_ws(e);
            if self.at(end) != Some(':') {
                return Err(("Expecting ':' delimiter", end));
            }
            end = self.skip_ws(end + 1);
            let (value, e) = self.value(end)?;
            map.insert(key, value);
            end = self.skip_ws(e);
            match self.at(end) {
                Some('}') => return Ok((Value::Object(map), end + 1)),
                Some(',') => {}
                _ => return Err(("Expecting ',' delimiter", end)),
            }
            end = self.skip_ws(end + 1);
            if self.at(end) != Some('"') {
                return Err(("Expecting property name enclosed in double quotes", end));
            }
            end += 1;
        }
    }

    fn array(&mut self, mut end: usize) -> Res<(Value, usize)> {
        let mut items = Vec::new();
        end = self.skip_ws(end);
        if self.at(end) == Some(']') {
            return Ok((Value::Array(items), end + 1));
        }
        loop {
            let (value, e) = self.value(end)?;
            items.push(value);
            end = self.skip_ws(e);
            match self.at(end) {
                Some(']') => return Ok((Value::Array(items), end + 1)),
                Some(',') => {}
                _ => return Err(("Expecting ',' delimiter", end)),
            }
            end = self.skip_ws(end + 1);
        }
    }
}

fn error(doc: &[char], msg: &'static str, pos: usize) -> JsonError {
    let before = &doc[..pos.min(doc.len())];
    let lineno = before.iter().filter(|&&c| c == '\n').count() + 1;
    let colno = match before.iter().rposition(|&c| c == '\n') {
        Some(nl) => pos - nl,
        None => pos + 1,
    };
    JsonError {
        msg,
        pos,
        line: lineno,
        column: colno,
    }
}

/// `json.loads(text)`.
pub(crate) fn loads(text: &str) -> Result<Value, JsonError> {
    decode(text, false)
}

/// `orjson.loads(text)`: which documents it accepts and what it makes of them (its error
/// texts differ from Python's; SGLang replaces them with its own anyway).
pub(crate) fn loads_strict(text: &str) -> Result<Value, JsonError> {
    decode(text, true)
}

fn decode(text: &str, strict: bool) -> Result<Value, JsonError> {
    let doc: Vec<char> = text.chars().collect();
    let mut sc = Scanner {
        s: &doc,
        depth: 0,
        strict,
    };
    let start = sc.skip_ws(0);
    let (v, end) = sc.value(start).map_err(|(m, p)| error(&doc, m, p))?;
    let end = sc.skip_ws(end);
    if end != doc.len() {
        return Err(error(&doc, "Extra data", end));
    }
    Ok(v)
}

/// Python's `type(v).__name__` for a decoded JSON value.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(o) if o.len() == 1 && o.contains_key("__float__") => "float",
        Value::Object(_) => "dict",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(s: &str) -> String {
        loads(s).unwrap_err().to_string()
    }

    /// Expected texts are CPython 3.11's (`python3 -c 'import json; json.loads(...)'`).
    #[test]
    fn messages_match_cpython() {
        assert_eq!(
            err("\"a\u{1}\""),
            "Invalid control character at: line 1 column 3 (char 2)"
        );
        assert_eq!(err("\"\\x\""), "Invalid \\escape: line 1 column 2 (char 1)");
        assert_eq!(
            err("\"\\u12\""),
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)"
        );
        assert_eq!(
            err("\"\\uD834\\u12\""),
            "Invalid \\uXXXX escape: line 1 column 9 (char 8)"
        );
        assert_eq!(
            err("\"abc\\"),
            "Unterminated string starting at: line 1 column 1 (char 0)"
        );
        assert_eq!(err("[1,]"), "Expecting value: line 1 column 4 (char 3)");
        assert_eq!(
            err("{\"a\":1,}"),
            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"
        );
        assert_eq!(
            err("{\"a\" 1}"),
            "Expecting ':' delimiter: line 1 column 6 (char 5)"
        );
        assert_eq!(
            err("{\"a\""),
            "Expecting ':' delimiter: line 1 column 5 (char 4)"
        );
        assert_eq!(
            err("[1 2]"),
            "Expecting ',' delimiter: line 1 column 4 (char 3)"
        );
        assert_eq!(err("  "), "Expecting value: line 1 column 3 (char 2)");
        assert_eq!(
            err("{"),
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
        );
        assert_eq!(
            err("[true"),
            "Expecting ',' delimiter: line 1 column 6 (char 5)"
        );
        assert_eq!(err("1."), "Extra data: line 1 column 2 (char 1)");
        assert_eq!(err("01"), "Extra data: line 1 column 2 (char 1)");
        assert_eq!(err("[\n1,\n]"), "Expecting value: line 3 column 1 (char 5)");
    }

    #[test]
    fn strict_mode_reads_like_orjson() {
        assert_eq!(
            loads_strict(" [1, 2.5e33, -0] ").unwrap(),
            json!([1, 2.5e33, 0])
        );
        for bad in [
            "[NaN]",
            "Infinity",
            "-Infinity",
            "[1e400]",
            "\"\\ud800\"",
            "[1,]",
            "",
        ] {
            assert!(loads_strict(bad).is_err(), "{bad}");
        }
        assert_eq!(loads_strict("[-1]").unwrap(), json!([-1]));
        assert_eq!(
            loads_strict("18446744073709551616").unwrap(),
            json!(18446744073709551616.0)
        );
    }

    #[test]
    fn values_match_python() {
        assert_eq!(
            loads(" [1, 2.0, -0, 1e2] ").unwrap(),
            json!([1, 2.0, 0, 100.0])
        );
        assert_eq!(loads("\"\\ud800\\udc00\"").unwrap(), json!("\u{10000}"));
        assert_eq!(loads("NaN").unwrap(), json!({"__float__": "nan"}));
        assert_eq!(loads("-Infinity").unwrap(), json!({"__float__": "-inf"}));
        let o = loads(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(o, json!({"a": 3, "b": 2}));
        assert_eq!(o.as_object().unwrap().keys().next().unwrap(), "a");
    }
}
