//! Python's own conversions, as argparse applies them to SGLang's arguments: `str` from argv
//! bytes (surrogateescape), `int()`, `float()`, `str.strip()`, `repr()` of strings and numbers,
//! and equality as the `in choices` test sees it. Reimplemented from the language reference
//! and checked against CPython 3.11 through the conformance goldens.

use std::ffi::OsStr;

use serde_json::{Number, Value};

/// First code point of the range that stands for undecodable argv bytes: Python decodes such a
/// byte `b` to the lone surrogate U+DC00+b, which a Rust `String` cannot hold, so it lives here
/// as U+10FF00+b (Supplementary Private Use Area-B, never produced by a real decoder).
const ESCAPE_BASE: u32 = 0x10_FF00;

/// argv token → the `str` Python sees (UTF-8 with surrogateescape).
pub(crate) fn decode_arg(arg: &OsStr) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in arg.as_bytes().utf8_chunks() {
            out.push_str(chunk.valid());
            for &b in chunk.invalid() {
                // Invalid bytes are always >= 0x80, so the mapping stays inside the area.
                out.push(char::from_u32(ESCAPE_BASE + u32::from(b)).unwrap_or('\u{FFFD}'));
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        arg.to_string_lossy().into_owned()
    }
}

/// The byte an escaped character stands for.
fn escaped_byte(c: char) -> Option<u8> {
    let v = u32::from(c);
    (ESCAPE_BASE + 0x80..=ESCAPE_BASE + 0xFF)
        .contains(&v)
        .then(|| (v - ESCAPE_BASE) as u8)
}

/// The string as it should land in a JSON value: undecodable bytes become U+FFFD.
pub(crate) fn lossy(s: &str) -> String {
    if !s.chars().any(|c| escaped_byte(c).is_some()) {
        return s.to_owned();
    }
    s.chars()
        .map(|c| {
            if escaped_byte(c).is_some() {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

/// The string as Python would print it to stderr (`backslashreplace` for lone surrogates).
pub(crate) fn display(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match escaped_byte(c) {
            Some(b) => out.push_str(&format!("\\udc{b:02x}")),
            None => out.push(c),
        }
    }
    out
}

/// `str.isspace()`: Unicode White_Space plus the ASCII separators U+001C..U+001F.
pub(crate) fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `str.strip()` with no argument.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_isspace)
}

/// Code points of the digit zero of every Unicode decimal-digit (Nd) run, as of the Unicode
/// version of CPython 3.11; each run holds the ten digits in order.
const ND_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66,
    0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90,
    0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
    0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650,
    0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50,
    0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0,
];

/// The value of a Unicode decimal digit (what `\d`, `int()` and `float()` accept).
pub(crate) fn py_decimal(c: char) -> Option<u32> {
    let v = u32::from(c);
    if c.is_ascii_digit() {
        return Some(v - 0x30);
    }
    if v < 0x660 {
        return None;
    }
    let i = ND_ZEROS.partition_point(|&z| z <= v);
    let zero = ND_ZEROS[i.checked_sub(1)?];
    (v - zero < 10).then_some(v - zero)
}

/// What `int()`/`float()` do first: non-ASCII decimal digits to ASCII, non-ASCII whitespace to
/// spaces, any other non-ASCII character to `?` (which then fails to parse); then strip ASCII
/// whitespace. (ASCII U+001C..U+001F count as space for `str.isspace` but not here.)
fn to_ascii_number(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c.is_ascii() {
                c
            } else if py_isspace(c) {
                ' '
            } else if let Some(d) = py_decimal(c) {
                char::from(b'0' + d as u8)
            } else {
                '?'
            }
        })
        .collect();
    t.trim_matches([' ', '\t', '\n', '\u{b}', '\u{c}', '\r'])
        .to_owned()
}

/// Digits with single underscores only between digits (PEP 515); returns them without the
/// underscores.
fn digits_with_underscores(s: &str) -> Option<String> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let ok =
                i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !ok {
                return None;
            }
        } else if c.is_ascii_digit() {
            out.push(char::from(c));
        } else {
            return None;
        }
    }
    Some(out)
}

/// CPython's limit on decimal digits in `int(str)` (3.11: sys.int_info.str_digits_check_threshold
/// default), beyond which `int()` raises ValueError.
const INT_MAX_STR_DIGITS: usize = 4300;

/// `int(s)` in base 10. Integers beyond 64 bits become the nearest double, as they do when
/// Python's JSON of the namespace (the conformance goldens) is read back.
pub(crate) fn py_int(s: &str) -> Option<Value> {
    let t = to_ascii_number(s);
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, &t[..]),
    };
    let digits = digits_with_underscores(body)?;
    if digits.len() > INT_MAX_STR_DIGITS {
        return None;
    }
    Some(int_value(neg, &digits))
}

