//! Model facts from real and synthetic model directories.

use super::*;
use serde_json::json;
use std::path::Path;

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn st_file(header: &str, data_len: usize) -> Vec<u8> {
    let mut v = (header.len() as u64).to_le_bytes().to_vec();
    v.extend_from_slice(header.as_bytes());
    v.extend(std::iter::repeat_n(0u8, data_len));
    v
}

#[test]
fn safetensors_header_sums_tensor_ranges() {
    let d = tempfile::tempdir().unwrap();
    let h = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[8,16]}}"#;
    write(d.path(), "model.safetensors", &st_file(h, 16));
    assert_eq!(
        safetensors_tensor_bytes(&d.path().join("model.safetensors")),
        Ok(16)
    );
}

#[test]
fn huge_or_garbage_header_is_an_error_not_an_allocation() {
    let d = tempfile::tempdir().unwrap();
    let mut v = u64::MAX.to_le_bytes().to_vec();
    v.extend_from_slice(b"{}");
    write(d.path(), "x.safetensors", &v);
    let e = safetensors_tensor_bytes(&d.path().join("x.safetensors"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("x.safetensors") && e.contains("implausible"),
        "{e}"
    );
    write(d.path(), "y.safetensors", &st_file("not json", 0));
    assert!(safetensors_tensor_bytes(&d.path().join("y.safetensors")).is_err());
    write(d.path(), "z.safetensors", &[1, 2, 3]);
    assert!(safetensors_tensor_bytes(&d.path().join("z.safetensors")).is_err());
}

#[test]
fn block_size_and_unquantised_layers_come_from_the_quantisation_config() {
    let c = json!({"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 64],
        "modules_to_not_convert": ["lm_head"], "ignored_layers": ["model.layers.0.mlp.shared_expert.gate_proj"]},
        "shared_expert_intermediate_size": 512});
    let f = facts_from_config(c.as_object().unwrap());
    assert_eq!(f.weight_block_size, Some((128, 64)));
    assert_eq!(f.shared_expert_intermediate_size, Some(512));
    assert_eq!(f.quant_ignored.len(), 2);
    for bad in [
        json!([128]),
        json!([0, 128]),
        json!("128"),
        json!([128, -1]),
    ] {
        let c = json!({"quantization_config": {"weight_block_size": bad}});
        assert_eq!(
            facts_from_config(c.as_object().unwrap()).weight_block_size,
            None
        );
    }
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/models/deepseek-ai__DeepSeek-R1"
    );
    let r1 = load(dir, &Env::default(), &args(&[])).facts.unwrap();
    assert_eq!(r1.weight_block_size, Some((128, 128)));
}

fn args(values: &[(&str, Value)]) -> SglangArgs {
    SglangArgs::with_values(crate::sglang::flagset::get("0.5.23").unwrap(), values)
}

const CONFIG: &str = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,
    "num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":128256,
    "intermediate_size":14336,"max_position_embeddings":131072,"torch_dtype":"bfloat16"}"#;

#[test]
fn hf_cache_snapshot_via_refs_main() {
    let hub = tempfile::tempdir().unwrap();
    let repo = hub.path().join("models--org--tiny");
    std::fs::create_dir_all(repo.join("snapshots/abc123")).unwrap();
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::write(repo.join("refs/main"), "abc123\n").unwrap();
    write(
        &repo.join("snapshots/abc123"),
        "config.json",
        CONFIG.as_bytes(),
    );
    let env = Env::from_pairs([("HF_HUB_CACHE", hub.path().to_str().unwrap())]);
    let l = load("org/tiny", &env, &args(&[]));
    assert_eq!(l.problem, None);
    let f = l.facts.unwrap();
    assert!(f.dir.ends_with("snapshots/abc123"));
    assert_eq!(f.head_dim_or_derived(), Some(128));
    assert_eq!(f.context_length, Some(131072));
    assert_eq!(f.weight_source, WeightSource::Estimate);
    // ~8.0e9 parameters in BF16
    let w = f.weight_bytes.unwrap() as f64;
    assert!((w / 16.06e9 - 1.0).abs() < 0.03, "{w}");
    // --revision picks a branch (refs/NAME) or a commit hash; one not cached is unavailable.
    std::fs::create_dir_all(repo.join("snapshots/def456")).unwrap();
    write(
        &repo.join("snapshots/def456"),
        "config.json",
        CONFIG.as_bytes(),
    );
    std::fs::write(repo.join("refs/v2"), "def456").unwrap();
    for rev in ["v2", "def456"] {
        let l = load("org/tiny", &env, &args(&[("--revision", json!(rev))]));
        assert!(l.facts.unwrap().dir.ends_with("snapshots/def456"), "{rev}");
    }
    for rev in ["v3", "../../etc"] {
        let l = load("org/tiny", &env, &args(&[("--revision", json!(rev))]));
        assert!(
            matches!(l.problem, Some(ModelProblem::Unavailable(_))),
            "{rev}"
        );
    }
    // HF_HOME/hub is the second choice; nothing there means unavailable, never a download.
    let env = Env::from_pairs([("HF_HOME", "/nonexistent")]);
    let l = load("org/tiny", &env, &args(&[]));
    assert_eq!(
        l.problem.unwrap().to_string(),
        "org/tiny: not a local directory and not in the Hugging Face cache"
    );
}

