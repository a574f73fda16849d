//! MODEL: model architectures the release's model registry resolves.

use serde_json::{Value, json};
use sglang_launch::facts::model::ModelFacts;
use sglang_launch::facts::model::registry::RegistryKeys;

use crate::support::{Case, assert_cases, c, checkpoint, messages, model};

/// A checkpoint whose config.json names these architectures, of this model type.
fn named(archs: &[&str], model_type: &str, auto_model: bool) -> ModelFacts {
    ModelFacts {
        architecture: archs.first().map(|a| a.to_string()),
        registry: RegistryKeys {
            architectures: archs.iter().map(|a| a.to_string()).collect(),
            model_type: Some(model_type.into()),
            auto_model,
            auto_config: false,
        },
        num_attention_heads: Some(64),
        num_key_value_heads: Some(8),
        ..Default::default()
    }
}

/// nvidia/Llama-3_3-Nemotron-Super-49B-v1 (sglang#4689): remote code (its own `AutoConfig`), no
/// `AutoModel`.
fn nemotron_super() -> ModelFacts {
    let mut m = named(&["DeciLMForCausalLM"], "nemotron-nas", false);
    m.registry.auto_config = true;
    m
}

/// A made-up remote-code checkpoint (the synthetic fixture's `CustomForCausalLM`), relative to
/// the package root the tests run in, so the message names the same path everywhere.
const CUSTOM: &str = "tests/fixtures/models/synthetic__unknown-type-no-heads";

/// Every MODEL case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [
        unsupported(),
        fallback(),
        language_model_only(),
        embedding(),
        glm4v_moe(),
        qwen3_vl_moe_pp(),
        xllm_native(),
        model_types(),
        model_options(),
    ]
    .concat()
}

/// MODEL008: options of one model family on another model.
fn model_options() -> Vec<Case> {
    let llama = || c("MODEL008").model(model("LlamaForCausalLM"));
    let dsa = ModelFacts {
        index_topk: Some(2048),
        ..model("DeepseekV32ForCausalLM")
    };
    vec![
        llama().arg("--shared-experts-tp-size", json!(1)),
        c("MODEL008")
            .model(model("KimiK3ForConditionalGeneration"))
            .arg("--shared-experts-tp-size", json!(1))
            .no(),
        llama().flag("--enable-dsa-cache-layer-split"),
        c("MODEL008")
            .model(dsa)
            .flag("--enable-dsa-cache-layer-split")
            .no(),
        llama().flag("--enable-cp-decode-attn-tp"),
        c("MODEL008")
            .model(model("DeepseekV4ForCausalLM"))
            .flag("--enable-cp-decode-attn-tp")
            .no(),
        // Without the config the model is not known.
        c("MODEL008").flag("--enable-cp-decode-attn-tp").no(),
    ]
}

/// MODEL001: releases before the Transformers fallback.
fn unsupported() -> Vec<Case> {
    vec![
        // sglang#4689's line: DeciLM arrives in 0.5.1.
        c("MODEL001").version("0.4.4.post1").model(nemotron_super()),
        // Qwen3 arrives in 0.4.5.post2.
        c("MODEL001")
            .version("0.4.5")
            .model(named(&["Qwen3ForCausalLM"], "qwen3", false)),
        c("MODEL001")
            .version("0.4.5.post2")
            .model(named(&["Qwen3ForCausalLM"], "qwen3", false))
            .no(),
        // A name no release has.
        c("MODEL001")
            .version("0.4.6.post5")
            .model(named(&["CustomForCausalLM"], "custom", true)),
        // Any name the registry has is enough; no names, nothing to judge.
        c("MODEL001")
            .version("0.4.4.post1")
            .model(named(
                &["DeciLMForCausalLM", "LlamaForCausalLM"],
                "nemotron-nas",
                false,
            ))
            .no(),
        c("MODEL001")
            .version("0.4.4.post1")
            .model(named(&[], "llama", false))
            .no(),
        // From 0.4.7 the fallback applies: MODEL002's.
        c("MODEL001").version("0.4.7").model(nemotron_super()).no(),
        // A separate speculative draft is looked up too.
        c("MODEL001")
            .version("0.4.4.post1")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-draft-model-path", json!(CUSTOM)),
        // A release this build does not embed may have the class.
        c("MODEL001")
            .version("0.4.3.post9")
            .model(nemotron_super())
            .no(),
    ]
}

