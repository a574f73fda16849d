//! EP: expert parallelism and MoE all-to-all backends (DeepEP, FlashInfer, EPLB).

use serde_json::json;
use sglang_launch::facts::model::deepseek_v4::V4Layout;
use sglang_launch::facts::model::{DsaIndexSharing, ModelFacts};

use crate::support::{
    B200, Case, H100, PRO, R4090, assert_cases, c, host, messages, mla, model, moe, no_rdma, world,
};

/// FlashInfer's all-to-all over EP 8 on B200s, with the CuteDSL MoE runner.
fn cutedsl_a2a(code: &'static str, version: &'static str) -> Case {
    c(code)
        .version(version)
        .on(B200)
        .tp(8)
        .arg("--ep-size", json!(8))
        .arg("--moe-a2a-backend", json!("flashinfer"))
        .arg("--moe-runner-backend", json!("flashinfer_cutedsl"))
}

/// Every EP case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [
        ep001_to_ep010(),
        ep007_capture_list(),
        ep011(),
        ep015(),
        ep016(),
        ep017(),
        ep018(),
        ep019(),
        ep020(),
        ep021(),
        ep022(),
        ep023(),
        ep024(),
        ep025(),
        ep026(),
        ep027(),
        ep028(),
        ep029_to_ep031(),
        ep032(),
        ep033(),
        ep034(),
        ep035(),
        ep036(),
    ]
    .concat()
}

/// EP027: all-to-all backends SGLang has validated only for some architectures.
fn ep027() -> Vec<Case> {
    let a2a = |v: &'static str, backend: &'static str, arch: &str| {
        c("EP027")
            .version(v)
            .on(B200)
            .tp(8)
            .arg("--ep-size", json!(8))
            .arg("--moe-a2a-backend", json!(backend))
            .model(ModelFacts {
                architecture: Some(arch.into()),
                ..moe()
            })
    };
    vec![
        a2a("0.5.23", "deepep_v2", "GptOssForCausalLM"),
        a2a("0.5.19", "deepep_v2", "Qwen3_5MoeForConditionalGeneration"),
        a2a("0.5.21", "deepep_v2", "GlmMoeDsaForCausalLM"),
        a2a("0.5.22", "deepep_v2", "GlmMoeDsaForCausalLM").no(),
        a2a("0.5.23", "deepep_v2", "Qwen3MoeForCausalLM").no(),
        a2a("0.5.18", "deepep_v2", "GptOssForCausalLM").no(),
        a2a("0.5.23", "deepep_v2", "GptOssForCausalLM")
            .env("SGLANG_EXTERNAL_MODEL_PACKAGE", "my_models")
            .no(),
        a2a("0.5.23", "flashinfer_megamoe", "Glm4MoeLiteForCausalLM"),
        a2a("0.5.20", "flashinfer_megamoe", "GlmMoeDsaForCausalLM"),
        a2a("0.5.21", "flashinfer_megamoe", "GlmMoeDsaForCausalLM").no(),
        a2a(
            "0.5.22",
            "flashinfer_megamoe",
            "KimiK3ForConditionalGeneration",
        ),
        a2a(
            "0.5.23",
            "flashinfer_megamoe",
            "KimiK3ForConditionalGeneration",
        )
        .no(),
        a2a("0.5.23", "deepep", "GptOssForCausalLM").no(),
    ]
}

/// EP028: DeepEP v2's per-rank dispatch buffer.
fn ep028() -> Vec<Case> {
    const VAR: &str = "SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK";
    let v2 = |v: &'static str| {
        c("EP028")
            .version(v)
            .on(H100)
            .tp(8)
            .arg("--ep-size", json!(8))
            .arg("--moe-a2a-backend", json!("deepep_v2"))
            .model(moe())
    };
    vec![
        v2("0.5.23"),
        v2("0.5.19"),
        v2("0.5.21").env(VAR, "1024"),
        v2("0.5.22").env(VAR, "1024").no(),
        v2("0.5.23").env(VAR, "16384").no(),
        v2("0.5.23")
            .env(VAR, "256")
            .arg("--chunked-prefill-size", json!(256)),
        v2("0.5.23")
            .env(VAR, "256")
            .arg("--chunked-prefill-size", json!(256))
            .flag("--disable-cuda-graph")
            .no(),
        v2("0.5.23")
            .env(VAR, "256")
            .arg("--chunked-prefill-size", json!(256))
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
        v2("0.5.18").no(),
        v2("0.5.23").env(VAR, "not a number").no(),
    ]
}

/// EP029 to EP031: what DeepEP v2, PPLX and FlashInfer MegaMOE refuse.
fn ep029_to_ep031() -> Vec<Case> {
    let a2a = |code: &'static str, v: &'static str, backend: &'static str| {
        c(code)
            .version(v)
            .on(H100)
            .tp(8)
            .arg("--ep-size", json!(8))
            .arg("--moe-a2a-backend", json!(backend))
            .env("SGLANG_DEEPEP_V2_NUM_MAX_DISPATCH_TOKENS_PER_RANK", "65536")
            .model(moe())
    };
    let v2 = |v: &'static str| a2a("EP029", v, "deepep_v2");
    let dpa = |case: Case| {
        case.flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
    };
    let pplx = |v: &'static str| {
        dpa(a2a("EP030", v, "pplx")).env("SGLANG_PPLX_NUM_MAX_DISPATCH_TOKENS_PER_RANK", "65536")
    };
    let megamoe = |v: &'static str| dpa(a2a("EP031", v, "flashinfer_megamoe").on(B200));
    vec![
        v2("0.5.23").arg("--moe-runner-backend", json!("triton")),
        v2("0.5.23")
            .arg("--moe-runner-backend", json!("deep_gemm"))
            .no(),
        v2("0.5.19").flag("--enforce-shared-experts-fusion"),
        v2("0.5.23")
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .arg("--speculative-draft-model-path", json!("draft")),
        v2("0.5.23")
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .arg("--speculative-draft-model-path", json!("draft"))
            .arg("--speculative-moe-a2a-backend", json!("none"))
            .no(),
        v2("0.5.23")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .no(),
        v2("0.5.18")
            .arg("--moe-runner-backend", json!("triton"))
            .no(),
        pplx("0.5.23").no(),
        pplx("0.5.17").arg("--deepep-mode", json!("normal")),
        pplx("0.5.23").arg("--moe-runner-backend", json!("triton")),
        a2a("EP030", "0.5.23", "pplx"),
        dpa(a2a("EP030", "0.5.23", "pplx")),
        a2a("EP030", "0.5.16", "pplx").no(),
        megamoe("0.5.23"),
        megamoe("0.5.20").arg("--quantization", json!("fp8")),
        megamoe("0.5.23").arg("--quantization", json!("mxfp8")).no(),
        megamoe("0.5.23")
            .model(ModelFacts {
                fp4_experts_marked: true,
                ..moe()
            })
            .no(),
        megamoe("0.5.23")
            .model(ModelFacts {
                architecture: Some("DeepseekV4ForCausalLM".into()),
                ..moe()
            })
            .no(),
        megamoe("0.5.19").no(),
        a2a("EP031", "0.5.23", "flashinfer_megamoe")
            .on(B200)
            .arg("--quantization", json!("mxfp8")),
    ]
}

