//! QUANT009: `--quantization` against the checkpoint's config.json `quant_method`, on real
//! checkpoints' configs (the pairs the evidence goldens record, and the working ones beside them).

use serde_json::json;
use sglang_launch::facts::model::{HfQuant, ModelFacts};

use crate::support::{Case, MI300X, c, checkpoint};

const AWQ: &str = "TheBloke__Llama-2-7B-AWQ";
const GPTQ: &str = "TheBloke__Llama-2-7B-GPTQ";
const CT: &str = "RedHatAI__Meta-Llama-3.1-8B-Instruct-FP8-dynamic";
const FP8: &str = "Qwen__Qwen3-32B-FP8";
const MIXED_HFQ: &str = "synthetic__Qwen3-30B-A3B-modelopt-mixed-hfq";

fn q(model: &str, method: &'static str) -> Case {
    c("QUANT009")
        .arg("--quantization", json!(method))
        .model(checkpoint(model))
}

/// A ModelOpt NVFP4 export in a Hugging Face cache snapshot, its quantisation in
/// `hf_quant_config.json`: 0.5.3.post1 on fetch that file from the Hub.
fn nvfp4_hub() -> ModelFacts {
    let local = checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4-hfq");
    ModelFacts {
        hf_quant: local.hf_quant.clone().map(|h| HfQuant { hub: true, ..h }),
        ..local
    }
}

/// A ModelOpt checkpoint whose config.json names `quant_method: modelopt`.
fn modelopt() -> ModelFacts {
    ModelFacts {
        config_quant_method: Some("modelopt".into()),
        ..checkpoint("Qwen__Qwen3-8B")
    }
}

/// A multimodal checkpoint whose `quantization_config` is its language model's (Kimi-K2.5's
/// compressed-tensors `text_config`).
fn nested_ct() -> ModelFacts {
    ModelFacts {
        config_quant_method: Some("compressed-tensors".into()),
        config_quant_nested: true,
        ..checkpoint("Qwen__Qwen3-8B")
    }
}

pub fn cases() -> Vec<Case> {
    vec![
        // SGLang copies the language model's quantization_config up from 0.4.4, then compares.
        c("QUANT009")
            .arg("--quantization", json!("fp8"))
            .model(nested_ct()),
        c("QUANT009")
            .version("0.4.3.post4")
            .arg("--quantization", json!("fp8"))
            .model(nested_ct())
            .pkgs(&[("torch", "2.5.1")])
            .no(),
        c("QUANT009")
            .version("0.4.4")
            .arg("--quantization", json!("fp8"))
            .model(nested_ct())
            .pkgs(&[("torch", "2.5.1")]),
        // A mixed-precision ModelOpt export keeping its quantisation in hf_quant_config.json:
        // w4afp8 to the model config before 0.5.15, which no other method matches.
        q(MIXED_HFQ, "fp8").version("0.5.9"),
        q(MIXED_HFQ, "w4afp8").version("0.5.9").no(),
        q(MIXED_HFQ, "fp8").version("0.5.15").no(),
        // An NVFP4 export's file on 0.5.3.post1 to 0.5.4: modelopt_fp4, refused against fp8 (the
        // packages show no vLLM whose methods could take the pair over), unless offline mode
        // (either variable) skips the Hub's copy.
        c("QUANT009")
            .version("0.5.4")
            .arg("--quantization", json!("fp8"))
            .model(nvfp4_hub())
            .pkgs(&[("torch", "2.8.0")]),
        c("QUANT009")
            .version("0.5.4")
            .arg("--quantization", json!("fp8"))
            .model(nvfp4_hub())
            .pkgs(&[("torch", "2.8.0")])
            .env("TRANSFORMERS_OFFLINE", "1")
            .no(),
        c("QUANT009")
            .version("0.5.4")
            .arg("--quantization", json!("fp8"))
            .model(nvfp4_hub())
            .pkgs(&[("torch", "2.8.0")])
            .env("HF_HUB_OFFLINE", "on")
            .no(),
        // Refused: no compatibility and no override takes the pair.
        q(AWQ, "gptq"),
        q(GPTQ, "awq"),
        q(FP8, "awq"),
        q(CT, "fp8"),
        q(AWQ, "gptq").version("0.5.5"),
        // Working: the checkpoint's own method, Marlin taking over, compatible pairs.
        q(AWQ, "awq").no(),
        q(AWQ, "awq_marlin").no(),
        q(AWQ, "marlin").no(),
        q(AWQ, "moe_wna16").no(),
        q(GPTQ, "gptq_marlin").no(),
        q(FP8, "fp8").no(),
        q(CT, "compressed-tensors").no(),
        q(CT, "w8a8_fp8").no(),
        // Online quantisation of a BF16 checkpoint: no quant_method to differ from.
        q("Qwen__Qwen3-8B", "fp8").no(),
        // quark_mxfp4 requantises any checkpoint (0.5.17 on).
        q(FP8, "quark_mxfp4").no(),
        // ModelOpt: the compatible methods. Before 0.5.10 another method is refused on NVIDIA
        // GPUs; on an AMD host Petit's override takes any method over (it returns one only in a
        // ROCm build). From 0.5.10 the method compared is parsed from quant_algo
        // (`modelopt_fp4`), which ModelOpt's own override takes over, whatever is given.
        c("QUANT009")
            .arg("--quantization", json!("modelopt_fp4"))
            .model(modelopt())
            .no(),
        c("QUANT009")
            .version("0.5.9")
            .arg("--quantization", json!("fp8"))
            .model(modelopt()),
        c("QUANT009")
            .version("0.5.9")
            .arg("--quantization", json!("fp8"))
            .model(modelopt())
            .on(MI300X)
            .no(),
        c("QUANT009")
            .version("0.5.10")
            .arg("--quantization", json!("fp8"))
            .model(modelopt())
            .no(),
        // Before 0.5.4.post2 vLLM's methods may take any pair over, unless vLLM is absent.
        q(AWQ, "gptq").version("0.5.3").no(),
        q(AWQ, "gptq")
            .version("0.5.3")
            .pkgs(&[("torch", "2.8.0+cu128")]),
        // Not an embedded release: unknown.
        q(AWQ, "gptq").version("0.5.24.dev1").no(),
        // QUANT017: the same pair where only vLLM's methods could take it over, the install not
        // known (or vLLM in it): a warning; vLLM known absent is QUANT009's error.
        c("QUANT017")
            .version("0.5.3")
            .arg("--quantization", json!("gptq"))
            .model(checkpoint(AWQ)),
        c("QUANT017")
            .version("0.5.3")
            .arg("--quantization", json!("gptq"))
            .model(checkpoint(AWQ))
            .pkgs(&[("torch", "2.8.0+cu128"), ("vllm", "0.10.1")]),
        c("QUANT017")
            .version("0.5.3")
            .arg("--quantization", json!("gptq"))
            .model(checkpoint(AWQ))
            .pkgs(&[("torch", "2.8.0+cu128")])
            .no(),
        c("QUANT017")
            .arg("--quantization", json!("gptq"))
            .model(checkpoint(AWQ))
            .no(),
        c("QUANT017")
            .version("0.5.3")
            .arg("--quantization", json!("awq_marlin"))
            .model(checkpoint(AWQ))
            .no(),
    ]
}
