//! ATTN: attention backends against the GPU, the model and the KV-cache dtype.

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;

use crate::support::{
    A100, B200, Case, H100, PRO, R4090, assert_cases, c, dsa, messages, mla, model, vlm, world,
};

/// Every ATTN case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [
        attn001_to_attn010(),
        attn011(),
        attn015(),
        attn016(),
        attn017(),
        attn018(),
        attn019(),
        attn020(),
        attn021(),
        attn022(),
        attn023(),
        attn024(),
        attn025(),
        attn026(),
        attn027(),
        attn028(),
        attn029(),
        attn030(),
    ]
    .concat()
}

/// Triton attention on an FP8 E4M3 KV cache below SM 8.9, where Triton has no E4M3 type.
fn attn030() -> Vec<Case> {
    let e4m3 = |on| {
        c("ATTN030")
            .on(on)
            .arg("--kv-cache-dtype", json!("fp8_e4m3"))
    };
    vec![
        e4m3(A100).arg("--attention-backend", json!("triton")),
        e4m3(A100).arg("--decode-attention-backend", json!("triton")),
        // E5M2 Triton has there; SM 8.9 and Hopper have E4M3.
        c("ATTN030")
            .on(A100)
            .arg("--kv-cache-dtype", json!("fp8_e5m2"))
            .arg("--attention-backend", json!("triton"))
            .no(),
        e4m3(R4090).arg("--attention-backend", json!("triton")).no(),
        e4m3(H100).arg("--attention-backend", json!("triton")).no(),
        e4m3(A100)
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
    ]
}

/// Gemma 4 decoding on FlashInfer's tensor-core path under CUDA graphs (0.5.11, 0.5.12): the
/// prefill kernel it runs has no configuration for 512-wide heads.
fn attn029() -> Vec<Case> {
    let gemma4 = |heads: u64, kv: u64| ModelFacts {
        num_attention_heads: Some(heads),
        num_key_value_heads: Some(kv),
        head_dim: Some(256),
        global_head_dim: Some(512),
        is_multimodal: true,
        ..model("Gemma4ForConditionalGeneration")
    };
    let fi = |v| {
        c("ATTN029")
            .version(v)
            .model(gemma4(32, 16))
            .arg("--attention-backend", json!("flashinfer"))
    };
    let fp8 = json!("fp8_e4m3");
    vec![
        fi("0.5.11").arg("--kv-cache-dtype", fp8.clone()),
        fi("0.5.12")
            .tp(4)
            .arg("--kv-cache-dtype", json!("fp8_e5m2")),
        fi("0.5.12").env("SGLANG_FLASHINFER_USE_TENSOR_CORE", "true"),
        // E2B's eight query heads share one KV head: tensor cores with a 16-bit cache too.
        fi("0.5.12").model(gemma4(8, 1)),
        c("ATTN029")
            .version("0.5.11")
            .model(gemma4(32, 16))
            .arg("--decode-attention-backend", json!("flashinfer"))
            .arg("--kv-cache-dtype", fp8.clone()),
        // The decode kernel (two query heads per KV head, 16-bit cache), graphs off, the
        // variable saying no, SGLang's own triton, or 0.5.13's refusal (ATTN019): quiet.
        fi("0.5.12").no(),
        fi("0.5.11")
            .arg("--kv-cache-dtype", fp8.clone())
            .arg("--disable-cuda-graph", json!(true))
            .no(),
        fi("0.5.11")
            .arg("--kv-cache-dtype", fp8.clone())
            .env("SGLANG_FLASHINFER_USE_TENSOR_CORE", "false")
            .no(),
        c("ATTN029")
            .version("0.5.11")
            .model(gemma4(32, 16))
            .arg("--kv-cache-dtype", fp8.clone())
            .no(),
        fi("0.5.13").arg("--kv-cache-dtype", fp8.clone()).no(),
        // Gemma 3's heads are narrow enough.
        c("ATTN029")
            .version("0.5.11")
            .model(model("Gemma3ForConditionalGeneration"))
            .arg("--attention-backend", json!("flashinfer"))
            .arg("--kv-cache-dtype", fp8)
            .no(),
    ]
}

/// The Triton backend under pipeline parallelism before 0.5.18: a stage starting further out
/// than it holds layers has no buffer for layer 0.
fn attn028() -> Vec<Case> {
    let layers = |n: u64| ModelFacts {
        num_hidden_layers: Some(n),
        ..model("Qwen3ForCausalLM")
    };
    let pp = |v: &'static str, n: i64| {
        c("ATTN028")
            .version(v)
            .model(layers(36))
            .arg("--pp-size", json!(n))
            .arg("--attention-backend", json!("triton"))
    };
    vec![
        pp("0.5.14", 4),
        pp("0.5.17", 3),
        pp("0.5.2", 4),
        pp("0.4.9", 3),
        // Two stages: the second's index wraps onto a buffer of the same shape.
        pp("0.5.14", 2).no(),
        pp("0.5.18", 4).no(),
        pp("0.5.14", 4)
            .arg("--attention-backend", json!("fa3"))
            .no(),
        c("ATTN028")
            .version("0.5.14")
            .model(layers(36))
            .arg("--pp-size", json!(4))
            .arg("--decode-attention-backend", json!("triton")),
        // SGLANG_PP_LAYER_PARTITION: a short stage after a long one fails; stages each holding
        // as many layers as come before them do not.
        pp("0.5.14", 3).env("SGLANG_PP_LAYER_PARTITION", "24,6,6"),
        pp("0.5.14", 3)
            .env("SGLANG_PP_LAYER_PARTITION", "6,12,18")
            .no(),
        // Sliding-window models take the head size another way.
        pp("0.5.14", 4)
            .model(ModelFacts {
                sliding_window: Some(4096),
                ..layers(36)
            })
            .no(),
        // Without the layer count the stages are not known.
        pp("0.5.14", 4).model(model("Qwen3ForCausalLM")).no(),
    ]
}

