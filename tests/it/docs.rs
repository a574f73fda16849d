//! The reference docs under `docs/`: generated ones are fresh, the schemas describe what the
//! launcher really writes and reads, and the hand-written format docs cover every field.
//!
//! `SGLANG_LAUNCH_UPDATE_DOCS=1` makes the freshness test rewrite the generated files instead
//! (`scripts/gen-docs.sh`).

use std::path::Path;

use crate::common;
use common::launcher as sl;

use serde_json::{Value, json};
use sglang_launch::docs;
use sglang_launch::facts::Topology;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn generated_docs_are_fresh() {
    let update = std::env::var_os("SGLANG_LAUNCH_UPDATE_DOCS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (file, want) in docs::generated() {
        let path = Path::new(ROOT).join(file);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
            stale.push(file);
        }
    }
    assert!(
        stale.is_empty(),
        "{} stale: run scripts/gen-docs.sh",
        stale.join(", ")
    );
}

fn validate(schema: &Value, instance: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}:\n  {}", errors.join("\n  "));
}

#[test]
fn schemas_are_valid_json_schemas() {
    for schema in [docs::plan_schema(), docs::topology_schema()] {
        assert!(jsonschema::meta::is_valid(&schema), "{schema:#}");
    }
}

fn json_files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(Path::new(ROOT).join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no topology files in {dir}");
    files
}

#[test]
fn topology_files_match_the_schema() {
    let schema = docs::topology_schema();
    for dir in ["tests/fixtures/topologies", "examples/topologies"] {
        for file in json_files(dir) {
            let text = std::fs::read_to_string(&file).unwrap();
            validate(
                &schema,
                &serde_json::from_str(&text).unwrap(),
                &file.display().to_string(),
            );
        }
    }
}

/// The schema and the reader agree on a valid file and on each kind of mistake the schema can
/// express (the reader's cross-field checks are beyond it).
#[test]
fn topology_schema_and_reader_agree() {
    let schema = docs::topology_schema();
    let file = Path::new(ROOT).join("tests/fixtures/topologies/2x-rtx-4090-pcie.json");
    let base: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let edits: &[(&str, &str, Value, bool)] = &[
        ("", "hostname", json!(null), true),
        ("/gpus/0", "numa_node", json!(null), true),
        ("/gpus/0", "compute_capability", json!("unknown"), true),
        ("/gpus/0", "compute_capability", json!("12.0"), true),
        ("/links/0", "path", json!("NV18"), true),
        ("/links/0", "path", json!("NV"), true),
        ("", "host", json!(null), true),
        (
            "",
            "host",
            json!({"shm_bytes": 1, "rdma_devices": [], "packages": {"torch": "2.8.0"}}),
            true,
        ),
        (
            "",
            "host",
            json!({"shm_present": null, "torch_build": "cuda 12.8"}),
            true,
        ),
        ("", "schema", json!("sglang-launch/topology/v2"), false),
        ("", "hostnmae", json!("typo"), false),
        ("", "links", json!(null), false),
        ("/gpus/0", "compute_capability", json!("9"), false),
        ("/gpus/0", "memory_total_mib", json!(0), false),
        ("/gpus/0", "memory_total_mib", json!(17_000_000), false),
        ("/gpus/0", "mig_enabled", json!(null), false),
        ("/gpus/0", "index", json!(-1), false),
        ("/links/0", "path", json!("NV0"), false),
        ("/links/0", "path", json!("PCIE"), false),
        ("/links/0", "p2p", json!("OK"), false),
        ("/links/0", "gpus", json!([0, 1, 1]), false),
        ("", "host", json!("big"), false),
        ("", "host", json!({"shm_byte": 1}), false),
        ("", "host", json!({"rdma_devices": 2}), false),
        ("", "host", json!({"shm_bytes": -1}), false),
        ("", "host", json!({"packages": {"torch": 2}}), false),
    ];
    let validator = jsonschema::validator_for(&schema).unwrap();
    for (at, key, value, ok) in edits {
        let mut doc = base.clone();
        doc.pointer_mut(at).unwrap()[*key] = value.clone();
        let text = doc.to_string();
        let read = Topology::from_json_str(&text, "edited");
        assert_eq!(
            read.is_ok(),
            *ok,
            "reader on {at}/{key} = {value}: {read:?}"
        );
        assert_eq!(
            validator.is_valid(&doc),
            *ok,
            "schema on {at}/{key} = {value}"
        );
    }
    let mut doc = base.clone();
    doc["gpus"][0].as_object_mut().unwrap().remove("uuid");
    assert!(Topology::from_json_str(&doc.to_string(), "edited").is_err());
    assert!(!validator.is_valid(&doc), "schema without gpus[0].uuid");
}

