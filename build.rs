//! Two generated inputs of the crate, written to `$OUT_DIR`:
//! * `catalogue.rs`, the rule catalogue's code table, from the rule texts: each
//!   `data/rules/<CODE>.md` header names its check (`check: family::function`) or says the
//!   pipeline emits it (`emitted-by: pipeline`), so a new rule is its text, its check and its
//!   test, with no list to edit (the `catalogue!` invocation `src/rules/catalogue.rs` includes);
//! * `flag-history.jsonl`, `data/flags/history.jsonl` with each action written as an array of
//!   its fields in `FIELDS` order instead of an object: the same facts, decoded a third faster
//!   on every run (a check decodes one or two releases' 500-odd actions).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    catalogue();
    flag_history();
}

/// The fields of an action, in the order `sglang::flagset::Action` declares them (a test
/// decodes every item both ways).
const FIELDS: [&str; 13] = [
    "option_strings",
    "dest",
    "kind",
    "nargs",
    "const",
    "default",
    "default_is_suppress",
    "value_type",
    "choices",
    "required",
    "deprecated_for",
    "deprecated_error",
    "deprecated_exception",
];

fn flag_history() {
    let source = Path::new("data/flags/history.jsonl");
    println!("cargo::rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(source).expect("data/flags/history.jsonl");
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(&packed(line).unwrap_or_else(|| line.to_owned()));
        out.push('\n');
    }
    let target = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("flag-history.jsonl");
    std::fs::write(target, out).expect("write flag-history.jsonl");
}

/// An item line with its action as an array (absent fields as their defaults: null or false);
/// `None` for the header and release lines.
fn packed(line: &str) -> Option<String> {
    let item: serde_json::Value = serde_json::from_str(line).expect("flag history line");
    let action = item.get("action")?.as_object()?;
    let unknown: Vec<&String> = action
        .keys()
        .filter(|k| !FIELDS.contains(&k.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "flag history: build.rs does not know {unknown:?}"
    );
    let fields: Vec<serde_json::Value> = FIELDS
        .iter()
        .map(|f| match (action.get(*f), *f) {
            (Some(v), _) => v.clone(),
            (None, "default_is_suppress" | "required" | "deprecated_error") => false.into(),
            (None, _) => serde_json::Value::Null,
        })
        .collect();
    Some(serde_json::json!({ "action": fields }).to_string())
}

fn catalogue() {
    let dir = Path::new("data/rules");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut rules: Vec<(String, Option<String>)> = std::fs::read_dir(dir)
        .expect("data/rules")
        .map(|e| e.expect("data/rules entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| entry(&p))
        .collect();
    rules.sort_by_key(|(code, _)| code_key(code));
    let mut out = String::from("catalogue! {\n");
    for (code, check) in &rules {
        match check {
            Some(f) => writeln!(out, "    {code} => c({f}),"),
            None => writeln!(out, "    {code} => P,"),
        }
        .expect("write to a String");
    }
    out.push_str("}\n");
    let target = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("catalogue.rs");
    std::fs::write(target, out).expect("write catalogue.rs");
}

/// The code (the file's name) and the check its header names. A file that names neither a
/// check nor the pipeline stops the build: the rule would never run.
fn entry(path: &Path) -> (String, Option<String>) {
    println!("cargo::rerun-if-changed={}", path.display());
    let code = path
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("UTF-8 name");
    let text = std::fs::read_to_string(path).expect("rule text");
    let head = text.split("\n---\n").next().unwrap_or_default();
    let field = |key: &str| {
        head.lines()
            .filter_map(|l| l.split_once(':'))
            .find_map(|(k, v)| (k == key).then(|| v.trim().to_owned()))
    };
    let check = field("check");
    let valid = |f: &String| {
        f.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    };
    let pipeline = field("emitted-by").as_deref() == Some("pipeline");
    match (&check, pipeline) {
        (Some(f), false) if valid(f) => {}
        (None, true) => {}
        _ => panic!(
            "{}: name a check (`check: family::function`) or `emitted-by: pipeline`, not both",
            path.display()
        ),
    }
    (code.to_owned(), check)
}

/// Family, then number, as the catalogue lists its rules.
fn code_key(code: &str) -> (String, u32) {
    let i = code
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(code.len());
    (code[..i].to_owned(), code[i..].parse().unwrap_or(0))
}