/// A decimal digit string with a sign as a JSON number.
pub(crate) fn int_value(neg: bool, digits: &str) -> Value {
    let digits = digits.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let text = if neg && digits != "0" {
        format!("-{digits}")
    } else {
        digits.to_owned()
    };
    if let Ok(i) = text.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(u) = text.parse::<u64>() {
        return Value::from(u);
    }
    float_value(text.parse::<f64>().unwrap_or(f64::NAN))
}

/// `float(s)`.
pub(crate) fn py_float(s: &str) -> Option<f64> {
    let t = to_ascii_number(s);
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, &t[..]),
    };
    let lower = body.to_ascii_lowercase();
    let magnitude = match lower.as_str() {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => {
            // mantissa [e[sign]exponent], underscores only between digits of one part
            let (mant, exp) = match lower.find('e') {
                Some(i) => (&lower[..i], Some(&lower[i + 1..])),
                None => (&lower[..], None),
            };
            let (int_part, frac_part) = match mant.find('.') {
                Some(i) => (&mant[..i], Some(&mant[i + 1..])),
                None => (mant, None),
            };
            let int_digits = if int_part.is_empty() {
                String::new()
            } else {
                digits_with_underscores(int_part)?
            };
            let frac_digits = match frac_part {
                None | Some("") => String::new(),
                Some(f) => digits_with_underscores(f)?,
            };
            if int_digits.is_empty() && frac_digits.is_empty() {
                return None;
            }
            let mut text = format!("{int_digits}.{frac_digits}");
            if text == "." {
                return None;
            }
            if text.starts_with('.') {
                text.insert(0, '0');
            }
            if let Some(e) = exp {
                let (esign, edigits) = match e.as_bytes().first() {
                    Some(b'-') => ("-", &e[1..]),
                    Some(b'+') => ("", &e[1..]),
                    _ => ("", e),
                };
                let ed = digits_with_underscores(edigits)?;
                // Clamp huge exponents: the value is 0 or inf either way.
                let ed = if ed.trim_start_matches('0').len() > 6 {
                    "999999".to_owned()
                } else {
                    ed
                };
                text = format!("{text}e{esign}{ed}");
            }
            text.parse::<f64>().ok()?
        }
    };
    Some(if neg { -magnitude } else { magnitude })
}

/// A float as the conformance goldens record it: a JSON number, or
/// `{"__float__": "inf" | "-inf" | "nan"}` for what JSON cannot hold.
pub(crate) fn float_value(f: f64) -> Value {
    match Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None => {
            let r = if f.is_nan() {
                "nan"
            } else if f > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            serde_json::json!({ "__float__": r })
        }
    }
}

/// The float behind a value written by [`float_value`] (or a plain JSON number).
pub(crate) fn as_float(v: &Value) -> Option<f64> {
    if let Some(f) = v.as_f64() {
        return Some(f);
    }
    match v.get("__float__")?.as_str()? {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    }
}

/// Whether Python's `str.isprintable()` holds for the character (close approximation: control,
/// format, separator other than space, private use; unassigned code points are not known here).
fn printable(c: char) -> bool {
    let v = u32::from(c);
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let format_chars: &[(u32, u32)] = &[
        (0xAD, 0xAD),
        (0x600, 0x605),
        (0x61C, 0x61C),
        (0x6DD, 0x6DD),
        (0x70F, 0x70F),
        (0x890, 0x891),
        (0x8E2, 0x8E2),
        (0x180E, 0x180E),
        (0x200B, 0x200F),
        (0x202A, 0x202E),
        (0x2060, 0x2064),
        (0x2066, 0x206F),
        (0xD800, 0xF8FF),
        (0xFEFF, 0xFEFF),
        (0xFFF9, 0xFFFB),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
        (0x13430, 0x13438),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0001, 0xE0001),
        (0xE0020, 0xE007F),
        (0xF0000, 0x10FFFF),
    ];
    !format_chars.iter().any(|&(a, b)| (a..=b).contains(&v))
}

/// `repr(s)` for a `str`.
pub(crate) fn py_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        if let Some(b) = escaped_byte(c) {
            out.push_str(&format!("\\udc{b:02x}"));
            continue;
        }
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if printable(c) => out.push(c),
            c => {
                let v = u32::from(c);
                if v <= 0xFF {
                    out.push_str(&format!("\\x{v:02x}"));
                } else if v <= 0xFFFF {
                    out.push_str(&format!("\\u{v:04x}"));
                } else {
                    out.push_str(&format!("\\U{v:08x}"));
                }
            }
        }
    }
    out.push(quote);
    out
}