/// A backend for the other attention kind: MLA-only kernels on a model without MLA, MHA-only
/// ones on DeepSeek (0.4.10.post1+).
fn attn027() -> Vec<Case> {
    let llama = || c("ATTN027").on(B200).model(model("LlamaForCausalLM"));
    let deepseek = || c("ATTN027").on(B200).tp(8).model(mla());
    let backend = |v: &str| json!(v);
    let eagle3 = || {
        deepseek()
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .arg(
                "--speculative-draft-model-path",
                json!("/models/eagle3-head"),
            )
            .draft(model("LlamaForCausalLMEagle3"))
    };
    vec![
        llama().arg("--attention-backend", backend("trtllm_mla")),
        llama()
            .version("0.4.10.post2")
            .arg("--attention-backend", backend("trtllm_mla")),
        llama().arg("--attention-backend", backend("cutedsl_mla")),
        llama()
            .version("0.5.22")
            .arg("--attention-backend", backend("tokenspeed_mla"))
            .arg("--kv-cache-dtype", backend("fp8_e4m3")),
        // Decode alone on the MLA kernel is refused too.
        llama()
            .arg("--prefill-attention-backend", backend("flashinfer"))
            .arg("--decode-attention-backend", backend("trtllm_mla")),
        llama()
            .arg("--attention-backend", backend("trtllm_mha"))
            .no(),
        deepseek().arg("--attention-backend", backend("trtllm_mha")),
        deepseek()
            .on(H100)
            .arg("--attention-backend", backend("hpc_ops")),
        deepseek()
            .arg("--attention-backend", backend("trtllm_mla"))
            .no(),
        // SGLang's own pick for DeepSeek on Blackwell is its MLA kernel.
        deepseek().no(),
        // A model with a latent KV that not every release runs as MLA is left out.
        c("ATTN027")
            .on(B200)
            .model(ModelFacts {
                kv_lora_rank: Some(512),
                ..model("SomeNewForCausalLM")
            })
            .arg("--attention-backend", backend("trtllm_mha"))
            .no(),
        // An EAGLE3 head (no MLA) builds SGLang's pick for DeepSeek on Blackwell.
        eagle3(),
        eagle3().version("0.5.4.post3"),
        eagle3()
            .arg(
                "--speculative-draft-attention-backend",
                backend("flashinfer"),
            )
            .no(),
        eagle3().arg(
            "--speculative-draft-attention-backend",
            backend("trtllm_mla"),
        ),
        // Before 0.5.3.post2 each runner picked for its own model; a named backend is shared.
        eagle3().version("0.5.2").no(),
        eagle3()
            .version("0.5.2")
            .arg("--attention-backend", backend("trtllm_mla")),
        // A draft with MLA (DeepSeek's own MTP layers) takes the MLA kernel.
        eagle3().draft(mla()).no(),
        // Without the model's config nothing is known.
        c("ATTN027")
            .on(B200)
            .arg("--attention-backend", backend("trtllm_mla"))
            .no(),
    ]
}

/// ReplaySSM's decode backend, caches and servers (0.5.15+).
fn attn026() -> Vec<Case> {
    let replay = |m: &str| {
        c("ATTN026")
            .tp(4)
            .model(model(m))
            .flag("--enable-linear-replayssm")
    };
    let dense = || replay("LlamaForCausalLM");
    let next = || replay("Qwen3NextForCausalLM");
    vec![
        dense().no(),
        dense().version("0.5.15").no(),
        // `auto` resolves to the extra buffer with the overlap scheduler on.
        next(),
        next().version("0.5.15"),
        next()
            .arg("--mamba-radix-cache-strategy", json!("no_buffer"))
            .flag("--disable-overlap-schedule")
            .no(),
        next().flag("--disable-radix-cache").no(),
        dense().arg("--linear-attn-backend", json!("cutedsl")),
        dense().arg("--linear-attn-decode-backend", json!("flashinfer")),
        dense()
            .arg("--linear-attn-backend", json!("cutedsl"))
            .arg("--linear-attn-decode-backend", json!("triton"))
            .no(),
        // FlashKDA is prefill-only: decode stays on triton.
        dense().arg("--linear-attn-backend", json!("flashkda")).no(),
        // SGLang's FlashInfer decode default on SM100 for bfloat16 states.
        dense().on(B200).arg("--mamba-ssm-dtype", json!("bfloat16")),
        dense().arg("--mamba-ssm-dtype", json!("bfloat16")).no(),
        dense().arg("--disaggregation-mode", json!("decode")),
        // The strategy asked for counts on any model, read or not.
        dense().arg("--mamba-radix-cache-strategy", json!("extra_buffer")),
        c("ATTN026")
            .flag("--enable-linear-replayssm")
            .arg("--mamba-radix-cache-strategy", json!("extra_buffer")),
        dense()
            .arg("--mamba-radix-cache-strategy", json!("extra_buffer"))
            .flag("--disable-radix-cache")
            .no(),
        dense().arg("--linear-replayssm-cache-len", json!(0)),
        c("ATTN026").flag("--enable-linear-replayssm").no(),
    ]
}

