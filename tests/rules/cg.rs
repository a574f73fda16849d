//! CG: CUDA graphs (batch sizes, torch.compile, padding).

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;

use crate::support::{B200, Case, L4, PRO, assert_cases, c, messages, model, moe, world};

/// Every CG case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    vec![
        // PCIe-only, model unknown: the measured class.
        c("CG001").on(PRO).tp(8),
        // NVLink H100/B200 with a model that leaves most of the GPU to KV: not worth a line (QA regression).
        c("CG001").tp(8).no(),
        c("CG001").on(B200).tp(8).no(),
        c("CG001")
            .tp(8)
            .model(ModelFacts {
                weight_bytes: Some(64 << 30),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        c("CG001")
            .on(PRO)
            .tp(8)
            .model(ModelFacts {
                weight_bytes: Some(64 << 30),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        // Weights fill ~half of each GPU: graphs are a material share of the KV left.
        c("CG001").tp(8).model(ModelFacts {
            weight_bytes: Some(300 << 30),
            ..model("Qwen3ForCausalLM")
        }),
        c("CG001").version("0.5.5").on(PRO).tp(8),
        c("CG001")
            .on(PRO)
            .tp(8)
            .arg("--cuda-graph-max-bs-decode", json!(128))
            .no(),
        c("CG001")
            .version("0.5.5")
            .on(PRO)
            .tp(8)
            .arg("--cuda-graph-max-bs", json!(128))
            .no(),
        c("CG001")
            .on(PRO)
            .tp(8)
            .arg("--max-running-requests", json!(64))
            .no(),
        c("CG001").on(L4).no(),
        c("CG002")
            .version("0.5.5")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .arg("--cuda-graph-max-bs", json!(512)),
        c("CG002")
            .version("0.5.5")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .arg("--cuda-graph-max-bs", json!(128))
            .no(),
        c("CG003").flag("--enable-torch-compile").model(moe()),
        c("CG003")
            .flag("--enable-torch-compile")
            .model(model("LlamaForCausalLM"))
            .no(),
        c("CG004")
            .flag("--disable-cuda-graph-padding")
            .flag("--enable-torch-compile"),
        c("CG004").flag("--disable-cuda-graph-padding").no(),
        // From 0.5.12 (tests/evidence/CG004.jsonl); 0.5.11 takes it.
        c("CG004")
            .version("0.5.12")
            .flag("--disable-cuda-graph-padding")
            .flag("--enable-torch-compile"),
        c("CG004")
            .version("0.5.11")
            .flag("--disable-cuda-graph-padding")
            .flag("--enable-torch-compile")
            .no(),
        c("CG005")
            .version("0.5.11")
            .arg("--lora-paths", json!(["a=/adapters/a"]))
            .flag("--enforce-piecewise-cuda-graph"),
        c("CG005")
            .version("0.5.13")
            .flag("--enable-lora")
            .flag("--enforce-piecewise-cuda-graph"),
        // Without the enforce flag SGLang turns piecewise graphs off for LoRA itself.
        c("CG005")
            .version("0.5.11")
            .arg("--lora-paths", json!(["a=/adapters/a"]))
            .no(),
        // 0.5.14's runners pass the LoRA ids.
        c("CG005")
            .version("0.5.14")
            .arg("--lora-paths", json!(["a=/adapters/a"]))
            .flag("--enforce-piecewise-cuda-graph")
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("CG", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

#[test]
fn cg001_quotes_the_pcie_measurement_only_on_pcie() {
    let big = ModelFacts {
        weight_bytes: Some(300 << 30),
        ..model("Qwen3ForCausalLM")
    };
    let nvlink = world(&c("CG001").tp(8).model(big)).hits("CG001");
    assert_eq!(nvlink.len(), 1);
    assert!(
        !nvlink[0].message.contains("RTX PRO"),
        "{}",
        nvlink[0].message
    );
    assert!(nvlink[0].message.contains("material share"));
    let pcie = world(&c("CG001").on(PRO).tp(8)).hits("CG001");
    assert_eq!(pcie.len(), 1);
    assert!(
        pcie[0].message.contains("one measurement"),
        "{}",
        pcie[0].message
    );
}