#[test]
fn plan_output_matches_the_schema() {
    let schema = docs::plan_schema();
    let common = [
        "--json",
        "--topology",
        "tests/fixtures/topologies/8x-h100-sxm-nvlink.json",
        "--sglang-version",
        "0.5.23",
        "--",
    ];
    let model = "tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct";
    // A plan with memory and a fix; a check whose arguments don't parse (nulls).
    for (cmd, args) in [
        ("plan", vec!["--model-path", model, "--tp", "8"]),
        (
            "plan",
            vec![
                "--model-path",
                model,
                "--tp",
                "8",
                "--cuda-graph-max-bs",
                "512",
            ],
        ),
        (
            "check",
            vec!["--model-path", model, "--tp", "8", "--no-such-flag"],
        ),
    ] {
        let out = sl().arg(cmd).args(common).args(&args).output().unwrap();
        let plan: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        validate(&schema, &plan, &format!("{cmd} {}", args.join(" ")));
    }
}

/// The ```json blocks of a hand-written doc.
fn json_blocks(doc: &str) -> Vec<Value> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```json") => current = Some(String::new()),
            (Some(text), "```") => {
                blocks.push(serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}")));
                current = None;
            }
            (Some(text), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// Every property name anywhere in the schema (following `$ref`s into `$defs`).
fn property_names(schema: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    out.extend(props.keys().cloned());
                }
                map.values().for_each(|x| walk(x, out));
            }
            Value::Array(items) => items.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut out);
    out.sort();
    out.dedup();
    out
}

#[test]
fn format_docs_cover_every_field_and_their_examples_are_valid() {
    for (file, schema) in [
        ("docs/plan-v1.md", docs::plan_schema()),
        ("docs/topology-v1.md", docs::topology_schema()),
    ] {
        let doc = std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap();
        let missing: Vec<String> = property_names(&schema)
            .into_iter()
            .filter(|name| !doc.contains(&format!("`{name}`")))
            .collect();
        assert!(
            missing.is_empty(),
            "{file} does not document: {}",
            missing.join(", ")
        );
        let examples = json_blocks(&doc);
        assert!(!examples.is_empty(), "{file} has no ```json example");
        for (i, example) in examples.iter().enumerate() {
            validate(&schema, example, &format!("{file}, JSON example {}", i + 1));
        }
    }
}

#[test]
fn cli_reference_leaves_hidden_arguments_out() {
    let cli = docs::cli_markdown();
    assert!(cli.contains("`--topology <FILE>`"), "{cli}");
    assert!(
        !cli.contains("--nvml-lib"),
        "a hidden option is in docs/cli.md"
    );
}