/// Multi-item scoring on a backend other than FlashInfer (0.5.11+).
fn attn025() -> Vec<Case> {
    let mis = || {
        c("ATTN025")
            .model(model("LlamaForCausalLM"))
            .flag("--enable-mis")
    };
    vec![
        // fa3 is SGLang's pick on Hopper.
        mis(),
        mis().version("0.5.11"),
        mis().arg("--attention-backend", json!("flashinfer")).no(),
        mis()
            .arg("--attention-backend", json!("flashinfer"))
            .arg("--decode-attention-backend", json!("triton")),
        mis()
            .arg("--prefill-attention-backend", json!("flashinfer"))
            .arg("--decode-attention-backend", json!("flashinfer"))
            .no(),
        // FlashInfer is SGLang's pick on Ampere.
        mis().on(A100).no(),
        // An unread model: only the backends the line names count.
        c("ATTN025").flag("--enable-mis").no(),
        c("ATTN025")
            .flag("--enable-mis")
            .arg("--attention-backend", json!("triton")),
    ]
}

/// FlashInfer's GDN prefill on SM100 and later with torch built for CUDA 12 (0.5.13+).
fn attn024() -> Vec<Case> {
    let fi = |v, torch| {
        c("ATTN024")
            .version(v)
            .on(B200)
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg("--linear-attn-prefill-backend", json!("flashinfer"))
            .pkgs(&[("torch", torch)])
    };
    vec![
        fi("0.5.13", "2.9.1+cu128"),
        fi("0.5.23", "2.11.0+cu129"),
        fi("0.5.23", "2.11.0+cu128").on(PRO),
        fi("0.5.23", "2.11.0+cu130").no(),
        fi("0.5.23", "2.11.0+cu128").on(H100).no(),
        fi("0.5.12", "2.9.1+cu128").no(),
        // The shared option, unless prefill names its own.
        c("ATTN024")
            .on(B200)
            .arg("--linear-attn-backend", json!("flashinfer"))
            .pkgs(&[("torch", "2.11.0+cu128")]),
        c("ATTN024")
            .on(B200)
            .arg("--linear-attn-backend", json!("flashinfer"))
            .arg("--linear-attn-prefill-backend", json!("triton"))
            .pkgs(&[("torch", "2.11.0+cu128")])
            .no(),
        // An install nobody read: quiet.
        c("ATTN024")
            .on(B200)
            .arg("--linear-attn-prefill-backend", json!("flashinfer"))
            .no(),
    ]
}

/// FlashKDA named for decode (0.5.15+).
fn attn023() -> Vec<Case> {
    let kda = |v, option| {
        c("ATTN023")
            .version(v)
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg(option, json!("flashkda"))
    };
    vec![
        kda("0.5.15", "--linear-attn-decode-backend"),
        kda("0.5.23", "--linear-attn-decode-backend"),
        kda("0.5.23", "--linear-attn-decode-backend").on(B200),
        kda("0.5.23", "--linear-attn-decode-backend").model(model("LlamaForCausalLM")),
        // Inherited, decode falls back to triton.
        kda("0.5.23", "--linear-attn-backend").no(),
        kda("0.5.23", "--linear-attn-prefill-backend").no(),
    ]
}

/// FlashInfer's GDN decode (or verify) backend on SM100 and later without a bfloat16 state.
fn attn022() -> Vec<Case> {
    let fi = |v, option| {
        c("ATTN022")
            .version(v)
            .on(B200)
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg(option, json!("flashinfer"))
    };
    let decode = |v| fi(v, "--linear-attn-decode-backend");
    vec![
        decode("0.5.10.post1"),
        decode("0.5.14"),
        decode("0.5.23"),
        decode("0.5.23").on(PRO),
        // Hopper keeps a float32 state.
        decode("0.5.23").on(H100).no(),
        decode("0.5.23")
            .arg("--mamba-ssm-dtype", json!("bfloat16"))
            .no(),
        decode("0.5.23").arg("--mamba-ssm-dtype", json!("float32")),
        // The check is the backend's, whatever the model.
        decode("0.5.23").model(model("LlamaForCausalLM")),
        fi("0.5.14", "--linear-attn-backend"),
        fi("0.5.23", "--linear-attn-verify-backend"),
        // The verify backend follows the decode one, not the shared option.
        fi("0.5.23", "--linear-attn-backend")
            .arg("--linear-attn-decode-backend", json!("triton"))
            .no(),
    ]
}

/// The triton attention backend on hybrids whose branch asserts it away.
fn attn021() -> Vec<Case> {
    let triton = |arch: &str, v| {
        c("ATTN021")
            .version(v)
            .model(model(arch))
            .arg("--attention-backend", json!("triton"))
    };
    vec![
        triton("NemotronHForCausalLM", "0.5.6.post2").no(),
        triton("NemotronHForCausalLM", "0.5.7"),
        triton("NemotronHForCausalLM", "0.5.18"),
        triton("NemotronHForCausalLM", "0.5.19").no(),
        triton("NemotronHPuzzleForCausalLM", "0.5.12").no(),
        triton("NemotronHPuzzleForCausalLM", "0.5.15"),
        triton("Lfm2ForCausalLM", "0.5.8").no(),
        triton("Lfm2ForCausalLM", "0.5.9"),
        triton("Lfm2ForCausalLM", "0.5.23"),
        triton("Lfm2MoeForCausalLM", "0.5.16").no(),
        triton("Lfm2MoeForCausalLM", "0.5.17"),
        triton("Qwen3NextForCausalLM", "0.5.12").no(),
        c("ATTN021")
            .version("0.5.12")
            .model(model("Lfm2ForCausalLM"))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
    ]
}

