//! The generated inputs of the crate, written to `$OUT_DIR`:
//! * `catalogue.rs`, the rule catalogue's code table, from the rule texts: each
//!   `data/rules/<CODE>.md` header names its check (`check: family::function`) or says the
//!   pipeline emits it (`emitted-by: pipeline`), so a new rule is its text, its check and its
//!   test, with no list to edit (the `catalogue!` invocation `src/rules/catalogue.rs` includes).
//!   Each entry carries its text already split into header fields and body, so a check does
//!   not scan every rule text before it can evaluate one rule;
//! * `flag_history.rs` and `env_history.rs`, `data/flags/history.jsonl` and
//!   `data/envs/history.jsonl` as Rust statics: the same facts, read on every run with no JSON
//!   to decode (a check reads one or two releases' 500-odd actions, and 700-odd variables when
//!   the environment has SGLang's).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    catalogue();
    flag_history();
    env_history();
}

/// `name: [ty; n] = [items]` as a static.
fn list(name: &str, ty: &str, items: &[String]) -> String {
    format!(
        "pub(super) static {name}: [{ty}; {}] = [{}];\n",
        items.len(),
        items.join(",\n")
    )
}

/// The pools every generated table indexes into, and `POOLS` naming them.
fn pools(t: &Tables) -> String {
    [
        format!("pub(super) static TEXT: &str = {:?};\n", t.text),
        list("VALUES", "Py", &t.values),
        list("PAIRS", "(S, Py)", &t.pairs),
        list("RUNS", "usize", &t.runs),
        "pub(super) static POOLS: Pools = Pools { text: TEXT, values: &VALUES, pairs: &PAIRS };\n"
            .to_string(),
    ]
    .concat()
}

/// The items of a history table (every line after its header), each parsed.
fn history_lines(path: &str) -> Vec<serde_json::Value> {
    println!("cargo::rerun-if-changed={path}");
    let text = std::fs::read_to_string(path).expect("a history table");
    (text.lines().skip(1))
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect()
}

fn write_out(name: &str, text: String) {
    let target = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join(name);
    std::fs::write(target, text).expect("write a generated table");
}

/// `data/envs/history.jsonl` as Rust data (`env_history.rs`), as [`flag_history`] does for
/// flags: a check that meets an `SGLANG_` variable reads its release's 700-odd variables
/// without decoding JSON.
fn env_history() {
    let mut t = Tables::default();
    let (mut releases, mut items) = (Vec::new(), Vec::new());
    for item in history_lines("data/envs/history.jsonl") {
        if item.get("version").is_some() {
            releases.push(t.env_release(&item));
        } else {
            items.push(t.env_item(&item));
        }
    }
    let out = [
        pools(&t),
        list("RELEASES", "RawRelease", &releases),
        list("ITEMS", "RawItem", &items),
    ]
    .concat();
    write_out("env_history.rs", out);
}

/// `data/flags/history.jsonl` as Rust data (`flag_history.rs`): every release's line and every
/// distinct action as statics, so a check reads its release's 500-odd actions without decoding
/// any JSON (a test compares every item with the data file's decode). The statics hold no
/// pointers, only offsets into one text and one table per kind: a pointer in a static is a
/// relocation the loader applies at every start, thousands of them for this table.
fn flag_history() {
    let mut t = Tables::default();
    let (mut releases, mut actions) = (Vec::new(), Vec::new());
    for item in history_lines("data/flags/history.jsonl") {
        match item.get("action") {
            Some(action) => actions.push(t.action(action)),
            None => releases.push(t.release(&item)),
        }
    }
    let out = [
        pools(&t),
        list("OPTIONS", "S", &t.options),
        list("RELEASES", "RawRelease", &releases),
        list("ACTIONS", "RawAction", &actions),
    ]
    .concat();
    write_out("flag_history.rs", out);
}

/// The pools the generated statics index into, as Rust literals.
#[derive(Default)]
struct Tables {
    text: String,
    at: std::collections::HashMap<String, usize>,
    options: Vec<String>,
    values: Vec<String>,
    pairs: Vec<String>,
    runs: Vec<String>,
}

impl Tables {
    /// `S(offset, len)` of `s` in the text (each distinct string once).
    fn s(&mut self, s: &str) -> String {
        let at = match self.at.get(s) {
            Some(&at) => at,
            None => {
                let at = self.text.len();
                self.text.push_str(s);
                self.at.insert(s.to_owned(), at);
                at
            }
        };
        format!("S({at}, {})", s.len())
    }

    fn opt_s(&mut self, v: Option<&str>) -> String {
        v.map_or("None".to_owned(), |s| format!("Some({})", self.s(s)))
    }

    /// A span of `items` appended to `pool`.
    fn span(pool: &mut Vec<String>, items: Vec<String>) -> String {
        let start = pool.len();
        let n = items.len();
        pool.extend(items);
        format!("Span({start}, {n})")
    }

