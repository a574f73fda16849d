//! SPEC: speculative decoding.

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;

use crate::support::{B200, Case, H100, L4, PRO, assert_cases, c, messages, mla, model};

/// Every SPEC case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [
        spec001_to_spec005(),
        spec006_to_spec011(),
        spec013(),
        spec016(),
        spec030(),
        spec024(),
        spec025(),
        spec017(),
        spec018(),
        spec019(),
        spec021(),
        spec022(),
        spec023(),
        spec026(),
        spec027(),
        spec028(),
        spec029(),
        spec031(),
        spec032(),
    ]
    .concat()
}

/// A backend the EAGLE draft has no version of (SPEC032).
fn spec032() -> Vec<Case> {
    let mtp = |v, backend: &str| {
        c("SPEC032")
            .version(v)
            .on(B200)
            .tp(8)
            .model(mla())
            .arg("--attention-backend", json!(backend))
            .arg("--speculative-algorithm", json!("NEXTN"))
    };
    vec![
        mtp("0.5.9", "cutlass_mla"),
        mtp("0.4.6.post5", "cutlass_mla"),
        mtp("0.5.19", "cutlass_mla"),
        mtp("0.5.9", "cutlass_mla")
            .arg("--speculative-draft-attention-backend", json!("flashinfer"))
            .no(),
        mtp("0.5.9", "flashinfer").no(),
        mtp("0.4.6", "flashmla").on(H100),
        mtp("0.4.6.post5", "flashmla").on(H100).no(),
        // Decode alone on cutlass_mla: the draft's multi-step decode looks it up.
        c("SPEC032")
            .version("0.5.9")
            .on(B200)
            .tp(8)
            .model(mla())
            .arg("--prefill-attention-backend", json!("flashinfer"))
            .arg("--decode-attention-backend", json!("cutlass_mla"))
            .arg("--speculative-algorithm", json!("NEXTN"))
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(4)),
        // NGRAM has no draft model.
        mtp("0.5.9", "cutlass_mla")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .no(),
    ]
}

/// A target class without what EAGLE-family decoding calls on it (SPEC031).
fn spec031() -> Vec<Case> {
    let named = |arch: &str| ModelFacts {
        registry: sglang_launch::facts::model::registry::RegistryKeys {
            architectures: vec![arch.into()],
            ..Default::default()
        },
        ..model(arch)
    };
    let spec = |v, arch: &str, algo: &str| {
        c("SPEC031")
            .version(v)
            .tp(8)
            .model(named(arch))
            .arg("--speculative-algorithm", json!(algo))
            .arg("--speculative-draft-model-path", json!("/models/draft"))
    };
    vec![
        // Qwen3-VL gained both methods in 0.5.11.
        spec("0.5.9", "Qwen3VLForConditionalGeneration", "EAGLE3"),
        spec("0.5.10.post1", "Qwen3VLForConditionalGeneration", "EAGLE"),
        spec("0.5.11", "Qwen3VLForConditionalGeneration", "EAGLE3").no(),
        // DeepSeek-V3 shares its embedding throughout, and has the EAGLE3 hook from 0.5.4.post2.
        spec("0.5.4", "DeepseekV3ForCausalLM", "EAGLE3"),
        spec("0.5.4", "DeepseekV3ForCausalLM", "EAGLE").no(),
        spec("0.5.4.post3", "DeepseekV3ForCausalLM", "EAGLE3").no(),
        spec("0.4.6.post5", "Qwen3MoeForCausalLM", "EAGLE3"),
        spec("0.4.9", "Qwen3MoeForCausalLM", "EAGLE3").no(),
        // Qwen2-MoE never had the embedding hand-over.
        spec("0.5.23", "Qwen2MoeForCausalLM", "EAGLE"),
        spec("0.5.23", "LlamaForCausalLM", "EAGLE3").no(),
        // A standalone draft is a model of its own; NGRAM has none.
        spec("0.5.9", "Qwen3VLForConditionalGeneration", "STANDALONE").no(),
        // Under PP a later stage has no embedding: PAR004 judges PP with drafts.
        spec("0.5.9", "Qwen3VLForConditionalGeneration", "EAGLE3")
            .arg("--pp-size", json!(2))
            .no(),
    ]
}

/// The weight cache with speculative decoding (SPEC028, 0.5.17+).
fn spec028() -> Vec<Case> {
    let cache = |mode| c("SPEC028").arg("--weight-cache-mode", json!(mode));
    vec![
        cache("client").arg("--speculative-algorithm", json!("NGRAM")),
        cache("daemon").arg("--speculative-algorithm", json!("NGRAM")),
        cache("off")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .no(),
        cache("client").no(),
    ]
}