/// The man page as groff renders it; `None` (with a note) where groff is not installed
/// (.ci/run installs it).
fn groff(page: &str, device: &str) -> Option<(String, String)> {
    let run = std::process::Command::new("groff")
        // -P-cbou: plain text, no overstriking, so the headings can be found.
        .args(["-man", "-ww", device, "-P-cbou"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = run else {
        eprintln!("note: groff is not installed; the man page is not rendered");
        return None;
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "groff failed");
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn man_page_renders_without_a_groff_warning() {
    let page = std::fs::read_to_string(Path::new(ROOT).join("man/sglang-launch.1")).unwrap();
    for device in ["-Tutf8", "-Tascii"] {
        let Some((text, warnings)) = groff(&page, device) else {
            return;
        };
        assert!(warnings.is_empty(), "groff {device}:\n{warnings}");
        for section in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "COMMANDS",
            "ENVIRONMENT",
            "EXIT STATUS",
            "FILES",
            "EXAMPLES",
        ] {
            assert!(text.lines().any(|l| l == section), "no {section} section");
        }
    }
}

/// Every visible command with every visible option and its variable, every launcher variable,
/// every exit code; nothing hidden, and no page referred to (none is shipped but this one).
#[test]
fn man_page_documents_every_command_option_variable_and_exit_code() {
    let page = docs::man_page();
    let roff = |s: &str| s.replace('-', "\\-");
    fn walk(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let p = format!("{path} {}", sub.get_name());
            if sub.has_subcommands() {
                walk(sub, p, out);
            } else {
                out.push((p, sub.clone()));
            }
        }
    }
    let mut leaves = Vec::new();
    walk(
        &sglang_launch::invocation::cli::command(),
        "sglang-launch".into(),
        &mut leaves,
    );
    for (path, cmd) in &leaves {
        let at = page
            .find(&format!(".SS \\fB{}\\fR", roff(path)))
            .unwrap_or_else(|| panic!("{path} has no section"));
        let section = &page[at..];
        let section = &section[..section[4..].find("\n.S").map_or(section.len(), |e| e + 4)];
        for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(l) = a.get_long() {
                assert!(section.contains(&roff(&format!("--{l}"))), "{path}: --{l}");
            }
            if let Some(env) = a.get_env() {
                assert!(
                    section.contains(&env.to_string_lossy().to_string()),
                    "{path}: {env:?}"
                );
            }
        }
    }
    assert!(
        !page.contains("\\-\\-nvml\\-lib"),
        "a hidden option is in the man page"
    );
    let env = &page[page.find(".SH ENVIRONMENT").unwrap()..];
    for v in sglang_launch::settings::registry::VARS {
        assert!(env.contains(v.name), "ENVIRONMENT lacks {}", v.name);
    }
    let status = &page[page.find(".SH \"EXIT STATUS\"").unwrap()..];
    use sglang_launch::exit;
    for code in [
        exit::OK,
        exit::BLOCKED,
        exit::USAGE,
        exit::NOT_READY,
        exit::NOT_FOUND,
        78,
    ] {
        assert!(
            status.contains(&format!(".TP\n\\fB{code}\\fR")),
            "EXIT STATUS lacks {code}"
        );
    }
    let refs: Vec<&str> = page
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| {
            w.ends_with(')')
                && w.len() > 3
                && w[w.len() - 3..].starts_with('(')
                && w.as_bytes()[w.len() - 2].is_ascii_digit()
        })
        .collect();
    assert!(refs.is_empty(), "references to other pages: {refs:?}");
}

const OPTIONS_BEGIN: &str =
    "<!-- launcher-options:begin (generated from src/invocation/cli.rs) -->";
const OPTIONS_END: &str = "<!-- launcher-options:end -->";

/// README's table of the launcher options is the CLI's own: an option added to the settings
/// registry reaches it through scripts/gen-docs.sh, never by hand.
#[test]
fn readme_launcher_options_match_the_cli() {
    let path = Path::new(ROOT).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (Some(a), Some(b)) = (readme.find(OPTIONS_BEGIN), readme.find(OPTIONS_END)) else {
        panic!("README.md lacks the {OPTIONS_BEGIN} … {OPTIONS_END} markers");
    };
    let want = format!(
        "{OPTIONS_BEGIN}\n{}{OPTIONS_END}",
        docs::launcher_options_table()
    );
    let have = &readme[a..b + OPTIONS_END.len()];
    if std::env::var_os("SGLANG_LAUNCH_UPDATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::write(&path, readme.replace(have, &want)).unwrap();
    } else {
        assert_eq!(
            have, want,
            "README's launcher-option table is stale: run scripts/gen-docs.sh"
        );
    }
}