/// MODEL002: releases that fall back to the Transformers backend.
fn language_model_only() -> Vec<Case> {
    let qwen35 = || model("Qwen3_5MoeForConditionalGeneration");
    vec![
        c("MODEL003")
            .version("0.5.21")
            .model(qwen35())
            .flag("--language-model-only"),
        c("MODEL003")
            .version("0.5.21")
            .model(model("DeepseekV4ForCausalLM"))
            .flag("--language-model-only"),
        c("MODEL003")
            .version("0.5.22")
            .model(model("DeepseekV4ForCausalLM"))
            .flag("--language-model-only")
            .no(),
        c("MODEL003")
            .version("0.5.23")
            .flag("--language-model-only")
            .flag("--enable-prefix-mm-cache"),
        c("MODEL003")
            .version("0.5.23")
            .flag("--language-model-only")
            .arg("--disaggregation-mode", json!("decode")),
        // Without the model's classes only the option checks can be judged.
        c("MODEL003")
            .version("0.5.23")
            .flag("--language-model-only")
            .no(),
        c("MODEL003").version("0.5.23").model(qwen35()).no(),
    ]
}

fn fallback() -> Vec<Case> {
    vec![
        c("MODEL002").version("0.4.10").model(nemotron_super()),
        c("MODEL002").version("0.5.1").model(nemotron_super()).no(),
        c("MODEL002").model(named(&["CustomForCausalLM"], "custom", true)),
        c("MODEL002")
            .version("0.4.6.post5")
            .model(nemotron_super())
            .no(),
        // Asked for the Transformers backend on purpose (`--impl` before 0.4.9.post3).
        c("MODEL002")
            .model(named(&["CustomForCausalLM"], "custom", true))
            .arg("--model-impl", json!("transformers"))
            .no(),
        c("MODEL002")
            .version("0.4.8")
            .model(nemotron_super())
            .arg("--impl", json!("transformers"))
            .no(),
        c("MODEL002")
            .model(named(&["CustomForCausalLM"], "custom", true))
            .arg("--model-impl", json!("sglang")),
        // An external model package registers its own classes.
        c("MODEL002")
            .model(named(&["CustomForCausalLM"], "custom", true))
            .env("SGLANG_EXTERNAL_MODEL_PACKAGE", "my_models")
            .no(),
        // Olmo3Config rewrites Olmo3ForCausalLM to Olmo2ForCausalLM from 0.5.4.
        c("MODEL002")
            .version("0.5.4")
            .model(named(&["Olmo3ForCausalLM"], "olmo3", false))
            .no(),
        c("MODEL002")
            .version("0.5.3")
            .model(named(&["Olmo3ForCausalLM"], "olmo3", false)),
        // DeepseekVL2Config sets its own architectures.
        c("MODEL002")
            .model(named(&["DeepseekVLV2ForCausalLM"], "deepseek_vl_v2", true))
            .no(),
        // A Mistral checkpoint by name is read from params.json, not config.json.
        c("MODEL002")
            .model(named(&["CustomForCausalLM"], "custom", false))
            .arg(
                "--model-path",
                json!("mistralai/Mistral-Large-3-675B-Instruct-2512"),
            )
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("MODEL", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

/// `check --json` of the synthetic checkpoint on a release, with these extra SGLang arguments:
/// the exit code and the codes found.
fn check(version: &str, extra: &[&str]) -> (i32, Vec<String>) {
    let out = crate::common::launcher()
        .args(["check", "--json", "--topology"])
        .arg("tests/fixtures/topologies/8x-h100-sxm-nvlink.json")
        // The fixture's model type is its own code's: trusted, so only the registry decides.
        .args(["--sglang-version", version, "--", "--model-path", CUSTOM])
        .arg("--trust-remote-code")
        .args(extra)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["severity"].as_str().unwrap(),
                f["code"].as_str().unwrap()
            )
        })
        .collect();
    (out.status.code().unwrap(), codes)
}

#[test]
fn the_pipeline_blocks_only_where_the_release_is_known_and_has_no_fallback() {
    let (exit, codes) = check("0.4.4.post1", &[]);
    assert_eq!(exit, 1, "{codes:?}");
    assert!(codes.contains(&"error MODEL001".to_owned()), "{codes:?}");
    // --json-model-override-args changes what SGLang looks up.
    let (_, codes) = check(
        "0.4.4.post1",
        &[
            "--json-model-override-args",
            r#"{"architectures": ["LlamaForCausalLM"]}"#,
        ],
    );
    assert!(!codes.iter().any(|c| c.contains("MODEL")), "{codes:?}");
    // A release this build does not embed (approximate mode) may have the class.
    let (_, codes) = check("0.4.4.post9", &[]);
    assert!(!codes.iter().any(|c| c.contains("MODEL")), "{codes:?}");
    // The fallback releases warn.
    let (exit, codes) = check("0.5.23", &[]);
    assert_eq!(exit, 0, "{codes:?}");
    assert!(codes.contains(&"warning MODEL002".to_owned()), "{codes:?}");
}