/// Aux hidden-state capture (SPEC027).
fn spec027() -> Vec<Case> {
    let capture = |algo: &str| {
        c("SPEC027")
            .model(model("LlamaForCausalLM"))
            .flag("--enable-return-aux-hidden-states")
            .arg("--speculative-algorithm", json!(algo))
    };
    vec![
        c("SPEC027").flag("--enable-return-aux-hidden-states"),
        capture("EAGLE3").no(),
        capture("eagle3").no(),
        capture("EAGLE"),
        capture("DFLASH"),
        capture("DFLASH")
            .arg("--return-aux-hidden-state-layer-ids", json!([1, 8, 15]))
            .no(),
        capture("EAGLE3").arg("--return-aux-hidden-state-layer-ids", json!([1, 1])),
        capture("EAGLE3").arg("--return-aux-hidden-state-layer-ids", json!([-1])),
        capture("EAGLE3").arg("--speculative-draft-model-path", json!("/models/draft")),
        capture("EAGLE3").arg("--pp-size", json!(2)),
        c("SPEC027").arg("--return-aux-hidden-state-layer-ids", json!([1])),
        // Capture turns speculative decoding off: no draft-model rule reads EAGLE3 here.
        capture("EAGLE3").code("SPEC015").no(),
    ]
}

/// Verification modes, the draft window and DFlash's block (SPEC026).
fn spec026() -> Vec<Case> {
    let spec = |algo: &str| {
        c("SPEC026")
            .model(model("LlamaForCausalLM"))
            .arg("--speculative-algorithm", json!(algo))
            .arg("--speculative-draft-model-path", json!("/models/draft"))
    };
    vec![
        c("SPEC026").arg("--speculative-draft-sink-size", json!(4)),
        c("SPEC026")
            .arg("--speculative-draft-sink-size", json!(4))
            .arg("--speculative-draft-window-size", json!(64))
            .no(),
        c("SPEC026").flag("--speculative-use-block-verification"),
        spec("DFLASH")
            .flag("--speculative-use-block-verification")
            .no(),
        // SGLang fills in top-k 4 for Llama, and rejection sampling takes top-k 1.
        spec("EAGLE").flag("--speculative-use-rejection-sampling"),
        spec("EAGLE")
            .flag("--speculative-use-rejection-sampling")
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(4))
            .no(),
        spec("EAGLE")
            .version("0.5.13")
            .arg("--speculative-num-steps", json!(3))
            .no(),
        spec("STANDALONE").flag("--speculative-use-rejection-sampling"),
        spec("NGRAM")
            .flag("--speculative-use-rejection-sampling")
            .no(),
        spec("DFLASH").arg("--speculative-dflash-block-size", json!(0)),
        spec("DFLASH")
            .arg("--speculative-dflash-block-size", json!(8))
            .arg("--speculative-num-draft-tokens", json!(16)),
        spec("DFLASH")
            .arg("--speculative-dflash-block-size", json!(16))
            .arg("--speculative-draft-window-size", json!(2)),
        spec("DFLASH")
            .arg("--speculative-dflash-block-size", json!(16))
            .arg("--speculative-draft-window-size", json!(64))
            .no(),
        spec("EAGLE")
            .arg("--speculative-dflash-block-size", json!(0))
            .no(),
        // Without a block on the command line, the draft's config gives it (16 where it has none).
        spec("DFLASH")
            .draft(dflash_draft(None))
            .arg("--speculative-draft-window-size", json!(8)),
        spec("DFLASH")
            .draft(dflash_draft(None))
            .arg("--speculative-draft-window-size", json!(16))
            .no(),
        spec("DFLASH")
            .draft(dflash_draft(Some(8)))
            .arg("--speculative-draft-window-size", json!(4)),
        spec("DFLASH")
            .draft(dflash_draft(Some(8)))
            .arg("--speculative-draft-window-size", json!(8))
            .no(),
        // A block above 16 counts as 16: SGLang takes 16 where the rest of the config fails.
        spec("DFLASH")
            .draft(dflash_draft(Some(32)))
            .arg("--speculative-draft-window-size", json!(16))
            .no(),
        spec("DFLASH")
            .draft(dflash_draft(Some(32)))
            .arg("--speculative-draft-window-size", json!(8)),
        spec("DFLASH")
            .draft(dflash_draft(Some(8)))
            .arg("--speculative-draft-window-size", json!(4))
            .arg("--json-model-override-args", json!(r#"{"block_size": 2}"#))
            .no(),
        spec("DFLASH")
            .arg("--speculative-draft-window-size", json!(4))
            .no(),
        spec("DFLASH")
            .version("0.5.11")
            .draft(dflash_draft(None))
            .arg("--speculative-dflash-draft-window-size", json!(8)),
        spec("DFLASH")
            .version("0.5.11")
            .arg("--speculative-dflash-draft-window-size", json!(0)),
        // NGRAM's external corpus: a positive SAM budget below the draft tokens.
        corpus(None, None),
        corpus(Some(4), Some(8)).no(),
        corpus(Some(4), None).no(),
        corpus(Some(8), Some(8)),
        corpus(Some(4), Some(8)).arg("--speculative-ngram-external-corpus-max-tokens", json!(0)),
        c("SPEC026")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg(
                "--speculative-ngram-external-corpus-path",
                json!("/srv/corpus.jsonl"),
            )
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(4))
            .no(),
    ]
}