/// GLM-5-FP8 lists every layer's attention norms and indexer parts as unconverted while its
/// attention projections are FP8; a whole-attention exclusion, per layer or as a pattern,
/// leaves them BF16.
#[test]
fn only_excluded_attention_projections_make_the_attention_unquantised() {
    let unquantised = |excluded: Vec<String>| {
        let c = json!({"num_hidden_layers": 2, "quantization_config": {"quant_method": "fp8",
            "weight_block_size": [128, 128], "modules_to_not_convert": excluded}});
        facts_from_config(c.as_object().unwrap()).attention_unquantised
    };
    let parts = [
        "kv_a_layernorm",
        "q_a_layernorm",
        "indexer.k_norm",
        "indexers_proj",
    ];
    let norms = (0..2)
        .flat_map(|l| parts.map(|p| format!("model.layers.{l}.self_attn.{p}")))
        .collect();
    assert!(!unquantised(norms));
    let whole = (0..2)
        .map(|l| format!("model.layers.{l}.self_attn"))
        .collect();
    assert!(unquantised(whole));
    let projections = (0..2)
        .map(|l| format!("model.layers.{l}.self_attn.o_proj"))
        .collect();
    assert!(unquantised(projections));
    assert!(unquantised(vec!["re:.*self_attn.*".into()]));
}

#[test]
fn arguments_override_the_config() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "config.json", CONFIG.as_bytes());
    let a = args(&[
        ("--context-length", json!(8192)),
        ("--kv-cache-dtype", json!("fp8_e5m2")),
        ("--quantization", json!("fp8")),
        (
            "--json-model-override-args",
            json!(r#"{"num_hidden_layers": 2}"#),
        ),
    ]);
    let f = load(d.path().to_str().unwrap(), &Env::default(), &a)
        .facts
        .unwrap();
    assert_eq!(f.context_length, Some(8192));
    assert_eq!(f.kv_cache_dtype, "fp8_e5m2");
    assert_eq!(f.quant_method.as_deref(), Some("fp8"));
    assert_eq!(f.weight_bits, Some(8));
    assert_eq!(f.num_hidden_layers, Some(2));
}

/// `--dtype auto` serves a float32 checkpoint in float16 (Gemma in bfloat16), so its KV cache
/// and estimated weights take two bytes an element, not four; `--dtype float32` keeps four.
#[test]
fn a_float32_config_runs_in_sixteen_bits_under_dtype_auto() {
    let run = |model_type: &str, given: &[(&str, Value)]| {
        let d = tempfile::tempdir().unwrap();
        let c = CONFIG
            .replace("bfloat16", "float32")
            .replace(r#""llama""#, &format!("{model_type:?}"));
        write(d.path(), "config.json", c.as_bytes());
        let f = load(d.path().to_str().unwrap(), &Env::default(), &args(given));
        let f = f.facts.unwrap();
        (f.dtype.clone().unwrap(), f.dtype_bytes())
    };
    assert_eq!(run("llama", &[]), ("float16".into(), 2));
    assert_eq!(run("gemma3_text", &[]), ("bfloat16".into(), 2));
    let float32 = [("--dtype", json!("float32"))];
    assert_eq!(run("llama", &float32), ("float32".into(), 4));
}

/// A checkpoint stored in float32 is cast to the 16-bit dtype SGLang runs it in, so its weights
/// take half their file size on the GPU; a 16-bit checkpoint's few float32 tensors are counted
/// as they are, and `--dtype float32` keeps the file size.
#[test]
fn float32_safetensors_take_half_their_size_in_a_sixteen_bit_run() {
    let run = |tensors: &str, given: &[(&str, Value)]| {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "config.json", CONFIG.as_bytes());
        let h = format!(r#"{{"__metadata__":{{"format":"pt"}},{tensors}}}"#);
        write(d.path(), "model.safetensors", &st_file(&h, 4096));
        let f = load(d.path().to_str().unwrap(), &Env::default(), &args(given));
        f.facts.unwrap().weight_bytes
    };
    let f32 = r#""w":{"dtype":"F32","shape":[768],"data_offsets":[0,3072]},"b":{"dtype":"F32","shape":[256],"data_offsets":[3072,4096]}"#;
    assert_eq!(run(f32, &[]), Some(2048));
    assert_eq!(run(f32, &[("--dtype", json!("float32"))]), Some(4096));
    let mixed = r#""w":{"dtype":"BF16","shape":[1536],"data_offsets":[0,3072]},"s":{"dtype":"F32","shape":[256],"data_offsets":[3072,4096]}"#;
    assert_eq!(run(mixed, &[]), Some(4096));
}

#[test]
fn index_total_size_and_problems_name_the_file() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "config.json", CONFIG.as_bytes());
    write(
        d.path(),
        "model.safetensors.index.json",
        br#"{"metadata":{"total_size":16060522496},"weight_map":{}}"#,
    );
    let f = load(d.path().to_str().unwrap(), &Env::default(), &args(&[]))
        .facts
        .unwrap();
    assert_eq!(
        (f.weight_bytes, f.weight_source),
        (Some(16060522496), WeightSource::Index)
    );

    write(d.path(), "config.json", b"{not json");
    let l = load(d.path().to_str().unwrap(), &Env::default(), &args(&[]));
    let problem = l.problem.unwrap();
    assert!(matches!(
        problem,
        ModelProblem::Invalid(Invalid::Json { .. })
    ));
    assert!(problem.to_string().contains("config.json"), "{problem}");

    let e = tempfile::tempdir().unwrap();
    write(e.path(), "config.json", CONFIG.as_bytes());
    write(e.path(), "model.safetensors", &[9, 9]);
    let l = load(e.path().to_str().unwrap(), &Env::default(), &args(&[]));
    assert!(l.facts.is_some(), "dimensions still give an estimate");
    let problem = l.problem.unwrap();
    assert!(matches!(
        problem,
        ModelProblem::Invalid(Invalid::Safetensors(_))
    ));
    assert!(
        problem.to_string().contains("model.safetensors"),
        "{problem}"
    );
}

