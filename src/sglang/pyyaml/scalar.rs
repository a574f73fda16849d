//! SafeConstructor's scalar constructors: the Python value behind a scalar once its type is
//! known (ints of any size and base, YAML 1.1 floats, base64, timestamps), errors included.

use super::budget::{Budget, INT_DIGITS};
use super::error::{Base64Error, DateError, ScalarError, YamlError, YamlProblem};
use super::resolve::{Stamp, timestamp_parts};
use super::value::Py;
use crate::sglang::pytypes::py_float;

/// SafeConstructor.construct_yaml_timestamp.
fn construct_timestamp(v: &str) -> Result<Py, ScalarError> {
    let s = timestamp_parts(v)
        .or_else(|| loose_date(v))
        .ok_or(ScalarError::NotATimestamp)?;
    Ok(stamp_value(s)?)
}

/// The `datetime.date` or `datetime.datetime` the fields make, as `str()` prints it.
fn stamp_value(s: Stamp) -> Result<Py, DateError> {
    if !(1..=9999).contains(&s.year) {
        return Err(DateError::Year(s.year));
    }
    if !(1..=12).contains(&s.month) {
        return Err(DateError::Month);
    }
    if s.day < 1 || s.day > days_in_month(s.year, s.month) {
        return Err(DateError::Day);
    }
    let date = format!("{:04}-{:02}-{:02}", s.year, s.month, s.day);
    let Some((h, mi, sec, frac, tz)) = s.time else {
        return Ok(Py::Date(date));
    };
    if h > 23 {
        return Err(DateError::Hour);
    }
    if mi > 59 {
        return Err(DateError::Minute);
    }
    if sec > 59 {
        return Err(DateError::Second);
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
                return Err(DateError::Offset);
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
fn int_error(text: &str, base: u32) -> ScalarError {
    ScalarError::IntLiteral {
        text: text.to_owned(),
        base,
    }
}

/// `int(text, base)` for ASCII digits (whitespace around is allowed, as in Python), any size.
fn py_int_text(text: &str, base: u32) -> Result<String, ScalarError> {
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if t.is_empty() || !t.chars().all(|c| c.is_digit(base)) {
        return Err(int_error(text, base));
    }
    if base == 10 {
        // Already decimal: no conversion, so no time quadratic in the length.
        let digits = t.trim_start_matches('0');
        return Ok(if digits.is_empty() { "0" } else { digits }.to_owned());
    }
    big_to_decimal(t, base).ok_or_else(|| int_error(text, base))
}

/// SafeConstructor.construct_yaml_int, step by step (its errors included).
fn construct_int(v: &str) -> Result<String, ScalarError> {
    let v = v.replace('_', "");
    let (neg, body) = match v.as_bytes().first() {
        None => return Err(ScalarError::Empty),
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
        return Err(ScalarError::Empty);
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
fn construct_float(v: &str) -> Result<f64, ScalarError> {
    let v = v.replace('_', "").to_lowercase();
    let (sign, body) = match v.as_bytes().first() {
        None => return Err(ScalarError::Empty),
        Some(b'-') => (-1.0, &v[1..]),
        Some(b'+') => (1.0, &v[1..]),
        _ => (1.0, &v[..]),
    };
    let err = |t: &str| ScalarError::FloatLiteral(t.to_owned());
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
fn decode_base64(s: &str) -> Result<Vec<u8>, Base64Error> {
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
        return Err(Base64Error::Length(data.len()));
    }
    if rem != 0 && pads < 4 - rem {
        return Err(Base64Error::Padding);
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

/// The Python value of a scalar of this resolved or tagged kind (`int`, `timestamp`, …).
pub(super) fn scalar(name: &str, kind: &str, v: &str, line: usize) -> Result<Py, YamlError> {
    Ok(match kind {
        "null" => Py::None,
        // `!!bool` accepts exactly the resolver's words (lower-cased lookup).
        "bool" => match v.to_lowercase().as_str() {
            "yes" | "true" | "on" => Py::Bool(true),
            "no" | "false" | "off" => Py::Bool(false),
            other => return Err(ScalarError::BoolWord(other.to_owned()).into()),
        },
        "int" if v.len() > INT_DIGITS && !is_decimal(v) => {
            return Err(YamlError::budget(name, Budget::IntDigits));
        }
        "int" => Py::Int(construct_int(v)?),
        "float" => Py::Float(construct_float(v)?),
        "binary" => Py::Bytes(decode_base64(v).map_err(|e| YamlError::at(e, name, line, 1))?),
        "timestamp" => construct_timestamp(v)?,
        "str" => Py::Str(v.to_owned()),
        other => {
            let tag = format!("tag:yaml.org,2002:{other}");
            return Err(YamlError::at(YamlProblem::UnknownTag(tag), name, line, 1));
        }
    })
}

/// Whether an int literal is written in base 10 (no `0b`, `0x` or leading `0`).
fn is_decimal(v: &str) -> bool {
    let body = v.trim_start_matches(['-', '+', '_']);
    !body.starts_with('0') || body.trim_start_matches(['0', '_']).is_empty()
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