/// DeepSeek sparse attention's DSA backends against the KV cache dtype in effect (0.5.17+).
fn attn020() -> Vec<Case> {
    let glm5 = || dsa("GlmMoeDsaForCausalLM");
    let tilelang = |v| {
        c("ATTN020")
            .version(v)
            .model(glm5())
            .arg("--dsa-prefill-backend", json!("tilelang"))
            .arg("--dsa-decode-backend", json!("tilelang"))
    };
    vec![
        // Blackwell's cache is FP8 by default; 0.5.22 adds a CUDA FP8 path for tilelang alone.
        tilelang("0.5.20").on(B200),
        tilelang("0.5.22").on(B200).no(),
        tilelang("0.5.20").on(H100).no(),
        tilelang("0.5.18")
            .on(H100)
            .arg("--kv-cache-dtype", json!("fp8_e4m3")),
        tilelang("0.5.23")
            .on(A100)
            .arg("--kv-cache-dtype", json!("fp8_e4m3")),
        tilelang("0.5.23").on(B200).arg("--dcp-size", json!(2)),
        c("ATTN020")
            .version("0.5.23")
            .on(B200)
            .model(glm5())
            .arg("--dsa-prefill-backend", json!("tilelang")),
        c("ATTN020")
            .version("0.5.20")
            .on(B200)
            .model(glm5())
            .arg("--dsa-decode-backend", json!("triton"))
            .arg("--kv-cache-dtype", json!("bfloat16")),
        // GLM-5 with an FP8 cache on SM12x takes FlashInfer's sparse MLA branch, unchecked.
        tilelang("0.5.20")
            .on(PRO)
            .arg("--kv-cache-dtype", json!("fp8_e4m3"))
            .no(),
        // A model without sparse attention never reaches the check.
        c("ATTN020")
            .version("0.5.20")
            .on(B200)
            .model(mla())
            .arg("--dsa-prefill-backend", json!("tilelang"))
            .no(),
    ]
}

/// Gemma 4: SGLang's own pick fills the main backend, then its assertion checks prefill and
/// decode (0.5.13+; the list grows in 0.5.18, 0.5.20 and 0.5.22).
fn attn019() -> Vec<Case> {
    let gemma4 = || ModelFacts {
        is_multimodal: true,
        ..model("Gemma4ForConditionalGeneration")
    };
    let line = |v| c("ATTN019").version(v).model(gemma4());
    vec![
        line("0.5.18").arg("--prefill-attention-backend", json!("flashinfer")),
        line("0.5.14").arg("--attention-backend", json!("fa3")),
        line("0.5.20")
            .on(B200)
            .arg("--attention-backend", json!("fa4")),
        line("0.5.23")
            .on(B200)
            .arg("--attention-backend", json!("fa4"))
            .no(),
        line("0.5.18")
            .on(B200)
            .arg("--decode-attention-backend", json!("trtllm_mha"))
            .no(),
        line("0.5.14")
            .arg("--attention-backend", json!("triton"))
            .no(),
        line("0.5.14").no(),
        // Before 0.5.13 there is no such assertion.
        line("0.5.12").arg("--attention-backend", json!("fa3")).no(),
        c("ATTN019")
            .version("0.5.18")
            .model(model("Gemma3ForConditionalGeneration"))
            .arg("--attention-backend", json!("fa3"))
            .no(),
    ]
}

/// trtllm_mha prefill on SM120 with an FP8 E4M3 KV cache (0.5.19+).
fn attn015() -> Vec<Case> {
    let on = |topo, v| c("ATTN015").version(v).on(topo).tp(1);
    let fp8 = json!("fp8_e4m3");
    vec![
        on(PRO, "0.5.21")
            .arg("--attention-backend", json!("trtllm_mha"))
            .arg("--kv-cache-dtype", fp8.clone()),
        on(PRO, "0.5.19")
            .arg("--prefill-attention-backend", json!("trtllm_mha"))
            .arg("--decode-attention-backend", json!("triton"))
            .arg("--kv-cache-dtype", fp8.clone()),
        on(PRO, "0.5.21")
            .arg("--attention-backend", json!("trtllm_mha"))
            .env("SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR", "0.5"),
        // Decode only, bf16 KV, or SM100: accepted.
        on(PRO, "0.5.21")
            .arg("--prefill-attention-backend", json!("triton"))
            .arg("--decode-attention-backend", json!("trtllm_mha"))
            .arg("--kv-cache-dtype", fp8.clone())
            .no(),
        on(PRO, "0.5.21")
            .arg("--attention-backend", json!("trtllm_mha"))
            .no(),
        on(B200, "0.5.21")
            .arg("--attention-backend", json!("trtllm_mha"))
            .arg("--kv-cache-dtype", fp8.clone())
            .no(),
        on(PRO, "0.5.21")
            .arg("--attention-backend", json!("trtllm_mha"))
            .env("SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR", "0")
            .no(),
        // Before 0.5.19 ATTN004 refuses trtllm_mha prefill on SM120 outright.
        on(PRO, "0.5.18")
            .arg("--attention-backend", json!("trtllm_mha"))
            .arg("--kv-cache-dtype", fp8)
            .no(),
    ]
}