#[test]
fn multimodal_text_config_quant_and_sliding_layers() {
    let gemma = r#"{"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3","torch_dtype":"bfloat16",
        "text_config":{"head_dim":128,"hidden_size":5376,"num_hidden_layers":62,"num_attention_heads":32,
        "num_key_value_heads":16,"sliding_window":1024,"model_type":"gemma3_text"},
        "vision_config":{"hidden_size":1152,"num_hidden_layers":27}}"#;
    let v: Value = serde_json::from_str(gemma).unwrap();
    let f = facts_from_config(v.as_object().unwrap());
    assert_eq!(
        (f.num_hidden_layers, f.num_key_value_heads),
        (Some(62), Some(16))
    );
    assert!(f.is_multimodal);
    assert_eq!(f.num_sliding_layers, Some(62 - 62 / 6));
    let oss = r#"{"architectures":["GptOssForCausalLM"],"num_hidden_layers":4,"hidden_size":2880,
        "num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,
        "layer_types":["sliding_attention","full_attention","sliding_attention","full_attention"],
        "quantization_config":{"quant_method":"mxfp4"}}"#;
    let v: Value = serde_json::from_str(oss).unwrap();
    let f = facts_from_config(v.as_object().unwrap());
    assert_eq!(f.num_sliding_layers, Some(2));
    assert_eq!(
        (f.quant_method.as_deref(), f.weight_bits),
        (Some("mxfp4"), Some(4))
    );
}

#[test]
fn a_vision_tower_transformers_builds_by_default_is_read_with_its_defaults() {
    // Llama 4 without a vision_config: transformers builds the default tower (34 × 768).
    let llama4 = r#"{"architectures":["Llama4ForConditionalGeneration"],"model_type":"llama4",
        "text_config":{"hidden_size":5120,"num_hidden_layers":48,"num_attention_heads":40,
        "num_key_value_heads":8,"model_type":"llama4_text"}}"#;
    let v: Value = serde_json::from_str(llama4).unwrap();
    let f = facts_from_config(v.as_object().unwrap());
    assert!(f.is_multimodal);
    assert_eq!(
        (f.vision_layers, f.vision_hidden_size),
        (Some(34), Some(768))
    );
    // A vision_config that leaves its depth out gets the sub-config type's default.
    let gemma = r#"{"architectures":["Gemma3ForConditionalGeneration"],"model_type":"gemma3",
        "text_config":{"model_type":"gemma3_text"},"vision_config":{"hidden_size":1152}}"#;
    let v: Value = serde_json::from_str(gemma).unwrap();
    let f = facts_from_config(v.as_object().unwrap());
    assert_eq!(
        (f.vision_layers, f.vision_hidden_size),
        (Some(12), Some(1152))
    );
    // A text-only model type builds none.
    let text = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama"}"#;
    let v: Value = serde_json::from_str(text).unwrap();
    assert!(!facts_from_config(v.as_object().unwrap()).is_multimodal);
}

/// Qwen-MoE's shared expert has its own width (`shared_expert_intermediate_size`), one per MoE
/// layer: three projections of hidden × that width, in the model dtype here.
#[test]
fn a_qwen_moe_shared_expert_is_sized_by_its_own_width() {
    let c = |shared: Option<u64>| {
        let mut v = json!({"hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 16,
            "num_key_value_heads": 2, "head_dim": 256, "vocab_size": 151936,
            "num_experts": 512, "moe_intermediate_size": 512, "num_experts_per_tok": 10,
            "torch_dtype": "bfloat16"});
        if let Some(w) = shared {
            v["shared_expert_intermediate_size"] = json!(w);
        }
        estimate_weight_bytes(&facts_from_config(v.as_object().unwrap())).unwrap()
    };
    assert_eq!(c(Some(512)) - c(None), 48 * 3 * 2048 * 512 * 2);
}

#[test]
fn absurd_dimensions_give_no_or_bounded_estimates() {
    let base = json!({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
        "vocab_size": 128256, "intermediate_size": 14336});
    let with = |k: &str, v: Value| {
        let mut c = base.clone();
        c[k] = v;
        facts_from_config(c.as_object().unwrap())
    };
    let sane = estimate_weight_bytes(&with("hidden_size", json!(4096))).unwrap();
    assert!(sane > 14_000_000_000 && sane < 18_000_000_000, "{sane}");
    // more dense layers than layers: still the dense model, never negative
    let moe = with("num_experts", json!(8));
    let mut moe_over = moe.clone();
    moe_over.first_k_dense_replace = Some(1000);
    let w = estimate_weight_bytes(&moe_over).unwrap();
    assert_eq!(w, sane);
    // implausible sizes are not estimates
    assert_eq!(
        estimate_weight_bytes(&with("hidden_size", json!(u64::MAX))),
        None
    );
    // no layers is no model: the value is left out and named, there is no estimate
    let none = with("num_hidden_layers", json!(0));
    assert_eq!(
        (none.num_hidden_layers, estimate_weight_bytes(&none)),
        (None, None)
    );
    assert_eq!(none.implausible[0].key, "num_hidden_layers");
    // bit widths that do not fit a u32 are not believed
    let q = with(
        "quantization_config",
        json!({"quant_method": "gptq", "bits": 4294967300u64}),
    );
    assert_eq!(q.weight_bits, None);
    assert_eq!(q.implausible[0].key, "quantization_config.bits");
}