/// NGRAM with an external corpus, a SAM budget and draft tokens.
fn corpus(budget: Option<i64>, draft: Option<i64>) -> Case {
    let mut case = c("SPEC026")
        .arg("--speculative-algorithm", json!("NGRAM"))
        .arg(
            "--speculative-ngram-external-corpus-path",
            json!("/srv/corpus.jsonl"),
        );
    if let Some(b) = budget {
        case = case.arg("--speculative-ngram-external-sam-budget", json!(b));
    }
    if let Some(d) = draft {
        case = case.arg("--speculative-num-draft-tokens", json!(d));
    }
    case
}

/// A DFlash draft checkpoint whose config gives `block` (or no block).
fn dflash_draft(block: Option<u64>) -> ModelFacts {
    ModelFacts {
        architecture: Some("DFlashDraftModel".into()),
        dflash_block_size: block,
        ..model("Qwen3ForCausalLM")
    }
}

/// DeepSeek-V3/R1 with its NextN layer.
fn deepseek_mtp() -> ModelFacts {
    ModelFacts {
        architecture: Some("DeepseekV3ForCausalLM".into()),
        num_nextn_predict_layers: Some(1),
        ..mla()
    }
}

/// The NextN draft's CUDA-graph capture with DP attention before 0.4.8.
fn spec023() -> Vec<Case> {
    let dpa = |v| {
        c("SPEC023")
            .version(v)
            .on(H100)
            .tp(8)
            .model(deepseek_mtp())
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-num-steps", json!(3))
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(4))
    };
    vec![
        dpa("0.4.4.post1"),
        dpa("0.4.6.post4"),
        dpa("0.4.7.post1"),
        dpa("0.4.8").no(),
        dpa("0.4.6.post4").flag("--disable-cuda-graph").no(),
        dpa("0.4.6.post4")
            .arg("--speculative-num-steps", json!(1))
            .no(),
        dpa("0.4.6.post4").flag("--enable-deepep-moe").no(),
        c("SPEC023")
            .version("0.4.6.post4")
            .on(H100)
            .tp(8)
            .model(deepseek_mtp())
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-num-steps", json!(3))
            .no(),
    ]
}

/// HiSparse with a sparse-attention model's own MTP layers as the draft (0.5.10rc0–0.5.21).
fn spec022() -> Vec<Case> {
    let glm5 = || ModelFacts {
        architecture: Some("GlmMoeDsaForCausalLM".into()),
        index_topk: Some(2048),
        num_nextn_predict_layers: Some(1),
        ..mla()
    };
    let mtp = |v| {
        c("SPEC022")
            .version(v)
            .on(H100)
            .tp(8)
            .model(glm5())
            .flag("--enable-hisparse")
            .arg("--speculative-algorithm", json!("EAGLE"))
    };
    vec![
        mtp("0.5.13.post1"),
        mtp("0.5.21"),
        mtp("0.5.22").no(),
        // Without HiSparse, or without a speculative draft, the pools are plain.
        c("SPEC022")
            .version("0.5.13.post1")
            .on(H100)
            .tp(8)
            .model(glm5())
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
        c("SPEC022")
            .version("0.5.13.post1")
            .on(H100)
            .tp(8)
            .model(glm5())
            .flag("--enable-hisparse")
            .no(),
    ]
}