/// EP022: Elastic EP's sizes.
fn ep022() -> Vec<Case> {
    let scale = |v: &'static str| {
        c("EP022")
            .version(v)
            .tp(4)
            .arg("--elastic-ep-backend", json!("mooncake"))
            .arg("--max-ep-size", json!(8))
    };
    let full = |v: &'static str| {
        scale(v)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(4))
            .flag("--enable-dp-lm-head")
            .arg("--moe-dense-tp-size", json!(1))
            .arg("--moe-a2a-backend", json!("nixl"))
    };
    vec![
        c("EP022").tp(4).arg("--elastic-ep-initial-size", json!(4)),
        c("EP022").tp(4).arg("--max-ep-size", json!(8)),
        full("0.5.23").no(),
        full("0.5.16").flag("--disable-cuda-graph").no(),
        // 0.5.16–0.5.20 recapture no graph after a scale.
        full("0.5.16"),
        full("0.5.21").no(),
        full("0.5.23").arg("--moe-a2a-backend", json!("none")),
        full("0.5.23").arg("--elastic-ep-backend", json!("nixl")),
        full("0.5.23").arg("--load-balance-method", json!("total_requests")),
        full("0.5.23")
            .arg("--load-balance-method", json!("round_robin"))
            .no(),
        // A PD prefill server routes by bootstrap room unless told otherwise.
        full("0.5.23").arg("--disaggregation-mode", json!("prefill")),
        full("0.5.23").arg("--elastic-ep-initial-size", json!(2)),
        full("0.5.23").arg("--pp-size", json!(2)),
        // 0.5.16–0.5.21 also want DP over the whole TP group.
        full("0.5.21").arg("--dp-size", json!(2)),
        full("0.5.23").arg("--dp-size", json!(2)).no(),
        full("0.5.23")
            .arg("--elastic-ep-initial-size", json!(4))
            .no(),
        full("0.5.23").arg("--tokenizer-worker-num", json!(2)),
        full("0.5.23").arg("--elastic-ep-scale-timeout", json!(0)),
        scale("0.5.16").flag("--enable-dp-lm-head"),
        scale("0.5.16")
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(4)),
        // A maximum no larger than TP sets up no scale-up.
        c("EP022")
            .tp(8)
            .arg("--elastic-ep-backend", json!("mooncake"))
            .arg("--max-ep-size", json!(8))
            .no(),
    ]
}

/// EP020: a per-rank replica pick without an all-to-all backend.
fn ep020() -> Vec<Case> {
    let pick = |v, algo| {
        c("EP020")
            .version(v)
            .tp(8)
            .arg("--ep-size", json!(8))
            .arg("--ep-dispatch-algorithm", json!(algo))
    };
    vec![
        pick("0.5.17", "static"),
        pick("0.5.23", "lp"),
        pick("0.5.23", "static").arg("--moe-a2a-backend", json!("none")),
        pick("0.5.23", "dynamic").no(),
        pick("0.5.23", "static")
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        // The megamoe runner brings its own all-to-all.
        pick("0.5.23", "static")
            .arg("--moe-runner-backend", json!("megamoe"))
            .no(),
        pick("0.5.16", "static").no(),
    ]
}

/// EP021: elastic EP's joining options.
fn ep021() -> Vec<Case> {
    let elastic = || {
        c("EP021")
            .version("0.5.23")
            .tp(8)
            .arg("--elastic-ep-backend", json!("mooncake"))
    };
    let joiner = || {
        elastic()
            .arg("--elastic-ep-join-mode", json!("scale"))
            .arg("--nnodes", json!(2))
            .arg("--node-rank", json!(1))
    };
    vec![
        c("EP021")
            .version("0.5.16")
            .arg("--elastic-ep-join-mode", json!("recover")),
        elastic().arg("--elastic-ep-join-mode", json!("scale")),
        joiner(),
        joiner().arg("--elastic-ep-join-rank-offset", json!(8)).no(),
        elastic()
            .arg("--elastic-ep-join-mode", json!("recover"))
            .no(),
        elastic().arg("--elastic-ep-join-rank-offset", json!(8)),
        c("EP021").version("0.5.23").arg("--max-ep-size", json!(16)),
        elastic().arg("--max-ep-size", json!(0)),
        elastic().arg("--max-ep-size", json!(16)).no(),
        elastic().no(),
    ]
}

/// An FP8 checkpoint of this model on the FlashInfer all-to-all, the runner left to SGLang.
fn fp8_a2a(m: ModelFacts) -> Case {
    c("EP001")
        .on(B200)
        .tp(8)
        .model(ModelFacts {
            quant_method: Some("fp8".into()),
            ..m
        })
        .arg("--moe-a2a-backend", json!("flashinfer"))
}