/// Where a value sits decides what is judged: the language model's level first, a default of
/// transformers' never, `null` only where no model does without the key.
#[test]
fn implausible_values_are_named_where_config_json_has_them() {
    let keys =
        |v: Value| -> Vec<String> { facts(v).implausible.into_iter().map(|i| i.key).collect() };
    let text = json!({"model_type": "llava", "text_config": {"model_type": "llama",
        "hidden_size": "4096", "num_hidden_layers": 32}, "hidden_size": 4096});
    assert_eq!(keys(text), ["text_config.hidden_size"]);
    // Mistral's `"sliding_window": null` is no window, not garbage; a null width is.
    let nulls = json!({"model_type": "mistral", "sliding_window": null, "hidden_size": null});
    assert_eq!(keys(nulls), ["hidden_size"]);
    // Gemma-3n's per-layer widths are a list: not read as a number, not judged.
    let list = json!({"model_type": "llama", "intermediate_size": [16384, 16384]});
    assert!(keys(list).is_empty());
    let towers = json!({"model_type": "llama", "vision_config": {"depth": -1}});
    let f = facts(towers);
    assert_eq!(f.implausible[0].key, "vision_config.depth");
    assert!(f.encoders.is_empty());
    let block = json!({"model_type": "llama", "quantization_config":
        {"quant_method": "fp8", "weight_block_size": [128, 0]}});
    let f = facts(block);
    assert_eq!(
        f.implausible[0].key,
        "quantization_config.weight_block_size"
    );
    assert_eq!(f.weight_block_size, None);
    // An implausible MLA rank still makes the model MLA (as SGLang's architecture does).
    let mla = facts(json!({"model_type": "deepseek_v3", "kv_lora_rank": 0}));
    assert!(mla.is_mla() && mla.kv_lora_rank.is_none());
    assert!(!mla.plausible());
}

#[test]
fn safetensors_headers_and_index_sizes_are_judged() {
    let d = tempfile::tempdir().unwrap();
    // 16 bytes of data: a [2, 4] BF16 tensor fills them exactly.
    let good = r#"{"w":{"dtype":"BF16","shape":[2,4],"data_offsets":[0,16]}}"#;
    write(d.path(), "model.safetensors", &st_file(good, 16));
    write(d.path(), "config.json", br#"{"model_type": "llama"}"#);
    let f = load_dir(d.path().to_path_buf(), &args(&[])).facts.unwrap();
    assert!(f.plausible(), "{:?}", f.implausible);
    assert_eq!(f.weight_source, WeightSource::SafetensorsHeaders);
    for header in [
        r#"{"w":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,16]}}"#,
        r#"{"w":{"dtype":"BF16","shape":[2,4],"data_offsets":[0,1600]}}"#,
        r#"{"w":{"dtype":7,"shape":[2,4],"data_offsets":[0,16]}}"#,
        r#"{"w":{"dtype":"BF16","shape":[18446744073709551615,18446744073709551615],"data_offsets":[0,16]}}"#,
    ] {
        write(d.path(), "model.safetensors", &st_file(header, 16));
        let f = load_dir(d.path().to_path_buf(), &args(&[])).facts.unwrap();
        let i = &f.implausible[0];
        assert_eq!(
            (i.file.as_str(), i.key.as_str()),
            ("model.safetensors", "tensor w"),
            "{header}"
        );
    }
    std::fs::remove_file(d.path().join("model.safetensors")).unwrap();
    for (size, ok) in [
        ("100", true),
        ("1e3", true),
        ("0", false),
        ("-5", false),
        ("2.5", false),
        ("1e300", false),
    ] {
        let index = format!(r#"{{"metadata": {{"total_size": {size}}}, "weight_map": {{}}}}"#);
        write(d.path(), "model.safetensors.index.json", index.as_bytes());
        let f = load_dir(d.path().to_path_buf(), &args(&[])).facts.unwrap();
        assert_eq!(f.plausible(), ok, "{size}: {:?}", f.implausible);
        assert_eq!(f.weight_source == WeightSource::Index, ok, "{size}");
    }
}

#[test]
fn hybrid_and_sparse_attention_fields() {
    let next = r#"{"architectures":["Qwen3NextForCausalLM"],"num_hidden_layers":48,
        "full_attention_interval":4,"hidden_size":2048,"num_attention_heads":16,
        "num_key_value_heads":2,"head_dim":256}"#;
    let v: Value = serde_json::from_str(next).unwrap();
    assert_eq!(
        facts_from_config(v.as_object().unwrap()).num_full_attention_layers,
        Some(12)
    );
    let typed = r#"{"num_hidden_layers":4,"layer_types":["linear_attention","linear_attention",
        "linear_attention","full_attention"]}"#;
    let v: Value = serde_json::from_str(typed).unwrap();
    assert_eq!(
        facts_from_config(v.as_object().unwrap()).num_full_attention_layers,
        Some(1)
    );
    let dsa = r#"{"kv_lora_rank":512,"qk_rope_head_dim":64,"index_head_dim":128}"#;
    let v: Value = serde_json::from_str(dsa).unwrap();
    assert_eq!(
        facts_from_config(v.as_object().unwrap()).index_head_dim,
        Some(128)
    );
}

#[test]
fn download_dir_is_searched_like_an_hf_cache_before_it() {
    let dl = tempfile::tempdir().unwrap();
    let snap = dl.path().join("models--org--tiny/snapshots/abc123");
    std::fs::create_dir_all(&snap).unwrap();
    write(&snap, "config.json", CONFIG.as_bytes());
    let env = Env::from_pairs([("HF_HOME", "/nonexistent")]);
    let a = args(&[("--download-dir", json!(dl.path().to_str().unwrap()))]);
    let l = load("org/tiny", &env, &a);
    assert_eq!(l.problem, None);
    assert_eq!(l.facts.unwrap().dir, snap);
    assert!(load("org/tiny", &env, &args(&[])).problem.is_some());
}