#[test]
fn the_pipeline_blocks_a_checkpoints_own_model_type_without_trust_remote_code() {
    let out = crate::common::launcher()
        .args(["check", "--topology"])
        .arg("tests/fixtures/topologies/8x-h100-sxm-nvlink.json")
        .args(["--sglang-version", "0.5.23", "--", "--model-path", CUSTOM])
        .output()
        .unwrap();
    let stdout = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("MODEL006") && stdout.contains("--trust-remote-code"),
        "{stdout}"
    );
}

/// MODEL004: an embedding server on the Transformers backend (0.4.7–0.5.9).
fn embedding() -> Vec<Case> {
    let qwen3_rm = || named(&["Qwen3ForSequenceClassification"], "qwen3", false);
    let emb = |v| c("MODEL004").version(v).flag("--is-embedding");
    vec![
        // sglang#8256: a Qwen3 reward model before its class arrived (0.5.0rc2).
        emb("0.4.9.post2").model(qwen3_rm()),
        emb("0.5.2").arg("--model-impl", json!("transformers")),
        emb("0.4.9").arg("--impl", json!("transformers")),
        emb("0.5.1").model(qwen3_rm()).no(),
        emb("0.4.9.post2")
            .model(qwen3_rm())
            .flag("--skip-server-warmup")
            .no(),
        emb("0.5.10")
            .arg("--model-impl", json!("transformers"))
            .no(),
        c("MODEL004").version("0.4.9.post2").model(qwen3_rm()).no(),
        emb("0.4.9.post2").model(model("LlamaForCausalLM")).no(),
    ]
}

/// MODEL005: GLM-4.5V on 0.5.2.
fn glm4v_moe() -> Vec<Case> {
    let glm45v = || named(&["Glm4vMoeForConditionalGeneration"], "glm4v_moe", false);
    vec![
        c("MODEL005").version("0.5.2").model(glm45v()),
        c("MODEL005").version("0.5.2rc2").model(glm45v()).no(),
        c("MODEL005").version("0.5.3rc0").model(glm45v()).no(),
        c("MODEL005")
            .version("0.5.2")
            .model(named(&["Glm4vForConditionalGeneration"], "glm4v", false))
            .no(),
    ]
}

/// MODEL009: Qwen3-VL MoE with pipeline parallelism before 0.5.10.
fn qwen3_vl_moe_pp() -> Vec<Case> {
    let vl_moe = || {
        named(
            &["Qwen3VLMoeForConditionalGeneration"],
            "qwen3_vl_moe",
            false,
        )
    };
    let pp = |v: &'static str| {
        c("MODEL009")
            .version(v)
            .model(vl_moe())
            .arg("--tp-size", json!(4))
            .arg("--pp-size", json!(2))
    };
    vec![
        pp("0.5.7"),
        pp("0.5.3.post1"),
        pp("0.5.10rc0"),
        pp("0.5.10").no(),
        pp("0.5.2").no(),
        pp("0.5.7").arg("--load-format", json!("dummy")).no(),
        pp("0.5.7").arg("--model-impl", json!("transformers")).no(),
        pp("0.5.7")
            .model(named(
                &["Qwen3VLForConditionalGeneration"],
                "qwen3_vl",
                false,
            ))
            .no(),
        c("MODEL009")
            .version("0.5.7")
            .model(vl_moe())
            .arg("--tp-size", json!(8))
            .no(),
    ]
}

/// MODEL010: the native xLLM / K2 Horizon model's refusals (0.5.20+), on a config with K2 Horizon
/// MoVA-36B's dimensions and float32 dtype metadata.
fn xllm_native() -> Vec<Case> {
    let k2 = |router: Option<&str>, mova: u64| {
        let mut m = checkpoint("synthetic__K2-Horizon-MoVA-36B-like");
        let x = m.xllm.as_mut().unwrap();
        x.router_partitions = router.map(str::to_owned);
        x.mova_experts = mova;
        m
    };
    let bf16 = |v: &'static str, m: ModelFacts| {
        c("MODEL010")
            .version(v)
            .model(m)
            .arg("--dtype", json!("bfloat16"))
    };
    let ready = || k2(Some("2"), 64);
    let mut ct = ready();
    ct.quant_method = Some("compressed-tensors".into());
    vec![
        // MoVA without the router's source sharding, from the first release with the module.
        bf16("0.5.20", k2(None, 64)),
        bf16("0.5.19", k2(None, 64)).no(),
        bf16("0.5.23", ready()).no(),
        bf16("0.5.23", k2(Some("3"), 64)),
        // A dense K2 Horizon has no value router to name.
        bf16("0.5.23", k2(None, 0)).no(),
        // `--dtype auto` on float32 metadata runs float16; float16 named likewise.
        c("MODEL010").version("0.5.20").model(ready()),
        c("MODEL010")
            .version("0.5.23")
            .model(ready())
            .arg("--dtype", json!("float16")),
        bf16("0.5.23", ready()).arg("--quantization", json!("fp8")),
        bf16("0.5.23", ct).no(),
        bf16("0.5.21", ready()).arg("--enable-two-batch-overlap", json!(true)),
        bf16("0.5.22", ready()).arg("--ep-num-redundant-experts", json!(4)),
    ]
}

