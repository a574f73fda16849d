//! QUANT: quantisation methods against the GPU architecture.

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;
use sglang_launch::facts::model::deepseek_v4::V4Layout;
use sglang_launch::facts::model::quant::CompressedScheme;

use crate::support::{
    A100, B200, Case, H100, L4, MI300X, PRO, R4090, T4, V100, assert_cases, c, checkpoint,
    messages, model, moe,
};

const Q235: &str = "Qwen__Qwen3-235B-A22B-FP8";
const Q30: &str = "Qwen__Qwen3-30B-A3B-FP8";
/// A ModelOpt NVFP4 checkpoint whose quantisation sits in `hf_quant_config.json`.
const NVFP4_HFQ: &str = "synthetic__Qwen3-8B-modelopt-nvfp4-hfq";

/// Every QUANT case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [
        base(),
        block(),
        quant012(),
        quant013(),
        quant014(),
        quant015(),
        quant016(),
        compressed_int8(),
        rocm(),
        quant021(),
        quant022(),
        quant023(),
        plain_int4(),
        quant028(),
        quant029(),
        quant030(),
        quant031(),
        quant039(),
        quant040(),
        quant041(),
        quant042(),
        quant043(),
        quant044(),
        int_moe(),
        quant035(),
        quant036(),
        quant037(),
        quant038(),
        crate::quant_compat::cases(),
    ]
    .concat()
}

/// QUANT042: a GPTQ config without a key both GPTQ readers require, from 0.5.0rc2 to 0.5.19.
fn quant042() -> Vec<Case> {
    let no_desc_act = || checkpoint("synthetic__Llama-2-7B-GPTQ-no-desc-act");
    let line = |v: &'static str, topo| c("QUANT042").version(v).on(topo).tp(1).model(no_desc_act());
    vec![
        line("0.5.14", T4),
        line("0.5.0rc2", T4),
        line("0.5.19", A100).arg("--dtype", json!("float16")),
        line("0.5.19", A100).arg("--quantization", json!("gptq_marlin")),
        // Another method named reads other keys; 0.5.20 refuses the checkpoint earlier
        // (QUANT025); the releases before 0.5.0rc2 take GPTQ from vLLM.
        line("0.5.14", T4).arg("--quantization", json!("awq")).no(),
        line("0.5.20", T4).no(),
        line("0.4.10.post2", T4).no(),
        // A config with every key.
        c("QUANT042")
            .version("0.5.14")
            .on(T4)
            .tp(1)
            .model(checkpoint("synthetic__Llama-2-7B-GPTQ-asym"))
            .no(),
    ]
}

/// QUANT035: a dense block-FP8 checkpoint (Qwen3-32B-FP8, 128×128 blocks) below SM 8.9 from
/// 0.4.1 to 0.5.0rc2, where only Triton's block kernel serves it; QUANT007 leaves it alone there.
fn quant035() -> Vec<Case> {
    let q32 = || checkpoint("Qwen__Qwen3-32B-FP8");
    vec![
        c("QUANT035").version("0.4.7.post1").on(A100).model(q32()),
        c("QUANT035").version("0.4.1").on(A100).model(q32()),
        c("QUANT035").version("0.5.0rc2").on(A100).model(q32()),
        c("QUANT007")
            .version("0.4.7.post1")
            .on(A100)
            .model(q32())
            .no(),
        c("QUANT035").version("0.5.1").on(A100).model(q32()).no(),
        c("QUANT035")
            .version("0.4.0.post2")
            .on(A100)
            .model(q32())
            .no(),
        c("QUANT035")
            .version("0.4.7.post1")
            .on(L4)
            .model(q32())
            .no(),
        c("QUANT035")
            .version("0.4.7.post1")
            .on(A100)
            .model(checkpoint(Q30))
            .no(),
    ]
}

/// QUANT036: a ModelOpt export named in config.json before 0.5.1, whose ModelOpt readers take
/// only hf_quant_config.json's layout, whichever ModelOpt method is named.
fn quant036() -> Vec<Case> {
    let fp8 = || checkpoint("synthetic__Qwen3-8B-modelopt-fp8");
    let nvfp4 = || checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4");
    vec![
        c("QUANT036").version("0.4.9").model(fp8()),
        c("QUANT036").version("0.4.5.post3").model(fp8()),
        c("QUANT036")
            .version("0.5.0rc2")
            .on(B200)
            .model(nvfp4())
            .arg("--quantization", json!("modelopt_fp4")),
        c("QUANT036").version("0.5.1").model(fp8()).no(),
        c("QUANT036").version("0.4.1.post4").model(fp8()).no(),
        // The same export's hf_quant_config.json layout is the one these releases read.
        c("QUANT036")
            .version("0.4.9")
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-fp8-hfq"))
            .no(),
        // Another method named is QUANT009's refusal.
        c("QUANT036")
            .version("0.4.9")
            .model(fp8())
            .arg("--quantization", json!("fp8"))
            .no(),
    ]
}

/// QUANT038: a ModelOpt mixed-precision export in hf_quant_config.json before 0.4.9.post1,
/// whose ModelOpt readers take FP8 or NVFP4 only, whichever ModelOpt method is named.
fn quant038() -> Vec<Case> {
    let mixed = || checkpoint("synthetic__Qwen3-30B-A3B-modelopt-mixed-hfq");
    vec![
        c("QUANT038").version("0.4.9").model(mixed()),
        c("QUANT038").version("0.4.5.post3").on(B200).model(mixed()),
        c("QUANT038")
            .version("0.4.9")
            .on(B200)
            .model(mixed())
            .arg("--quantization", json!("modelopt_fp4")),
        c("QUANT038").version("0.4.9.post1").model(mixed()).no(),
        // An NVFP4 export is QUANT026's, from 0.4.8 read as NVFP4 by itself.
        c("QUANT038")
            .version("0.4.9")
            .on(B200)
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4-hfq"))
            .no(),
        // Another method named is QUANT009's refusal.
        c("QUANT038")
            .version("0.4.9")
            .model(mixed())
            .arg("--quantization", json!("fp8"))
            .no(),
    ]
}

/// QUANT037: the CUTLASS MoE runner on experts whose method cannot build it (FP8 off SM90/SM100,
/// SM120 from 0.5.10rc0, or not in blocks; ModelOpt NVFP4 on 0.5.11 to 0.5.14).
fn quant037() -> Vec<Case> {
    let cutlass = |c: Case| c.arg("--moe-runner-backend", json!("cutlass"));
    let nvfp4 = || checkpoint("synthetic__Qwen3-30B-A3B-modelopt-nvfp4");
    let fp4 = |c: Case| cutlass(c).arg("--quantization", json!("modelopt_fp4"));
    vec![
        cutlass(
            c("QUANT037")
                .version("0.5.12")
                .on(R4090)
                .model(checkpoint(Q30)),
        ),
        cutlass(
            c("QUANT037")
                .version("0.5.5")
                .on(A100)
                .model(checkpoint(Q30)),
        ),
        cutlass(
            c("QUANT037")
                .version("0.5.8")
                .on(PRO)
                .model(checkpoint(Q30)),
        ),
        cutlass(c("QUANT037").version("0.5.23").on(H100).model(moe()))
            .arg("--quantization", json!("fp8")),
        fp4(c("QUANT037").version("0.5.12").on(B200).model(nvfp4())),
        // Quiet where the method builds it, or before the asserts.
        cutlass(
            c("QUANT037")
                .version("0.5.23")
                .on(H100)
                .model(checkpoint(Q30)),
        )
        .no(),
        cutlass(
            c("QUANT037")
                .version("0.5.10.post1")
                .on(PRO)
                .model(checkpoint(Q30)),
        )
        .no(),
        cutlass(
            c("QUANT037")
                .version("0.5.4.post1")
                .on(R4090)
                .model(checkpoint(Q30)),
        )
        .no(),
        fp4(c("QUANT037").version("0.5.15").on(B200).model(nvfp4())).no(),
        fp4(c("QUANT037")
            .version("0.5.10.post1")
            .on(B200)
            .model(nvfp4()))
        .no(),
        // A dense FP8 model has no experts to build.
        cutlass(
            c("QUANT037")
                .version("0.5.12")
                .on(R4090)
                .model(checkpoint("Qwen__Qwen3-32B-FP8")),
        )
        .no(),
    ]
}

