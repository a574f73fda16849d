//! `config show`: each merged setting, its value and the layer it came from.

use serde_json::{Map, Value, json};

use super::combine::Resolved;

fn values(r: &Resolved) -> Map<String, Value> {
    match serde_json::to_value(&r.settings) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// `{"settings": {"<key>": {"value": …, "source": "…"}}}`, in registry order.
pub(crate) fn render_json(r: &Resolved) -> String {
    let values = values(r);
    let settings: Map<String, Value> = r
        .sources
        .iter()
        .map(|(key, source)| {
            let value = values.get(*key).cloned().unwrap_or(Value::Null);
            (
                (*key).to_owned(),
                json!({ "value": value, "source": source }),
            )
        })
        .collect();
    crate::out::json_safe(
        serde_json::to_string_pretty(&json!({ "settings": settings })).expect("JSON renders"),
    )
}

/// Settings that exist for the tests: shown only when something sets them.
const TEST_ONLY: &[&str] = &["device-root"];

/// One line per setting: key, value (`-` when unset), source; then the interpreter that will
/// run SGLang (`python` resolved).
pub(crate) fn render_text(r: &Resolved, interpreter: &str) -> String {
    let values = values(r);
    let rows: Vec<(String, String, String)> = r
        .sources
        .iter()
        .filter(|(key, source)| !TEST_ONLY.contains(key) || source != "default")
        // Values and sources (paths, variables' values) are data: escaped before the
        // columns are measured, so each row stays one line and the columns line up.
        .map(|(key, source)| {
            let esc = crate::out::escape;
            (esc(key), esc(&text(values.get(*key))), esc(source))
        })
        .collect();
    let kw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    // Values past the column's width (a long path) are shown whole and only shift their own
    // row's source; padding is written out, as a format width is bounded.
    let vw = rows
        .iter()
        .map(|r| r.1.chars().count())
        .filter(|&n| n <= VALUE_COLUMN)
        .max()
        .unwrap_or(0);
    let mut out: String = rows
        .iter()
        .map(|(k, v, s)| {
            let pad = " ".repeat(vw.saturating_sub(v.chars().count()));
            format!("{k:kw$}  {v}{pad}  {s}\n")
        })
        .collect();
    out.push_str(&format!(
        "interpreter: {} (what runs SGLang: python, else the one beside the launcher, else PATH's)\n",
        crate::out::escape(interpreter)
    ));
    out
}

/// The widest value the table aligns its sources after.
const VALUE_COLUMN: usize = 60;

fn text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "-".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) if a.is_empty() => "-".into(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| text(Some(v)))
            .collect::<Vec<_>>()
            .join(","),
        Some(v) => v.to_string(),
    }
}