/// deepseek-ai/DeepSeek-R1: `deepseek_v3`, with the checkpoint's own `AutoConfig`.
fn r1_remote() -> ModelFacts {
    let mut m = named(&["DeepseekV3ForCausalLM"], "deepseek_v3", false);
    m.registry.auto_config = true;
    m
}

/// MODEL006 and MODEL007: config.json's model type against the installed (or pinned)
/// transformers and the release's own configuration classes.
fn model_types() -> Vec<Case> {
    let glm5 = || named(&["GlmMoeDsaForCausalLM"], "glm_moe_dsa", false);
    let llava = || named(&["LlavaMistralForCausalLM"], "llava_mistral", false);
    vec![
        // GLM-5 on 0.5.9 with its pinned transformers 4.57.1 (glm_moe_dsa arrives in 5.2.0).
        c("MODEL006")
            .version("0.5.9")
            .model(glm5())
            .pkgs(&[("transformers", "4.57.1")]),
        // A transformers that has it, one from a checkout, one newer than the data, none.
        c("MODEL006")
            .version("0.5.9")
            .model(glm5())
            .pkgs(&[("transformers", "5.2.0")])
            .no(),
        c("MODEL006")
            .version("0.5.9")
            .model(glm5())
            .pkgs(&[("transformers", "4.57.1")])
            .edit_pkgs(|p| p.packages.values_mut().for_each(|k| k.direct = true))
            .no(),
        c("MODEL006")
            .version("0.5.9")
            .model(glm5())
            .pkgs(&[("transformers", "99.0.0")])
            .no(),
        c("MODEL006")
            .version("0.5.9")
            .model(glm5())
            .pkgs(&[("torch", "2.8.0")])
            .no(),
        // Offline, the install unknown: a later transformers has the class (MODEL007's).
        c("MODEL006").version("0.5.9").model(glm5()).no(),
        c("MODEL007").version("0.5.9").model(glm5()),
        c("MODEL007")
            .version("0.5.9")
            .model(glm5())
            .pkgs(&[("transformers", "4.57.1")])
            .no(),
        // 0.5.10 pins 5.3.0, which has it.
        c("MODEL007").version("0.5.10").model(glm5()).no(),
        // DeepSeek-R1 on 0.4.3.post3, which pins transformers 4.48.3 (deepseek_v3 arrives in
        // 4.51.0): its own AutoConfig runs only with --trust-remote-code.
        c("MODEL007").version("0.4.3.post3").model(r1_remote()),
        c("MODEL007")
            .version("0.4.3.post3")
            .model(r1_remote())
            .flag("--trust-remote-code")
            .no(),
        // No transformers release has LLaVA's own type (sglang#2532), and 0.4.0.post1 registers
        // none: blocked offline too.
        c("MODEL006").version("0.4.0.post1").model(llava()),
        // SGLang's own configuration class: Qwen3-Next from 0.5.2, whatever transformers says.
        c("MODEL006")
            .version("0.5.2")
            .model(named(&["Qwen3NextForCausalLM"], "qwen3_next", false))
            .pkgs(&[("transformers", "4.56.1")])
            .no(),
        c("MODEL006")
            .version("0.5.1")
            .model(named(&["Qwen3NextForCausalLM"], "qwen3_next", false))
            .pkgs(&[("transformers", "4.55.2")]),
        // The checkpoint's own AutoConfig (sglang#4689's checkpoint): transformers runs it only
        // with --trust-remote-code.
        c("MODEL006").version("0.4.4.post1").model(nemotron_super()),
        c("MODEL006")
            .version("0.4.4.post1")
            .model(nemotron_super())
            .flag("--trust-remote-code")
            .no(),
        // A type transformers has, whatever auto_map says (DeepSeek-V3's deepseek_v3 from 4.51.0).
        c("MODEL006")
            .version("0.5.5")
            .model(r1_remote())
            .pkgs(&[("transformers", "4.57.1")])
            .no(),
        // A GGUF file is read from its own metadata.
        c("MODEL006")
            .version("0.4.0.post1")
            .model(llava())
            .arg("--model-path", json!("/models/llava.Q4_K_M.gguf"))
            .no(),
    ]
}