fn ep001_to_ep010() -> Vec<Case> {
    vec![
        c("EP001")
            .version("0.5.10.post1")
            .on(PRO)
            .tp(8)
            .arg("--moe-a2a-backend", json!("flashinfer")),
        c("EP001")
            .version("0.5.10.post1")
            .on(PRO)
            .tp(8)
            .arg("--moe-a2a-backend", json!("flashinfer"))
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        c("EP001")
            .tp(8)
            .arg("--moe-a2a-backend", json!("flashinfer"))
            .arg("--moe-runner-backend", json!("deep_gemm"))
            .no(),
        cutedsl_a2a("EP001", "0.5.13").no(),
        cutedsl_a2a("EP001", "0.5.12"),
        // 0.5.19+: a quantised checkpoint keeps `auto` unless its model picks a runner itself
        // (DeepSeek's own pick waits for no all-to-all); a model not read is not judged.
        fp8_a2a(mla()),
        fp8_a2a(model("Qwen3MoeForCausalLM")).no(),
        c("EP001")
            .on(B200)
            .tp(8)
            .arg("--quantization", json!("fp8"))
            .arg("--moe-a2a-backend", json!("flashinfer"))
            .no(),
        cutedsl_a2a("EP014", "0.5.16"),
        cutedsl_a2a("EP014", "0.5.16")
            .env("SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK", "2048")
            .no(),
        cutedsl_a2a("EP014", "0.5.16")
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        c("EP002")
            .tp(8)
            .arg("--moe-a2a-backend", json!("flashinfer")),
        c("EP002")
            .tp(8)
            .arg("--moe-a2a-backend", json!("flashinfer"))
            .arg("--attn-dp-size", json!(8))
            .no(),
        // The check is in 0.5.13's argument handling, not 0.5.12's.
        c("EP002")
            .version("0.5.13")
            .tp(8)
            .arg("--moe-a2a-backend", json!("flashinfer"))
            .arg("--moe-runner-backend", json!("flashinfer_cutlass")),
        c("EP002")
            .version("0.5.12")
            .tp(8)
            .arg("--moe-a2a-backend", json!("flashinfer"))
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        c("EP003")
            .on(R4090)
            .tp(2)
            .arg("--moe-a2a-backend", json!("deepep")),
        c("EP003")
            .tp(8)
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        c("EP004")
            .on(PRO)
            .tp(8)
            .arg("--moe-a2a-backend", json!("flashinfer")),
        c("EP004")
            .tp(8)
            .arg("--moe-a2a-backend", json!("flashinfer"))
            .no(),
        c("EP004").on(PRO).tp(8).no(),
        c("EP005").flag("--enable-two-batch-overlap"),
        c("EP005")
            .flag("--enable-two-batch-overlap")
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        c("EP006")
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--deepep-mode", json!("normal")),
        c("EP006")
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--deepep-mode", json!("auto"))
            .no(),
        // Before 0.4.6.post3 SGLang captures the graphs and fails: the fix turns them off.
        c("EP006")
            .version("0.4.6.post2")
            .flag("--enable-deepep-moe")
            .arg("--deepep-mode", json!("normal")),
        c("EP007")
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--cuda-graph-max-bs-decode", json!(256)),
        c("EP007")
            .model(moe())
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--cuda-graph-max-bs-decode", json!(256)),
        // A dense model dispatches nothing through DeepEP.
        c("EP007")
            .model(model("LlamaForCausalLM"))
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--cuda-graph-max-bs-decode", json!(256))
            .no(),
        c("EP007")
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--cuda-graph-max-bs-decode", json!(256))
            .env("SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK", "256")
            .no(),
        // A PD prefill server captures no decode graph (SGLang turns it off).
        c("EP007")
            .version("0.5.10")
            .model(moe())
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--cuda-graph-max-bs", json!(256))
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
        c("EP012")
            .version("0.4.9.post2")
            .tp(16)
            .arg("--nnodes", json!(2))
            .flag("--enable-eplb"),
        c("EP012")
            .version("0.4.9.post2")
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--ep-size", json!(16))
            .flag("--enable-eplb")
            .no(),
        c("EP008").tp(8).flag("--enable-eplb"),
        c("EP008")
            .tp(8)
            .flag("--enable-eplb")
            .arg("--ep-size", json!(8))
            .no(),
        // triton_kernel with EP is refused for GPT-OSS only; cutlass with EP under FP8 only.
        c("EP009")
            .tp(8)
            .model(model("GptOssForCausalLM"))
            .arg("--moe-runner-backend", json!("triton_kernel"))
            .arg("--ep-size", json!(8)),
        c("EP009")
            .tp(8)
            .model(moe())
            .arg("--moe-runner-backend", json!("triton_kernel"))
            .arg("--ep-size", json!(8))
            .no(),
        c("EP009")
            .tp(8)
            .arg("--moe-runner-backend", json!("cutlass"))
            .arg("--quantization", json!("fp8"))
            .arg("--ep-size", json!(8)),
        c("EP009")
            .tp(8)
            .arg("--moe-runner-backend", json!("cutlass"))
            .arg("--ep-size", json!(8))
            .no(),
        // The argument check sees the line's EP: DeepEP sets it to TP only afterwards.
        c("EP009")
            .tp(8)
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--moe-runner-backend", json!("cutlass"))
            .arg("--quantization", json!("fp8"))
            .no(),
        // No cutlass check before 0.5.4.post3.
        c("EP009")
            .version("0.5.4")
            .tp(8)
            .arg("--moe-runner-backend", json!("cutlass"))
            .arg("--quantization", json!("fp8"))
            .arg("--ep-size", json!(8))
            .no(),
        // GPT-OSS's MXFP4 checkpoint on B200: 0.5.4 replaces the named runner before it checks.
        c("EP009")
            .version("0.5.4")
            .on(B200)
            .tp(8)
            .model(gpt_oss_mxfp4())
            .arg("--moe-runner-backend", json!("triton_kernel"))
            .arg("--ep-size", json!(8))
            .no(),
        c("EP009")
            .tp(8)
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .arg("--ep-size", json!(4)),
        c("EP009")
            .tp(8)
            .arg("--moe-runner-backend", json!("triton_kernel"))
            .no(),
        // SGLang's own pick for GPT-OSS's MXFP4 checkpoint on SM120 in 0.5.10-0.5.13.post1 is
        // triton_kernel (Marlin from 0.5.14).
        c("EP009")
            .version("0.5.11")
            .on(PRO)
            .tp(4)
            .model(gpt_oss_mxfp4())
            .arg("--ep-size", json!(4)),
        c("EP009")
            .version("0.5.14")
            .on(PRO)
            .tp(4)
            .model(gpt_oss_mxfp4())
            .arg("--ep-size", json!(4))
            .no(),
        c("EP010")
            .tp(8)
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--ep-size", json!(4)),
        c("EP010")
            .tp(8)
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--ep-size", json!(8))
            .no(),
    ]
}