/// QUANT022 and QUANT032: an AWQ/GPTQ checkpoint's row-parallel input cut into shards that are
/// not whole groups (Llama-2-7B: intermediate 11008 is 86 groups of 128, so TP 4 gives 21.5
/// groups). SGLang's own AWQ and plain GPTQ methods refuse it (QUANT032); GPTQ's Marlin method
/// builds it, and releases before 0.5.0rc2 use vLLM's methods (QUANT022's warning).
fn quant022() -> Vec<Case> {
    let on = |code, model: &str, tp: i64| c(code).tp(tp).model(checkpoint(model));
    let awq = "TheBloke__Llama-2-7B-AWQ";
    let gptq = "TheBloke__Llama-2-7B-GPTQ";
    vec![
        // GPTQ on its Marlin method (an H100) builds the layer.
        on("QUANT022", gptq, 4),
        on("QUANT032", gptq, 4).no(),
        // AWQ is refused on every GPU, through its Marlin method too.
        on("QUANT032", awq, 4),
        on("QUANT022", awq, 4).no(),
        on("QUANT032", awq, 4).arg("--quantization", json!("awq_marlin")),
        on("QUANT032", awq, 4).on(T4),
        // Plain GPTQ: below 8.0, or named.
        on("QUANT032", gptq, 4).on(T4).version("0.5.5"),
        on("QUANT022", gptq, 4).on(T4).version("0.5.5").no(),
        on("QUANT032", gptq, 4)
            .arg("--quantization", json!("gptq"))
            .version("0.5.5"),
        // From 0.5.20 CUDA has no plain GPTQ: QUANT025 refuses the checkpoint first.
        on("QUANT032", gptq, 4).on(T4).no(),
        // Before 0.5.0rc2 the layers are vLLM's: a warning.
        on("QUANT022", awq, 4).version("0.4.10.post2"),
        on("QUANT032", awq, 4).version("0.4.10.post2").no(),
        on("QUANT032", awq, 2).no(),
        on("QUANT022", awq, 1).no(),
        on("QUANT022", gptq, 2).no(),
        // Another method named on the command line is QUANT009's finding, not this one.
        on("QUANT032", awq, 4)
            .arg("--quantization", json!("gptq"))
            .no(),
        on("QUANT022", awq, 4)
            .arg("--quantization", json!("gptq"))
            .no(),
        // An unquantised checkpoint has no groups.
        on("QUANT032", "Qwen__Qwen3-8B", 4).no(),
    ]
}

/// QUANT033 and QUANT034: AWQ and GPTQ MoE checkpoints (Qwen3-30B-A3B's experts, 768 wide, with
/// groups of 128). Plain GPTQ has no MoE method (QUANT033, 0.5.0rc2 to 0.5.19); the Marlin MoE
/// methods assert the MoE runner is `auto` (QUANT034, 0.5.7 on), except where AWQ hands experts
/// Marlin cannot take to the WNA16 method.
fn int_moe() -> Vec<Case> {
    let gptq = "synthetic__Qwen3-30B-A3B-GPTQ-Int4";
    let awq = "synthetic__Qwen3-30B-A3B-AWQ";
    let q33 = |m: &str| c("QUANT033").tp(1).model(checkpoint(m)).version("0.5.12");
    let q34 = |m: &str| c("QUANT034").tp(1).model(checkpoint(m));
    let q34_tp8 = |m: &str| c("QUANT034").tp(8).model(checkpoint(m));
    let triton = |c: Case| c.arg("--moe-runner-backend", json!("triton"));
    let on_b200 = |code, m: &str| c(code).tp(1).model(checkpoint(m)).on(B200);
    vec![
        // Plain GPTQ: below 8.0, or named.
        q33(gptq).on(T4),
        q33(gptq).arg("--quantization", json!("gptq")),
        q33(gptq)
            .arg("--quantization", json!("gptq"))
            .version("0.5.0rc2"),
        // GPTQ Marlin and moe_wna16 build the experts; 0.5.20 has no plain GPTQ (QUANT025).
        q33(gptq).no(),
        q33(gptq)
            .on(T4)
            .arg("--quantization", json!("moe_wna16"))
            .no(),
        q33(gptq).on(T4).version("0.5.20").no(),
        // A dense GPTQ model is QUANT032's business.
        q33("TheBloke__Llama-2-7B-GPTQ").on(T4).no(),
        // On SM100 SGLang names the Qwen MoE family's method itself (0.5.6 on): plain GPTQ.
        q33(gptq).on(B200),
        q33(gptq).on(B200).version("0.5.5").no(),
        q33(gptq)
            .on(B200)
            .arg("--quantization", json!("gptq_marlin"))
            .no(),
        // From 0.5.20 the copied gptq names no method at all (QUANT025).
        on_b200("QUANT025", gptq),
        on_b200("QUANT025", gptq).on(H100).no(),
        on_b200("QUANT025", gptq)
            .arg("--quantization", json!("gptq_marlin"))
            .no(),
        // The copied awq keeps plain AWQ, which takes float16 only (QUANT024).
        on_b200("QUANT024", awq).arg("--dtype", json!("bfloat16")),
        on_b200("QUANT024", awq)
            .arg("--dtype", json!("bfloat16"))
            .arg("--quantization", json!("awq_marlin"))
            .no(),
        on_b200("QUANT024", awq)
            .arg("--dtype", json!("bfloat16"))
            .version("0.5.5")
            .no(),
        // The Marlin MoE methods refuse any runner but auto, from 0.5.7.
        triton(q34(gptq)),
        triton(q34(awq)),
        triton(q34(awq)).version("0.5.7"),
        triton(q34(gptq)).arg("--quantization", json!("gptq_marlin")),
        triton(q34(gptq)).version("0.5.6").no(),
        q34(gptq).no(),
        q34(awq).arg("--moe-runner-backend", json!("auto")).no(),
        // WNA16 takes the experts: named, or AWQ's fallback at 96 wide per GPU (TP 8).
        triton(q34(awq))
            .arg("--quantization", json!("moe_wna16"))
            .no(),
        triton(q34_tp8(awq)).on(A100).no(),
        triton(q34_tp8(gptq)).on(A100),
        // Below 8.0 no Marlin method builds them, nor on SM100 where SGLang names the plain one.
        triton(q34(awq)).on(T4).no(),
        triton(q34(awq)).on(B200).no(),
        triton(q34(awq))
            .on(B200)
            .arg("--quantization", json!("awq_marlin")),
        // A dense AWQ model has no experts.
        triton(q34("TheBloke__Llama-2-7B-AWQ")).no(),
    ]
}

