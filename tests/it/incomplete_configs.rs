//! Never a memory plan with an unknown KV cache or unknown weights and no finding saying why:
//! every model config in the fixtures (and in /work/shared/models where present), as given and
//! with each planner key removed in turn, through the plan `check --json` prints.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sglang_launch::plan::{self, Request};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SHARED: &str = "/work/shared/models";
const REMOVED: [&str; 6] = [
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "num_hidden_layers",
    "vocab_size",
    "hidden_size",
];

fn configs(dir: &Path, out: &mut Vec<PathBuf>) {
    out.extend(crate::common::files_named(dir, "config.json"));
}

/// `check --json`'s plan, built in process (the release data is decoded once for every config).
fn check(model_dir: &Path) -> Value {
    let req = Request {
        tokens: ["--tp", "8", "--model-path"]
            .iter()
            .map(OsString::from)
            .chain([model_dir.as_os_str().to_owned()])
            .collect(),
        topology: Some("tests/fixtures/topologies/8x-h200-nvlink.json".into()),
        sglang_version: Some("0.5.23".into()),
        python: Some("/usr/bin/python3".into()),
        ..Request::default()
    };
    let outcome =
        plan::build(&req).unwrap_or_else(|e| panic!("{}: {}", model_dir.display(), e.message));
    serde_json::to_value(&outcome.plan).unwrap()
}

/// The plan has both numbers (true), or MEM009 names `key` (any key when `None`).
fn planned_or_explained(what: &str, plan: &Value, key: Option<&str>) -> bool {
    let memory = &plan["memory"];
    if !memory["kv_cache_tokens"].is_null() && !memory["weights_per_gpu_gib"].is_null() {
        return true;
    }
    let explained = plan["findings"].as_array().unwrap().iter().any(|f| {
        let m = f["message"].as_str().unwrap_or_default();
        f["code"] == "MEM009" && key.is_none_or(|k| m.contains(k))
    });
    assert!(
        explained,
        "{what}: KV cache or weights unplanned and no MEM009 naming {key:?}: {:#}",
        plan["findings"]
    );
    false
}

/// The object holding the language model's keys (SGLang's order of sub-configs).
fn text_level(config: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let sub = [
        "thinker_config",
        "llm_config",
        "language_config",
        "text_config",
    ]
    .into_iter()
    .find(|k| config.get(*k).is_some_and(Value::is_object));
    match sub {
        Some(k) => config.get_mut(k).and_then(Value::as_object_mut).unwrap(),
        None => config,
    }
}

#[test]
fn every_config_and_every_key_removed_is_planned_or_explained() {
    let mut all = Vec::new();
    configs(&Path::new(ROOT).join("tests/fixtures/models"), &mut all);
    configs(Path::new(SHARED), &mut all);
    assert!(all.len() >= 15, "{all:?}");
    let tmp = tempfile::tempdir().unwrap();
    let mut variants = 0;
    for path in &all {
        let dir = path.parent().unwrap();
        let planned = planned_or_explained(&path.display().to_string(), &check(dir), None);
        let text = std::fs::read_to_string(path).unwrap();
        let Ok(Value::Object(original)) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        for key in REMOVED {
            let mut config = original.clone();
            text_level(&mut config).remove(key);
            config.remove(key);
            if config == original {
                continue;
            }
            variants += 1;
            std::fs::write(
                tmp.path().join("config.json"),
                Value::Object(config).to_string(),
            )
            .unwrap();
            let what = format!("{} without {key}", path.display());
            // An already incomplete config may still lack other keys first.
            let named = planned.then_some(key);
            planned_or_explained(&what, &check(tmp.path()), named);
        }
    }
    assert!(variants >= 50, "{variants}");
}

#[test]
fn a_config_without_a_type_and_without_heads_is_explained() {
    let tmp = tempfile::tempdir().unwrap();
    let config = r#"{"hidden_size": 4096, "num_hidden_layers": 32, "vocab_size": 32000}"#;
    std::fs::write(tmp.path().join("config.json"), config).unwrap();
    let plan = check(tmp.path());
    assert!(plan["memory"]["kv_cache_tokens"].is_null());
    planned_or_explained("no model_type", &plan, Some("num_attention_heads"));
    let m = plan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "MEM009")
        .unwrap();
    assert!(
        m["message"].as_str().unwrap().contains("no model_type"),
        "{m}"
    );
}
