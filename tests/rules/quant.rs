//! QUANT: quantisation methods against the GPU architecture.

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;

use crate::support::{A100, B200, Case, L4, PRO, assert_cases, c, messages, model, moe};

/// Every QUANT case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    vec![
        // 0.5.23 runs dense FP8 weight-only through Marlin on SM80 (QA regression).
        c("QUANT001")
            .on(A100)
            .arg("--quantization", json!("fp8"))
            .no(),
        c("QUANT001")
            .on(A100)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        // FP8 MoE experts have no Marlin path.
        c("QUANT001").on(A100).model(ModelFacts {
            quant_method: Some("fp8".into()),
            ..moe()
        }),
        // Methods that demand SM89 at load.
        c("QUANT001")
            .on(A100)
            .arg("--quantization", json!("w8a8_fp8")),
        c("QUANT001")
            .on(A100)
            .arg("--quantization", json!("modelopt_fp8")),
        // 0.5.5 needs vLLM's Marlin ops; 0.4.x has no automatic fallback.
        c("QUANT001")
            .version("0.5.5")
            .on(A100)
            .arg("--quantization", json!("fp8"))
            .pkgs(&[("torch", "2.8.0+cu128")]),
        c("QUANT001")
            .version("0.5.5")
            .on(A100)
            .arg("--quantization", json!("fp8"))
            .pkgs(&[("vllm", "0.10.1")])
            .no(),
        c("QUANT001")
            .version("0.4.10.post2")
            .on(A100)
            .arg("--quantization", json!("fp8")),
        c("QUANT001")
            .on(A100)
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "7.5".into())
            })
            .arg("--quantization", json!("fp8")),
        c("QUANT001")
            .on(L4)
            .arg("--quantization", json!("fp8"))
            .no(),
        c("QUANT002")
            .version("0.5.5")
            .arg("--quantization", json!("modelopt_fp4")),
        c("QUANT002")
            .version("0.5.5")
            .on(B200)
            .arg("--quantization", json!("modelopt_fp4"))
            .no(),
        c("QUANT003")
            .on(PRO)
            .arg("--quantization", json!("modelopt_fp4")),
        c("QUANT003")
            .on(B200)
            .arg("--quantization", json!("modelopt_fp4"))
            .no(),
        c("QUANT004")
            .version("0.5.2")
            .on(PRO)
            .arg("--quantization", json!("fp8")),
        c("QUANT004")
            .version("0.5.2")
            .arg("--quantization", json!("fp8"))
            .no(),
        c("QUANT005")
            .model(model("DeepseekV32ForCausalLM"))
            .arg("--kv-cache-dtype", json!("fp8_e5m2")),
        c("QUANT005")
            .model(model("DeepseekV32ForCausalLM"))
            .arg("--kv-cache-dtype", json!("fp8_e4m3"))
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("QUANT", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}
