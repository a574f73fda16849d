//! The rule catalogue's code table, from the rule texts: each `data/rules/<CODE>.md` header names
//! its check (`check: family::function`) or says the pipeline emits it (`emitted-by: pipeline`),
//! so a new rule is its text, its check and its test, with no list to edit. Writes
//! `$OUT_DIR/catalogue.rs`, the `catalogue!` invocation `src/rules/catalogue.rs` includes.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
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