fn spec001_to_spec005() -> Vec<Case> {
    vec![
        c("SPEC001")
            .on(PRO)
            .tp(8)
            .arg("--speculative-algorithm", json!("EAGLE3")),
        c("SPEC001")
            .tp(8)
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .no(),
        c("SPEC001")
            .on(PRO)
            .tp(2)
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .no(),
        c("SPEC002")
            .version("0.5.5")
            .tp(8)
            .arg("--speculative-algorithm", json!("NGRAM"))
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8)),
        c("SPEC002")
            .version("0.5.5")
            .tp(8)
            .arg("--speculative-algorithm", json!("EAGLE"))
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .no(),
        c("SPEC003")
            .version("0.5.5")
            .tp(8)
            .arg("--speculative-algorithm", json!("NEXTN"))
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .env("SGLANG_ENABLE_SPEC_V2", "1"),
        c("SPEC003")
            .version("0.5.5")
            .tp(8)
            .arg("--speculative-algorithm", json!("NEXTN"))
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .no(),
        // The documented DeepSeek MTP + DP-attention recipe on 0.5.23 (review regression).
        c("SPEC003")
            .tp(8)
            .arg("--speculative-algorithm", json!("NEXTN"))
            .arg("--attn-dp-size", json!(8))
            .env("SGLANG_ENABLE_SPEC_V2", "1")
            .no(),
        c("SPEC003")
            .tp(8)
            .arg("--speculative-algorithm", json!("NEXTN"))
            .no(),
        // Before 0.4.8 an idle DP rank skips the draft: one step never reaches SPEC023's capture.
        c("SPEC003")
            .version("0.4.6.post4")
            .tp(8)
            .model(deepseek_mtp())
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-num-steps", json!(1))
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8)),
        c("SPEC004")
            .version("0.5.5")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4))
            .arg("--page-size", json!(16))
            .arg("--attention-backend", json!("fa3")),
        c("SPEC004")
            .version("0.5.5")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4))
            .arg("--page-size", json!(16))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        c("SPEC004")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4))
            .arg("--page-size", json!(16))
            .arg("--attention-backend", json!("fa3"))
            .no(),
        // Before 0.5.4.post2 the check runs before SGLang picks a backend: none given, none seen.
        c("SPEC004")
            .version("0.5.3")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4))
            .arg("--page-size", json!(16)),
        c("SPEC004")
            .version("0.5.3")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4))
            .arg("--page-size", json!(16))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        // NGRAM's top-k is its BFS breadth (10 by default); it allows flashinfer only.
        c("SPEC004")
            .version("0.5.23")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg("--page-size", json!(16))
            .arg("--attention-backend", json!("fa3")),
        c("SPEC004")
            .version("0.5.23")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg("--page-size", json!(16))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        c("SPEC004")
            .version("0.5.23")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg("--speculative-ngram-max-bfs-breadth", json!(1))
            .arg("--page-size", json!(16))
            .arg("--attention-backend", json!("fa3"))
            .no(),
        // SGLang's own choice on B200 for DeepSeek-V3 (trtllm_mla, page size 64) rejects topk 4.
        c("SPEC004")
            .on(B200)
            .model(mla())
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4)),
        c("SPEC004")
            .on(H100)
            .model(mla())
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4))
            .no(),
        c("SPEC005")
            .on(B200)
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4))
            .arg("--attention-backend", json!("trtllm_mha")),
        c("SPEC005")
            .on(B200)
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--attention-backend", json!("trtllm_mha"))
            .no(),
        // The spec-v2 path refuses topk > 1 in 0.5.7–0.5.10 only.
        c("SPEC005")
            .version("0.5.8")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4))
            .env("SGLANG_ENABLE_SPEC_V2", "1"),
        c("SPEC005")
            .version("0.5.5")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4))
            .env("SGLANG_ENABLE_SPEC_V2", "1")
            .no(),
    ]
}

