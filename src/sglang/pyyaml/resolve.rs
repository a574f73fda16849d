//! PyYAML's implicit resolver (YAML 1.1): which type a plain scalar stands for, by its text
//! alone (`yes` is a bool, `0x10` an int, `1e3` a string, `2024-01-02` a date, …).

/// PyYAML's implicit resolver for a plain scalar (YAML 1.1 rules).
pub(super) fn resolve(v: &str) -> &'static str {
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

/// The fields of a YAML 1.1 timestamp, before `datetime` checks their ranges.
pub(super) struct Stamp {
    pub(crate) year: u32,
    pub(crate) month: u32,
    pub(crate) day: u32,
    /// Hour, minute, second, fraction digits, time zone (`Z` or `±H[H][:MM]`).
    pub(crate) time: Option<(u32, u32, u32, String, Option<String>)>,
}

/// Splits a YAML 1.1 timestamp into its fields (`None` when the text is not one).
pub(super) fn timestamp_parts(v: &str) -> Option<Stamp> {
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