/// An FP4 KV cache against the backends SGLang's KV4 check takes (0.5.7+).
fn attn016() -> Vec<Case> {
    let llama = || model("LlamaForCausalLM");
    let fp4 = |v| {
        c("ATTN016")
            .version(v)
            .model(llama())
            .arg("--kv-cache-dtype", json!("fp4_e2m1"))
    };
    let block16 = |v| {
        c("ATTN016")
            .version(v)
            .model(llama())
            .arg("--kv-cache-dtype", json!("fp4_mx_block16"))
    };
    vec![
        // SGLang's own fa3 pick on Hopper is not on the list.
        fp4("0.5.10.post1"),
        fp4("0.5.10.post1")
            .arg("--attention-backend", json!("triton"))
            .no(),
        // Before the check, and after it moved to nvfp4 / fp4_mx_block16.
        fp4("0.5.6.post2").no(),
        fp4("0.5.20").no(),
        block16("0.5.23"),
        block16("0.5.23")
            .arg("--attention-backend", json!("triton"))
            .no(),
        // Different prefill and decode backends only warn; the same one is checked.
        fp4("0.5.15")
            .arg("--prefill-attention-backend", json!("flashinfer"))
            .arg("--decode-attention-backend", json!("triton"))
            .no(),
        fp4("0.5.15")
            .arg("--prefill-attention-backend", json!("flashinfer"))
            .arg("--decode-attention-backend", json!("flashinfer")),
        // FA4 prefill: the decode backend comes from its own list.
        fp4("0.5.10.post1")
            .on(B200)
            .arg("--prefill-attention-backend", json!("fa4"))
            .arg("--decode-attention-backend", json!("flashinfer")),
        fp4("0.5.10.post1")
            .on(B200)
            .arg("--prefill-attention-backend", json!("fa4"))
            .arg("--decode-attention-backend", json!("triton"))
            .no(),
        // MLA: its own list, flashmla on it until 0.5.15.
        fp4("0.5.10.post1")
            .on(B200)
            .model(mla())
            .arg("--attention-backend", json!("triton")),
        fp4("0.5.10.post1")
            .on(B200)
            .model(mla())
            .arg("--attention-backend", json!("flashmla"))
            .no(),
        c("ATTN016")
            .version("0.5.19")
            .on(B200)
            .model(mla())
            .arg("--kv-cache-dtype", json!("fp4_mx_block16"))
            .arg("--attention-backend", json!("flashmla")),
        // nvfp4: checked until 0.5.20; from 0.5.21 SGLang sets its backends itself.
        c("ATTN016")
            .version("0.5.20")
            .on(B200)
            .model(llama())
            .arg("--kv-cache-dtype", json!("nvfp4"))
            .arg("--attention-backend", json!("flashinfer")),
        c("ATTN016")
            .version("0.5.21")
            .on(B200)
            .model(llama())
            .arg("--kv-cache-dtype", json!("nvfp4"))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        // Unknown model: MLA or not is unknown.
        c("ATTN016")
            .version("0.5.10.post1")
            .arg("--kv-cache-dtype", json!("fp4_e2m1"))
            .no(),
    ]
}

/// NVFP4's own attention path (0.5.21+): the backends SGLang sets, and what its SM100 native
/// layout refuses.
fn attn017() -> Vec<Case> {
    let nv = |v, topo| {
        c("ATTN017")
            .version(v)
            .on(topo)
            .tp(1)
            .model(model("LlamaForCausalLM"))
            .arg("--kv-cache-dtype", json!("nvfp4"))
    };
    vec![
        nv("0.5.23", B200).arg("--attention-backend", json!("triton")),
        nv("0.5.20", B200)
            .arg("--attention-backend", json!("triton"))
            .no(),
        nv("0.5.23", B200).arg("--decode-attention-backend", json!("triton")),
        nv("0.5.23", B200).no(),
        nv("0.5.23", B200)
            .arg("--prefill-attention-backend", json!("flashinfer"))
            .no(),
        nv("0.5.23", B200)
            .arg("--prefill-kv-cache-dequant-dtype", json!("nvfp4"))
            .arg("--prefill-attention-backend", json!("flashinfer")),
        c("ATTN017")
            .on(B200)
            .arg("--kv-cache-dtype", json!("fp8_e4m3"))
            .arg("--prefill-kv-cache-dequant-dtype", json!("fp8_e4m3")),
        // A model's own backend is set first and counts as named: GPT-OSS on SM120 runs triton.
        nv("0.5.23", PRO).model(model("GptOssForCausalLM")),
        nv("0.5.23", B200).model(model("GptOssForCausalLM")).no(),
        // Native NVFP4 prefill is SM100's; SM120 gets the FP8 workspace by default.
        nv("0.5.23", PRO).arg("--attention-backend", json!("trtllm_mha")),
        nv("0.5.23", PRO).no(),
        // The SM100 native layout: PD, host cache tiers, NGRAM breadth, other drafts.
        nv("0.5.21", B200).arg("--disaggregation-mode", json!("prefill")),
        nv("0.5.23", PRO)
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
        nv("0.5.23", B200).flag("--enable-hierarchical-cache"),
        nv("0.5.23", B200).arg("--speculative-algorithm", json!("NGRAM")),
        nv("0.5.23", B200)
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg("--speculative-ngram-max-bfs-breadth", json!(1))
            .no(),
        nv("0.5.23", B200).arg("--speculative-algorithm", json!("STANDALONE")),
        // Off Blackwell CACHE007 says it first.
        nv("0.5.23", H100)
            .arg("--attention-backend", json!("triton"))
            .no(),
        c("ATTN017")
            .arg("--kv-cache-dtype", json!("fp4_mx_block16"))
            .arg("--attention-backend", json!("triton"))
            .flag("--enable-unified-memory"),
    ]
}