/// EP007 on the capture list SGLang makes itself, as each rank dispatches it.
fn ep007_capture_list() -> Vec<Case> {
    let h200 = |v| {
        c("EP007")
            .version(v)
            .on("8x-h200-nvlink")
            .tp(8)
            .model(moe())
    };
    let dpa = |v| {
        h200(v)
            .arg("--dp-size", json!(8))
            .flag("--enable-dp-attention")
    };
    vec![
        // To 512 on an H200 at TP 8, each DP-attention rank dispatching its whole batch.
        dpa("0.5.7")
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--deepep-mode", json!("low_latency")),
        // 0.4.6.post4 captures to 256 on GPUs over 96 GiB (an H20-141G PD decode server).
        dpa("0.4.6.post4")
            .flag("--enable-deepep-moe")
            .arg("--deepep-mode", json!("low_latency")),
        // Without DP attention the MoE layers run scattered: 512 over 8 TP ranks is 64 each.
        h200("0.5.6")
            .arg("--ep-size", json!(8))
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--deepep-mode", json!("auto"))
            .no(),
        // Two-batch overlap dispatches each half on its own: 192 is two of 96.
        dpa("0.5.7")
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--cuda-graph-max-bs", json!(192))
            .flag("--enable-two-batch-overlap")
            .no(),
    ]
}