/// QUANT024: plain AWQ/GPTQ (named, or the checkpoint's below SM80) with a dtype other than
/// float16; QUANT025: a GPTQ checkpoint below SM80 from 0.5.20, which has no plain GPTQ.
fn plain_int4() -> Vec<Case> {
    let awq = || checkpoint("TheBloke__Llama-2-7B-AWQ");
    let gptq = || checkpoint("TheBloke__Llama-2-7B-GPTQ");
    let bf16 = || checkpoint("synthetic__Llama-2-7B-AWQ-bf16");
    let q24 = |m: ModelFacts| c("QUANT024").tp(1).model(m);
    vec![
        // Named: SGLang keeps the plain method over Marlin.
        q24(awq())
            .on(A100)
            .arg("--quantization", json!("awq"))
            .arg("--dtype", json!("bfloat16")),
        q24(awq()).on(A100).arg("--quantization", json!("awq")).no(),
        q24(bf16()).on(A100).arg("--quantization", json!("awq")),
        // Below SM80 the checkpoint's own method stays plain.
        q24(awq()).on(T4).arg("--dtype", json!("bfloat16")),
        q24(awq()).on(T4).arg("--dtype", json!("float32")),
        q24(bf16()).on(T4),
        q24(awq()).on(T4).no(),
        q24(bf16()).on(T4).arg("--dtype", json!("half")).no(),
        // On SM80+ Marlin takes the checkpoint, and bfloat16 with it.
        q24(bf16()).on(A100).no(),
        q24(awq()).on(A100).arg("--dtype", json!("bfloat16")).no(),
        q24(gptq())
            .version("0.5.19")
            .on(T4)
            .arg("--dtype", json!("bfloat16")),
        q24(gptq())
            .version("0.5.10.post1")
            .on(A100)
            .arg("--quantization", json!("gptq"))
            .arg("--dtype", json!("bfloat16")),
        // A GPTQ config Marlin does not take stays plain on any GPU.
        q24(checkpoint("synthetic__Llama-2-7B-GPTQ-asym"))
            .version("0.5.19")
            .on(A100)
            .arg("--dtype", json!("bfloat16")),
        q24(checkpoint("synthetic__Llama-2-7B-GPTQ-asym"))
            .version("0.5.19")
            .on(A100)
            .no(),
        // From 0.5.20 the GPTQ checkpoint below SM80 is QUANT025's.
        q24(gptq()).on(T4).arg("--dtype", json!("bfloat16")).no(),
        // Releases that load AWQ from vLLM.
        q24(bf16()).version("0.4.10.post2").on(T4).no(),
        c("QUANT025").on(T4).tp(1).model(gptq()),
        c("QUANT025").version("0.5.20").on(T4).tp(1).model(gptq()),
        c("QUANT025")
            .version("0.5.19")
            .on(T4)
            .tp(1)
            .model(gptq())
            .no(),
        c("QUANT025").on(A100).tp(1).model(gptq()).no(),
        // A config the Marlin method does not read is refused on any GPU.
        c("QUANT025")
            .on(A100)
            .tp(1)
            .model(checkpoint("synthetic__Llama-2-7B-GPTQ-asym")),
        c("QUANT025")
            .on(H100)
            .tp(1)
            .model(checkpoint("synthetic__Llama-2-7B-GPTQ-no-desc-act")),
        c("QUANT025")
            .version("0.5.19")
            .on(A100)
            .tp(1)
            .model(checkpoint("synthetic__Llama-2-7B-GPTQ-asym"))
            .no(),
        c("QUANT025").on(T4).tp(1).model(awq()).no(),
        // QUANT027: the 0.4.x releases load AWQ and GPTQ from vLLM.
        q27("0.4.9").model(awq()),
        q27("0.4.5.post3").model(gptq()),
        q27("0.4.10.post2").arg("--quantization", json!("gptq_marlin")),
        q27("0.4.9")
            .model(awq())
            .pkgs(&[("sglang", "0.4.9"), ("vllm", "0.9.0.1")])
            .no(),
        q27("0.5.0rc2").model(awq()).no(),
        q27("0.4.5.post2").model(awq()).no(),
        q27("0.4.9").model(checkpoint(Q30)).no(),
        // An install not read says nothing about vLLM.
        c("QUANT027").version("0.4.9").model(awq()).no(),
    ]
}

/// QUANT027's case on `v` with the install read (SGLang `v`, no vLLM).
fn q27(v: &'static str) -> Case {
    c("QUANT027").version(v).tp(1).pkgs(&[("sglang", v)])
}

/// QUANT028: compressed-tensors schemes built from vLLM's kernels (0.4.5.post3 to 0.5.3.post2).
fn quant028() -> Vec<Case> {
    let w4a16 = || checkpoint("synthetic__Qwen3-8B-w4a16-ct");
    let fp8 = || checkpoint("RedHatAI__Meta-Llama-3.1-8B-Instruct-FP8-dynamic");
    let q28 = |v: &'static str, m: ModelFacts| {
        c("QUANT028")
            .version(v)
            .tp(1)
            .model(m)
            .pkgs(&[("sglang", v)])
    };
    vec![
        // Weight-only integers need vLLM on every GPU.
        q28("0.5.3.post2", w4a16()).on(H100),
        q28("0.4.5.post3", w4a16()).on(A100),
        // FP8 W8A8 runs weight-only (through vLLM's Marlin) below 8.9 only.
        q28("0.5.3.post2", fp8()).on(A100),
        q28("0.5.3.post2", fp8()).on(H100).no(),
        // 0.5.4 has its own kernels; an install with vLLM, or one not read, says nothing.
        q28("0.5.4", w4a16()).on(H100).no(),
        q28("0.5.3.post2", w4a16())
            .on(H100)
            .pkgs(&[("sglang", "0.5.3.post2"), ("vllm", "0.10.1.1")])
            .no(),
        c("QUANT028")
            .version("0.5.3.post2")
            .on(H100)
            .tp(1)
            .model(w4a16())
            .no(),
        // Other methods are not this rule's.
        q28("0.5.3.post2", checkpoint("TheBloke__Llama-2-7B-AWQ"))
            .on(A100)
            .no(),
    ]
}

/// QUANT029: compressed-tensors NVFP4 without a scheme (before 0.5.7) or below 10.0 (to 0.5.21).
fn quant029() -> Vec<Case> {
    let dense = || checkpoint("synthetic__Qwen3-8B-nvfp4-ct");
    let q29 = |v: &'static str, gpu: &'static str| c("QUANT029").version(v).on(gpu).tp(1);
    let mlp_only = || checkpoint("synthetic__Qwen3-8B-nvfp4-ct-mlp");
    vec![
        // No scheme at all: every GPU.
        q29("0.5.6", B200).model(dense()),
        q29("0.4.5.post3", H100).model(checkpoint("synthetic__Qwen3-30B-A3B-nvfp4-ct")),
        q29("0.5.6", B200).model(mlp_only()),
        // An MoE export with attention left unquantised stops at its experts' scheme first.
        q29("0.5.6", B200).model(checkpoint("synthetic__Qwen3-30B-A3B-nvfp4-ct-experts")),
        // The scheme needs 10.0 and has no fallback until 0.5.22.
        q29("0.5.15", H100).model(dense()),
        q29("0.5.21", A100).model(dense()),
        q29("0.5.15", B200).model(dense()).no(),
        q29("0.5.15", PRO).model(dense()).no(),
        q29("0.5.22", H100).model(dense()).no(),
        // Attention left unquantised: the MLP's scheme, or the experts', asks for 10.0 too.
        q29("0.5.15", H100).model(mlp_only()),
        q29("0.5.8", H100).model(checkpoint("synthetic__Qwen3-30B-A3B-nvfp4-ct-experts")),
        q29("0.5.8", B200)
            .model(checkpoint("synthetic__Qwen3-30B-A3B-nvfp4-ct-experts"))
            .no(),
        // Other compressed-tensors schemes, and ModelOpt's NVFP4, are not this rule's.
        q29("0.5.6", B200)
            .model(checkpoint("synthetic__Qwen3-8B-w4a16-ct"))
            .no(),
        q29("0.5.6", B200)
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4-hfq"))
            .no(),
    ]
}

/// QUANT030: asymmetric compressed-tensors integer weights before 0.5.13.
fn quant030() -> Vec<Case> {
    let asym = || checkpoint("synthetic__Qwen3-8B-w4a16-asym-ct");
    let q30 = |v: &'static str| c("QUANT030").version(v).on(A100).tp(1);
    vec![
        q30("0.5.11").model(asym()),
        q30("0.4.5.post3").model(asym()),
        q30("0.5.13").model(asym()).no(),
        q30("0.5.11")
            .model(checkpoint("synthetic__Qwen3-8B-w4a16-ct"))
            .no(),
        // Named as another method, the checkpoint is not read as compressed-tensors here.
        q30("0.5.11")
            .model(asym())
            .arg("--quantization", json!("awq_marlin"))
            .no(),
    ]
}