/// The page-major KV layout (implied by unified memory) with kernels that cannot read it.
fn attn018() -> Vec<Case> {
    let um = |v, topo| {
        c("ATTN018")
            .version(v)
            .on(topo)
            .tp(1)
            .model(model("LlamaForCausalLM"))
            .flag("--enable-unified-memory")
    };
    vec![
        // SGLang's own fa3 on H100: Triton only until 0.5.18, fa3 on the list from 0.5.19.
        um("0.5.16", H100),
        um("0.5.18", H100),
        um("0.5.19", H100).no(),
        um("0.5.16", H100)
            .arg("--attention-backend", json!("triton"))
            .no(),
        um("0.5.23", B200).arg("--attention-backend", json!("trtllm_mla")),
        um("0.5.23", B200)
            .arg("--attention-backend", json!("fa4"))
            .no(),
        // An MLA model: paged MLA backends under unified memory from 0.5.17, fa4 never.
        c("ATTN018")
            .version("0.5.18")
            .model(mla())
            .flag("--enable-unified-memory")
            .no(),
        c("ATTN018")
            .version("0.5.16")
            .model(mla())
            .flag("--enable-unified-memory"),
        c("ATTN018")
            .version("0.5.23")
            .on(B200)
            .model(mla())
            .flag("--enable-unified-memory")
            .arg("--attention-backend", json!("fa4")),
        // Page-major alone: Triton only, then refused outright from 0.5.19.
        c("ATTN018")
            .version("0.5.18")
            .flag("--enable-page-major-kv-layout")
            .arg("--attention-backend", json!("triton"))
            .no(),
        c("ATTN018")
            .version("0.5.19")
            .flag("--enable-page-major-kv-layout")
            .arg("--attention-backend", json!("triton")),
        // Linear-attention and Mamba kernels.
        um("0.5.23", H100)
            .arg("--attention-backend", json!("triton"))
            .arg("--mamba-backend", json!("flashinfer")),
        um("0.5.16", H100)
            .arg("--attention-backend", json!("triton"))
            .arg("--linear-attn-decode-backend", json!("flashinfer")),
        um("0.5.18", H100)
            .arg("--attention-backend", json!("triton"))
            .arg("--linear-attn-decode-backend", json!("flashinfer"))
            .no(),
        um("0.5.18", H100)
            .arg("--attention-backend", json!("triton"))
            .arg("--linear-attn-prefill-backend", json!("flashinfer")),
        um("0.5.23", H100)
            .arg("--attention-backend", json!("triton"))
            .arg("--linear-attn-prefill-backend", json!("flashinfer"))
            .no(),
        // Without the layout nothing is checked.
        c("ATTN018")
            .version("0.5.16")
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
    ]
}

fn attn001_to_attn010() -> Vec<Case> {
    vec![
        c("ATTN001")
            .version("0.5.11")
            .on(PRO)
            .arg("--speculative-algorithm", json!("DFLASH"))
            .arg("--speculative-draft-attention-backend", json!("fa3")),
        // EAGLE's draft builds its FA3 backend directly, without the registry's check.
        c("ATTN001")
            .version("0.5.11")
            .on(PRO)
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-draft-attention-backend", json!("fa3"))
            .no(),
        c("ATTN001")
            .on(B200)
            .arg("--attention-backend", json!("fa3")),
        c("ATTN001")
            .on(PRO)
            .arg("--prefill-attention-backend", json!("fa3")),
        c("ATTN001").arg("--attention-backend", json!("fa3")).no(),
        // Swapped for triton before it is built; the decode backend is not swapped.
        c("ATTN001")
            .on(B200)
            .arg("--attention-backend", json!("fa3"))
            .arg("--kv-cache-dtype", json!("fp8_e5m2"))
            .no(),
        c("ATTN001")
            .on(B200)
            .arg("--decode-attention-backend", json!("fa3"))
            .arg("--kv-cache-dtype", json!("fp8_e5m2")),
        c("ATTN002")
            .on(A100)
            .arg("--attention-backend", json!("fa3"))
            .model(mla()),
        c("ATTN002")
            .on(A100)
            .arg("--attention-backend", json!("fa3"))
            .model(model("LlamaForCausalLM"))
            .no(),
        c("ATTN002")
            .version("0.4.5.post1")
            .on(A100)
            .arg("--attention-backend", json!("fa3"))
            .arg("--disable-mla", json!(true))
            .model(mla())
            .no(),
        c("ATTN003")
            .on(B200)
            .model(vlm())
            .arg("--mm-attention-backend", json!("fa3")),
        c("ATTN003")
            .model(vlm())
            .arg("--mm-attention-backend", json!("fa3"))
            .no(),
        // A text-only model never builds the vision attention that reads the option.
        c("ATTN003")
            .on(B200)
            .model(model("LlamaForCausalLM"))
            .arg("--mm-attention-backend", json!("fa3"))
            .no(),
        // SM12x counts as Blackwell from 0.5.4.post2 on.
        c("ATTN003")
            .version("0.5.3")
            .on(PRO)
            .model(vlm())
            .arg("--mm-attention-backend", json!("fa3"))
            .no(),
        c("ATTN003")
            .version("0.5.5")
            .on(PRO)
            .model(vlm())
            .arg("--mm-attention-backend", json!("fa3")),
        c("ATTN004")
            .version("0.5.10.post1")
            .arg("--attention-backend", json!("trtllm_mha")),
        c("ATTN004")
            .version("0.5.10.post1")
            .on(B200)
            .arg("--attention-backend", json!("trtllm_mha"))
            .no(),
        c("ATTN004")
            .arg("--attention-backend", json!("trtllm_mha"))
            .no(),
        // With another prefill backend the main trtllm_mha serves decode only: Hopper may
        // decode with it from 0.5.10, not before.
        c("ATTN004")
            .version("0.5.10.post1")
            .arg("--attention-backend", json!("trtllm_mha"))
            .arg("--prefill-attention-backend", json!("fa3"))
            .no(),
        c("ATTN004")
            .version("0.5.9")
            .arg("--attention-backend", json!("trtllm_mha"))
            .arg("--prefill-attention-backend", json!("fa3")),
        c("ATTN005").arg("--attention-backend", json!("trtllm_mla")),
        c("ATTN005")
            .on(B200)
            .arg("--attention-backend", json!("trtllm_mla"))
            .arg("--kv-cache-dtype", json!("fp8_e5m2")),
        c("ATTN005")
            .on(B200)
            .arg("--attention-backend", json!("trtllm_mla"))
            .no(),
        // The release's Blackwell gate: SM12x counts from 0.5.4.post2, not before.
        c("ATTN005")
            .version("0.5.4.post2")
            .on(PRO)
            .arg("--attention-backend", json!("trtllm_mla"))
            .no(),
        c("ATTN005")
            .version("0.5.4")
            .on(PRO)
            .arg("--attention-backend", json!("trtllm_mla")),
        c("ATTN006")
            .version("0.5.5")
            .on(B200)
            .arg("--attention-backend", json!("fa4")),
        c("ATTN006")
            .version("0.5.5")
            .on(B200)
            .arg("--prefill-attention-backend", json!("fa4"))
            .no(),
        c("ATTN007")
            .arg("--attention-backend", json!("fa3"))
            .arg("--kv-cache-dtype", json!("fp8_e5m2")),
        c("ATTN007")
            .arg("--attention-backend", json!("fa3"))
            .arg("--kv-cache-dtype", json!("fp8_e4m3"))
            .no(),
        c("ATTN007")
            .version("0.5.2")
            .arg("--attention-backend", json!("fa3"))
            .arg("--kv-cache-dtype", json!("fp8_e5m2")),
        c("ATTN007")
            .arg("--decode-attention-backend", json!("fa3"))
            .arg("--kv-cache-dtype", json!("fp8_e5m2")),
        c("ATTN008")
            .arg("--attention-backend", json!("flashmla"))
            .arg("--page-size", json!(16)),
        c("ATTN008")
            .arg("--attention-backend", json!("flashmla"))
            .arg("--page-size", json!(64))
            .no(),
        c("ATTN009")
            .model(model("GptOssForCausalLM"))
            .arg("--attention-backend", json!("flashinfer")),
        c("ATTN009")
            .model(model("GptOssForCausalLM"))
            .arg("--attention-backend", json!("triton"))
            .no(),
        // A prefill backend alone leaves decode unset (0.5.3.post1+); both named pass.
        c("ATTN009")
            .model(model("GptOssForCausalLM"))
            .arg("--prefill-attention-backend", json!("fa3")),
        c("ATTN009")
            .model(model("GptOssForCausalLM"))
            .arg("--prefill-attention-backend", json!("fa3"))
            .arg("--decode-attention-backend", json!("triton"))
            .no(),
        c("ATTN009")
            .version("0.5.3")
            .model(model("GptOssForCausalLM"))
            .arg("--prefill-attention-backend", json!("fa3"))
            .no(),
        // fa3 joins GPT-OSS's list in 0.5.0rc1; before 0.5.0rc0 no release serves GPT-OSS.
        c("ATTN009")
            .version("0.5.0rc0")
            .model(model("GptOssForCausalLM"))
            .arg("--attention-backend", json!("fa3")),
        c("ATTN009")
            .version("0.5.0rc1")
            .model(model("GptOssForCausalLM"))
            .arg("--attention-backend", json!("fa3"))
            .no(),
        c("ATTN009")
            .version("0.4.10.post2")
            .model(model("GptOssForCausalLM"))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        c("ATTN010").arg("--attention-backend", json!("torch_native")),
        c("ATTN010")
            .arg("--attention-backend", json!("torch_native"))
            .flag("--disable-cuda-graph")
            .no(),
    ]
}