    /// A release line's runs of item indices (under `key`), appended to the runs pool.
    fn runs(&mut self, line: &serde_json::Value, key: &str) -> String {
        let runs: Vec<String> = line[key]
            .as_array()
            .expect("a release's runs of items")
            .iter()
            .map(|n| n.as_u64().expect("an item index").to_string())
            .collect();
        Self::span(&mut self.runs, runs)
    }

    fn release(&mut self, line: &serde_json::Value) -> String {
        let version = self.s(line["version"].as_str().expect("version"));
        let prog = self.s(line["prog"].as_str().expect("prog"));
        let runs = self.runs(line, "actions");
        let abbrev = line["allow_abbrev"].as_bool().expect("allow_abbrev");
        format!(
            "RawRelease {{ version: {version}, prog: {prog}, allow_abbrev: {abbrev}, runs: {runs} }}"
        )
    }

    fn env_release(&mut self, line: &serde_json::Value) -> String {
        let version = self.s(line["version"].as_str().expect("version"));
        let runs = self.runs(line, "items");
        let flag = |k: &str| line[k].as_bool().expect("a release's flag");
        format!(
            "RawRelease {{ version: {version}, typed_registry: {}, sgl_prefix_rewrite: {}, runs: {runs} }}",
            flag("typed_registry"),
            flag("sgl_prefix_rewrite")
        )
    }

    /// An env item: exactly one of `var`, `deprecated`, `raw`, `write` (the `in` range is for
    /// readers of the data file; the release lines say which releases hold an item).
    fn env_item(&mut self, item: &serde_json::Value) -> String {
        let known = ["in", "var", "deprecated", "raw", "write"];
        let obj = item.as_object().expect("an env item");
        assert!(
            obj.keys().all(|k| known.contains(&k.as_str())),
            "env history: build.rs does not know {obj:?}"
        );
        let var = match item.get("var") {
            Some(v) => {
                let name = self.s(v["name"].as_str().expect("a variable's name"));
                let ty = self.s(v["type"].as_str().expect("a variable's type"));
                let default = self.py(&v["default"]);
                let alias = self.opt_s(v["alias"].as_str());
                format!(
                    "Some(RawVar {{ name: {name}, ty: {ty}, default: {default}, alias: {alias} }})"
                )
            }
            None => "None".into(),
        };
        let deprecated = match item.get("deprecated") {
            Some(d) => {
                let name = self.s(d["name"].as_str().expect("a deprecated name"));
                let replacement = self.opt_s(d["replacement"].as_str());
                let transform = self.opt_s(d.get("transform").and_then(|t| t.as_str()));
                format!(
                    "Some(RawDeprecated {{ name: {name}, replacement: {replacement}, transform: {transform} }})"
                )
            }
            None => "None".into(),
        };
        let raw = self.opt_s(item.get("raw").and_then(|v| v.as_str()));
        let write = self.opt_s(item.get("write").and_then(|v| v.as_str()));
        format!("RawItem {{ var: {var}, deprecated: {deprecated}, raw: {raw}, write: {write} }}")
    }

    fn action(&mut self, action: &serde_json::Value) -> String {
        let a = action.as_object().expect("an action object");
        let unknown: Vec<&String> = a.keys().filter(|k| !FIELDS.contains(&k.as_str())).collect();
        assert!(
            unknown.is_empty(),
            "flag history: build.rs does not know {unknown:?}"
        );
        let null = serde_json::Value::Null;
        let get = |k: &str| a.get(k).unwrap_or(&null);
        let flag = |k: &str| get(k).as_bool().unwrap_or(false);
        let options: Vec<String> = get("option_strings")
            .as_array()
            .expect("option_strings")
            .iter()
            .map(|o| self.s(o.as_str().expect("an option string")))
            .collect();
        let options = Self::span(&mut self.options, options);
        let choices = match get("choices") {
            serde_json::Value::Null => "None".to_owned(),
            c => {
                let items = c
                    .as_array()
                    .expect("choices")
                    .iter()
                    .map(|v| self.py(v))
                    .collect();
                format!("Some({})", Self::span(&mut self.values, items))
            }
        };
        let dest = self.s(get("dest").as_str().expect("dest"));
        let (konst, default) = (self.py(get("const")), self.py(get("default")));
        let deprecated_for = self.opt_s(get("deprecated_for").as_str());
        let deprecated_exception = self.opt_s(get("deprecated_exception").as_str());
        format!(
            "RawAction {{ option_strings: {options}, dest: {dest}, kind: ActionKind::{}, \
             nargs: {}, r#const: {konst}, default: {default}, default_is_suppress: {}, \
             value_type: ValueType::{}, choices: {choices}, required: {}, \
             deprecated_for: {deprecated_for}, deprecated_error: {}, \
             deprecated_exception: {deprecated_exception} }}",
            camel(get("kind").as_str().expect("kind")),
            nargs(get("nargs")),
            flag("default_is_suppress"),
            camel(get("value_type").as_str().expect("value_type")),
            flag("required"),
            flag("deprecated_error"),
        )
    }