/// QUANT031: compressed-tensors schemes that ask for compute capability 8.0 (0.5.4 to 0.5.8).
fn quant031() -> Vec<Case> {
    let w4a16 = || checkpoint("synthetic__Qwen3-8B-w4a16-ct");
    let int8 = || checkpoint("synthetic__Llama-3.1-8B-w8a8-int8-ct");
    let q31 = |v: &'static str, gpu: &'static str| c("QUANT031").version(v).on(gpu).tp(1);
    vec![
        q31("0.5.5", T4).model(w4a16()),
        q31("0.5.8", T4).model(checkpoint(
            "RedHatAI__Meta-Llama-3.1-8B-Instruct-FP8-dynamic",
        )),
        q31("0.5.7", T4).model(int8()),
        // INT8 asks for 8.9 before 0.5.7: QUANT019's.
        q31("0.5.6", T4).model(int8()).no(),
        q31("0.5.5", A100).model(w4a16()).no(),
        // A dense export that leaves attention out still builds its MLP through the scheme.
        q31("0.5.5", T4).model(checkpoint("synthetic__Qwen3-8B-w4a16-ct-mlp")),
        // An MoE one may leave only the experts, whose methods are not gated.
        q31("0.5.5", T4)
            .model(ModelFacts {
                attention_unquantised: true,
                num_experts: Some(128),
                ..w4a16()
            })
            .no(),
        q31("0.5.5", T4)
            .model(checkpoint("TheBloke__Llama-2-7B-AWQ"))
            .no(),
        // The schemes ask for 8.0 in every later release too.
        q31("0.5.23", T4).model(w4a16()),
        q31("0.5.14", T4).model(checkpoint(
            "RedHatAI__Meta-Llama-3.1-8B-Instruct-FP8-dynamic",
        )),
        q31("0.5.23", A100).model(w4a16()).no(),
        // NVFP4 weight-only has a scheme from 0.5.22 (QUANT039 before), which asks for 8.0.
        q31("0.5.22", T4).model(checkpoint("synthetic__Qwen3-8B-nvfp4a16-ct")),
        q31("0.5.21", T4)
            .model(checkpoint("synthetic__Qwen3-8B-nvfp4a16-ct"))
            .no(),
        q31("0.5.22", A100)
            .model(checkpoint("synthetic__Qwen3-8B-nvfp4a16-ct"))
            .no(),
    ]
}

/// QUANT039: FP4 weight-only layers the release has no compressed-tensors scheme for.
fn quant039() -> Vec<Case> {
    let q39 = |v: &'static str, gpu: &'static str| c("QUANT039").version(v).on(gpu).tp(1);
    let nvfp4 = || checkpoint("synthetic__Qwen3-8B-nvfp4a16-ct");
    let mxfp4 = || checkpoint("synthetic__Qwen3-8B-mxfp4a16-ct");
    let mxfp4_experts = || checkpoint("synthetic__Qwen3-30B-A3B-mxfp4a16-ct-experts");
    vec![
        // NVFP4A16: no scheme on any GPU until 0.5.22.
        q39("0.5.5", H100).model(nvfp4()),
        q39("0.5.21", B200).model(nvfp4()),
        q39("0.5.14", H100).model(checkpoint("synthetic__Qwen3-30B-A3B-nvfp4a16-ct-experts")),
        q39("0.5.22", H100).model(nvfp4()).no(),
        // MXFP4A16 in a linear layer: no release builds it.
        q39("0.5.15", H100).model(mxfp4()),
        q39("0.5.23", B200).model(mxfp4()),
        // In the experts alone: refused until 0.5.17.
        q39("0.5.14", H100).model(mxfp4_experts()),
        q39("0.5.17", H100).model(mxfp4_experts()).no(),
        // NVFP4 with FP4 activations and integer weight-only groups are other rules'.
        q39("0.5.15", H100)
            .model(checkpoint("synthetic__Qwen3-8B-nvfp4-ct"))
            .no(),
        q39("0.5.15", H100)
            .model(checkpoint("synthetic__Qwen3-8B-w4a16-ct"))
            .no(),
    ]
}

/// QUANT041: ModelOpt FP8 on Nemotron-H's latent MoE, whose replicated projections 0.5.8's FP8
/// linear method cannot build.
fn quant041() -> Vec<Case> {
    let super_fp8 = || ModelFacts {
        quant_method: Some("modelopt_fp8".into()),
        ..checkpoint("nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4")
    };
    let on = |v: &'static str, m: ModelFacts| c("QUANT041").version(v).tp(4).model(m);
    vec![
        on("0.5.8", super_fp8()),
        on("0.5.9", super_fp8()).no(),
        on("0.5.7", super_fp8()).no(),
        // The NVFP4 method takes the sizes by position.
        on(
            "0.5.8",
            checkpoint("nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4"),
        )
        .no(),
        on(
            "0.5.8",
            ModelFacts {
                quant_ignored: vec!["backbone.layers.1.mixer.fc1_latent_proj".into()],
                ..super_fp8()
            },
        )
        .no(),
        // Nano's MoE works in the hidden width: no latent projections.
        on(
            "0.5.8",
            ModelFacts {
                nemotron_h: super_fp8().nemotron_h.map(|mut l| {
                    l.latent = false;
                    l
                }),
                ..super_fp8()
            },
        )
        .no(),
    ]
}

/// QUANT040: ModelOpt NVFP4 experts off Blackwell with a runner other than auto or marlin.
fn quant040() -> Vec<Case> {
    let nvfp4 = || checkpoint("synthetic__Qwen3-30B-A3B-modelopt-nvfp4");
    let runner = |r: &str, v: &'static str, gpu: &'static str| {
        c("QUANT040")
            .version(v)
            .on(gpu)
            .model(nvfp4())
            .arg("--moe-runner-backend", json!(r))
    };
    vec![
        runner("triton", "0.5.13", H100),
        runner("flashinfer_cutlass", "0.5.23", A100),
        // Marlin is the fallback, and auto picks it; Blackwell (SM12x too) takes any runner.
        runner("marlin", "0.5.23", H100).no(),
        runner("auto", "0.5.17", H100).no(),
        runner("flashinfer_cutlass", "0.5.23", B200).no(),
        runner("flashinfer_cutlass", "0.5.23", PRO).no(),
        // Below 8.0 the loader refuses the method first (QUANT010); before 0.5.13 it asks 10.0.
        runner("triton", "0.5.23", T4).no(),
        runner("triton", "0.5.12", H100).no(),
    ]
}

/// QUANT021: GLM-5's BF16 shared expert fused into NVFP4 routed experts (0.5.9–0.5.20).
fn quant021() -> Vec<Case> {
    let glm = |excluded: &str| ModelFacts {
        num_experts: Some(256),
        n_shared_experts: Some(1),
        first_k_dense_replace: Some(3),
        num_hidden_layers: Some(78),
        quant_method: Some("modelopt_fp4".into()),
        quant_ignored: vec![excluded.into(), "lm_head".into()],
        ..model("GlmMoeDsaForCausalLM")
    };
    let line = |v, gpu| {
        c("QUANT021")
            .version(v)
            .on(gpu)
            .tp(8)
            .model(glm("model.layers.10.mlp.shared_experts*"))
    };
    vec![
        line("0.5.15.post1", PRO),
        line("0.5.18", H100).arg("--moe-runner-backend", json!("marlin")),
        line("0.5.9", A100),
        // 0.5.21 refuses the fusion itself; the flag, EP and a TRT-LLM runner turn it off.
        line("0.5.21", PRO).no(),
        line("0.5.15.post1", PRO)
            .flag("--disable-shared-experts-fusion")
            .no(),
        line("0.5.15.post1", PRO).arg("--ep-size", json!(8)).no(),
        line("0.5.15.post1", B200)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .no(),
        // On SM100 SGLang's own pick may be the TRT-LLM runner.
        line("0.5.15.post1", B200).no(),
        // A checkpoint that quantises its shared experts fuses fine.
        c("QUANT021")
            .version("0.5.15.post1")
            .on(PRO)
            .tp(8)
            .model(glm("model.layers.10.self_attn*"))
            .no(),
    ]
}

/// QUANT020: the methods a ROCm build takes, on an AMD host.
fn rocm() -> Vec<Case> {
    let amd = |v| c("QUANT020").version(v).on(MI300X);
    vec![
        // sglang#28358: MXFP8 on MI300X before 0.5.14.
        amd("0.5.13.post1").arg("--quantization", json!("mxfp8")),
        amd("0.5.23").model(ModelFacts {
            quant_method: Some("modelopt_fp4".into()),
            ..model("Qwen3ForCausalLM")
        }),
        amd("0.5.14").arg("--quantization", json!("mxfp8")).no(),
        amd("0.5.13.post1").arg("--quantization", json!("fp8")).no(),
        amd("0.5.13.post1").no(),
        // An NVIDIA host is not ROCm.
        c("QUANT020")
            .version("0.5.13.post1")
            .on(H100)
            .arg("--quantization", json!("mxfp8"))
            .no(),
    ]
}