fn spec006_to_spec011() -> Vec<Case> {
    vec![
        // 0.4.9.post5–0.5.1: the hybrid attention backend asserts speculative decoding is off.
        c("SPEC012")
            .version("0.5.1")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--prefill-attention-backend", json!("fa3"))
            .arg("--decode-attention-backend", json!("flashinfer")),
        c("SPEC012")
            .version("0.5.1")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--attention-backend", json!("fa3"))
            .no(),
        c("SPEC012")
            .version("0.5.2")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--prefill-attention-backend", json!("fa3"))
            .arg("--decode-attention-backend", json!("flashinfer"))
            .no(),
        c("SPEC006").version("0.5.10.post1").arg(
            "--speculative-moe-runner-backend",
            json!("flashinfer_trtllm"),
        ),
        c("SPEC006")
            .version("0.5.10.post1")
            .arg("--speculative-moe-runner-backend", json!("triton"))
            .no(),
        c("SPEC007").arg("--speculative-algorithm", json!("EAGLE")),
        c("SPEC007")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--max-running-requests", json!(64))
            .no(),
        c("SPEC008")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--attention-backend", json!("flex_attention")),
        c("SPEC008")
            .arg("--attention-backend", json!("flex_attention"))
            .no(),
        c("SPEC008")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--decode-attention-backend", json!("flex_attention"))
            .no(),
        c("SPEC009")
            .version("0.5.10.post1")
            .flag("--enable-lora")
            .arg("--speculative-algorithm", json!("EAGLE")),
        c("SPEC009")
            .arg("--lora-paths", json!(["a=/x"]))
            .arg("--speculative-algorithm", json!("STANDALONE")),
        c("SPEC009")
            .flag("--enable-lora")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
        c("SPEC009")
            .version("0.5.10.post1")
            .flag("--enable-lora")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .no(),
        c("SPEC020")
            .version("0.5.4.post3")
            .arg("--lora-paths", json!(["fr=/loras/fr"]))
            .arg("--speculative-algorithm", json!("NGRAM")),
        c("SPEC020")
            .version("0.5.3")
            .flag("--enable-lora")
            .arg("--lora-backend", json!("csgmv"))
            .arg("--speculative-algorithm", json!("EAGLE")),
        // 0.5.4.post1's default LoRA backend is triton.
        c("SPEC020")
            .version("0.5.4.post1")
            .arg("--lora-paths", json!(["fr=/loras/fr"]))
            .arg("--speculative-algorithm", json!("NGRAM"))
            .no(),
        c("SPEC020")
            .version("0.5.4.post3")
            .arg("--lora-paths", json!(["fr=/loras/fr"]))
            .arg("--speculative-algorithm", json!("NGRAM"))
            .flag("--disable-cuda-graph")
            .no(),
        c("SPEC020")
            .version("0.5.5.post3")
            .arg("--lora-paths", json!(["fr=/loras/fr"]))
            .arg("--speculative-algorithm", json!("NGRAM"))
            .no(),
        c("SPEC010")
            .on(L4)
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--mem-fraction-static", json!(0.85)),
        c("SPEC010")
            .on(L4)
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
        c("SPEC010")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--mem-fraction-static", json!(0.85))
            .no(),
        // A draft the launcher can't read: its memory is not planned.
        c("SPEC011")
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .arg(
                "--speculative-draft-model-path",
                json!("/nonexistent/some-org__eagle3-draft"),
            ),
        c("SPEC011")
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .arg(
                "--speculative-draft-model-path",
                json!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct"
                )),
            )
            .no(),
        c("SPEC011")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg(
                "--speculative-draft-model-path",
                json!("/nonexistent/draft"),
            )
            .no(),
        c("SPEC011")
            .arg("--model-path", json!("/nonexistent/target"))
            .arg("--speculative-algorithm", json!("NEXTN"))
            .arg(
                "--speculative-draft-model-path",
                json!("/nonexistent/target"),
            )
            .no(),
    ]
}