fn ep011() -> Vec<Case> {
    vec![
        c("EP013")
            .tp(12)
            .arg("--nnodes", json!(3))
            .arg("--moe-a2a-backend", json!("deepep")),
        c("EP013")
            .tp(12)
            .arg("--nnodes", json!(3))
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--deepep-mode", json!("low_latency"))
            .no(),
        c("EP013")
            .tp(12)
            .arg("--nnodes", json!(3))
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--deepep-config", json!("/tuned/12.json"))
            .no(),
        c("EP013")
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        c("EP013").tp(12).arg("--nnodes", json!(3)).no(),
        // 0.5.17 runs the CuteDSL runner's DeepEP in low-latency mode under auto: no normal kernels.
        c("EP013")
            .version("0.5.17")
            .tp(12)
            .arg("--nnodes", json!(3))
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--moe-runner-backend", json!("flashinfer_cutedsl"))
            .no(),
        c("EP013")
            .version("0.5.16")
            .tp(12)
            .arg("--nnodes", json!(3))
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--moe-runner-backend", json!("flashinfer_cutedsl")),
        c("EP011")
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--moe-a2a-backend", json!("deepep"))
            .host(no_rdma()),
        c("EP011")
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--moe-a2a-backend", json!("deepep"))
            .host(host(true, None))
            .no(),
        c("EP011")
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("EP", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

#[test]
fn old_releases_spell_deepep_and_ep_as_flags() {
    // 0.5.2 has --enable-deepep-moe / --enable-ep-moe instead of --moe-a2a-backend / --ep-size.
    let w = world(
        &c("EP003")
            .version("0.5.2")
            .on(R4090)
            .tp(2)
            .flag("--enable-deepep-moe"),
    );
    assert_eq!(w.hits("EP003").len(), 1);
    let w = world(
        &c("EP009")
            .version("0.5.2")
            .tp(8)
            .model(model("GptOssForCausalLM"))
            .flag("--enable-ep-moe")
            .arg("--moe-runner-backend", json!("triton_kernel")),
    );
    assert_eq!(w.hits("EP009").len(), 1);
    let w = world(&c("ENV001").env("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"));
    assert!(
        w.hits("ENV001")[0]
            .message
            .contains("no upstream release reads it")
    );
}

fn gpt_oss_mxfp4() -> sglang_launch::facts::model::ModelFacts {
    sglang_launch::facts::model::ModelFacts {
        quant_method: Some("mxfp4".into()),
        architecture: Some("GptOssForCausalLM".into()),
        ..moe()
    }
}

/// EP015: EP MoE with a block-FP8 checkpoint before 0.4.3.post3.
fn ep015() -> Vec<Case> {
    let v3_fp8 = || ModelFacts {
        quant_method: Some("fp8".into()),
        weight_block_size: Some((128, 128)),
        num_experts: Some(256),
        ..mla()
    };
    let ep = |v| c("EP015").version(v).tp(8).flag("--enable-ep-moe");
    vec![
        // sglang#3075: DeepSeek-V3 on 0.4.1.post7.
        ep("0.4.1.post7").model(v3_fp8()),
        ep("0.4.3.post2").model(v3_fp8()),
        ep("0.4.3.post3").model(v3_fp8()).no(),
        ep("0.4.2").model(mla()).no(),
        c("EP015").version("0.4.2").tp(8).model(v3_fp8()).no(),
    ]
}

/// EP016: a FlashInfer TRT-LLM MoE runner with an all-to-all backend it has no fused function for.
fn ep016() -> Vec<Case> {
    let line = |v, q, runner, a2a| {
        c("EP016")
            .version(v)
            .tp(8)
            .arg("--ep-size", json!(8))
            .arg("--quantization", json!(q))
            .arg("--moe-runner-backend", json!(runner))
            .arg("--moe-a2a-backend", json!(a2a))
    };
    vec![
        // sglang#24502: MiniMax-M2.7 NVFP4 on 0.5.10.post1.
        line(
            "0.5.10.post1",
            "modelopt_fp4",
            "flashinfer_trtllm",
            "deepep",
        ),
        line("0.5.9", "fp8", "flashinfer_trtllm", "mooncake"),
        line("0.5.23", "fp8", "flashinfer_trtllm_routed", "deepep"),
        line("0.5.23", "modelopt_fp4", "flashinfer_trtllm", "nixl"),
        // The runners the releases pair with DeepEP, and the all-to-all they do pair with.
        line(
            "0.5.10.post1",
            "modelopt_fp4",
            "flashinfer_cutedsl",
            "deepep",
        )
        .no(),
        line("0.5.23", "fp8", "flashinfer_trtllm", "none").no(),
        line("0.5.8", "fp8", "flashinfer_trtllm", "deepep").no(),
        // sglang#37268: GLM-5.3 NVFP4 with Marlin and DeepEP on H100, 0.5.18.
        line("0.5.18", "modelopt_fp4", "marlin", "deepep").on(H100),
        line("0.5.12", "modelopt_fp4", "marlin", "deepep")
            .on(H100)
            .no(),
        // FP8's Marlin path has a runner core.
        line("0.5.18", "fp8", "marlin", "deepep").on(H100).no(),
        // No runner named: the NVFP4 method's own pick by GPU.
        line("0.5.18", "modelopt_fp4", "auto", "deepep").on(H100),
        line("0.5.11", "modelopt_fp4", "auto", "deepep").on(B200),
        line("0.5.12", "modelopt_fp4", "auto", "deepep")
            .on(H100)
            .no(),
        line("0.5.18", "modelopt_fp4", "auto", "deepep")
            .on(PRO)
            .no(),
        line("0.5.18", "modelopt_fp4", "auto", "none").on(H100).no(),
        // Mega MoE looks the pair up by its own name and has none for these runners.
        line("0.5.16", "modelopt_fp4", "auto", "megamoe").on(B200),
        line("0.5.23", "fp8", "flashinfer_trtllm", "megamoe"),
        line("0.5.16", "modelopt_fp4", "flashinfer_cutedsl", "megamoe")
            .on(B200)
            .no(),
        // NVIDIA's DeepSeek-V4 NVFP4 export: SGLang picks the routed TRT-LLM runner (0.5.14+).
        dsv4_nvfp4("0.5.16", "megamoe"),
        dsv4_nvfp4("0.5.23", "deepep"),
        dsv4_nvfp4("0.5.13", "deepep").no(),
        dsv4_nvfp4("0.5.16", "megamoe")
            .arg("--moe-runner-backend", json!("deep_gemm"))
            .no(),
        dsv4_nvfp4("0.5.16", "none").no(),
    ]
}

/// NVIDIA's DeepSeek-V4 NVFP4 export (NVFP4 experts in a block-FP8 config) over EP 4 on B200s,
/// no MoE runner named.
fn dsv4_nvfp4(v: &'static str, a2a: &'static str) -> Case {
    c("EP016")
        .version(v)
        .on(B200)
        .tp(4)
        .model(ModelFacts {
            architecture: Some("DeepseekV4ForCausalLM".into()),
            num_experts: Some(384),
            deepseek_v4: Some(V4Layout {
                nvfp4_experts: true,
                ..V4Layout::default()
            }),
            ..ModelFacts::default()
        })
        .arg("--ep-size", json!(4))
        .arg("--moe-a2a-backend", json!(a2a))
}

/// EP017: DeepSeek-V4's MXFP4 experts on the FlashInfer MXFP4 runner with an all-to-all backend.
fn ep017() -> Vec<Case> {
    let v4 = |mxfp4_experts, nvfp4_experts| ModelFacts {
        architecture: Some("DeepseekV4ForCausalLM".into()),
        deepseek_v4: Some(V4Layout {
            mxfp4_experts,
            nvfp4_experts,
            ..V4Layout::default()
        }),
        ..ModelFacts::default()
    };
    let line = |v, a2a| {
        c("EP017")
            .version(v)
            .on(B200)
            .tp(4)
            .model(v4(true, false))
            .arg("--ep-size", json!(4))
            .arg("--moe-runner-backend", json!("flashinfer_mxfp4"))
            .arg("--moe-a2a-backend", json!(a2a))
    };
    vec![
        line("0.5.14", "deepep"),
        line("0.5.23", "mooncake"),
        line("0.5.14", "none").no(),
        // SGLang reads the experts as FP8 when told so.
        line("0.5.14", "deepep")
            .env("SGLANG_DSV4_FP4_EXPERTS", "0")
            .no(),
        // NVIDIA's NVFP4 export takes another MoE method.
        line("0.5.14", "deepep").model(v4(false, true)).no(),
        c("EP017")
            .version("0.5.14")
            .on(B200)
            .tp(4)
            .model(v4(true, false))
            .arg("--ep-size", json!(4))
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
    ]
}

/// EP018: the CuteDSL MoE runner with DeepEP's normal dispatch.
fn ep018() -> Vec<Case> {
    let line = |v, q| {
        c("EP018")
            .version(v)
            .on(B200)
            .tp(4)
            .arg("--ep-size", json!(4))
            .arg("--quantization", json!(q))
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--moe-runner-backend", json!("flashinfer_cutedsl"))
    };
    let mode = |v, m| line(v, "modelopt_fp4").arg("--deepep-mode", json!(m));
    vec![
        // sglang#29521: DeepSeek-R1 NVFP4 under the default auto mode, 0.5.13.post1.
        line("0.5.13.post1", "modelopt_fp4"),
        mode("0.5.16", "normal"),
        mode("0.5.16", "low_latency").no(),
        // Only the NVFP4 method runs through the CuteDSL entry; a decode server never prefills.
        line("0.5.16", "fp8").no(),
        line("0.5.16", "modelopt_fp4")
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        line("0.5.12", "modelopt_fp4").no(),
        // 0.5.17 turns auto into low_latency itself and refuses a named normal, for any weights.
        line("0.5.17", "modelopt_fp4").no(),
        mode("0.5.17", "normal"),
        line("0.5.23", "fp8").arg("--deepep-mode", json!("normal")),
        mode("0.5.23", "low_latency").no(),
        c("EP018")
            .version("0.5.23")
            .on(B200)
            .tp(4)
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--moe-runner-backend", json!("deep_gemm"))
            .arg("--deepep-mode", json!("normal"))
            .no(),
    ]
}

/// EP019: the CuteDSL MoE runner with an all-to-all it has no entry for.
fn ep019() -> Vec<Case> {
    let a2a = |v, a| {
        c("EP019")
            .version(v)
            .on(B200)
            .tp(8)
            .arg("--ep-size", json!(8))
            .arg("--quantization", json!("modelopt_fp4"))
            .arg("--moe-runner-backend", json!("flashinfer_cutedsl"))
            .arg("--moe-a2a-backend", json!(a))
    };
    vec![
        a2a("0.5.23", "mooncake"),
        a2a("0.5.11", "mooncake"),
        a2a("0.5.23", "deepep").no(),
        a2a("0.5.23", "flashinfer").no(),
        a2a("0.5.23", "none").no(),
        a2a("0.5.10.post1", "mooncake").no(),
        // Per-token NVFP4 activations take no DeepEP from 0.5.18.
        a2a("0.5.18", "deepep").env("SGLANG_FLASHINFER_NVFP4_PER_TOKEN_ACTIVATION", "1"),
        a2a("0.5.17", "deepep")
            .env("SGLANG_FLASHINFER_NVFP4_PER_TOKEN_ACTIVATION", "1")
            .no(),
        a2a("0.5.23", "deepep")
            .env("SGLANG_FLASHINFER_NVFP4_PER_TOKEN_ACTIVATION", "0")
            .no(),
        a2a("0.5.23", "flashinfer")
            .env("SGLANG_FLASHINFER_NVFP4_PER_TOKEN_ACTIVATION", "1")
            .no(),
    ]
}

/// EP023: FlashInfer's all-to-all dispatch type.
fn ep023() -> Vec<Case> {
    let kind = |t: &'static str| c("EP023").arg("--flashinfer-a2a-dispatch-type", json!(t));
    let a2a = |t: &'static str| {
        kind(t)
            .on(B200)
            .tp(8)
            .arg("--attn-dp-size", json!(8))
            .arg("--moe-a2a-backend", json!("flashinfer"))
    };
    let mxfp8 = || a2a("mxfp8").arg("--quantization", json!("mxfp8"));
    vec![
        kind("bf16").model(moe()),
        kind("auto").model(moe()).no(),
        a2a("bf16").model(moe()).no(),
        a2a("mxfp8").model(moe()),
        mxfp8().arg("--moe-runner-backend", json!("deep_gemm")),
        mxfp8().arg("--moe-runner-backend", json!("cutlass")),
        // SGLang moves runners outside its MXFP8 list to TensorRT-LLM, routed here.
        mxfp8()
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        mxfp8().no(),
        // The old switch, whatever its value.
        a2a("bf16")
            .model(moe())
            .env("SGLANG_MOE_NVFP4_DISPATCH", "0"),
        c("EP023")
            .model(moe())
            .env("SGLANG_MOE_NVFP4_DISPATCH", "1")
            .no(),
    ]
}

/// EP024: LoRA's MoE runners and the V2 LoRA backend (0.5.23).
fn ep024() -> Vec<Case> {
    let lora = || {
        c("EP024")
            .model(moe())
            .flag("--enable-lora")
            .arg("--lora-backend", json!("triton_v2"))
    };
    let runner = || lora().arg("--moe-runner-backend", json!("lora_triton"));
    vec![
        runner().no(),
        c("EP024")
            .model(moe())
            .arg("--moe-runner-backend", json!("lora_triton")),
        runner().arg("--lora-backend", json!("csgmv")),
        runner().arg("--ep-num-redundant-experts", json!(2)),
        runner().arg("--moe-a2a-backend", json!("deepep")),
        runner().flag("--enable-two-batch-overlap"),
        runner().env("SGLANG_EXPERIMENTAL_LORA_OPTI", "1"),
        runner().arg("--quantization", json!("fp8")).no(),
        runner().arg("--quantization", json!("modelopt_fp4")),
        runner()
            .arg("--moe-runner-backend", json!("lora_marlin"))
            .arg("--quantization", json!("modelopt_fp4"))
            .no(),
        runner().arg("--quantization", json!("awq")),
        // The V2 backend alone has the same mode limits.
        lora().tp(2).arg("--attn-dp-size", json!(2)),
        lora().no(),
        c("EP024")
            .model(moe())
            .arg("--speculative-algorithm", json!("NGRAM"))
            .arg("--speculative-moe-runner-backend", json!("lora_triton")),
    ]
}

/// EP025: expert remapping on Nemotron-H against its MoE runner (0.5.23).
fn ep025() -> Vec<Case> {
    let remap = |runner: &'static str| {
        c("EP025")
            .on(B200)
            .tp(4)
            .model(model("NemotronHForCausalLM"))
            .arg("--ep-size", json!(4))
            .arg("--ep-num-redundant-experts", json!(4))
            .arg("--moe-runner-backend", json!(runner))
    };
    vec![
        remap("flashinfer_trtllm"),
        remap("flashinfer_trtllm").version("0.5.22").no(),
        remap("flashinfer_trtllm_routed").no(),
        remap("auto").no(),
        remap("flashinfer_cutedsl").no(),
        remap("flashinfer_cutedsl").flag("--enable-eplb"),
        remap("flashinfer_cutedsl")
            .flag("--enable-eplb")
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        // Another model: no such hook.
        remap("flashinfer_trtllm")
            .model(model("Qwen3MoeForCausalLM"))
            .no(),
    ]
}

/// EP032: routed plus redundant experts spread evenly over the EP ranks, on a class that
/// publishes its expert placement.
fn ep032() -> Vec<Case> {
    let dsv4 = || ModelFacts {
        num_experts: Some(384),
        ..model("DeepseekV4ForCausalLM")
    };
    let ep8 = |v: &'static str, redundant: i64| {
        c("EP032")
            .version(v)
            .on(B200)
            .tp(8)
            .model(dsv4())
            .arg("--ep-size", json!(8))
            .arg("--ep-num-redundant-experts", json!(redundant))
    };
    vec![
        ep8("0.5.15", 4),
        ep8("0.5.23", 12),
        ep8("0.5.15", 8).no(),
        ep8("0.5.15", 0).no(),
        // Qwen3 MoE's 128 experts over three ranks, from the first release with the placement.
        c("EP032")
            .version("0.4.6.post5")
            .on(H100)
            .tp(3)
            .model(moe())
            .arg("--ep-size", json!(3)),
        // Before DeepSeek-V4 published its placement, and with elastic EP laying it out.
        ep8("0.5.11", 4).no(),
        ep8("0.5.23", 4)
            .arg("--elastic-ep-backend", json!("mooncake"))
            .arg("--elastic-ep-initial-size", json!(8))
            .no(),
        // No EP, or a class without a published placement.
        c("EP032")
            .version("0.5.15")
            .on(B200)
            .tp(8)
            .model(dsv4())
            .arg("--ep-num-redundant-experts", json!(4))
            .no(),
        ep8("0.5.15", 4)
            .model(ModelFacts {
                num_experts: Some(384),
                ..model("MixtralForCausalLM")
            })
            .no(),
    ]
}