#[test]
fn a_fetched_snapshot_without_an_index_takes_the_hubs_weight_bytes() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "config.json", CONFIG.as_bytes());
    write(
        d.path(),
        crate::facts::hub::WEIGHTS_FILE,
        br#"{"total_size": 16060522496, "from": "model-info API"}"#,
    );
    let f = load_dir(d.path().to_path_buf(), &args(&[])).facts.unwrap();
    assert_eq!(f.weight_bytes, Some(16060522496));
    assert_eq!(f.weight_source, WeightSource::HubMetadata);
    // The index wins over our record, as on disk.
    write(
        d.path(),
        "model.safetensors.index.json",
        br#"{"metadata": {"total_size": 100}}"#,
    );
    let f = load_dir(d.path().to_path_buf(), &args(&[])).facts.unwrap();
    assert_eq!(
        (f.weight_bytes, f.weight_source),
        (Some(100), WeightSource::Index)
    );
}

fn facts(v: Value) -> ModelFacts {
    facts_from_config(v.as_object().unwrap())
}

/// The facts the planner uses, for comparing a config with its explicit twin.
fn planner_view(f: &ModelFacts) -> impl PartialEq + std::fmt::Debug + use<> {
    (
        (f.num_hidden_layers, f.hidden_size, f.num_attention_heads),
        (f.num_key_value_heads, f.head_dim_or_derived(), f.vocab_size),
        (
            f.intermediate_size,
            f.max_position_embeddings,
            f.tie_word_embeddings,
        ),
        f.derived_context_length,
    )
}

#[test]
fn mistral_without_head_dim_derives_it_as_transformers_does() {
    let explicit = facts(json!({"model_type": "mistral", "hidden_size": 5120,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 160,
        "num_hidden_layers": 40, "vocab_size": 131072, "intermediate_size": 14336,
        "max_position_embeddings": 131072, "tie_word_embeddings": false}));
    let implicit = facts(json!({"model_type": "mistral", "hidden_size": 5120,
        "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 40,
        "vocab_size": 131072}));
    assert_eq!(planner_view(&implicit), planner_view(&explicit));
    // Gemma's head_dim is a constant, not width / heads.
    let gemma = facts(json!({"model_type": "gemma3_text", "hidden_size": 5376,
        "num_attention_heads": 32}));
    assert_eq!(gemma.head_dim_or_derived(), Some(256));
}

#[test]
fn gpt2_aliases_and_defaults() {
    let aliased = facts(json!({"model_type": "gpt2", "n_layer": 48, "n_embd": 1600,
        "n_head": 25, "n_positions": 1024}));
    let explicit = facts(json!({"model_type": "gpt2", "num_hidden_layers": 48,
        "hidden_size": 1600, "num_attention_heads": 25, "num_key_value_heads": 25,
        "max_position_embeddings": 1024, "vocab_size": 50257, "tie_word_embeddings": true}));
    assert_eq!(planner_view(&aliased), planner_view(&explicit));
    assert_eq!(aliased.head_dim_or_derived(), Some(64));
    // Another type's alias means nothing here.
    assert_eq!(
        facts(json!({"model_type": "llama", "n_layer": 3})).num_hidden_layers,
        Some(32)
    );
}

#[test]
fn text_config_defaults_come_from_the_text_model_type() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/models/google__gemma-3-27b-it"
    );
    let text = std::fs::read_to_string(format!("{dir}/config.json")).unwrap();
    let implicit: Value = serde_json::from_str(&text).unwrap();
    assert!(implicit["text_config"].get("vocab_size").is_none());
    let mut explicit = implicit.clone();
    explicit["text_config"]["vocab_size"] = json!(262208);
    explicit["text_config"]["max_position_embeddings"] = json!(131072);
    explicit["text_config"]["tie_word_embeddings"] = json!(true);
    assert_eq!(
        planner_view(&facts(implicit.clone())),
        planner_view(&facts(explicit))
    );
    assert_eq!(facts(implicit).vocab_size, Some(262208));
    // The text_config's own model_type is missing: the composite class's choice applies.
    let untyped = facts(json!({"model_type": "gemma3", "text_config": {"hidden_size": 5376}}));
    assert_eq!(
        (untyped.head_dim, untyped.vocab_size),
        (Some(256), Some(262208))
    );
    // No text_config at all: transformers builds the default one.
    assert_eq!(
        facts(json!({"model_type": "gemma3"})).num_hidden_layers,
        Some(26)
    );
}

#[test]
fn nested_language_configs_in_sglangs_order() {
    let text = json!({"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28,
        "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 152064,
        "max_position_embeddings": 32768, "intermediate_size": 18944, "tie_word_embeddings": false});
    let flat = facts(text.clone());
    for key in ["llm_config", "language_config", "text_config"] {
        let wrapped = facts(json!({"model_type": "no_such_type", key: text.clone(),
            "hidden_size": 1}));
        assert_eq!(planner_view(&wrapped), planner_view(&flat), "{key}");
    }
    let omni = facts(json!({"model_type": "qwen2_5_omni",
        "thinker_config": {"text_config": text.clone(), "hidden_size": 1}}));
    assert_eq!(planner_view(&omni), planner_view(&flat));
    // Explicit null keeps transformers' None: no default, and no derivation from it.
    let null_window = facts(json!({"model_type": "mistral", "sliding_window": null}));
    assert_eq!(null_window.sliding_window, None);
    assert_eq!(
        facts(json!({"model_type": "mistral"})).sliding_window,
        Some(4096)
    );
}

#[test]
fn context_length_is_sglangs_derivation_for_the_release() {
    let gemma = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/models/google__gemma-3-27b-it"
    );
    let at = |release: &str| {
        let a = SglangArgs::with_values(crate::sglang::flagset::get(release).unwrap(), &[]);
        load(gemma, &Env::default(), &a)
            .facts
            .unwrap()
            .context_length
    };
    // transformers 4 keeps the linear factor of 8; 5 keeps RoPE per layer type.
    assert_eq!(at("0.5.9"), Some(8 * 131072));
    assert_eq!(at("0.5.23"), Some(131072));
    let given = load(
        gemma,
        &Env::default(),
        &args(&[("--context-length", json!(4096))]),
    );
    assert_eq!(given.facts.unwrap().context_length, Some(4096));
}

