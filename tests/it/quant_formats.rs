//! Every quantisation format SGLang loads, read from real public checkpoint files
//! (`tests/fixtures/quant/`, sources in each SOURCE.md): the method SGLang resolves, the storage
//! format, and the bytes per quantised weight it implies (scales included).

use std::path::{Path, PathBuf};

use sglang_launch::facts::model::quant::{CompressedScheme, WeightFormat};
use sglang_launch::facts::model::{self, ModelFacts};
use sglang_launch::sglang::{self, flagset};

const QUANT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quant");
const MODELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/models");

fn args() -> sglang::SglangArgs {
    sglang::parse(flagset::get("0.5.23").unwrap(), vec![])
}

/// The facts of a model directory made of these files (copied into a temporary directory).
fn facts_of(files: &[PathBuf]) -> ModelFacts {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        std::fs::copy(f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    let load = model::load_dir(dir.path().to_path_buf(), &args());
    load.facts.expect("the config loads")
}

fn quant(dir: &str, file: &str) -> PathBuf {
    Path::new(QUANT).join(dir).join(file)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// NVFP4 from ModelOpt's `hf_quant_config.json` beside a config.json without a
/// `quantization_config` (how SGLang finds it): modelopt_fp4, half a byte and an FP8 scale per 16.
/// The checkpoint's real `model.safetensors.index.json` records 6,027,749,376 bytes.
#[test]
fn modelopt_nvfp4_from_hf_quant_config() {
    let f = facts_of(&[
        Path::new(MODELS).join("oracle/Llama-3.1-8B-Instruct/config.json"),
        quant("nvidia__Llama-3.1-8B-Instruct-FP4", "hf_quant_config.json"),
    ]);
    assert_eq!(f.quant_method.as_deref(), Some("modelopt_fp4"));
    assert_eq!(f.weight_bits, Some(4));
    assert_eq!(f.weight_format, Some(WeightFormat::Nvfp4));
    assert!(close(f.weight_format.unwrap().bytes_per_weight(), 0.5625));
    assert!(f.kv_cache_fp8, "kv_cache_quant_algo FP8");
    let estimate = f.weight_bytes.unwrap() as f64;
    let real = 6_027_749_376.0;
    assert!(
        (estimate / real - 1.0).abs() < 0.03,
        "estimate {estimate} vs the index's {real}"
    );
}

/// A MoE NVFP4 checkpoint that leaves its router gates out: still NVFP4 for the experts.
#[test]
fn modelopt_nvfp4_moe() {
    let f = facts_of(&[
        Path::new(MODELS).join("oracle/Qwen3-30B-A3B/config.json"),
        quant("nvidia__Qwen3-30B-A3B-NVFP4", "hf_quant_config.json"),
    ]);
    assert_eq!(f.quant_method.as_deref(), Some("modelopt_fp4"));
    assert_eq!(f.weight_format, Some(WeightFormat::Nvfp4));
    assert!(!f.attention_unquantised);
}

/// DeepSeek NVFP4 excludes every layer's attention one layer at a time: attention stays 16-bit.
#[test]
fn modelopt_nvfp4_with_attention_excluded_layer_by_layer() {
    let f = facts_of(&[
        Path::new(MODELS).join("oracle/Llama-3.1-8B-Instruct/config.json"),
        quant("nvidia__Qwen3-32B-NVFP4", "hf_quant_config.json"),
    ]);
    assert!(!f.attention_unquantised, "only lm_head is excluded");
    let text = std::fs::read_to_string(quant(
        "nvidia__DeepSeek-V3-0324-NVFP4",
        "hf_quant_config.json",
    ))
    .unwrap();
    let hf: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut q = hf["quantization"].as_object().unwrap().clone();
    q.insert("quant_method".into(), "modelopt".into());
    let config = serde_json::json!({
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
        "num_hidden_layers": 61, "hidden_size": 7168, "num_attention_heads": 128,
        "quantization_config": q,
    });
    let f = model::facts_from_config(config.as_object().unwrap());
    assert_eq!(f.weight_format, Some(WeightFormat::Nvfp4));
    assert!(f.attention_unquantised, "61 layers' self_attn excluded");
}

/// AWQ: 4-bit integers, an fp16 scale and a 4-bit zero point per group of 128.
#[test]
fn awq_int4_group_128() {
    let f = facts_of(&[quant("TheBloke__Llama-2-7B-AWQ", "config.json")]);
    assert_eq!(f.quant_method.as_deref(), Some("awq"));
    assert_eq!(
        f.weight_format,
        Some(WeightFormat::Int {
            bits: 4,
            group: Some(128)
        })
    );
    assert!(close(
        f.weight_format.unwrap().bytes_per_weight(),
        0.5 + 2.5 / 128.0
    ));
}

/// GPTQ: the same layout as AWQ at 4 bits, group 128.
#[test]
fn gptq_int4_group_128() {
    let f = facts_of(&[quant("TheBloke__Llama-2-7B-GPTQ", "config.json")]);
    assert_eq!(f.quant_method.as_deref(), Some("gptq"));
    assert_eq!(
        f.weight_format,
        Some(WeightFormat::Int {
            bits: 4,
            group: Some(128)
        })
    );
}

/// compressed-tensors FP8 (per-channel dynamic, and per-tensor static): one byte a weight.
#[test]
fn compressed_tensors_fp8() {
    for dir in [
        "RedHatAI__Meta-Llama-3.1-8B-Instruct-FP8-dynamic",
        "RedHatAI__Meta-Llama-3.1-405B-Instruct-FP8",
    ] {
        let f = facts_of(&[quant(dir, "config.json")]);
        assert_eq!(
            f.quant_method.as_deref(),
            Some("compressed-tensors"),
            "{dir}"
        );
        assert_eq!(f.weight_bits, Some(8), "{dir}");
        assert_eq!(f.weight_format, Some(WeightFormat::Eight), "{dir}");
        assert!(close(f.weight_format.unwrap().bytes_per_weight(), 1.0));
    }
}

/// compressed-tensors W8A8-INT8 (llm-compressor's `W8A8` preset: per-channel INT8 weights,
/// dynamic per-token INT8 activations; QUANT018/QUANT019 read it): one byte per weight. No public
/// copy of such a config.json was found, so the preset's group is set into the real FP8-dynamic
/// checkpoint's config, whose FP8 group is the control.
#[test]
fn compressed_tensors_w8a8_int8() {
    let real = quant(
        "RedHatAI__Meta-Llama-3.1-8B-Instruct-FP8-dynamic",
        "config.json",
    );
    assert!(!facts_of(std::slice::from_ref(&real)).compressed_w8a8_int8);
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    let group = config
        .pointer_mut("/quantization_config/config_groups/group_0")
        .unwrap();
    for part in ["weights", "input_activations"] {
        group[part]["type"] = "int".into();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let f = facts_of(&[path]);
    assert!(f.compressed_w8a8_int8);
    assert_eq!(f.weight_format, Some(WeightFormat::Eight));
}

/// compressed-tensors W4A16 nested in `text_config`, group 32, attention and shared experts
/// left unquantised (`re:.*self_attn.*`).
#[test]
fn compressed_tensors_w4a16_group_32() {
    let f = facts_of(&[quant("nvidia__Kimi-K2.5-NVFP4", "config.json")]);
    assert_eq!(f.quant_method.as_deref(), Some("compressed-tensors"));
    assert_eq!(
        f.weight_format,
        Some(WeightFormat::Int {
            bits: 4,
            group: Some(32)
        })
    );
    assert!(close(
        f.weight_format.unwrap().bytes_per_weight(),
        0.5 + 2.5 / 32.0
    ));
    assert!(f.attention_unquantised);
}

/// MXFP4 (gpt-oss): the experts only, half a byte and an e8m0 scale per 32.
#[test]
fn mxfp4_experts_only() {
    let f = facts_of(&[Path::new(MODELS).join("openai__gpt-oss-20b/config.json")]);
    assert_eq!(f.quant_method.as_deref(), Some("mxfp4"));
    assert_eq!(f.weight_format, Some(WeightFormat::Mxfp4));
    assert!(close(f.weight_format.unwrap().bytes_per_weight(), 0.53125));
    assert!(f.attention_unquantised);
}

/// compressed-tensors' FP4 weight-only presets: NVFP4A16 is half a byte and an FP8 scale per
/// 16, MXFP4A16 (`mxfp4-pack-quantized`) half a byte and an e8m0 scale per 32.
#[test]
fn compressed_tensors_fp4_weight_only() {
    let nvfp4 = facts_of(&[Path::new(MODELS).join("synthetic__Qwen3-8B-nvfp4a16-ct/config.json")]);
    assert_eq!(nvfp4.weight_format, Some(WeightFormat::Nvfp4));
    assert!(close(
        nvfp4.weight_format.unwrap().bytes_per_weight(),
        0.5625
    ));
    let mxfp4 = facts_of(&[Path::new(MODELS).join("synthetic__Qwen3-8B-mxfp4a16-ct/config.json")]);
    assert_eq!(mxfp4.weight_format, Some(WeightFormat::Mxfp4));
    assert!(close(
        mxfp4.weight_format.unwrap().bytes_per_weight(),
        0.53125
    ));
}

/// Block FP8 (DeepSeek-V3): one byte and an fp32 scale per 128×128 block.
#[test]
fn block_fp8() {
    let f = facts_of(&[Path::new(MODELS).join("deepseek-ai__DeepSeek-V3/config.json")]);
    assert_eq!(f.quant_method.as_deref(), Some("fp8"));
    assert_eq!(f.weight_format, Some(WeightFormat::BlockEight));
    assert!(close(
        f.weight_format.unwrap().bytes_per_weight(),
        1.0 + 4.0 / 16384.0
    ));
}

/// Formats no public config.json of was found for (the README of tests/fixtures/quant says
/// which): their `quantization_config` keys as SGLang's loaders read them.
#[test]
fn formats_read_from_their_documented_keys() {
    let cases = [
        (
            serde_json::json!({"quant_method": "modelopt", "quant_algo": "FP8"}),
            "modelopt_fp8",
            WeightFormat::Eight,
        ),
        (
            serde_json::json!({"quant_method": "bitsandbytes", "load_in_4bit": true,
                "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true}),
            "bitsandbytes",
            WeightFormat::Bnb4 { double: true },
        ),
        (
            serde_json::json!({"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0}),
            "fbgemm_fp8",
            WeightFormat::Eight,
        ),
        (
            serde_json::json!({"quant_method": "w8a8_int8"}),
            "w8a8_int8",
            WeightFormat::Eight,
        ),
        (
            serde_json::json!({"quant_method": "quark",
                "global_quant_config": {"weight": {"dtype": "fp4", "group_size": 32}}}),
            "quark",
            WeightFormat::Mxfp4,
        ),
        (
            serde_json::json!({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
                "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}}}),
            "compressed-tensors",
            WeightFormat::Nvfp4,
        ),
        (
            serde_json::json!({"quant_algo": "MIXED_PRECISION"}),
            "w4afp8",
            WeightFormat::Int {
                bits: 4,
                group: None,
            },
        ),
    ];
    for (q, method, format) in cases {
        let config = serde_json::json!({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "quantization_config": q});
        let f = model::facts_from_config(config.as_object().unwrap());
        assert_eq!(f.quant_method.as_deref(), Some(method), "{q}");
        assert_eq!(f.weight_format, Some(format), "{q}");
    }
}

/// NVIDIA's DeepSeek-V4 NVFP4 export: `quant_method: fp8` with ModelOpt's mixed precision and
/// NVFP4 experts, the hybrid SGLang's NVFP4 MoE runners take from 0.5.15; a plain ModelOpt NVFP4
/// checkpoint is not that hybrid.
#[test]
fn deepseek_v4_nvfp4_export_is_the_fp8_nvfp4_hybrid() {
    let field = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/field/models");
    let v4 = Path::new(field).join("nvidia__DeepSeek-V4-Pro-NVFP4/config.json");
    assert!(facts_of(&[v4]).nvfp4_moe_hybrid);
    let plain = Path::new(MODELS).join("synthetic__Qwen3-8B-modelopt-nvfp4");
    let files: Vec<PathBuf> = std::fs::read_dir(plain)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert!(!facts_of(&files).nvfp4_moe_hybrid);
}

/// The scheme each compressed-tensors group selects (QUANT028 reads which of them the older
/// releases built from vLLM): FP8-dynamic is W8A8; the same group without activations is FP8
/// weight-only per channel, which SGLang's group/channel test takes as WNA16; per tensor it is FP8
/// weight-only; Kimi-K2.5's INT4 group is WNA16, and asymmetric its own scheme; the NVFP4
/// preset (FP4 weights and activations in tensor groups of 16) is NVFP4.
#[test]
fn compressed_tensors_schemes() {
    use CompressedScheme::*;
    let real = quant(
        "RedHatAI__Meta-Llama-3.1-8B-Instruct-FP8-dynamic",
        "config.json",
    );
    assert_eq!(
        facts_of(std::slice::from_ref(&real)).compressed_schemes,
        [Fp8W8a8]
    );
    let edited = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
        edit(
            config
                .pointer_mut("/quantization_config/config_groups/group_0")
                .unwrap(),
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, config.to_string()).unwrap();
        facts_of(&[path]).compressed_schemes
    };
    assert_eq!(
        edited(&|g| g["input_activations"] = serde_json::Value::Null),
        [Wna16]
    );
    let per_tensor = |g: &mut serde_json::Value| {
        g["input_activations"] = serde_json::Value::Null;
        g["weights"]["strategy"] = "tensor".into();
    };
    assert_eq!(edited(&per_tensor), [Fp8WeightOnly]);
    let kimi = Path::new(MODELS).join("moonshotai__Kimi-K2.5/config.json");
    assert_eq!(
        facts_of(std::slice::from_ref(&kimi)).compressed_schemes,
        [Wna16]
    );
    let w4a16 = Path::new(MODELS).join("synthetic__Qwen3-8B-w4a16-ct/config.json");
    assert_eq!(facts_of(&[w4a16]).compressed_schemes, [Wna16]);
    let asym = |g: &mut serde_json::Value| {
        g["input_activations"] = serde_json::Value::Null;
        g["weights"]["symmetric"] = false.into();
    };
    assert_eq!(edited(&asym), [Wna16Asym]);
    let nvfp4 = Path::new(MODELS).join("synthetic__Qwen3-8B-nvfp4-ct/config.json");
    assert_eq!(facts_of(&[nvfp4]).compressed_schemes, [Nvfp4]);
    // FP4 weights alone: NVFP4A16's tensor groups, and MXFP4A16's groups, which the integer
    // weight-only test of releases before 0.5.22 takes too but which are not integers.
    let nvfp4_a16 = Path::new(MODELS).join("synthetic__Qwen3-8B-nvfp4a16-ct/config.json");
    assert_eq!(facts_of(&[nvfp4_a16]).compressed_schemes, [Nvfp4WeightOnly]);
    let mxfp4_a16 = Path::new(MODELS).join("synthetic__Qwen3-8B-mxfp4a16-ct/config.json");
    assert_eq!(
        facts_of(&[mxfp4_a16]).compressed_schemes,
        [Fp4WeightOnlyGroup]
    );
    let awq = Path::new(MODELS).join("TheBloke__Llama-2-7B-AWQ/config.json");
    assert!(facts_of(&[awq]).compressed_schemes.is_empty());
}