/// EP026: what every elastic server is held to: EPLB's algorithm, one pipeline stage.
fn ep026() -> Vec<Case> {
    let elastic = |v: &'static str| {
        c("EP026")
            .version(v)
            .tp(4)
            .arg("--ep-size", json!(4))
            .arg("--elastic-ep-backend", json!("mooncake"))
    };
    let eplb = |v: &'static str, algo: &'static str| {
        elastic(v)
            .flag("--enable-eplb")
            .arg("--eplb-algorithm", json!(algo))
    };
    vec![
        eplb("0.5.23", "deepseek"),
        eplb("0.5.23", "auto").no(),
        eplb("0.5.23", "elasticity_aware_hierarchical").no(),
        eplb("0.5.9", "elasticity_aware_hierarchical"),
        elastic("0.5.23").arg("--pp-size", json!(2)),
        elastic("0.5.10").arg("--pp-size", json!(2)).no(),
        elastic("0.5.23").no(),
        // No elastic backend: EPLB picks as it likes.
        c("EP026")
            .tp(4)
            .arg("--ep-size", json!(4))
            .flag("--enable-eplb")
            .arg("--eplb-algorithm", json!("deepseek"))
            .no(),
    ]
}

/// EP033: Mega MoE's per-rank token buffer against a prefill chunk's share and the largest decode
/// graph.
fn ep033() -> Vec<Case> {
    const VAR: &str = "SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK";
    let dsv4 = || ModelFacts {
        num_experts: Some(256),
        ..model("DeepseekV4ForCausalLM")
    };
    let mega = |v: &'static str| {
        c("EP033")
            .version(v)
            .on(H100)
            .tp(8)
            .model(dsv4())
            .arg("--moe-a2a-backend", json!("megamoe"))
    };
    let chunk = |v: &'static str, n: i64| mega(v).arg("--chunked-prefill-size", json!(n));
    // A small prefill chunk, so only the decode graph's 512 tokens can outgrow the buffer.
    let graph512 = |v: &'static str, budget: &str| {
        chunk(v, 128)
            .env(VAR, budget)
            .arg("--cuda-graph-max-bs-decode", json!(512))
    };
    vec![
        // 0.5.17's 1024-token default is below any chunk without DP attention; 0.5.18 raised it.
        mega("0.5.17"),
        mega("0.5.23").no(),
        chunk("0.5.23", 16384),
        chunk("0.5.23", 16384).env(VAR, "16384").no(),
        chunk("0.5.23", 16384)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .no(),
        // 0.5.17–0.5.20 check the chunk before DP attention divides it among the ranks.
        chunk("0.5.20", 131072)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8)),
        chunk("0.5.21", 131072)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .no(),
        chunk("0.5.23", -1),
        chunk("0.5.23", 16384)
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        // 0.5.17 reads Mega MoE's own switch; 0.5.18 dropped it.
        c("EP033")
            .version("0.5.17")
            .on(H100)
            .tp(8)
            .model(dsv4())
            .env("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "1"),
        c("EP033")
            .version("0.5.18")
            .on(H100)
            .tp(8)
            .model(dsv4())
            .env("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "1")
            .no(),
        // From 0.5.21 the no-fallback MoE classes too, and the decode graph's tokens.
        chunk("0.5.23", 16384).model(moe()),
        chunk("0.5.20", 16384).model(moe()).no(),
        // 0.5.21 takes the graph's own 512; 0.5.23 cuts it at DeepSeek-V4's 256-request pool.
        graph512("0.5.21", "256"),
        graph512("0.5.23", "256").no(),
        graph512("0.5.23", "128"),
        graph512("0.5.20", "128").no(),
    ]
}