mod context {
    use super::*;

    fn derived(config: Value, t: Transformers) -> u64 {
        let f = facts_read_by(config.as_object().unwrap(), t);
        f.derived_context_length.unwrap()
    }

    #[test]
    fn rope_scaling_rules_follow_sglang() {
        use Transformers::*;
        let base = |rope: Value| {
            json!({"model_type": "llama", "max_position_embeddings": 32768,
            "rope_scaling": rope})
        };
        // yarn with the pre-scaling maximum: the config's maximum is already the scaled one.
        let yarn =
            json!({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192});
        assert_eq!(derived(base(yarn.clone()), V4), 32768);
        assert_eq!(derived(base(yarn), V5), 32768);
        // yarn without it: transformers 4 leaves it out, so SGLang scales; 5 fills it in.
        let bare = json!({"type": "yarn", "factor": 4.0});
        assert_eq!(derived(base(bare.clone()), V4), 131072);
        assert_eq!(derived(base(bare), V5), 32768);
        let llama3 = json!({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0});
        assert_eq!(derived(base(llama3.clone()), V4), 32768);
        assert_eq!(derived(base(llama3), V5), 32768);
        let linear = json!({"rope_type": "linear", "factor": 2.5});
        assert_eq!(derived(base(linear.clone()), V4), 81920);
        assert_eq!(derived(base(linear), V5), 81920);
        assert_eq!(derived(base(json!({})), V4), 32768);
        assert_eq!(derived(base(Value::Null), V5), 32768);
    }

    #[test]
    fn a_yarn_window_is_read_as_the_length_it_reaches() {
        let with = |rope: Value| {
            let c = json!({"model_type": "qwen3", "max_position_embeddings": 40960, "rope_scaling": rope});
            facts_read_by(c.as_object().unwrap(), Transformers::V4).rope_scaled_length
        };
        let yarn =
            json!({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768});
        assert_eq!(with(yarn), Some(131072));
        // Without its original window, or without a factor above 1, it says nothing.
        assert_eq!(with(json!({"type": "yarn", "factor": 4.0})), None);
        let one =
            json!({"rope_type": "yarn", "factor": 1.0, "original_max_position_embeddings": 32768});
        assert_eq!(with(one), None);
        assert_eq!(with(Value::Null), None);
    }

    #[test]
    fn keys_in_sglang_order_then_the_fallback() {
        let c = json!({"model_type": "no_such_type", "seq_length": 4096, "max_position_embeddings": 8192});
        assert_eq!(derived(c, Transformers::V5), 4096);
        let none = json!({"model_type": "no_such_type"});
        assert_eq!(derived(none, Transformers::V5), 2048);
        // transformers' default for the type when the config is silent.
        let llama = json!({"model_type": "llama"});
        assert_eq!(derived(llama, Transformers::V5), 2048);
        let mistral = json!({"model_type": "mistral"});
        assert_eq!(derived(mistral, Transformers::V5), 131072);
    }