/// QUANT018/QUANT019: compressed-tensors W8A8-INT8 checkpoints.
fn compressed_int8() -> Vec<Case> {
    let w8a8 = || ModelFacts {
        quant_method: Some("compressed-tensors".into()),
        compressed_w8a8_int8: true,
        ..model("Qwen2ForCausalLM")
    };
    let fp8 = || ModelFacts {
        quant_method: Some("compressed-tensors".into()),
        ..model("Qwen2ForCausalLM")
    };
    let q18 = |v| c("QUANT018").version(v).model(w8a8());
    let q19 = |v| c("QUANT019").version(v).model(w8a8());
    vec![
        q18("0.4.9.post2").on(H100),
        q18("0.4.5").on(A100),
        q18("0.5.3rc0"),
        q18("0.5.3").no(),
        q18("0.4.4.post1").no(),
        c("QUANT018").version("0.4.9.post2").model(fp8()).no(),
        q19("0.5.5").on(A100),
        q19("0.5.3rc2").on(L4).no(),
        q19("0.5.5").on(H100).no(),
        q19("0.5.7").on(A100).no(),
    ]
}

/// QUANT014: DeepSeek-V4's KV-cache dtype, as written.
fn quant014() -> Vec<Case> {
    let v4 = |v, kv| {
        c("QUANT014")
            .version(v)
            .tp(8)
            .model(model("DeepseekV4ForCausalLM"))
            .arg("--kv-cache-dtype", json!(kv))
    };
    vec![
        v4("0.5.23", "fp8_e5m2"),
        // `bf16` is not read as bfloat16 before the hook compares it.
        v4("0.5.23", "bf16"),
        v4("0.5.23", "bfloat16").no(),
        v4("0.5.23", "fp8_e4m3").no(),
        v4("0.5.23", "auto").no(),
        // 0.5.12-0.5.13 take fp8_e4m3 only.
        v4("0.5.13", "bfloat16"),
        // Other models are other rules'.
        c("QUANT014")
            .version("0.5.23")
            .tp(8)
            .model(model("DeepseekV3ForCausalLM"))
            .arg("--kv-cache-dtype", json!("fp8_e5m2"))
            .no(),
    ]
}

/// QUANT006: FP8 block shards, on the real checkpoints' configs.
fn block() -> Vec<Case> {
    vec![
        // moe_intermediate_size 1536 / TP 8 = 192 (sglang#19045's launch line).
        c("QUANT006").tp(8).model(checkpoint(Q235)),
        c("QUANT006").tp(4).model(checkpoint(Q235)).no(),
        // EP 8 keeps experts whole; so does an all-to-all backend (EP becomes TP).
        c("QUANT006")
            .tp(8)
            .arg("--ep-size", json!(8))
            .model(checkpoint(Q235))
            .no(),
        c("QUANT006")
            .tp(8)
            .arg("--moe-a2a-backend", json!("deepep"))
            .model(checkpoint(Q235))
            .no(),
        // EP 2 leaves MoE TP 4: 384 fits.
        c("QUANT006")
            .tp(8)
            .arg("--ep-size", json!(2))
            .model(checkpoint(Q235))
            .no(),
        // 768 / 4 = 192; 0.4.x's --enable-ep-moe means EP = TP.
        c("QUANT006").tp(4).model(checkpoint(Q30)),
        c("QUANT006")
            .version("0.4.10.post2")
            .tp(4)
            .flag("--enable-ep-moe")
            .model(checkpoint(Q30))
            .no(),
        c("QUANT006").tp(2).model(checkpoint(Q30)).no(),
        // Dense: 25600 / 8 = 3200 fits; DeepSeek-R1's dense layers fit up to TP 16.
        c("QUANT006")
            .tp(8)
            .model(checkpoint("Qwen__Qwen3-32B-FP8"))
            .no(),
        c("QUANT006")
            .tp(16)
            .arg("--nnodes", json!(2))
            .model(checkpoint("deepseek-ai__DeepSeek-R1"))
            .no(),
        // TP 32: 18432 / 32 = 576 for the dense layers, 2048 / 32 = 64 for the experts.
        c("QUANT006")
            .tp(32)
            .arg("--nnodes", json!(4))
            .model(checkpoint("deepseek-ai__DeepSeek-R1")),
        // A dense model's shards are QUANT008's: 25600 / 16 = 1600.
        c("QUANT008")
            .tp(16)
            .arg("--nnodes", json!(2))
            .model(checkpoint("Qwen__Qwen3-32B-FP8")),
        c("QUANT006")
            .tp(16)
            .arg("--nnodes", json!(2))
            .model(checkpoint("Qwen__Qwen3-32B-FP8"))
            .no(),
        c("QUANT008")
            .tp(8)
            .model(checkpoint("Qwen__Qwen3-32B-FP8"))
            .no(),
        // A Qwen3-Next-style shared expert of 512 at TP 8, unless the checkpoint skips it.
        c("QUANT006").tp(8).model(ModelFacts {
            shared_expert_intermediate_size: Some(512),
            quant_method: Some("fp8".into()),
            weight_block_size: Some((128, 128)),
            ..model("Qwen3NextForCausalLM")
        }),
        c("QUANT006")
            .tp(8)
            .model(ModelFacts {
                shared_expert_intermediate_size: Some(512),
                quant_method: Some("fp8".into()),
                weight_block_size: Some((128, 128)),
                quant_ignored: vec!["model.layers.0.mlp.shared_expert.gate_proj".into()],
                ..model("Qwen3NextForCausalLM")
            })
            .no(),
        // Per-tensor FP8 (no block size) and other methods are not block-quantised.
        c("QUANT006")
            .tp(8)
            .model(ModelFacts {
                weight_block_size: None,
                ..checkpoint(Q235)
            })
            .no(),
        c("QUANT006")
            .tp(8)
            .arg("--quantization", json!("w8a8_fp8"))
            .model(checkpoint(Q235))
            .no(),
    ]
}

