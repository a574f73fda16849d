//! The shape of the code, checked: the pipeline's layers depend one way, sibling modules do not
//! import each other in a loop, no function is too long to read at once, and rule codes exist
//! only in the catalogue, SGLang option names only in the SGLang layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The pipeline, lowest layer first: a layer may use itself and the layers before it.
const LAYERS: &[&str] = &[
    "out",
    "fsread",
    "sglang",
    "install",
    "facts",
    "observe",
    "profile",
    "secrets",
    "resolve",
    "rules",
    "plan",
    "report",
    "exec",
    "service",
    "settings",
    "invocation",
    "complete",
    "docs",
];

const MAX_FN_LINES: usize = 120;

fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out.sort();
    out
}

/// `src/plan/memory/kv.rs` → `["plan", "memory", "kv"]`; `mod.rs` names its folder.
fn module_of(path: &Path) -> Vec<String> {
    let rel = path
        .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// The code before the file's inline test module (`#[cfg(test)]` then `mod NAME {`); a
/// `#[cfg(test)]` on anything else (`mod tests;`, one helper) does not end the production code.
fn non_test(text: &str) -> &str {
    let mut at = 0;
    while let Some(i) = text[at..].find("#[cfg(test)]") {
        let start = at + i;
        let item = text[start..]
            .lines()
            .skip(1)
            .find(|l| !l.trim_start().starts_with("#["))
            .unwrap_or("")
            .trim();
        let module = item
            .split_once("mod ")
            .is_some_and(|(vis, _)| vis.is_empty() || vis.starts_with("pub"));
        if module && item.ends_with('{') {
            return &text[..start];
        }
        at = start + "#[cfg(test)]".len();
    }
    text
}

/// Module paths a file names through `crate::` or `super::`, resolved to existing modules.
fn references(
    module: &[String],
    text: &str,
    known: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    for (i, _) in text
        .match_indices("crate::")
        .chain(text.match_indices("super::"))
    {
        let path: String = text[i..].chars().take_while(|&c| word(c)).collect();
        let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut base: Vec<String> = if segs[0] == "crate" {
            Vec::new()
        } else {
            // A mod.rs is its folder's module: `super` is the folder's parent.
            let mut b = module.to_vec();
            while segs.first() == Some(&"super") {
                b.pop();
                segs.remove(0);
            }
            segs.insert(0, "super");
            b
        };
        for s in segs.iter().skip(1) {
            let mut next = base.clone();
            next.push((*s).to_owned());
            if !known.contains(&next) {
                break;
            }
            base = next;
        }
        if !base.is_empty() {
            out.insert(base);
        }
    }
    out
}

fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files = sources();
    let known: BTreeSet<Vec<String>> = files.iter().map(|p| module_of(p)).collect();
    files
        .iter()
        .map(|p| {
            let m = module_of(p);
            let text = std::fs::read_to_string(p).unwrap();
            let refs = references(&m, non_test(&text), &known);
            (m, refs)
        })
        .collect()
}

#[test]
fn layers_depend_one_way() {
    let mut wrong = Vec::new();
    for (m, refs) in graph() {
        let Some(own) = m.first().and_then(|t| LAYERS.iter().position(|l| l == t)) else {
            continue;
        };
        for r in refs {
            if let Some(other) = LAYERS.iter().position(|l| *l == r[0])
                && other > own
            {
                wrong.push(format!("{} uses {}", m.join("::"), r.join("::")));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "layers used upwards:\n{}",
        wrong.join("\n")
    );
}

/// A top-level module outside [`LAYERS`] would escape the one-way check.
#[test]
fn every_top_level_module_has_a_layer() {
    let missing: BTreeSet<String> = sources()
        .iter()
        .filter_map(|p| module_of(p).first().cloned())
        .filter(|m| !LAYERS.contains(&m.as_str()))
        .collect();
    assert!(missing.is_empty(), "modules without a layer: {missing:?}");
}

#[test]
fn sibling_modules_import_no_loop() {
    let g = graph();
    let mut loops = Vec::new();
    for (a, refs) in &g {
        for b in refs {
            // Parent and child may name each other (`mod` and `super::`).
            if a.starts_with(b) || b.starts_with(a) {
                continue;
            }
            let back = g.get(b).is_some_and(|r| {
                r.iter()
                    .any(|x| a.starts_with(x) && x.len() > 1 && !b.starts_with(x))
            });
            if back {
                loops.push(format!("{} ↔ {}", a.join("::"), b.join("::")));
            }
        }
    }
    assert!(loops.is_empty(), "import loops:\n{}", loops.join("\n"));
}

/// Each `fn` item and its body's length, by rustfmt's layout (the closing brace at the
/// indentation of the line that starts the item).
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        // Any visibility, then `const`/`async`/`unsafe`, then `fn`.
        let unscoped = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|v| t.strip_prefix(v))
            .unwrap_or(t);
        let bare = ["const ", "async ", "unsafe "]
            .iter()
            .find_map(|q| unscoped.strip_prefix(q))
            .unwrap_or(unscoped);
        let item = bare.strip_prefix("fn ");
        let Some(rest) = item else { continue };
        if t.ends_with(';') {
            continue;
        }
        let indent = &l[..l.len() - t.len()];
        let close = format!("{indent}}}");
        if let Some(end) = lines[i..].iter().position(|x| *x == close) {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push((name, end + 1));
        }
    }
    out
}