/// `repr(f)` for a float (shortest round-trip digits, Python's layout).
pub(crate) fn py_repr_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // `{:e}` gives the shortest round-trip digits: "d.ddde±x"
    let sci = format!("{:e}", f.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let m = if rest.is_empty() {
            first.to_owned()
        } else {
            format!("{first}.{rest}")
        };
        let es = if exp < 0 { "-" } else { "+" };
        return format!("{sign}{m}e{es}{:02}", exp.abs());
    }
    let point = exp + 1; // digits before the decimal point
    let body = if point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else if point as usize >= digits.len() {
        format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
    } else {
        let (a, b) = digits.split_at(point as usize);
        format!("{a}.{b}")
    };
    format!("{sign}{body}")
}

/// `repr(v)` for the values argparse puts in messages.
pub(crate) fn py_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => py_repr_str(s),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (_, Some(u)) => u.to_string(),
            _ => py_repr_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => {
            if let Some(f) = as_float(v).filter(|_| o.len() == 1) {
                return py_repr_float(f);
            }
            let items: Vec<String> = o
                .iter()
                .map(|(k, x)| format!("{}: {}", py_repr_str(k), py_repr(x)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// `a == b` as Python compares them (`1 == 1.0 == True`).
pub(crate) fn py_eq(a: &Value, b: &Value) -> bool {
    let num = |v: &Value| match v {
        Value::Bool(x) => Some(f64::from(u8::from(*x))),
        Value::Number(_) => v.as_f64(),
        _ => as_float(v),
    };
    match (a, b) {
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Null, Value::Null) => true,
        (Value::Number(x), Value::Number(y)) if x.is_i64() || x.is_u64() => {
            if y.is_i64() || y.is_u64() {
                x == y
            } else {
                num(a) == num(b)
            }
        }
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn int_follows_python() {
        assert_eq!(py_int(" 42 "), Some(json!(42)));
        assert_eq!(py_int("+1_000"), Some(json!(1000)));
        assert_eq!(py_int("-007"), Some(json!(-7)));
        assert_eq!(py_int("\u{663}"), Some(json!(3))); // ARABIC-INDIC DIGIT THREE
        assert_eq!(py_int("\u{b}5\u{a0}"), Some(json!(5)));
        assert_eq!(py_int("\u{1c}5\u{1f}"), None); // str.isspace, but not int()'s whitespace
        for bad in [
            "", "_1", "1_", "1__0", "1.0", "0x10", "1e3", "+", "- 1", "1 2",
        ] {
            assert_eq!(py_int(bad), None, "{bad:?}");
        }
        assert_eq!(py_int("18446744073709551615"), Some(json!(u64::MAX)));
        assert!(py_int("99999999999999999999999").unwrap().is_f64());
    }

    #[test]
    fn float_follows_python() {
        assert_eq!(py_float("1e3"), Some(1000.0));
        assert_eq!(py_float(" -1_0.5 "), Some(-10.5));
        assert_eq!(py_float(".5"), Some(0.5));
        assert_eq!(py_float("5."), Some(5.0));
        assert_eq!(py_float("-InFiNiTy"), Some(f64::NEG_INFINITY));
        assert!(py_float("nan").unwrap().is_nan());
        assert_eq!(py_float("1e400"), Some(f64::INFINITY));
        for bad in [
            "", ".", "e5", "1e", "1_.5", "1._5", "_1", "1e_5", "inf_", "0x1p3", "1,5",
        ] {
            assert_eq!(py_float(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(py_repr_str("x"), "'x'");
        assert_eq!(py_repr_str("it's"), "\"it's\"");
        assert_eq!(py_repr_str("a'\"b"), "'a\\'\"b'");
        assert_eq!(py_repr_str("t\tn\n\u{7f}é"), "'t\\tn\\n\\x7fé'");
        assert_eq!(py_repr_float(1e16), "1e+16");
        assert_eq!(py_repr_float(0.0001), "0.0001");
        assert_eq!(py_repr_float(0.00001), "1e-05");
        assert_eq!(py_repr_float(2.5), "2.5");
        assert_eq!(py_repr_float(100.0), "100.0");
    }

    #[test]
    fn undecodable_bytes_survive_as_surrogate_escapes() {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let s = decode_arg(OsStr::from_bytes(b"a\xffb"));
            assert_eq!(py_repr_str(&s), "'a\\udcffb'");
            assert_eq!(lossy(&s), "a\u{FFFD}b");
            assert_eq!(display(&s), "a\\udcffb");
        }
    }

    #[test]
    fn equality_is_numeric_across_types() {
        assert!(py_eq(&json!(1), &json!(1.0)));
        assert!(py_eq(&json!(1), &json!(true)));
        assert!(!py_eq(&json!("1"), &json!(1)));
    }
}