fn base() -> Vec<Case> {
    vec![
        // The FlashInfer CUTLASS MoE runner's quantisation check (QUANT011). MXFP8 is moved off
        // the runner first from 0.5.10rc0.
        c("QUANT011")
            .on(B200)
            .model(model("Qwen3MoeForCausalLM"))
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .arg("--quantization", json!("mxfp8"))
            .no(),
        c("QUANT011")
            .on(B200)
            .model(model("Qwen3MoeForCausalLM"))
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .arg("--quantization", json!("w8a8_fp8")),
        c("QUANT011")
            .on(B200)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..model("DeepseekV3ForCausalLM")
            })
            .arg("--moe-runner-backend", json!("flashinfer_cutlass")),
        c("QUANT011")
            .version("0.5.5")
            .on(B200)
            .model(model("Qwen3MoeForCausalLM"))
            .arg("--moe-runner-backend", json!("flashinfer_cutlass")),
        c("QUANT011")
            .on(B200)
            .model(model("Qwen3MoeForCausalLM"))
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        c("QUANT011")
            .version("0.5.5")
            .on(B200)
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .arg("--quantization", json!("modelopt_fp4"))
            .no(),
        // Off SM10x ServerArgs leaves the checkpoint's method out of its field, so the check
        // passes it (DeepSeek-V4-Pro NVFP4, FP8 in config.json, ran so on RTX PRO 6000s).
        c("QUANT011")
            .version("0.5.14")
            .on(PRO)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..model("DeepseekV3ForCausalLM")
            })
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        // Nor on SM10x for an architecture it does not tune there.
        c("QUANT011")
            .version("0.5.14")
            .on(B200)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..model("DeepseekV4ForCausalLM")
            })
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        // GLM-4 MoE gets the copy from 0.5.8 only.
        c("QUANT011")
            .version("0.5.8")
            .on(B200)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..model("Glm4MoeForCausalLM")
            })
            .arg("--moe-runner-backend", json!("flashinfer_cutlass")),
        c("QUANT011")
            .version("0.5.7")
            .on(B200)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..model("Glm4MoeForCausalLM")
            })
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        // Given on the command line, it is checked anywhere.
        c("QUANT011")
            .version("0.5.14")
            .on(PRO)
            .arg("--quantization", json!("fp8"))
            .arg("--moe-runner-backend", json!("flashinfer_cutlass")),
        // No model facts: the checkpoint may be the ModelOpt FP4 one.
        c("QUANT011")
            .version("0.5.4")
            .on(B200)
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        // 0.5.23 runs dense FP8 weight-only through Marlin on SM80 (QA regression).
        c("QUANT007")
            .on(A100)
            .arg("--quantization", json!("fp8"))
            .no(),
        c("QUANT007")
            .on(A100)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        // A Nemotron-H's ModelOpt mixed export asks what NVFP4 does: 10.0 until 0.5.13, 8.0 then.
        c("QUANT010").version("0.5.12").on(H100).model(checkpoint(
            "nvidia__NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4",
        )),
        c("QUANT010")
            .version("0.5.12")
            .on(B200)
            .model(checkpoint(
                "nvidia__NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4",
            ))
            .no(),
        c("QUANT010")
            .version("0.5.13")
            .on(H100)
            .model(checkpoint(
                "nvidia__NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4",
            ))
            .no(),
        // From 0.5.15 any model's mixed export is read as `modelopt_mixed`: a T4 is below 8.0.
        c("QUANT010")
            .version("0.5.19")
            .on(T4)
            .tp(1)
            .model(checkpoint("synthetic__Qwen3-30B-A3B-modelopt-mixed-hfq")),
        c("QUANT010")
            .version("0.5.23")
            .on(A100)
            .tp(1)
            .model(checkpoint("synthetic__Qwen3-30B-A3B-modelopt-mixed-hfq"))
            .no(),
        // Below SM80 the loader refuses fp8 itself (from 0.5.5, per the goldens), online too.
        c("QUANT010").on(T4).tp(1).model(ModelFacts {
            quant_method: Some("fp8".into()),
            ..model("Qwen3ForCausalLM")
        }),
        c("QUANT010")
            .on(T4)
            .tp(1)
            .arg("--quantization", json!("fp8")),
        c("QUANT010")
            .version("0.5.2")
            .on(T4)
            .tp(1)
            .arg("--quantization", json!("fp8")),
        c("QUANT010")
            .version("0.4.5.post3")
            .on(T4)
            .tp(1)
            .arg("--quantization", json!("fp8")),
        // Before the goldens' first release nothing is claimed.
        c("QUANT010")
            .version("0.4.5.post2")
            .on(T4)
            .tp(1)
            .arg("--quantization", json!("fp8"))
            .no(),
        c("QUANT010")
            .on(A100)
            .arg("--quantization", json!("fp8"))
            .no(),
        c("QUANT010")
            .on(T4)
            .tp(1)
            .arg("--quantization", json!("awq"))
            .no(),
        // GPT-OSS's MXFP4 demands 8.0 at load, from its first release.
        c("QUANT010").on(T4).tp(1).model(ModelFacts {
            quant_method: Some("mxfp4".into()),
            ..model("GptOssForCausalLM")
        }),
        c("QUANT010")
            .version("0.5.0rc2")
            .on(V100)
            .tp(1)
            .model(ModelFacts {
                quant_method: Some("mxfp4".into()),
                ..model("GptOssForCausalLM")
            }),
        c("QUANT010")
            .on(A100)
            .model(ModelFacts {
                quant_method: Some("mxfp4".into()),
                ..model("GptOssForCausalLM")
            })
            .no(),
        // w8a8_fp8 demands 8.9 at load.
        c("QUANT010")
            .on(A100)
            .arg("--quantization", json!("w8a8_fp8")),
        c("QUANT010")
            .on(L4)
            .arg("--quantization", json!("w8a8_fp8"))
            .no(),
        // ... and the FP8-kernel rules leave those GPUs to it.
        c("QUANT007")
            .on(T4)
            .tp(1)
            .arg("--quantization", json!("fp8"))
            .no(),
        c("QUANT001")
            .on(T4)
            .tp(1)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..moe()
            })
            .no(),
        // FP8 MoE experts have no Marlin path: the error, pinned by reports.
        c("QUANT001").on(A100).model(ModelFacts {
            quant_method: Some("fp8".into()),
            ..moe()
        }),
        c("QUANT001")
            .on(A100)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        c("QUANT001")
            .on(L4)
            .model(ModelFacts {
                quant_method: Some("fp8".into()),
                ..moe()
            })
            .no(),
        // compressed-tensors FP8 (the FP8-dynamic preset) reaches the same Triton kernels, from
        // the first release with SGLang's own compressed-tensors MoE method.
        c("QUANT001").version("0.5.3").on(A100).model(ct_fp8_moe()),
        c("QUANT001")
            .version("0.4.4.post2")
            .on(A100)
            .model(ct_fp8_moe()),
        c("QUANT001")
            .version("0.4.4.post1")
            .on(A100)
            .model(ct_fp8_moe())
            .no(),
        c("QUANT001")
            .version("0.5.3")
            .on(L4)
            .model(ct_fp8_moe())
            .no(),
        c("QUANT001")
            .version("0.5.3")
            .on(A100)
            .model(ModelFacts {
                compressed_schemes: vec![CompressedScheme::Wna16],
                ..ct_fp8_moe()
            })
            .no(),
        c("QUANT001")
            .version("0.5.3")
            .on(A100)
            .model(ModelFacts {
                quant_ignored: vec!["re:.*mlp.experts.*".into()],
                ..ct_fp8_moe()
            })
            .no(),
        // Methods that demand SM89 at load: QUANT010's where the goldens record it (w8a8_fp8
        // from 0.4.5.post3, ModelOpt FP8 from 0.5.5), QUANT007's before.
        c("QUANT007")
            .on(A100)
            .arg("--quantization", json!("w8a8_fp8"))
            .no(),
        c("QUANT007")
            .version("0.5.2")
            .on(A100)
            .arg("--quantization", json!("w8a8_fp8"))
            .no(),
        c("QUANT010")
            .version("0.5.2")
            .on(A100)
            .arg("--quantization", json!("w8a8_fp8")),
        // Before 0.5.1 a config.json ModelOpt block is not read that far: QUANT007's warning.
        c("QUANT007")
            .version("0.5.0rc2")
            .on(A100)
            .arg("--quantization", json!("modelopt_fp8")),
        // From 0.5.1 the loader reads it and refuses below 8.9: QUANT010's.
        c("QUANT010")
            .version("0.5.2")
            .on(A100)
            .arg("--quantization", json!("modelopt_fp8")),
        c("QUANT007")
            .version("0.5.2")
            .on(A100)
            .arg("--quantization", json!("modelopt_fp8"))
            .no(),
        c("QUANT007")
            .on(A100)
            .arg("--quantization", json!("modelopt_fp8"))
            .no(),
        c("QUANT010")
            .on(A100)
            .arg("--quantization", json!("modelopt_fp8")),
        c("QUANT010").on(A100).model(ModelFacts {
            quant_method: Some("modelopt_fp8".into()),
            ..model("Qwen3ForCausalLM")
        }),
        // 0.5.5 needs vLLM's Marlin ops; 0.4.x has no automatic fallback; 0.5.6 has its own.
        c("QUANT007")
            .version("0.5.5")
            .on(A100)
            .arg("--quantization", json!("fp8"))
            .pkgs(&[("torch", "2.8.0+cu128")]),
        c("QUANT007")
            .version("0.5.5")
            .on(A100)
            .arg("--quantization", json!("fp8"))
            .pkgs(&[("vllm", "0.10.1")])
            .no(),
        c("QUANT007")
            .version("0.5.6")
            .on(A100)
            .arg("--quantization", json!("fp8"))
            .pkgs(&[("torch", "2.8.0+cu128")])
            .no(),
        c("QUANT007")
            .version("0.4.10.post2")
            .on(A100)
            .arg("--quantization", json!("fp8")),
        // Below SM80 the loader's own refusal speaks (QUANT010), not the kernels'.
        c("QUANT007")
            .on(A100)
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "7.5".into())
            })
            .arg("--quantization", json!("fp8"))
            .no(),
        c("QUANT010")
            .on(A100)
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "7.5".into())
            })
            .arg("--quantization", json!("fp8")),
        c("QUANT007")
            .on(L4)
            .arg("--quantization", json!("fp8"))
            .no(),
        // The loader refuses modelopt_fp4 below 10.0 until 0.5.13: QUANT010's, not QUANT002's.
        c("QUANT002")
            .version("0.5.5")
            .arg("--quantization", json!("modelopt_fp4"))
            .no(),
        c("QUANT010")
            .version("0.5.5")
            .arg("--quantization", json!("modelopt_fp4")),
        c("QUANT010").version("0.5.11").model(ModelFacts {
            quant_method: Some("modelopt_fp4".into()),
            ..model("Qwen3ForCausalLM")
        }),
        c("QUANT010")
            .version("0.5.14")
            .arg("--quantization", json!("modelopt_fp4"))
            .no(),
        // From 0.5.13 the minimum is 8.0: still above a T4.
        c("QUANT010").on(T4).tp(1).model(ModelFacts {
            quant_method: Some("modelopt_fp4".into()),
            ..model("Qwen3ForCausalLM")
        }),
        c("QUANT010")
            .version("0.5.11")
            .on(B200)
            .arg("--quantization", json!("modelopt_fp4"))
            .no(),
        // A checkpoint alone before 0.5.10.post1: nothing recorded, so nothing claimed.
        c("QUANT010")
            .version("0.5.9")
            .model(ModelFacts {
                quant_method: Some("modelopt_fp4".into()),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        // Kept in hf_quant_config.json, the checkpoint's NVFP4 is read as such from 0.4.8.
        c("QUANT010").version("0.4.8").model(checkpoint(NVFP4_HFQ)),
        c("QUANT010").version("0.5.9").model(checkpoint(NVFP4_HFQ)),
        c("QUANT010")
            .version("0.5.9")
            .on(B200)
            .model(checkpoint(NVFP4_HFQ))
            .no(),
        c("QUANT010")
            .version("0.4.7.post1")
            .model(checkpoint(NVFP4_HFQ))
            .no(),
        c("QUANT010")
            .version("0.4.7.post1")
            .model(checkpoint(NVFP4_HFQ))
            .arg("--quantization", json!("modelopt_fp4")),
        // ModelOpt FP8 kept in hf_quant_config.json: below 8.9 from 0.4.5.post3.
        c("QUANT010")
            .version("0.4.9")
            .on(A100)
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-fp8-hfq")),
        c("QUANT010")
            .version("0.4.9")
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-fp8-hfq"))
            .no(),
        c("QUANT010")
            .version("0.4.9")
            .on(A100)
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-fp8"))
            .no(),
        // ... while config.json's before 0.5.10.post1 is read as another method.
        c("QUANT010")
            .version("0.5.9")
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4"))
            .no(),
        // QUANT026: before 0.4.8 hf_quant_config.json is read with the FP8 method only.
        c("QUANT026")
            .version("0.4.7.post1")
            .on(B200)
            .model(checkpoint(NVFP4_HFQ)),
        c("QUANT026")
            .version("0.4.5.post3")
            .model(checkpoint(NVFP4_HFQ))
            .arg("--quantization", json!("modelopt")),
        c("QUANT026")
            .version("0.4.7.post1")
            .on(B200)
            .model(checkpoint(NVFP4_HFQ))
            .arg("--quantization", json!("modelopt_fp4"))
            .no(),
        c("QUANT026")
            .version("0.4.8")
            .on(B200)
            .model(checkpoint(NVFP4_HFQ))
            .no(),
        // In config.json the method is read another way (QUANT010's note), not this one.
        c("QUANT026")
            .version("0.4.7.post1")
            .on(B200)
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4"))
            .no(),
        // Named `modelopt` in config.json: 0.5.1 to 0.5.9 read it with the FP8 method; from 0.5.4
        // a `--quantization modelopt` given is moved to NVFP4, and 0.5.10rc0 reparses it.
        c("QUANT026")
            .version("0.5.5")
            .on(B200)
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4")),
        c("QUANT026")
            .version("0.5.3")
            .on(B200)
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4"))
            .arg("--quantization", json!("modelopt")),
        c("QUANT026")
            .version("0.5.5")
            .on(B200)
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4"))
            .arg("--quantization", json!("modelopt"))
            .no(),
        c("QUANT026")
            .version("0.5.10rc0")
            .on(B200)
            .model(checkpoint("synthetic__Qwen3-8B-modelopt-nvfp4"))
            .no(),
        c("QUANT002").version("0.5.9").model(ModelFacts {
            quant_method: Some("modelopt_fp4".into()),
            ..model("Qwen3ForCausalLM")
        }),
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
        // GLM-5's DSA architecture joins the check at 0.5.9.
        c("QUANT005")
            .version("0.5.9")
            .model(glm5())
            .arg("--kv-cache-dtype", json!("fp8_e5m2")),
        c("QUANT005")
            .version("0.5.23")
            .model(glm5())
            .arg("--kv-cache-dtype", json!("fp8_e4m3"))
            .no(),
        c("QUANT005")
            .version("0.5.23")
            .model(model("GlmMoeDsaForCausalLM"))
            .arg("--kv-cache-dtype", json!("fp8_e5m2"))
            .no(),
    ]
}

