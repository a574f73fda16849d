//! AUTO: what SGLang chooses on its own after parsing, checked on the resolved server.

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;

use crate::support::{B200, Case, H100, assert_cases, b300, c, messages, mla, model};

/// InternVL: its vision tower asks SGLang for FA3 (0.4.8–0.5.5.post2).
fn internvl() -> ModelFacts {
    vl("InternVLChatModel")
}

/// DeepSeek-V3.2: MLA with the sparse-attention indexer.
fn dsa() -> ModelFacts {
    ModelFacts {
        index_topk: Some(2048),
        architecture: Some("DeepseekV32ForCausalLM".into()),
        ..mla()
    }
}

/// A vision-language model of this architecture.
fn vl(arch: &str) -> ModelFacts {
    ModelFacts {
        is_multimodal: true,
        ..model(arch)
    }
}

pub fn cases() -> Vec<Case> {
    let qwen35 = || vl("Qwen3_5MoeForConditionalGeneration");
    vec![
        // 0.5.10 to 0.5.12.post1 give SM 10.3 the FA4 tower; 0.5.13 picks triton_attn there.
        c("AUTO003")
            .version("0.5.12")
            .on(B200)
            .edit(b300)
            .model(qwen35()),
        c("AUTO003")
            .version("0.5.10")
            .on(B200)
            .edit(b300)
            .model(qwen35()),
        c("AUTO003")
            .version("0.5.13")
            .on(B200)
            .edit(b300)
            .model(qwen35())
            .no(),
        c("AUTO003").version("0.5.12").on(B200).model(qwen35()).no(),
        c("AUTO003")
            .version("0.5.12")
            .on(B200)
            .edit(b300)
            .model(qwen35())
            .arg("--mm-attention-backend", json!("triton_attn"))
            .no(),
        c("AUTO003")
            .version("0.5.12")
            .on(B200)
            .edit(b300)
            .model(model("Qwen3MoeForCausalLM"))
            .no(),
        c("AUTO001").version("0.5.5").on(B200).model(internvl()),
        // The user's own choice wins over the tower's request.
        c("AUTO001")
            .version("0.5.5")
            .on(B200)
            .model(internvl())
            .arg("--mm-attention-backend", json!("triton_attn"))
            .no(),
        c("AUTO001")
            .version("0.5.5")
            .on(H100)
            .model(internvl())
            .no(),
        // From 0.5.5.post3 the tower no longer asks for FA3: SGLang picks triton_attn on Blackwell.
        c("AUTO001")
            .version("0.5.5.post3")
            .on(B200)
            .model(internvl())
            .no(),
        c("AUTO001")
            .version("0.5.10.post1")
            .on(B200)
            .model(internvl())
            .no(),
        // Qwen3-VL's blocks pass flash_attention_3 from 0.5.3rc2 to 0.5.5.post2 (dense and MoE).
        c("AUTO001")
            .version("0.5.4")
            .on(B200)
            .model(vl("Qwen3VLForConditionalGeneration")),
        c("AUTO001")
            .version("0.5.5.post2")
            .on(B200)
            .model(vl("Qwen3VLMoeForConditionalGeneration")),
        c("AUTO001")
            .version("0.5.5.post3")
            .on(B200)
            .model(vl("Qwen3VLForConditionalGeneration"))
            .no(),
        // MiMo-V2's tower asks for FA3 again from 0.5.11 to 0.5.15.post1.
        c("AUTO001")
            .version("0.5.13")
            .on(B200)
            .model(vl("MiMoV2ForCausalLM")),
        c("AUTO001")
            .version("0.5.16")
            .on(B200)
            .model(vl("MiMoV2ForCausalLM"))
            .no(),
        c("AUTO002")
            .version("0.5.10.post1")
            .on(B200)
            .model(model("LlamaForCausalLM"))
            .arg("--page-size", json!(1)),
        c("AUTO002")
            .version("0.5.10.post1")
            .on(B200)
            .model(model("LlamaForCausalLM"))
            .arg("--page-size", json!(1))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        c("AUTO002")
            .version("0.5.10.post1")
            .on(H100)
            .model(model("LlamaForCausalLM"))
            .arg("--page-size", json!(1))
            .no(),
        // Before 0.5.7 SGLang chose FlashInfer for MHA models on SM100.
        c("AUTO002")
            .version("0.5.5")
            .on(B200)
            .model(model("LlamaForCausalLM"))
            .arg("--page-size", json!(1))
            .no(),
        // 0.5.3 sets a DSA model's fraction to 0.8 over the one given; 0.5.3.post1 keeps it.
        c("AUTO004")
            .version("0.5.3")
            .on(H100)
            .model(dsa())
            .arg("--mem-fraction-static", json!(0.85)),
        c("AUTO004")
            .version("0.5.3")
            .on(H100)
            .model(dsa())
            .arg("--mem-fraction-static", json!(0.8))
            .no(),
        c("AUTO004")
            .version("0.5.3.post1")
            .on(H100)
            .model(dsa())
            .arg("--mem-fraction-static", json!(0.85))
            .no(),
        c("AUTO004")
            .version("0.5.3")
            .on(H100)
            .model(mla())
            .arg("--mem-fraction-static", json!(0.85))
            .no(),
        // On SM100 the FP8 cache goes over the dtype given up to 0.5.4.post1.
        c("AUTO004")
            .version("0.5.4")
            .on(B200)
            .model(dsa())
            .arg("--kv-cache-dtype", json!("bf16")),
        c("AUTO004")
            .version("0.5.4")
            .on(H100)
            .model(dsa())
            .arg("--kv-cache-dtype", json!("bf16"))
            .no(),
        c("AUTO004")
            .version("0.5.4")
            .on(B200)
            .model(dsa())
            .arg("--kv-cache-dtype", json!("fp8_e4m3"))
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("AUTO", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}