    #[test]
    fn gemma3_per_layer_rope_is_unscaled_from_transformers_5() {
        let gemma = json!({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text",
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"}}});
        assert_eq!(derived(gemma.clone(), Transformers::V4), 8 * 131072);
        assert_eq!(derived(gemma, Transformers::V5), 131072);
    }

    #[test]
    fn releases_map_to_their_transformers_pin() {
        assert_eq!(Transformers::for_sglang("0.4.10.post2"), Transformers::V4);
        assert_eq!(Transformers::for_sglang("0.5.9"), Transformers::V4);
        assert_eq!(Transformers::for_sglang("0.5.10rc0"), Transformers::V5);
        assert_eq!(Transformers::for_sglang("0.5.23"), Transformers::V5);
    }
}

#[test]
fn in_memory_header_reader_agrees_with_the_file_reader() {
    let d = tempfile::tempdir().unwrap();
    let h =
        r#"{"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]},"b":{"data_offsets":[8,16]}}"#;
    let mut beyond = 100u64.to_le_bytes().to_vec();
    beyond.extend_from_slice(b"{}");
    let cases: [(&str, Vec<u8>); 6] = [
        ("ok", st_file(h, 16)),
        ("huge", [u64::MAX.to_le_bytes().as_slice(), b"{}"].concat()),
        ("beyond", beyond),
        ("garbage", st_file("not json", 0)),
        ("offsets", st_file(r#"{"w":{"data_offsets":[8,4]}}"#, 0)),
        ("short", vec![1, 2, 3]),
    ];
    for (name, bytes) in cases {
        write(d.path(), name, &bytes);
        let from_file = safetensors_tensor_bytes(&d.path().join(name)).map_err(|e| e.problem);
        assert_eq!(safetensors_bytes_in(&bytes), from_file, "{name}");
    }
    assert_eq!(safetensors_bytes_in(&st_file(h, 16)), Ok(16));
}

#[test]
fn config_text_gives_the_facts_of_a_directory_without_weights() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "config.json", CONFIG.as_bytes());
    let a = args(&[
        ("--context-length", json!(4096)),
        (
            "--json-model-override-args",
            json!(r#"{"num_hidden_layers": 4}"#),
        ),
    ]);
    let from_dir = load_dir(d.path().to_path_buf(), &a).facts.unwrap();
    let mut from_text = load_config_text(CONFIG.as_bytes(), &a).facts.unwrap();
    from_text.dir = from_dir.dir.clone();
    assert_eq!(from_text, from_dir);
    assert_eq!(from_text.num_hidden_layers, Some(4));
    assert_eq!(from_text.weight_source, WeightSource::Estimate);
    let problem = |text: &[u8]| load_config_text(text, &a).problem.unwrap().to_string();
    assert!(problem(b"[1]").contains("not a JSON object"));
    assert!(problem(b"{").contains("invalid JSON"));
}

/// transformers reads config.json with Python's `json`, which takes `Infinity` and `NaN`
/// (Nemotron-H configs carry `"time_step_limit": [0.0, Infinity]`): the facts are still read.
#[test]
fn a_config_with_python_only_numbers_is_read() {
    let d = tempfile::tempdir().unwrap();
    let text = CONFIG.replacen('{', r#"{"time_step_limit": [0.0, Infinity], "x": NaN,"#, 1);
    write(d.path(), "config.json", text.as_bytes());
    let a = args(&[]);
    let loaded = load_dir(d.path().to_path_buf(), &a);
    assert!(loaded.problem.is_none(), "{:?}", loaded.problem);
    let plain = load_config_text(CONFIG.as_bytes(), &a).facts.unwrap();
    let facts = loaded.facts.unwrap();
    assert_eq!(facts.num_hidden_layers, plain.num_hidden_layers);
    assert!(load_config_text(text.as_bytes(), &a).problem.is_none());
}

#[test]
fn a_bundled_dspark_head_is_read_from_the_real_configs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models");
    let read = |name: &str| {
        let text = std::fs::read_to_string(root.join(name).join("config.json")).unwrap();
        let c: serde_json::Value = serde_json::from_str(&text).unwrap();
        facts_from_config(c.as_object().unwrap()).bundles_dspark_draft
    };
    assert!(read("deepseek-ai__DeepSeek-V4-Flash-0731"));
    assert!(!read("deepseek-ai__DeepSeek-V4-Flash"));
    // A key SGLang reads as the mark, set to null, is no mark.
    let c = json!({"model_type": "deepseek_v4", "dspark_block_size": null});
    assert!(!facts_from_config(c.as_object().unwrap()).bundles_dspark_draft);
}

#[test]
fn a_dflash_drafts_block_is_read_as_sglang_parses_it() {
    let block = |c: serde_json::Value| facts_from_config(c.as_object().unwrap()).dflash_block_size;
    // The published layout: the block at the top level, the rest under dflash_config.
    assert_eq!(
        block(json!({"block_size": 8, "dflash_config": {}})),
        Some(8)
    );
    // dflash_config's own key wins, even when it holds null (no block: SGLang takes 16).
    assert_eq!(
        block(json!({"block_size": 8, "dflash_config": {"block_size": 4}})),
        Some(4)
    );
    assert_eq!(
        block(json!({"block_size": 8, "dflash_config": {"block_size": null}})),
        None
    );
    assert_eq!(block(json!({"model_type": "qwen3"})), None);
    // Python's int(): floats truncate, digits in text parse, anything below 1 is refused.
    assert_eq!(block(json!({"block_size": 10.7})), Some(10));
    assert_eq!(block(json!({"block_size": " 12 "})), Some(12));
    assert_eq!(block(json!({"block_size": 0})), None);
    assert_eq!(block(json!({"block_size": [16]})), None);
    // What the launcher cannot follow counts as the smallest block, so no window is judged.
    assert_eq!(block(json!({"block_size": "1_6"})), Some(1));
    assert_eq!(
        block(json!({"dflash_config": [["block_size", 4]]})),
        Some(1)
    );
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models/synthetic__Qwen3-4B-DFlash-b8/config.json");
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    assert_eq!(block(c), Some(8));
}

/// A release runs the sparse-attention indexer only for the architectures its own list names:
/// GLM-5 from 0.5.9, LongCat-Flash from 0.5.16, GLM-5.3's `Glm5Next` from 0.5.20, and none
/// without `index_topk`.
#[test]
fn sparse_attention_is_by_release_and_architecture() {
    let with = |arch: &str, topk: Option<u64>| ModelFacts {
        architecture: Some(arch.into()),
        index_topk: topk,
        ..ModelFacts::default()
    };
    let cases = [
        ("DeepseekV32ForCausalLM", "0.5.3rc1", false),
        ("DeepseekV32ForCausalLM", "0.5.3rc2", true),
        ("GlmMoeDsaForCausalLM", "0.5.8.post1", false),
        ("GlmMoeDsaForCausalLM", "0.5.9", true),
        ("LongcatFlashForCausalLM", "0.5.15.post1", false),
        ("LongcatFlashForCausalLM", "0.5.16", true),
        ("Glm5NextForConditionalGeneration", "0.5.19", false),
        ("Glm5NextForConditionalGeneration", "0.5.20", true),
        ("Qwen3ForCausalLM", "0.5.23", false),
    ];
    for (arch, v, dsa) in cases {
        assert_eq!(with(arch, Some(2048)).is_dsa(v), dsa, "{arch} on {v}");
    }
    assert!(!with("DeepseekV32ForCausalLM", None).is_dsa("0.5.23"));
    assert_eq!(
        with("HYV4ForCausalLM", Some(2048)).fp8_kv_cache_dtype("0.5.20"),
        "fp8_e4m3"
    );
}

/// A ModelOpt mixed-precision export with NVFP4 layers is `w4afp8` to releases before 0.5.15,
/// except a Nemotron-H from 0.5.10rc0; from an `hf_quant_config.json`, releases before
/// 0.5.3.post1 read a Hub checkpoint as `modelopt`.
#[test]
fn mixed_precision_is_read_by_release() {
    let mixed = |arch: &str, hub: bool| ModelFacts {
        architecture: Some(arch.into()),
        quant_method: Some("modelopt_mixed".into()),
        hf_quant: Some(super::HfQuant {
            algo: "MIXED_PRECISION".into(),
            method: "modelopt_mixed".into(),
            hub,
        }),
        ..ModelFacts::default()
    };
    let qwen = mixed("Qwen3MoeForCausalLM", false);
    let nemotron = mixed("NemotronHForCausalLM", false);
    for (v, q, n) in [
        ("0.4.9", "modelopt_mixed", "modelopt_mixed"),
        ("0.4.9.post1", "w4afp8", "w4afp8"),
        ("0.5.9", "w4afp8", "w4afp8"),
        ("0.5.10rc0", "w4afp8", "modelopt_mixed"),
        ("0.5.14", "w4afp8", "modelopt_mixed"),
        ("0.5.15", "modelopt_mixed", "modelopt_mixed"),
    ] {
        assert_eq!(qwen.quant_method_in(v).as_deref(), Some(q), "{v}");
        assert_eq!(nemotron.quant_method_in(v).as_deref(), Some(n), "{v}");
    }
    // One config.json names (`quant_method: modelopt`) is read by its quant_algo from
    // 0.5.10rc0; one naming no method from 0.5.9; before, the launcher's reading stands.
    let named = ModelFacts {
        hf_quant: None,
        config_quant_method: Some("modelopt".into()),
        checkpoint_quant_method: Some("modelopt_mixed".into()),
        ..qwen.clone()
    };
    let unnamed = ModelFacts {
        config_quant_method: None,
        ..named.clone()
    };
    for (v, by_name, without) in [
        ("0.5.8", "modelopt_mixed", "modelopt_mixed"),
        ("0.5.9", "modelopt_mixed", "w4afp8"),
        ("0.5.10rc0", "w4afp8", "w4afp8"),
        ("0.5.14", "w4afp8", "w4afp8"),
        ("0.5.15", "modelopt_mixed", "modelopt_mixed"),
    ] {
        assert_eq!(named.quant_method_in(v).as_deref(), Some(by_name), "{v}");
        assert_eq!(unnamed.quant_method_in(v).as_deref(), Some(without), "{v}");
    }
    let hub = mixed("Qwen3MoeForCausalLM", true);
    assert!(qwen.hf_quant_methods_in("0.4.5").is_empty());
    assert_eq!(qwen.hf_quant_methods_in("0.4.9"), ["modelopt"]);
    assert_eq!(qwen.hf_quant_methods_in("0.5.3"), ["w4afp8"]);
    assert_eq!(hub.hf_quant_methods_in("0.5.3"), ["modelopt", "w4afp8"]);
    assert_eq!(hub.hf_quant_methods_in("0.5.3.post1"), ["w4afp8"]);
    assert_eq!(qwen.hf_quant_methods_in("0.5.15"), ["modelopt_mixed"]);
}

#[test]
fn a_hub_snapshot_is_told_from_a_local_directory() {
    use std::path::Path;
    let snap = Path::new("/c/hub/models--nvidia--X/snapshots/abc");
    assert!(super::in_hub_snapshot(snap));
    assert!(!super::in_hub_snapshot(Path::new("/models/nvidia--X")));
}

#[test]
fn hf_quant_config_algorithms_are_parsed_by_release() {
    let file = |algo: &str, method: &str, hub: bool| ModelFacts {
        quant_method: Some(method.into()),
        hf_quant: Some(super::HfQuant {
            algo: algo.into(),
            method: method.into(),
            hub,
        }),
        ..ModelFacts::default()
    };
    let nvfp4 = file("NVFP4", "modelopt_fp4", false);
    let fp8 = file("FP8", "modelopt_fp8", true);
    let other = file("W4A8_AWQ", "modelopt", false);
    let read = |m: &ModelFacts, v: &str| m.hf_quant_methods_in(v);
    // Up to 0.5.3 the file is the one `modelopt` method, Hub or not.
    assert_eq!(read(&nvfp4, "0.5.3"), ["modelopt"]);
    assert_eq!(read(&fp8, "0.5.3"), ["modelopt"]);
    // From 0.5.3.post1 its quant_algo decides, FP8 being the default until 0.5.4.
    assert_eq!(read(&nvfp4, "0.5.3.post1"), ["modelopt_fp4"]);
    assert_eq!(read(&fp8, "0.5.4"), ["modelopt_fp8"]);
    assert_eq!(read(&other, "0.5.4"), ["modelopt_fp8"]);
    assert!(read(&other, "0.5.4.post1").is_empty());
    assert_eq!(read(&nvfp4, "0.5.23"), ["modelopt_fp4"]);
}

/// NVIDIA's NVFP4 export of DeepSeek-V4-Pro is sized with V4's own layout: the official
/// checkpoint's bytes, with the target's routed experts at NVFP4's FP8 scale per 16 values
/// instead of MXFP4's per 32. It stays an estimate nothing is blocked on.
#[test]
fn deepseek_v4_nvfp4_export_is_sized_with_v4s_layout() {
    let real = |name: &str| {
        let path = format!(
            "{}/tests/field/models/{name}/config.json",
            env!("CARGO_MANIFEST_DIR")
        );
        facts(serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
    };
    let official = real("deepseek-ai__DeepSeek-V4-Pro");
    let nvfp4 = real("nvidia__DeepSeek-V4-Pro-NVFP4");
    let (a, b) = (
        weight_breakdown(&official).unwrap(),
        weight_breakdown(&nvfp4).unwrap(),
    );
    let per_value = deepseek_v4::NVFP4_EXPERT_BYTES - deepseek_v4::CHECKPOINT_EXPERT_BYTES;
    let layers = official.num_hidden_layers.unwrap() as f64;
    let want = a.model + layers * a.mxfp4_expert_values_per_layer * per_value;
    assert!((b.model / want - 1.0).abs() < 1e-9, "{} vs {want}", b.model);
    // The MTP layers keep their packing; nothing is re-laid for the runner on load.
    assert_eq!((b.mtp, b.mxfp4_expert_values_per_layer), (a.mtp, 0.0));
    assert!(official.size_is_firm() && !nvfp4.size_is_firm());
}