/// EP034: two-batch overlap on a DSA model whose layers share the indexer's top-k.
fn ep034() -> Vec<Case> {
    let glm = |sharing: DsaIndexSharing| ModelFacts {
        num_experts: Some(256),
        index_topk: Some(2048),
        dsa_index_sharing: sharing,
        ..model("GlmMoeDsaForCausalLM")
    };
    let every_fourth = || DsaIndexSharing {
        freq: Some(4),
        types_shared: true,
        ..DsaIndexSharing::default()
    };
    let types_only = || DsaIndexSharing {
        types_shared: true,
        ..DsaIndexSharing::default()
    };
    let tbo = |v: &'static str, m: ModelFacts| {
        c("EP034")
            .version(v)
            .on(H100)
            .tp(8)
            .model(m)
            .arg("--moe-a2a-backend", json!("deepep"))
            .flag("--enable-two-batch-overlap")
    };
    vec![
        tbo("0.5.13", glm(every_fourth())),
        tbo("0.5.23", glm(every_fourth())),
        tbo("0.5.12", glm(every_fourth())).no(),
        // `indexer_types` alone counts from 0.5.20.
        tbo("0.5.20", glm(types_only())),
        tbo("0.5.19", glm(types_only())).no(),
        // Every layer computing its own top-k, or no two-batch overlap.
        tbo("0.5.23", glm(DsaIndexSharing::default())).no(),
        c("EP034")
            .version("0.5.23")
            .on(H100)
            .tp(8)
            .model(glm(every_fourth()))
            .no(),
    ]
}