/// Multi-layer EAGLE with a draft tree (0.5.13+), torch_native attention (SPEC014) and EAGLE3
/// without a draft (SPEC015).
fn spec013() -> Vec<Case> {
    let mle = |v| {
        c("SPEC013")
            .version(v)
            .model(model("LlamaForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .flag("--enable-multi-layer-eagle")
    };
    vec![
        // Llama's defaults are a tree: 5 steps, top-k 4, 8 draft tokens.
        mle("0.5.18"),
        mle("0.5.13"),
        // Top-k 1: SGLang makes the draft tokens steps + 1 itself.
        mle("0.5.18")
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(8))
            .no(),
        mle("0.5.18")
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(2))
            .arg("--speculative-num-draft-tokens", json!(4))
            .no(),
        // Before 0.5.13 the worker did not check it.
        mle("0.5.12").no(),
        // Python's ints do not overflow: the largest step count is a chain like any other.
        mle("0.5.18")
            .arg("--speculative-num-steps", json!(i64::MAX))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(3))
            .no(),
        c("SPEC015")
            .model(model("Qwen2ForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE3")),
        c("SPEC015")
            .model(model("Qwen2ForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .arg("--speculative-draft-model-path", json!("/drafts/eagle3"))
            .no(),
        c("SPEC015")
            .model(model("Qwen2ForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
        c("SPEC014")
            .version("0.5.18")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg("--attention-backend", json!("torch_native")),
        c("SPEC014")
            .version("0.5.18")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--decode-attention-backend", json!("torch_native")),
        c("SPEC014")
            .version("0.5.18")
            .arg("--attention-backend", json!("torch_native"))
            .no(),
        c("SPEC014")
            .version("0.5.18")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg("--attention-backend", json!("triton"))
            .no(),
        c("SPEC013")
            .version("0.5.18")
            .model(model("LlamaForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
    ]
}

/// Top-k or draft tokens without the steps (SPEC016).
fn spec016() -> Vec<Case> {
    let eagle = |v| {
        c("SPEC016")
            .version(v)
            .model(model("LlamaForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
    };
    vec![
        // SGLang turns adaptive off for a top-k other than 1 before it asserts (0.5.11+).
        c("SPEC016")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .flag("--speculative-adaptive")
            .arg("--speculative-eagle-topk", json!(4)),
        c("SPEC016")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .flag("--speculative-adaptive")
            .arg("--speculative-eagle-topk", json!(1))
            .no(),
        eagle("0.5.18").arg("--speculative-eagle-topk", json!(2)),
        eagle("0.4.10.post2").arg("--speculative-num-draft-tokens", json!(4)),
        eagle("0.4.5.post1").arg("--speculative-eagle-topk", json!(2)),
        // 0.4.4.post3 takes fixed defaults for what is missing.
        eagle("0.4.4.post3")
            .arg("--speculative-eagle-topk", json!(2))
            .no(),
        c("SPEC016")
            .version("0.5.23")
            .arg("--speculative-algorithm", json!("NEXTN"))
            .arg("--speculative-num-draft-tokens", json!(2)),
        eagle("0.5.18")
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(4))
            .no(),
        eagle("0.5.18").no(),
        // NGRAM sizes its draft from the draft tokens alone.
        c("SPEC016")
            .version("0.5.18")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg("--speculative-num-draft-tokens", json!(8))
            .no(),
    ]
}

/// EAGLE with none of the three parameters on 0.4.4.post4 – 0.4.5.post3 (SPEC030).
fn spec030() -> Vec<Case> {
    let eagle = |v| {
        c("SPEC030")
            .version(v)
            .model(model("LlamaForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
    };
    vec![
        eagle("0.4.5.post1"),
        eagle("0.4.4.post4"),
        c("SPEC030")
            .version("0.4.5.post3")
            .arg("--speculative-algorithm", json!("NEXTN")),
        eagle("0.4.5.post1")
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(4))
            .no(),
        // Top-k without the steps is SPEC016's assertion, which comes first.
        eagle("0.4.5.post1")
            .arg("--speculative-eagle-topk", json!(2))
            .no(),
        eagle("0.4.4.post3").no(),
        eagle("0.4.6").no(),
    ]
}

/// The steps without top-k (SPEC024).
fn spec024() -> Vec<Case> {
    let eagle = |v| {
        c("SPEC024")
            .version(v)
            .model(model("LlamaForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-num-steps", json!(3))
    };
    vec![
        eagle("0.5.10"),
        eagle("0.5.23").arg("--speculative-num-draft-tokens", json!(4)),
        c("SPEC024")
            .version("0.5.10")
            .arg("--speculative-algorithm", json!("NEXTN"))
            .arg("--speculative-num-steps", json!(1)),
        eagle("0.5.10")
            .arg("--speculative-eagle-topk", json!(1))
            .no(),
        eagle("0.5.23")
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(4))
            .no(),
        // IQuest Q1's MTP draft hook sets top-k itself.
        eagle("0.5.23").model(model("IQuestQ1ForCausalLM")).no(),
        // Before 0.5.2rc0 the argument handling compares top-k with 1 only.
        eagle("0.5.1.post3").no(),
        // NGRAM takes its top-k from its BFS breadth.
        c("SPEC024")
            .version("0.5.10")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg("--speculative-num-steps", json!(3))
            .no(),
        // The adaptive mode fills in top-k 1 where SGLang keeps it; 0.5.14+ drops it first for
        // what the line shows (attention DP, two-batch overlap, STANDALONE).
        eagle("0.5.23").flag("--speculative-adaptive").no(),
        eagle("0.5.11").flag("--speculative-adaptive").no(),
        eagle("0.5.23")
            .flag("--speculative-adaptive")
            .tp(2)
            .arg("--attn-dp-size", json!(2)),
        eagle("0.5.14")
            .flag("--speculative-adaptive")
            .flag("--enable-two-batch-overlap"),
        eagle("0.5.23")
            .flag("--speculative-adaptive")
            .arg("--speculative-algorithm", json!("STANDALONE")),
    ]
}

/// Adaptive speculative decoding's candidate steps (SPEC029, 0.5.14+).
fn spec029() -> Vec<Case> {
    let adaptive = |v, steps: i64| {
        c("SPEC029")
            .version(v)
            .model(model("LlamaForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .flag("--speculative-adaptive")
            .arg("--speculative-num-steps", json!(steps))
    };
    vec![
        adaptive("0.5.23", 4),
        adaptive("0.5.23", 5).no(),
        adaptive("0.5.19", 5),
        adaptive("0.5.14", 4),
        adaptive("0.5.13", 4).no(),
        adaptive("0.5.23", 3).no(),
        adaptive("0.5.23", 2).arg("--speculative-eagle-topk", json!(1)),
        // SGLang drops the adaptive mode first: no check.
        adaptive("0.5.23", 4)
            .arg("--speculative-eagle-topk", json!(2))
            .no(),
        adaptive("0.5.23", 4)
            .flag("--enable-two-batch-overlap")
            .no(),
        adaptive("0.5.23", 4)
            .model(model("MiMoV2FlashForCausalLM"))
            .no(),
        // Its own candidates.
        adaptive("0.5.23", 4)
            .arg("--speculative-adaptive-config", json!("/etc/adaptive.json"))
            .no(),
        // Without the config the model's own hooks are not known.
        c("SPEC029")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .flag("--speculative-adaptive")
            .arg("--speculative-num-steps", json!(4))
            .no(),
    ]
}

/// A tree draft on the spec-v2 overlap worker of 0.5.5.post3–0.5.6.post2 (SPEC025).
fn spec025() -> Vec<Case> {
    let tree = |v| {
        c("SPEC025")
            .version(v)
            .on(H100)
            .tp(8)
            .model(model("GptOssForCausalLM"))
            .env("SGLANG_ENABLE_SPEC_V2", "1")
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .arg("--speculative-draft-model-path", json!("/draft"))
            .arg("--speculative-num-steps", json!(5))
            .arg("--speculative-eagle-topk", json!(4))
            .arg("--speculative-num-draft-tokens", json!(8))
    };
    let llama_auto = |v| {
        c("SPEC025")
            .version(v)
            .model(model("LlamaForCausalLM"))
            .env("SGLANG_ENABLE_SPEC_V2", "1")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-draft-model-path", json!("/draft"))
    };
    vec![
        tree("0.5.5.post3"),
        tree("0.5.6.post2"),
        // SGLang's own pick for Llama is a tree (5 steps, top-k 4, 8 draft tokens).
        llama_auto("0.5.6"),
        // Its own pick for DeepSeek-style MTP is a chain.
        c("SPEC025")
            .version("0.5.6")
            .model(model("DeepseekV3ForCausalLM"))
            .env("SGLANG_ENABLE_SPEC_V2", "1")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
        // The draft extend reads steps + 1 tokens: a top-k 2 tree of that size agrees.
        tree("0.5.6")
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(2))
            .arg("--speculative-num-draft-tokens", json!(4))
            .no(),
        // Spec v1 (no SGLANG_ENABLE_SPEC_V2) drafts trees.
        c("SPEC025")
            .version("0.5.6")
            .model(model("LlamaForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-draft-model-path", json!("/draft"))
            .no(),
        // The overlap scheduler off: the spec-v1 worker runs EAGLE3.
        tree("0.5.6").flag("--disable-overlap-schedule").no(),
        // Spec v2 turns it back on for EAGLE, whatever the command line says.
        tree("0.5.6")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .flag("--disable-overlap-schedule"),
        // 0.5.5.post2's draft extend is built otherwise; 0.5.7 refuses the line (SPEC005).
        tree("0.5.5.post2").no(),
        llama_auto("0.5.7").no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("SPEC", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

/// DSpark's set-up refusals (0.5.16+).
fn spec017() -> Vec<Case> {
    let v4 = |bundled: bool| ModelFacts {
        bundles_dspark_draft: bundled,
        ..model("DeepseekV4ForCausalLM")
    };
    let dspark = |v| {
        c("SPEC017")
            .version(v)
            .tp(8)
            .arg("--speculative-algorithm", json!("DSPARK"))
    };
    let dpa = |v| {
        dspark(v)
            .model(v4(true))
            .arg("--dp-size", json!(8))
            .flag("--enable-dp-attention")
    };
    vec![
        // No draft path: only a checkpoint with a bundled DSpark head gets one from SGLang.
        dspark("0.5.18").model(v4(false)),
        dspark("0.5.18").model(v4(true)).no(),
        dspark("0.5.18")
            .model(v4(false))
            .arg("--speculative-draft-model-path", json!("/drafts/dspark"))
            .no(),
        // The model is unknown: it may bundle one.
        dspark("0.5.18").no(),
        // Attention DP needs the DP LM head.
        dpa("0.5.16"),
        dpa("0.5.23").flag("--enable-dp-lm-head").no(),
        // ... and the built-in MoE all-to-all (megamoe from 0.5.18).
        dpa("0.5.23")
            .flag("--enable-dp-lm-head")
            .arg("--moe-a2a-backend", json!("deepep")),
        dpa("0.5.16")
            .flag("--enable-dp-lm-head")
            .arg("--moe-a2a-backend", json!("megamoe")),
        dpa("0.5.18")
            .flag("--enable-dp-lm-head")
            .arg("--moe-a2a-backend", json!("megamoe"))
            .no(),
        // Not DSpark.
        c("SPEC017")
            .version("0.5.18")
            .model(v4(false))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
        // The draft shares the target's all-to-all; no attention CP under attention DP.
        dpa("0.5.23")
            .flag("--enable-dp-lm-head")
            .arg("--speculative-moe-a2a-backend", json!("deepep")),
        dpa("0.5.23")
            .flag("--enable-dp-lm-head")
            .arg("--speculative-moe-a2a-backend", json!("none"))
            .no(),
        dpa("0.5.23")
            .arg("--dp-size", json!(4))
            .flag("--enable-dp-lm-head")
            .arg("--attn-cp-size", json!(2)),
        // The block size: positive, with one more draft token where those are given.
        dspark("0.5.23")
            .model(v4(true))
            .arg("--speculative-dspark-block-size", json!(0)),
        dspark("0.5.16")
            .model(v4(true))
            .arg("--speculative-dspark-block-size", json!(7))
            .arg("--speculative-num-draft-tokens", json!(4)),
        dspark("0.5.23")
            .model(v4(true))
            .arg("--speculative-dspark-block-size", json!(7))
            .arg("--speculative-num-draft-tokens", json!(8))
            .no(),
    ]
}

/// SPEC018: DeepSeek-V4's hook takes EAGLE with a top-k given as 1 (and DSPARK from 0.5.16).
fn spec018() -> Vec<Case> {
    let v4 = |v, algo| {
        c("SPEC018")
            .version(v)
            .tp(8)
            .model(model("DeepseekV4ForCausalLM"))
            .arg("--speculative-algorithm", json!(algo))
    };
    let chain = |case: Case| {
        case.arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(4))
    };
    vec![
        // SGLang's own top-k is filled in after the hook: unset is not 1.
        v4("0.5.23", "EAGLE"),
        v4("0.5.14", "EAGLE").arg("--speculative-eagle-topk", json!(4)),
        chain(v4("0.5.23", "EAGLE")).no(),
        // NEXTN and a lower-case spelling are judged before SGLang reads them as EAGLE.
        chain(v4("0.5.23", "NEXTN")),
        chain(v4("0.5.23", "eagle")),
        v4("0.5.23", "NGRAM"),
        // DSPARK from 0.5.16 (SPEC017 judges its draft).
        v4("0.5.18", "DSPARK").no(),
        // Before the model was served, and for other models.
        v4("0.5.11", "EAGLE").no(),
        c("SPEC018")
            .version("0.5.23")
            .tp(8)
            .model(model("DeepseekV3ForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .no(),
    ]
}

/// SPEC019: trtllm_mha with speculative decoding on 0.5.0rc0-0.5.0rc2; SGLang's own pick for
/// GPT-OSS on SM100 counts from 0.5.0rc2, where it comes before the check.
fn spec019() -> Vec<Case> {
    let gpt_oss = |v: &'static str| {
        c("SPEC019")
            .version(v)
            .on(B200)
            .tp(8)
            .model(model("GptOssForCausalLM"))
            .arg("--speculative-algorithm", json!("EAGLE"))
    };
    vec![
        gpt_oss("0.5.0rc2"),
        gpt_oss("0.5.0rc0").no(),
        gpt_oss("0.5.1").no(),
        gpt_oss("0.5.0rc2")
            .arg("--attention-backend", json!("triton"))
            .no(),
        c("SPEC019")
            .version("0.5.0rc0")
            .on(B200)
            .arg("--attention-backend", json!("trtllm_mha"))
            .arg("--speculative-algorithm", json!("EAGLE")),
    ]
}

/// FlashInfer MLA's draft backend and top-k (0.4.3.post3 on).
fn spec021() -> Vec<Case> {
    let eagle = |v, k: i64| {
        c("SPEC021")
            .version(v)
            .on(H100)
            .model(mla())
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(k))
            .arg("--speculative-num-draft-tokens", json!(8))
    };
    let fi = |v, k| eagle(v, k).arg("--attention-backend", json!("flashinfer"));
    vec![
        fi("0.5.10", 4),
        fi("0.5.23", 2),
        eagle("0.4.4.post1", 4).flag("--enable-flashinfer-mla"),
        eagle("0.4.3.post3", 1).flag("--enable-flashinfer-mla"),
        // The decode backend is the one the draft worker decodes with.
        eagle("0.5.10", 4).arg("--decode-attention-backend", json!("flashinfer")),
        fi("0.5.10", 1).no(),
        // SGLang's own pick on Hopper is fa3.
        eagle("0.5.10", 4).no(),
        eagle("0.4.4.post1", 4)
            .flag("--enable-flashinfer-mla")
            .flag("--disable-mla")
            .no(),
        fi("0.5.10", 4).model(model("LlamaForCausalLM")).no(),
        // One step: no multi-step draft backend from 0.5.3.post2.
        fi("0.5.10", 4)
            .arg("--speculative-num-steps", json!(1))
            .no(),
        fi("0.5.3", 4).arg("--speculative-num-steps", json!(1)),
        // flashmla's page size of 64 is refused earlier from 0.5.2 (SPEC004).
        eagle("0.5.1", 4).arg("--attention-backend", json!("flashmla")),
        eagle("0.5.10", 4)
            .arg("--attention-backend", json!("flashmla"))
            .no(),
        eagle("0.4.3.post2", 4).flag("--enable-flashinfer-mla").no(),
    ]
}