/// GLM-5's sparse-attention architecture, with the indexer's top-k its config gives.
fn glm5() -> ModelFacts {
    ModelFacts {
        index_topk: Some(2048),
        ..model("GlmMoeDsaForCausalLM")
    }
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

/// Through the real binary: the checkpoint is read from disk and the launch is blocked at TP 8,
/// not at TP 8 with EP 8.
#[test]
fn the_binary_blocks_a_misfit_fp8_checkpoint() {
    let run = |extra: &[&str]| {
        let mut cmd = crate::common::launcher();
        cmd.args([
            "check",
            "--json",
            "--sglang-version",
            "0.5.23",
            "--topology",
        ])
        .arg("tests/fixtures/topologies/8x-h100-sxm-nvlink.json")
        .args(["--", "--model-path"])
        .arg(format!("tests/fixtures/models/{Q235}"))
        .args(["--tp", "8"])
        .args(extra)
        .output()
        .unwrap()
    };
    let out = run(&[]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(codes.contains(&"QUANT006"), "{codes:?}");
    assert_eq!(out.status.code(), Some(1));
    let out = run(&["--ep-size", "8"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "QUANT006"),
        "{}",
        v["findings"]
    );
}

/// Online NVFP4 (0.5.14+): SM100 only, TRT-LLM MoE runners only.
fn quant012() -> Vec<Case> {
    let online = |on| {
        c("QUANT012")
            .version("0.5.18")
            .on(on)
            .tp(8)
            .arg("--quantization", json!("nvfp4_online"))
    };
    vec![
        online(H100),
        online(PRO),
        online(B200).no(),
        online(B200).arg("--moe-runner-backend", json!("triton")),
        online(B200)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .no(),
        c("QUANT012")
            .version("0.5.18")
            .on(H100)
            .tp(8)
            .arg("--quantization", json!("fp8"))
            .no(),
    ]
}

/// The FlashInfer TRT-LLM MoE runner's quantisation list, by release.
fn quant013() -> Vec<Case> {
    let trtllm = |v| {
        c("QUANT013")
            .version(v)
            .on(B200)
            .tp(8)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
    };
    vec![
        trtllm("0.5.18").arg("--quantization", json!("awq")),
        trtllm("0.5.18").model(moe()).no(),
        trtllm("0.5.18").model(checkpoint(Q30)).no(),
        // Unquantised weights join the list in 0.5.7.
        trtllm("0.5.6").model(moe()),
        // Before 0.5.6 only --quantization counts: an FP8 checkpoint without it is refused.
        trtllm("0.5.5").model(checkpoint(Q30)),
        trtllm("0.5.5")
            .model(checkpoint(Q30))
            .arg("--quantization", json!("fp8"))
            .no(),
        trtllm("0.5.6").model(checkpoint(Q30)).no(),
        // Off SM100 the checkpoint's FP8 is not read: none is seen, refused until 0.5.7.
        c("QUANT013")
            .version("0.5.6")
            .on(H100)
            .tp(8)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .model(checkpoint(Q30)),
        c("QUANT013")
            .version("0.5.7")
            .on(H100)
            .tp(8)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .model(checkpoint(Q30))
            .no(),
        // Off SM100, or outside the families SGLang tunes there, its check sees no method.
        c("QUANT013")
            .version("0.5.23")
            .tp(8)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .model(ModelFacts {
                quant_method: Some("mxfp4".into()),
                ..model("GptOssForCausalLM")
            })
            .no(),
        trtllm("0.5.23").model(ModelFacts {
            quant_method: Some("awq".into()),
            ..model("Qwen3MoeForCausalLM")
        }),
        // ModelOpt FP8 from 0.5.4.post2, MXFP8 from 0.5.10rc0.
        trtllm("0.5.4.post1").arg("--quantization", json!("modelopt_fp8")),
        trtllm("0.5.4.post2")
            .arg("--quantization", json!("modelopt_fp8"))
            .no(),
        trtllm("0.5.10.post1")
            .arg("--quantization", json!("mxfp8"))
            .no(),
        // No check before 0.5.2; the model unknown and no option says nothing from 0.5.6.
        trtllm("0.5.1").arg("--quantization", json!("awq")).no(),
        trtllm("0.5.18").no(),
        trtllm("0.5.5"),
    ]
}

/// QUANT015: DeepSeek-V4's MXFP4 experts on Ampere/Hopper with SGLang's own runner (0.5.12-0.5.18).
fn quant015() -> Vec<Case> {
    let official = ModelFacts {
        deepseek_v4: Some(V4Layout {
            mxfp4_experts: true,
            nvfp4_experts: false,
            ..V4Layout::default()
        }),
        ..model("DeepseekV4ForCausalLM")
    };
    let v4 = |v, gpu| {
        c("QUANT015")
            .version(v)
            .on(gpu)
            .tp(8)
            .model(official.clone())
    };
    vec![
        v4("0.5.15", H100),
        v4("0.5.12", A100),
        // Named: warned, not changed.
        v4("0.5.15", H100).arg("--moe-runner-backend", json!("triton")),
        v4("0.5.15", H100)
            .arg("--moe-runner-backend", json!("marlin"))
            .no(),
        // SM100 takes DeepGEMM's path; from 0.5.19 SGLang picks FlashInfer's MXFP4 runner.
        v4("0.5.15", B200).no(),
        v4("0.5.19", H100).no(),
        v4("0.5.15", H100)
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        v4("0.5.15", H100).env("SGLANG_DSV4_FP4_DEQUANT", "1").no(),
        // Another export of the model packs its experts otherwise.
        c("QUANT015")
            .version("0.5.15")
            .on(H100)
            .tp(8)
            .model(model("DeepseekV4ForCausalLM"))
            .no(),
    ]
}

/// QUANT016: DeepSeek-V4's MXFP4 experts through DeepGEMM on Hopper (0.5.12-0.5.15), and
/// QUANT006 on its block-FP8 shared expert (the routed experts are MXFP4).
fn quant016() -> Vec<Case> {
    let official = || ModelFacts {
        deepseek_v4: Some(V4Layout {
            mxfp4_experts: true,
            nvfp4_experts: false,
            ..V4Layout::default()
        }),
        weight_block_size: Some((128, 128)),
        quant_method: Some("fp8".into()),
        num_experts: Some(384),
        moe_intermediate_size: Some(3072),
        n_shared_experts: Some(1),
        ..model("DeepseekV4ForCausalLM")
    };
    let v4 = |code, v, gpu| c(code).version(v).on(gpu).model(official());
    vec![
        v4("QUANT016", "0.5.15", H100)
            .tp(8)
            .arg("--moe-a2a-backend", json!("deepep")),
        v4("QUANT016", "0.5.15", H100)
            .tp(8)
            .arg("--moe-runner-backend", json!("deep_gemm")),
        v4("QUANT016", "0.5.15", H100)
            .tp(8)
            .arg("--moe-a2a-backend", json!("deepep"))
            .env("SGLANG_ENABLE_JIT_DEEPGEMM", "0")
            .no(),
        v4("QUANT016", "0.5.15", B200)
            .tp(8)
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        v4("QUANT016", "0.5.15", H100).tp(8).no(),
        v4("QUANT016", "0.5.16", H100)
            .tp(8)
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        // 3072 / TP 16 = 192: the shared expert's FP8 shards are not whole blocks...
        v4("QUANT006", "0.5.12", H100).tp(16),
        // ... unless it is replicated; the MXFP4 routed experts are not checked against 128.
        v4("QUANT006", "0.5.12", H100)
            .tp(16)
            .env("SGLANG_SHARED_EXPERT_TP1", "1")
            .no(),
        v4("QUANT006", "0.5.12", H100).tp(8).no(),
    ]
}

/// QUANT023: the FlashInfer CuteDSL MoE runner with weights other than NVFP4.
fn quant023() -> Vec<Case> {
    let on = |v, gpu| {
        c("QUANT023")
            .version(v)
            .on(gpu)
            .tp(4)
            .arg("--moe-runner-backend", json!("flashinfer_cutedsl"))
    };
    let nvfp4 = "synthetic__Qwen3-8B-modelopt-nvfp4";
    let hybrid = ModelFacts {
        nvfp4_moe_hybrid: true,
        quant_method: Some("fp8".into()),
        ..model("DeepseekV4ForCausalLM")
    };
    vec![
        // Unquantised Qwen3 MoE weights: the field stays unset, which the check refuses.
        on("0.5.23", B200).model(moe()),
        on("0.5.11", B200).model(moe()),
        on("0.5.10.post1", B200).model(moe()).no(),
        on("0.5.16", H100)
            .model(checkpoint(Q30))
            .arg("--quantization", json!("fp8")),
        on("0.5.23", B200)
            .arg("--quantization", json!("modelopt_fp4"))
            .no(),
        on("0.5.15", B200).arg("--quantization", json!("modelopt_mixed")),
        on("0.5.16", B200)
            .arg("--quantization", json!("modelopt_mixed"))
            .no(),
        on("0.5.17", B200).arg("--quantization", json!("nvfp4_online")),
        on("0.5.18", B200)
            .arg("--quantization", json!("nvfp4_online"))
            .no(),
        // NVIDIA's DeepSeek-V4 NVFP4 export (FP8 with NVFP4 experts): taken from 0.5.15.
        on("0.5.15", B200).model(hybrid.clone()).no(),
        on("0.5.14", B200).model(hybrid),
        // Nothing known about the weights, or an NVFP4 checkpoint without the option: quiet.
        on("0.5.23", B200).no(),
        on("0.5.23", H100).model(checkpoint(nvfp4)).no(),
    ]
}

/// A MoE checkpoint in compressed-tensors' FP8 W8A8 scheme (GLM-4.5-FP8's layout).
fn ct_fp8_moe() -> ModelFacts {
    ModelFacts {
        quant_method: Some("compressed-tensors".into()),
        compressed_schemes: vec![CompressedScheme::Fp8W8a8],
        ..moe()
    }
}

/// QUANT043: ModelOpt NVFP4 experts on the CUTLASS weight path, with a per-rank width it pads.
fn quant043() -> Vec<Case> {
    let nvfp4 = || checkpoint("synthetic__Qwen3-30B-A3B-modelopt-nvfp4");
    let line = |r: &str, v: &'static str, tp: i64| {
        c("QUANT043")
            .version(v)
            .on(B200)
            .tp(tp)
            .model(nvfp4())
            .arg("--moe-runner-backend", json!(r))
    };
    vec![
        // 768 / 8 = 96 rows per half: padded, and the experts are gated.
        line("triton", "0.5.23", 8),
        line("flashinfer_cutlass", "0.5.6", 8),
        line("flashinfer_cutedsl", "0.5.14", 8),
        // 768 / 4 = 192, or whole experts per rank under EP 8.
        line("triton", "0.5.23", 4).no(),
        line("triton", "0.5.23", 8).arg("--ep-size", json!(8)).no(),
        // Runners that align the weights themselves, `auto`, and a release before the padding.
        line("flashinfer_trtllm", "0.5.23", 8).no(),
        line("auto", "0.5.23", 8).no(),
        line("triton", "0.5.5", 8).no(),
    ]
}

/// QUANT044: a ModelOpt mixed-precision export read as w4afp8 builds Qwen3.6's 32-wide B/A
/// projection as 128×128 block FP8.
fn quant044() -> Vec<Case> {
    let mixed = || checkpoint("nvidia__Qwen3.6-35B-A3B-NVFP4");
    let line = |v: &'static str, tp: i64| c("QUANT044").version(v).on(H100).tp(tp).model(mixed());
    vec![
        // Read as w4afp8 (config.json names `modelopt`): 32 / 1, 32 / 4 are not whole blocks.
        line("0.5.13", 1),
        line("0.5.10rc0", 1),
        line("0.5.14", 4),
        // 0.5.15 reads it as modelopt_mixed; 0.5.9 as modelopt, with B and A built apart.
        line("0.5.15", 1).no(),
        line("0.5.9", 1).no(),
    ]
}
