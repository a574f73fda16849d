//! Garbage model facts are named (MEM013), never acted on: for each planner key × each bad
//! value, the plan says which key and value, the verdict is not blocked by memory, and the final
//! command gets no memory fix (no `--mem-fraction-static`, nothing from `--fit`). And no real
//! config (tests/fixtures, /work/shared/models where present) trips MEM013.

use std::path::{Path, PathBuf};

use crate::common;

use serde_json::{Map, Value, json};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SHARED: &str = "/work/shared/models";

fn configs(dir: &Path, out: &mut Vec<PathBuf>) {
    out.extend(crate::common::files_named(dir, "config.json"));
}

/// `plan --json --fit` on 8 H200s; the plan, and stderr for panics.
fn plan(model_dir: &Path, extra: &[&str]) -> Value {
    let out = common::launcher()
        .args([
            "plan",
            "--json",
            "--fit",
            "--sglang-version",
            "0.5.23",
            "--topology",
            "tests/fixtures/topologies/8x-h200-nvlink.json",
            "--",
            "--tp",
            "8",
            "--model-path",
        ])
        .arg(model_dir)
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "{}: {stderr}",
        model_dir.display()
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {stderr}", model_dir.display()))
}

fn findings(plan: &Value) -> &Vec<Value> {
    plan["findings"].as_array().unwrap()
}