fn attn011() -> Vec<Case> {
    let next = |v, on| {
        c("ATTN011")
            .version(v)
            .on(on)
            .model(model("Qwen3NextForCausalLM"))
    };
    vec![
        // No backend named: SGLang's own pick (tests/evidence/ATTN011.jsonl).
        next("0.5.5", B200),
        next("0.5.6", B200).no(),
        next("0.5.9", PRO),
        next("0.5.10.post1", PRO).no(),
        c("ATTN011")
            .version("0.5.5")
            .on(PRO)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--attention-backend", json!("flashinfer")),
        c("ATTN011")
            .version("0.5.6")
            .on(B200)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--attention-backend", json!("trtllm_mha"))
            .no(),
        // 0.5.4.post1 and older gate SM10x only.
        c("ATTN011")
            .version("0.5.4")
            .on(PRO)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        // 0.5.3.post1–0.5.5.post1 take triton only.
        c("ATTN011")
            .version("0.5.5")
            .on(B200)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--attention-backend", json!("trtllm_mha")),
        c("ATTN011")
            .version("0.5.5")
            .on(PRO)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--attention-backend", json!("triton"))
            .no(),
        // Llama 4: before 0.5.6 the assertion runs before SGLang picks a backend.
        c("ATTN012")
            .version("0.5.5")
            .model(model("Llama4ForConditionalGeneration")),
        c("ATTN012")
            .version("0.5.6")
            .model(model("Llama4ForConditionalGeneration"))
            .no(),
        c("ATTN012")
            .version("0.5.23")
            .model(model("Llama4ForConditionalGeneration"))
            .arg("--attention-backend", json!("flashinfer")),
        c("ATTN012")
            .version("0.5.1")
            .on(B200)
            .model(model("Llama4ForConditionalGeneration"))
            .arg("--attention-backend", json!("triton")),
        c("ATTN012")
            .version("0.5.5")
            .model(model("Llama4ForConditionalGeneration"))
            .arg("--attention-backend", json!("fa3"))
            .no(),
        // A dual-chunk model: any explicit backend but the dual-chunk one, until 0.5.20 drops it.
        c("ATTN014")
            .version("0.5.5")
            .model(dual_chunk())
            .arg("--attention-backend", json!("flashinfer")),
        c("ATTN014")
            .version("0.5.2")
            .model(dual_chunk())
            .arg("--attention-backend", json!("flashinfer")),
        c("ATTN014").version("0.5.4").model(dual_chunk()).no(),
        c("ATTN014")
            .version("0.4.10.post2")
            .model(dual_chunk())
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        c("ATTN014")
            .version("0.5.19")
            .model(dual_chunk())
            .arg("--attention-backend", json!("fa3")),
        c("ATTN014")
            .version("0.5.10")
            .model(dual_chunk())
            .arg("--attention-backend", json!("dual_chunk_flash_attn"))
            .no(),
        c("ATTN014").version("0.5.10").model(dual_chunk()),
        c("ATTN014")
            .version("0.5.10")
            .model(dual_chunk())
            .arg(
                "--prefill-attention-backend",
                json!("dual_chunk_flash_attn"),
            )
            .no(),
        c("ATTN014")
            .version("0.5.10")
            .model(model("Qwen2ForCausalLM"))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        c("ATTN014")
            .version("0.5.23")
            .model(dual_chunk())
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        // An RL on-policy target turns deterministic inference on.
        c("ATTN013")
            .arg("--rl-on-policy-target", json!("fsdp"))
            .arg("--attention-backend", json!("trtllm_mha")),
        c("ATTN013")
            .arg("--rl-on-policy-target", json!("fsdp"))
            .arg("--attention-backend", json!("fa3"))
            .no(),
        // Deterministic fa4 for absorbed-MLA models: SM100/SM110 only, from 0.5.18.
        c("ATTN013")
            .version("0.5.21")
            .on(H100)
            .model(mla())
            .flag("--enable-deterministic-inference")
            .arg("--attention-backend", json!("fa4")),
        c("ATTN013")
            .version("0.5.21")
            .on(B200)
            .model(mla())
            .flag("--enable-deterministic-inference")
            .arg("--attention-backend", json!("fa4"))
            .no(),
        c("ATTN013")
            .version("0.5.17")
            .on(H100)
            .model(mla())
            .flag("--enable-deterministic-inference")
            .arg("--attention-backend", json!("fa4"))
            .no(),
        // Deterministic inference: SGLang's own trtllm_mha pick on SM100 before 0.5.12.
        c("ATTN013")
            .version("0.5.8")
            .on(B200)
            .model(model("LlamaForCausalLM"))
            .flag("--enable-deterministic-inference"),
        // Without the model, SGLang's pick is not known.
        c("ATTN013")
            .version("0.5.8")
            .on(B200)
            .flag("--enable-deterministic-inference")
            .no(),
        // Before 0.5.4.post2 the check sees a model's own pick, not SGLang's generic one.
        c("ATTN013")
            .version("0.5.4")
            .on(B200)
            .tp(8)
            .model(model("DeepseekV3ForCausalLM"))
            .flag("--enable-deterministic-inference"),
        c("ATTN013")
            .version("0.5.4")
            .on(B200)
            .flag("--enable-deterministic-inference")
            .no(),
        c("ATTN013")
            .version("0.5.14")
            .on(B200)
            .flag("--enable-deterministic-inference")
            .no(),
        c("ATTN013")
            .version("0.5.10")
            .model(mla())
            .flag("--enable-deterministic-inference")
            .arg("--attention-backend", json!("flashinfer")),
        c("ATTN013")
            .version("0.5.23")
            .flag("--enable-deterministic-inference")
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        // 0.5.10 takes flashinfer on Blackwell; 0.5.17 not on SM10x, 0.5.21 again.
        c("ATTN011")
            .version("0.5.14")
            .on(B200)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        c("ATTN011")
            .version("0.5.17")
            .on(B200)
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg("--attention-backend", json!("flashinfer")),
        c("ATTN011")
            .version("0.5.23")
            .on(B200)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        // From 0.5.18 each role's backend counts; before, the main one only.
        c("ATTN011")
            .version("0.5.23")
            .on(PRO)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--attention-backend", json!("triton"))
            .arg("--decode-attention-backend", json!("fa4")),
        c("ATTN011")
            .version("0.5.14")
            .on(PRO)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--attention-backend", json!("triton"))
            .arg("--decode-attention-backend", json!("fa4"))
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("ATTN", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

#[test]
fn attn007_says_triton_only_where_sglang_swaps() {
    let m = |case: Case| world(&case).hits("ATTN007")[0].message.clone();
    let swapped = m(c("ATTN007")
        .arg("--attention-backend", json!("fa3"))
        .arg("--kv-cache-dtype", json!("fp8_e5m2")));
    assert!(
        swapped.contains("switches the attention backend to triton"),
        "{swapped}"
    );
    // The model runner made the same switch before ServerArgs did.
    let old = m(c("ATTN007")
        .version("0.5.2")
        .arg("--attention-backend", json!("fa3"))
        .arg("--kv-cache-dtype", json!("fp8_e5m2")));
    assert!(
        old.contains("switches the attention backend to triton"),
        "{old}"
    );
    let decode = m(c("ATTN007")
        .arg("--decode-attention-backend", json!("fa3"))
        .arg("--kv-cache-dtype", json!("fp8_e5m2")));
    assert!(decode.contains("does not switch away from FA3"), "{decode}");
}

/// A Qwen2.5-1M checkpoint: config.json carries a `dual_chunk_attention_config`.
fn dual_chunk() -> ModelFacts {
    ModelFacts {
        dual_chunk_attention: true,
        ..model("Qwen2ForCausalLM")
    }
}
