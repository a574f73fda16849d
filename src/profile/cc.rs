//! Compute-capability conditions (`">=12.0,<13"`): parsing and evaluation, pure.

/// One `>=12.0`-style comparison on (major, minor).
type Cmp = (&'static str, (u32, u32));

/// Parses `">=12.0,<13"`: comparisons `>=`, `<=`, `>`, `<`, `==`, `=`; a bare `13` is `13.0`.
pub(crate) fn parse_cc(spec: &str) -> Result<Vec<Cmp>, String> {
    spec.split(',')
        .map(str::trim)
        .map(|part| {
            let op = [">=", "<=", "==", ">", "<", "="]
                .into_iter()
                .find(|op| part.starts_with(op))
                .ok_or_else(|| bad_cc(spec))?;
            let v = part[op.len()..].trim();
            let (major, minor) = v.split_once('.').unwrap_or((v, "0"));
            match (major.parse(), minor.parse()) {
                (Ok(a), Ok(b)) => Ok((op, (a, b))),
                _ => Err(bad_cc(spec)),
            }
        })
        .collect()
}

fn bad_cc(spec: &str) -> String {
    format!(
        "compute-capability {spec:?} is not a condition: write comparisons like \">=12.0,<13\" \
         (>=, <=, >, <, ==)"
    )
}

pub(crate) fn holds(cmps: &[Cmp], cc: (u32, u32)) -> bool {
    cmps.iter().all(|(op, v)| match *op {
        ">=" => cc >= *v,
        "<=" => cc <= *v,
        ">" => cc > *v,
        "<" => cc < *v,
        _ => cc == *v,
    })
}