#[test]
fn no_function_is_too_long_to_read_at_once() {
    let mut long = Vec::new();
    for p in sources() {
        let text = std::fs::read_to_string(&p).unwrap();
        for (name, n) in functions(&text) {
            if n > MAX_FN_LINES {
                long.push(format!("{}: {name} ({n} lines)", p.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_length_check_sees_long_functions() {
    let body = "    x();\n".repeat(130);
    let text = format!("fn short() {{\n}}\n\npub fn long(\n    a: u8,\n) {{\n{body}}}\n");
    let f = functions(&text);
    assert_eq!(f[0], ("short".to_owned(), 2));
    assert_eq!(f[1].0, "long");
    assert!(f[1].1 > MAX_FN_LINES);
}

/// Rule codes are `Code` variants: a string literal that is a code, outside the catalogue, would
/// escape the compiler's check.
#[test]
fn rule_codes_are_typed_outside_the_catalogue() {
    let mut found = Vec::new();
    for p in sources() {
        if p.ends_with("rules/catalogue.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for (i, l) in non_test(&text).lines().enumerate() {
            for lit in l.split('"').skip(1).step_by(2) {
                let letters = lit.trim_end_matches(|c: char| c.is_ascii_digit());
                let digits = lit.len() - letters.len();
                if digits == 3
                    && (2..=5).contains(&letters.len())
                    && letters.chars().all(|c| c.is_ascii_uppercase())
                {
                    found.push(format!("{}:{}: \"{lit}\"", p.display(), i + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "rule codes as strings:\n{}",
        found.join("\n")
    );
}

/// The settings and the release a line runs with are chosen in one place, the run context
/// (`src/invocation/context.rs`): the completion engine asks it, and never merges layers or
/// picks a flag set itself.
#[test]
fn completion_chooses_settings_and_release_through_the_run_context() {
    let own = [
        "settings::combine",
        "settings::env",
        "files::paths",
        "install::select",
        "select::select",
        "find_installed",
        "extract::",
        "launcher_table",
    ];
    let mut found = Vec::new();
    for p in sources()
        .into_iter()
        .filter(|p| module_of(p).first().is_some_and(|m| m == "complete"))
    {
        let text = std::fs::read_to_string(&p).unwrap();
        for (i, l) in non_test(&text).lines().enumerate() {
            if let Some(what) = own.iter().find(|w| l.contains(*w)) {
                found.push(format!("{}:{}: {what}", p.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "chosen outside the run context:\n{}",
        found.join("\n")
    );
}

/// Option-name literals (`"--tp-size"`) in production code outside the SGLang layer.
fn option_literals(known: &BTreeSet<&str>) -> (Vec<String>, Vec<String>) {
    let (mut sglang, mut launcher) = (Vec::new(), Vec::new());
    for p in sources() {
        let module = module_of(&p);
        let test_file = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("tests.rs"));
        if module.first().is_some_and(|m| m == "sglang") || test_file {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for (i, l) in non_test(&text).lines().enumerate() {
            if l.trim_start().starts_with("//") {
                continue;
            }
            for lit in l.split('"').skip(1).step_by(2) {
                let name = lit.strip_prefix("--").unwrap_or("");
                if name.is_empty()
                    || !name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                {
                    continue;
                }
                let at = format!("{}:{}: \"{lit}\"", p.display(), i + 1);
                // `--help` is the launcher's own help as well as SGLang's.
                if known.contains(lit) && lit != "--help" {
                    sglang.push(at);
                } else {
                    launcher.push(at);
                }
            }
        }
    }
    (sglang, launcher)
}

/// SGLang's options are named once, in `sglang::opt`: elsewhere a literal would read a
/// misspelt option silently as "not set". The launcher's own option literals stay few.
#[test]
fn sglang_option_names_are_constants_outside_the_sglang_layer() {
    let known: BTreeSet<&str> = sglang_launch::sglang::opt::ALL.iter().copied().collect();
    let (sglang, launcher) = option_literals(&known);
    assert!(
        sglang.is_empty(),
        "SGLang option names as strings:\n{}",
        sglang.join("\n")
    );
    assert!(
        launcher.len() <= 20,
        "option literals:\n{}",
        launcher.join("\n")
    );
}

/// `sglang::opt` names exactly the long options the embedded releases define.
#[test]
fn option_constants_follow_the_flag_history() {
    use sglang_launch::sglang::{flagset, opt};
    let mut history = BTreeSet::new();
    for v in flagset::KNOWN_VERSIONS {
        for a in &flagset::get(v).unwrap().actions {
            history.extend(
                a.option_strings
                    .iter()
                    .filter(|o| o.starts_with("--"))
                    .cloned(),
            );
        }
    }
    let consts: BTreeSet<String> = opt::ALL.iter().map(|s| s.to_string()).collect();
    assert_eq!(consts, history, "run scripts/gen-option-names.py");
    assert_eq!(opt::ALL.len(), consts.len(), "one constant per option");
}