fn fixture(name: &str) -> Map<String, Value> {
    let path = Path::new(ROOT).join("tests/fixtures/models").join(name);
    let text = std::fs::read_to_string(path.join("config.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Bad values as JSON text, so that `1e12` stays a float and 2^64 stays out of `u64`.
const BAD: [&str; 9] = [
    "1000000000000",
    "1e12",
    "0",
    "-1",
    "4096.5",
    "4096.0",
    "\"4096\"",
    "true",
    "18446744073709551616",
];

/// (fixture, key, values that are fine for it: 0 where a count may be zero).
const KEYS: [(&str, &str, &[&str]); 11] = [
    (
        "meta-llama__Llama-3.1-8B-Instruct",
        "num_hidden_layers",
        &[],
    ),
    ("meta-llama__Llama-3.1-8B-Instruct", "hidden_size", &[]),
    (
        "meta-llama__Llama-3.1-8B-Instruct",
        "num_attention_heads",
        &[],
    ),
    (
        "meta-llama__Llama-3.1-8B-Instruct",
        "num_key_value_heads",
        &[],
    ),
    ("meta-llama__Llama-3.1-8B-Instruct", "vocab_size", &[]),
    (
        "meta-llama__Llama-3.1-8B-Instruct",
        "intermediate_size",
        &[],
    ),
    ("Qwen__Qwen3-8B", "head_dim", &[]),
    ("deepseek-ai__DeepSeek-V3", "kv_lora_rank", &[]),
    ("deepseek-ai__DeepSeek-V3", "qk_rope_head_dim", &["0"]),
    ("deepseek-ai__DeepSeek-V3", "n_routed_experts", &["0"]),
    ("Qwen__Qwen3-30B-A3B-FP8", "num_experts", &["0"]),
];

/// The keys no model does without: `null` is garbage there too.
const REQUIRED: [&str; 4] = [
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "vocab_size",
];

/// The plan names `key` and `value` in a MEM013 warning, no memory finding blocks (nor
/// anything else, unless the line was blocked already), and the final command carries no
/// memory fix.
fn assert_named_not_acted_on(what: &str, plan: &Value, key: &str, value: &str) {
    assert_named_not_acted_on_beside(what, plan, key, value, false)
}

fn assert_named_not_acted_on_beside(
    what: &str,
    plan: &Value,
    key: &str,
    value: &str,
    blocked_before: bool,
) {
    let all = findings(plan);
    let named = all.iter().any(|f| {
        let m = f["message"].as_str().unwrap_or_default();
        f["code"] == "MEM013"
            && f["severity"] == "warning"
            && m.contains(&format!("{key} is {value}"))
            && m.contains("a real model has")
    });
    assert!(named, "{what}: no MEM013 naming {key} = {value}: {all:#?}");
    let blocking: Vec<_> = all
        .iter()
        .filter(|f| f["code"].as_str().unwrap_or_default().starts_with("MEM"))
        .filter(|f| f["severity"] == "error" && f["fixed"] == false)
        .collect();
    assert!(blocking.is_empty(), "{what}: {blocking:#?}");
    if !blocked_before {
        assert_ne!(plan["verdict"], "error", "{what}: {all:#?}");
    }
    let args: Vec<&str> = plan["sglang_args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for fix in [
        "--mem-fraction-static",
        "--context-length",
        "--max-running-requests",
        "--cuda-graph-max-bs-decode",
    ] {
        assert!(!args.contains(&fix), "{what}: {fix} added: {args:?}");
    }
    assert!(
        plan["memory"]["fits"].is_null(),
        "{what}: {:#}",
        plan["memory"]
    );
}

#[test]
fn every_bad_value_of_every_key_is_named_and_not_acted_on() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = 0;
    for (model, key, fine) in KEYS {
        let base = fixture(model);
        assert!(base.contains_key(key), "{model} has no {key}");
        // Some bases are blocked at TP 8 already (Qwen3-30B-A3B-FP8's 128-blocks: QUANT006).
        let dir = Path::new(ROOT).join("tests/fixtures/models").join(model);
        let blocked_before = plan(&dir, &[])["verdict"] == "error";
        let null_bad = REQUIRED.contains(&key);
        for value in BAD
            .iter()
            .copied()
            .chain(null_bad.then_some("null"))
            .filter(|v| !fine.contains(v))
        {
            let mut config = base.clone();
            config.insert(key.into(), serde_json::from_str(value).unwrap());
            std::fs::write(
                tmp.path().join("config.json"),
                Value::Object(config).to_string(),
            )
            .unwrap();
            let plan = plan(tmp.path(), &[]);
            // serde_json writes the float back in its own spelling.
            let shown = match value {
                "1e12" => "1000000000000.0",
                "18446744073709551616" => "1.8446744073709552e+19",
                v => v,
            };
            let what = format!("{model} {key}={value}");
            assert_named_not_acted_on_beside(&what, &plan, key, shown, blocked_before);
            cases += 1;
        }
    }
    assert!(cases >= 90, "{cases}");
}

/// In a multimodal config the language model's sub-config is what is judged and named, and
/// `--json-model-override-args` both can break and repair a value.
#[test]
fn sub_configs_and_overrides_are_judged_too() {
    let tmp = tempfile::tempdir().unwrap();
    let mut config = fixture("meta-llama__Llama-4-Maverick-17B-128E-Instruct");
    config["text_config"]["hidden_size"] = json!("5120");
    std::fs::write(
        tmp.path().join("config.json"),
        Value::Object(config).to_string(),
    )
    .unwrap();
    let broken = plan(tmp.path(), &[]);
    assert_named_not_acted_on(
        "text_config",
        &broken,
        "text_config.hidden_size",
        "\"5120\"",
    );
    let repaired = plan(
        tmp.path(),
        &["--json-model-override-args", r#"{"hidden_size": 5120}"#],
    );
    assert!(
        !findings(&repaired).iter().any(|f| f["code"] == "MEM013"),
        "{:#?}",
        findings(&repaired)
    );
    assert!(repaired["memory"]["fits"].is_boolean());
    let llama = Path::new(ROOT).join("tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct");
    let overridden = plan(
        &llama,
        &["--json-model-override-args", r#"{"num_hidden_layers": 0}"#],
    );
    assert_named_not_acted_on("override", &overridden, "num_hidden_layers", "0");
}

/// A RoPE factor multiplies a plausible maximum: what it makes is judged, from config.json or
/// an override, and nothing is planned on it (memory stays bounded whatever the factor).
#[test]
fn a_rope_factor_that_makes_an_absurd_context_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let mut config = fixture("meta-llama__Llama-3.1-8B-Instruct");
    config["rope_scaling"] = json!({"rope_type": "linear", "factor": 1e8});
    std::fs::write(
        tmp.path().join("config.json"),
        Value::Object(config).to_string(),
    )
    .unwrap();
    let key = "max_position_embeddings × rope_scaling.factor";
    let absurd = (131072u64 * 100_000_000).to_string();
    assert_named_not_acted_on("config.json", &plan(tmp.path(), &[]), key, &absurd);
    let llama = Path::new(ROOT).join("tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct");
    let override_ = r#"{"rope_scaling": {"rope_type": "linear", "factor": 1e8}}"#;
    let overridden = plan(&llama, &["--json-model-override-args", override_]);
    assert_named_not_acted_on("override", &overridden, key, &absurd);
    // A real long-context factor is fine.
    let four = r#"{"rope_scaling": {"rope_type": "linear", "factor": 4.0}}"#;
    let long = plan(&llama, &["--json-model-override-args", four]);
    assert!(!findings(&long).iter().any(|f| f["code"] == "MEM013"));
}

/// The index's `total_size` and a safetensors header are facts too.
#[test]
fn weight_files_with_implausible_sizes_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let config = fixture("meta-llama__Llama-3.1-8B-Instruct");
    std::fs::write(
        tmp.path().join("config.json"),
        Value::Object(config).to_string(),
    )
    .unwrap();
    let index = r#"{"metadata": {"total_size": -16060522496}, "weight_map": {}}"#;
    std::fs::write(tmp.path().join("model.safetensors.index.json"), index).unwrap();
    let p = plan(tmp.path(), &[]);
    assert_named_not_acted_on("index", &p, "metadata.total_size", "-16060522496");
    // A header whose tensor claims more data than the file holds.
    let header = r#"{"lm_head.weight":{"dtype":"BF16","shape":[128256,4096],"data_offsets":[0,1050673152]}}"#;
    let mut shard = (header.len() as u64).to_le_bytes().to_vec();
    shard.extend_from_slice(header.as_bytes());
    std::fs::write(tmp.path().join("model.safetensors"), shard).unwrap();
    std::fs::remove_file(tmp.path().join("model.safetensors.index.json")).unwrap();
    let p = plan(tmp.path(), &[]);
    assert_named_not_acted_on("header", &p, "tensor lm_head.weight", "{");
}

/// No false positives: every real config plans without MEM013.
#[test]
fn no_real_config_is_implausible() {
    let mut all = Vec::new();
    configs(&Path::new(ROOT).join("tests/fixtures/models"), &mut all);
    configs(Path::new(SHARED), &mut all);
    configs(&Path::new(ROOT).join("examples/models"), &mut all);
    assert!(all.len() >= 15, "{all:?}");
    for path in &all {
        let dir = path.parent().unwrap();
        let plan = plan(dir, &[]);
        let odd: Vec<_> = findings(&plan)
            .iter()
            .filter(|f| f["code"] == "MEM013")
            .collect();
        assert!(odd.is_empty(), "{}: {odd:#?}", dir.display());
    }
}

/// Every key at the top of its plausible range: judged plausible (no MEM013), and nothing in
/// the rules or the planner overflows (tests run a debug build: overflow panics).
#[test]
fn the_largest_plausible_model_plans_without_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let config = json!({
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
        "num_hidden_layers": 1024, "hidden_size": 1u64 << 20, "num_attention_heads": 1u64 << 16,
        "num_key_value_heads": 1u64 << 16, "head_dim": 4096, "vocab_size": 1u64 << 24,
        "intermediate_size": 1u64 << 22, "moe_intermediate_size": 1u64 << 22,
        "n_routed_experts": 1u64 << 16, "num_experts_per_tok": 1u64 << 16,
        "n_shared_experts": 1u64 << 16, "first_k_dense_replace": 1024,
        "kv_lora_rank": 1u64 << 16, "q_lora_rank": 1u64 << 20, "qk_rope_head_dim": 4096,
        "qk_nope_head_dim": 4096, "v_head_dim": 4096, "index_head_dim": 4096,
        "num_nextn_predict_layers": 1024, "max_position_embeddings": 1u64 << 32,
        "torch_dtype": "bfloat16",
        "quantization_config": {"quant_method": "fp8", "weight_block_size": [65536, 65536]}
    });
    std::fs::write(tmp.path().join("config.json"), config.to_string()).unwrap();
    for extra in [
        &[][..],
        &["--speculative-algorithm", "EAGLE", "--ep", "8"][..],
    ] {
        let p = plan(tmp.path(), extra);
        assert!(
            !findings(&p).iter().any(|f| f["code"] == "MEM013"),
            "{:#?}",
            findings(&p)
        );
        // The KV cell is planned; weights past a petabyte are no estimate (MEM009 says so).
        assert!(
            p["memory"]["kv_cache_bytes_per_token"].is_u64(),
            "{:#}",
            p["memory"]
        );
    }
}

/// The hybrid layouts' readers (Kimi's KDA block, Gated DeltaNet) multiply raw numbers: an
/// absurd one is named and read as absent, never overflowed (tests run a debug build).
#[test]
fn absurd_hybrid_layout_numbers_are_named_not_overflowed() {
    let tmp = tempfile::tempdir().unwrap();
    let kda = json!({
        "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear",
        "num_hidden_layers": 4, "hidden_size": 1u64 << 62, "num_attention_heads": 8,
        "vocab_size": 1000, "linear_attn_config": {"kda_layers": [1, 2, 3],
            "full_attn_layers": [4], "num_heads": 1u64 << 16, "head_dim": 4096}
    });
    let gdn = json!({
        "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
        "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 8,
        "vocab_size": 1000, "full_attention_interval": 2,
        "linear_num_value_heads": 1u64 << 40, "linear_value_head_dim": 1u64 << 40,
        "linear_num_key_heads": 2, "linear_key_head_dim": 2
    });
    for (config, key) in [(kda, "hidden_size"), (gdn, "linear_num_value_heads")] {
        std::fs::write(tmp.path().join("config.json"), config.to_string()).unwrap();
        let p = plan(tmp.path(), &[]);
        let named = findings(&p).iter().any(|f| {
            f["code"] == "MEM013" && f["message"].as_str().is_some_and(|m| m.contains(key))
        });
        assert!(named, "{key}: {:#?}", findings(&p));
    }
}