    /// A JSON value as a `Py` literal (a list's items and a map's pairs go to their pools).
    fn py(&mut self, v: &serde_json::Value) -> String {
        use serde_json::Value;
        match v {
            Value::Null => "Py::Null".into(),
            Value::Bool(b) => format!("Py::Bool({b})"),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => format!("Py::UInt({u})"),
                (None, Some(i), _) => format!("Py::Int({i})"),
                (None, None, Some(f)) => format!("Py::Float({f:?})"),
                _ => panic!("flag history: number {n}"),
            },
            Value::String(s) => format!("Py::Str({})", self.s(s)),
            Value::Array(items) => {
                let items = items.iter().map(|v| self.py(v)).collect();
                format!("Py::List({})", Self::span(&mut self.values, items))
            }
            Value::Object(m) => {
                let pairs = m
                    .iter()
                    .map(|(k, v)| {
                        let (k, v) = (self.s(k), self.py(v));
                        format!("({k}, {v})")
                    })
                    .collect();
                format!("Py::Map({})", Self::span(&mut self.pairs, pairs))
            }
        }
    }
}

/// The fields `sglang::flagset::Action` has; an unknown one stops the build.
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

/// `store_true` → `StoreTrue`: serde's `snake_case` names of the enums' variants.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn nargs(v: &serde_json::Value) -> String {
    match v.as_str() {
        Some("1") => "Nargs::One".into(),
        Some("0") => "Nargs::Zero".into(),
        Some("?") => "Nargs::Optional".into(),
        Some("*") => "Nargs::ZeroOrMore".into(),
        Some("+") => "Nargs::OneOrMore".into(),
        _ => format!("Nargs::Exactly({})", v.as_u64().expect("nargs")),
    }
}

fn catalogue() {
    let dir = Path::new("data/rules");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut rules: Vec<Entry> = std::fs::read_dir(dir)
        .expect("data/rules")
        .map(|e| e.expect("data/rules entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| entry(&p))
        .collect();
    rules.sort_by_key(|e| code_key(&e.code));
    let mut out = String::from("catalogue! {\n");
    for e in &rules {
        let check = e
            .check
            .as_ref()
            .map_or("P".to_owned(), |f| format!("c({f})"));
        let fields: Vec<String> = e.fields.iter().map(|f| format!("{f:?}")).collect();
        writeln!(
            out,
            "    {} => {check}, [{}], {};",
            e.code,
            fields.join(", "),
            e.body
        )
        .expect("write to a String");
    }
    out.push_str("}\n");
    write_out("catalogue.rs", out);
}

include!("src/rules/header_keys.rs");

/// A rule text: its code (the file's name), the check its header names, where each header
/// field's value is (`key: value`, trimmed), by [`HEADER_KEYS`] order, `(0, 0)` for a key the
/// header lacks, and where the body after the `---` line starts. Offsets, not strings: the
/// table holds no pointer the loader would have to relocate at every start.
struct Entry {
    code: String,
    check: Option<String>,
    fields: [(usize, usize); HEADER_KEYS.len()],
    body: usize,
}

/// A rule text, split. A file that names neither a check nor the pipeline stops the build: the
/// rule would never run (the catalogue checks the rest of the header when it reads the fields).
fn entry(path: &Path) -> Entry {
    println!("cargo::rerun-if-changed={}", path.display());
    let code = path
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("UTF-8 name");
    let text = std::fs::read_to_string(path).expect("rule text");
    let end = text
        .find("\n---\n")
        .unwrap_or_else(|| panic!("{}: no `---` line after the header", path.display()));
    let at = |part: &str| part.as_ptr() as usize - text.as_ptr() as usize;
    let mut fields = [(0, 0); HEADER_KEYS.len()];
    for (k, v) in text[..end].lines().filter_map(|l| l.split_once(':')) {
        let Some(i) = HEADER_KEYS.iter().position(|h| *h == k) else {
            panic!("{}: unknown header key `{k}`", path.display());
        };
        assert!(fields[i] == (0, 0), "{}: `{k}` twice", path.display());
        let v = v.trim();
        fields[i] = (at(v), at(v) + v.len());
    }
    let field = |key: &str| {
        let i = HEADER_KEYS.iter().position(|h| *h == key)?;
        (fields[i] != (0, 0)).then(|| text[fields[i].0..fields[i].1].to_owned())
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
    Entry {
        code: code.to_owned(),
        check,
        fields,
        body: end + "\n---\n".len(),
    }
}

/// Family, then number, as the catalogue lists its rules.
fn code_key(code: &str) -> (String, u32) {
    let i = code
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(code.len());
    (code[..i].to_owned(), code[i..].parse().unwrap_or(0))
}