/// EP035: unquantized MoE layers on DeepEP's all-to-all with a runner its layer class has no
/// BF16 path for: a BF16 checkpoint's experts, or a DeepSeek NVFP4 checkpoint's BF16 NextN draft.
fn ep035() -> Vec<Case> {
    let bf16 = |v: &'static str| {
        c("EP035")
            .version(v)
            .tp(8)
            .model(moe())
            .arg("--ep-size", json!(8))
            .arg("--moe-a2a-backend", json!("deepep"))
    };
    let deep_gemm = |v: &'static str| bf16(v).arg("--moe-runner-backend", json!("deep_gemm"));
    let nvfp4 = || ModelFacts {
        num_experts: Some(256),
        num_nextn_predict_layers: Some(1),
        ..mla()
    };
    let draft = |v: &'static str| {
        c("EP035")
            .version(v)
            .on(B200)
            .tp(8)
            .model(nvfp4())
            .arg("--quantization", json!("modelopt_fp4"))
            .arg("--ep-size", json!(8))
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--moe-runner-backend", json!("flashinfer_cutedsl"))
            .arg("--speculative-algorithm", json!("EAGLE"))
    };
    vec![
        bf16("0.5.4.post2"),
        bf16("0.5.9"),
        bf16("0.5.23"),
        bf16("0.5.4.post1").no(),
        bf16("0.5.23").arg("--quantization", json!("fp8")).no(),
        bf16("0.5.23").arg("--moe-a2a-backend", json!("none")).no(),
        // The DeepGEMM runner's BF16 path: 0.5.13 on, with low-latency dispatch until 0.5.17.
        deep_gemm("0.5.12"),
        deep_gemm("0.5.13").no(),
        deep_gemm("0.5.15").arg("--deepep-mode", json!("normal")),
        deep_gemm("0.5.17")
            .arg("--deepep-mode", json!("normal"))
            .no(),
        bf16("0.5.12").env("SGLANG_DEEPEP_BF16_DISPATCH", "1").no(),
        bf16("0.5.11").env("SGLANG_DEEPEP_BF16_DISPATCH", "1"),
        // Mooncake, NIXL and pplx build the same class; only pplx's has the DeepGEMM BF16 path.
        bf16("0.5.15").arg("--moe-a2a-backend", json!("mooncake")),
        deep_gemm("0.5.15").arg("--moe-a2a-backend", json!("mooncake")),
        deep_gemm("0.5.21").arg("--moe-a2a-backend", json!("nixl")),
        bf16("0.5.17").arg("--moe-a2a-backend", json!("pplx")),
        deep_gemm("0.5.17")
            .arg("--moe-a2a-backend", json!("pplx"))
            .no(),
        // DeepEP v2's layers always take the modern path.
        bf16("0.5.21")
            .arg("--moe-a2a-backend", json!("deepep_v2"))
            .no(),
        // Qwen3-Next's and Qwen3.5's MoE blocks are Qwen2-MoE's.
        bf16("0.5.21").model(ModelFacts {
            num_experts: Some(512),
            ..model("Qwen3NextForCausalLM")
        }),
        bf16("0.5.21").model(ModelFacts {
            num_experts: Some(256),
            ..model("Qwen3_5MoeForConditionalGeneration")
        }),
        // GLM-5 is a DeepSeek-V2 subclass.
        bf16("0.5.21").model(ModelFacts {
            num_experts: Some(256),
            ..model("GlmMoeDsaForCausalLM")
        }),
        // A dense model has no experts to build.
        c("EP035")
            .tp(8)
            .model(model("Qwen3MoeForCausalLM"))
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        // The NVFP4 target runs on the CuTe DSL runner; its own NextN draft's BF16 experts do not.
        draft("0.5.15"),
        draft("0.5.10rc0"),
        draft("0.5.9").no(),
        draft("0.5.15")
            .arg("--speculative-moe-a2a-backend", json!("none"))
            .no(),
        draft("0.5.15")
            .arg("--moe-a2a-backend", json!("none"))
            .arg("--speculative-moe-a2a-backend", json!("deepep")),
        draft("0.5.15")
            .arg("--speculative-moe-runner-backend", json!("deep_gemm"))
            .no(),
        draft("0.5.12")
            .arg("--speculative-moe-runner-backend", json!("deep_gemm"))
            .env("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", "1")
            .no(),
        draft("0.5.12").arg("--speculative-moe-runner-backend", json!("deep_gemm")),
    ]
}

/// EP036: quantised experts on DeepEP's all-to-all whose method its layer class has no path
/// for, or whose path needs a runner (or JIT DeepGEMM) the line does not give.
fn ep036() -> Vec<Case> {
    let q = |v: &'static str, method: &str| {
        c("EP036")
            .version(v)
            .on(B200)
            .tp(8)
            .model(moe())
            .arg("--ep-size", json!(8))
            .arg("--moe-a2a-backend", json!("deepep"))
            .arg("--quantization", json!(method))
    };
    let on = |case: Case, runner: &str| case.arg("--moe-runner-backend", json!(runner));
    vec![
        q("0.5.15", "compressed-tensors"),
        q("0.5.4.post2", "awq"),
        q("0.5.4.post1", "compressed-tensors").no(),
        q("0.5.15", "compressed-tensors")
            .arg("--moe-a2a-backend", json!("none"))
            .no(),
        // Block FP8 runs through JIT DeepGEMM, unless the line turns it off.
        q("0.5.15", "fp8").no(),
        q("0.5.15", "fp8").env("SGLANG_ENABLE_JIT_DEEPGEMM", "0"),
        q("0.5.15", "w4afp8").no(),
        on(q("0.5.15", "modelopt_fp4"), "flashinfer_trtllm"),
        on(q("0.5.15", "modelopt_fp4"), "flashinfer_cutedsl").no(),
        on(q("0.5.15", "modelopt_mixed"), "flashinfer_cutedsl"),
        on(q("0.5.16", "modelopt_mixed"), "flashinfer_cutedsl").no(),
        on(q("0.5.16", "mxfp4"), "deep_gemm"),
        on(q("0.5.17", "mxfp4"), "deep_gemm").no(),
        q("0.5.15", "compressed-tensors").arg("--moe-a2a-backend", json!("mooncake")),
        on(q("0.5.21", "modelopt_fp4"), "flashinfer_cutedsl")
            .arg("--moe-a2a-backend", json!("nixl"))
            .no(),
    ]
}
