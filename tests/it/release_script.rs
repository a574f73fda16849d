//! `scripts/add-release` runs every generator: a generator added to `scripts/` without a step
//! there would be forgotten when the next SGLang release is added. Read from the script's step
//! table (no Python needed); where `python3` is on PATH, its `--plan` output is checked too.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn script() -> String {
    std::fs::read_to_string(Path::new(ROOT).join("scripts/add-release")).unwrap()
}

/// The generators: every `scripts/gen-*` file.
fn generators() -> BTreeSet<String> {
    std::fs::read_dir(Path::new(ROOT).join("scripts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gen-"))
        .collect()
}

/// The names in the step table's `scripts=[...]` lists.
fn step_scripts(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for part in text.split("scripts=[").skip(1) {
        let list = &part[..part.find(']').expect("a closed scripts list")];
        out.extend(
            list.split(',')
                .map(|s| s.trim().trim_matches('"'))
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
    }
    out
}

#[test]
fn every_generator_is_a_step_of_add_release() {
    let text = script();
    let named = step_scripts(&text);
    assert!(
        named.contains("gen-flags.py"),
        "step table not read: {named:?}"
    );
    let missing: Vec<_> = generators()
        .into_iter()
        .filter(|g| !named.contains(g))
        .collect();
    assert!(
        missing.is_empty(),
        "generators with no step in scripts/add-release (add one to STEPS, in the order of what \
         they read and write): {missing:?}"
    );
    for name in &named {
        assert!(
            Path::new(ROOT).join("scripts").join(name).exists(),
            "scripts/add-release names scripts/{name}, which does not exist"
        );
    }
}

#[test]
fn add_release_plan_lists_every_generator() {
    let Ok(out) = Command::new("python3")
        .arg(Path::new(ROOT).join("scripts/add-release"))
        .args(["0.5.99", "--plan"])
        .output()
    else {
        eprintln!("python3 not found: --plan not run (the step table is checked without it)");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = String::from_utf8(out.stdout).unwrap();
    for g in generators() {
        assert!(
            plan.contains(&format!("scripts/{g}")),
            "--plan does not list scripts/{g}"
        );
    }
    // The data steps come before the counts, the docs and the tests, in that order.
    let at = |s: &str| {
        plan.find(&format!(". {s} ["))
            .unwrap_or_else(|| panic!("{s} not in the plan"))
    };
    assert!(at("register") < at("flags"));
    assert!(at("flags") < at("conformance"));
    assert!(at("defaults") < at("counts"));
    assert!(at("counts") < at("docs"));
    assert!(at("docs") < at("test"));
}
