//! ARCH: features gated on the GPU architecture (FlashInfer fusion, TRT-LLM kernels, DeepGEMM,
//! symmetric memory).

use serde_json::json;

use sglang_launch::facts::model::ModelFacts;
use sglang_launch::facts::model::deepseek_v4::V4Layout;

use crate::support::{
    A100, B200, Case, H100, L4, PRO, T4, V100, assert_cases, b300, c, dsa, messages, mla, model,
    moe,
};

/// Every ARCH case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [
        arch001_to_arch005(),
        arch006_to_arch010(),
        arch013(),
        arch014(),
        arch015(),
        arch016(),
        arch018(),
        arch021(),
        arch022(),
        arch017(),
        arch019(),
    ]
    .concat()
}

/// Deterministic inference in float16 on GPUs with 99 KB (or less) of shared memory per block.
fn arch014() -> Vec<Case> {
    let det = |on| {
        c("ARCH014")
            .version("0.5.17")
            .on(on)
            .tp(1)
            .flag("--enable-deterministic-inference")
    };
    let fp16 = ModelFacts {
        dtype: Some("float16".into()),
        ..model("Qwen3ForCausalLM")
    };
    let bf16 = ModelFacts {
        dtype: Some("bfloat16".into()),
        ..model("Qwen3ForCausalLM")
    };
    vec![
        det(L4).arg("--dtype", json!("float16")),
        det(L4).arg("--dtype", json!("half")),
        det(T4).arg("--dtype", json!("float16")),
        // A float16 checkpoint under the default dtype (auto) runs in float16.
        det(L4).model(fp16.clone()),
        det(L4).model(fp16.clone()).arg("--dtype", json!("auto")),
        // bfloat16 takes the 128×128 tile, which fits.
        det(L4).model(bf16.clone()).no(),
        det(L4).model(fp16).arg("--dtype", json!("bfloat16")).no(),
        // The dtype is unknown: no model facts, no --dtype.
        det(L4).no(),
        // A100 blocks take 163 KB.
        det(A100).arg("--dtype", json!("float16")).no(),
        // Without deterministic inference SGLang's own GEMMs run.
        c("ARCH014")
            .version("0.5.17")
            .on(L4)
            .tp(1)
            .arg("--dtype", json!("float16"))
            .no(),
        det(PRO).model(bf16).no(),
    ]
}

/// JIT DeepGEMM off for a DSA model: 0.5.3–0.5.9 capture CUDA graphs through a wrapper that
/// never imported DeepGEMM.
fn arch017() -> Vec<Case> {
    let dsa = dsa("DeepseekV32ForCausalLM");
    let off = |v| {
        c("ARCH017")
            .version(v)
            .on(H100)
            .tp(8)
            .model(dsa.clone())
            .env("SGLANG_ENABLE_JIT_DEEPGEMM", "0")
    };
    vec![
        off("0.5.6.post2"),
        off("0.5.9"),
        // SGLang's boolean parser reads "false" too; the SGL_ alias is read as well.
        c("ARCH017")
            .version("0.5.5")
            .on(H100)
            .tp(8)
            .model(dsa.clone())
            .env("SGL_ENABLE_JIT_DEEPGEMM", "False"),
        // 0.5.10 returns early when DeepGEMM is off.
        off("0.5.10").no(),
        // Without CUDA graphs nothing is captured.
        off("0.5.6").flag("--disable-cuda-graph").no(),
        // The indexer's dual stream can be switched off before 0.5.8 (not after).
        off("0.5.6").env("SGLANG_NSA_DUAL_STREAM", "false").no(),
        off("0.5.8").env("SGLANG_NSA_DUAL_STREAM", "false"),
        // DeepGEMM left on, or a model without sparse attention.
        c("ARCH017")
            .version("0.5.6")
            .on(H100)
            .tp(8)
            .model(dsa.clone())
            .env("SGLANG_ENABLE_JIT_DEEPGEMM", "1")
            .no(),
        c("ARCH017")
            .version("0.5.6")
            .on(H100)
            .tp(8)
            .model(mla())
            .env("SGLANG_ENABLE_JIT_DEEPGEMM", "0")
            .no(),
    ]
}

/// A block-FP8 checkpoint on SM 10.3 with JIT DeepGEMM on 0.5.12 (sgl-deep-gemm 0.1.0).
fn arch018() -> Vec<Case> {
    let fp8 = || ModelFacts {
        weight_block_size: Some((128, 128)),
        ..mla()
    };
    let line = |v| {
        c("ARCH018")
            .version(v)
            .on(B200)
            .edit(b300)
            .tp(8)
            .model(fp8())
    };
    vec![
        line("0.5.12"),
        line("0.5.12.post1"),
        // The user's own setting of the variable: reported, not changed (the snapshot shows).
        line("0.5.12").env("SGL_ENABLE_JIT_DEEPGEMM", "1"),
        line("0.5.11").no(),
        line("0.5.13").no(),
        line("0.5.12").env("SGLANG_ENABLE_JIT_DEEPGEMM", "0").no(),
        line("0.5.12")
            .arg("--fp8-gemm-backend", json!("cutlass"))
            .no(),
        line("0.5.12").pkgs(&[("sgl-deep-gemm", "0.1.2")]).no(),
        // B200 (SM 10.0) and a checkpoint without FP8 blocks are not affected.
        c("ARCH018")
            .version("0.5.12")
            .on(B200)
            .tp(8)
            .model(fp8())
            .no(),
        c("ARCH018")
            .version("0.5.12")
            .on(B200)
            .edit(b300)
            .tp(8)
            .model(mla())
            .no(),
    ]
}

/// ARCH004 for GLM-5 on `gpu` with one DSA backend option set.
fn glm_dsa(version: &'static str, gpu: &'static str, option: &'static str, value: &str) -> Case {
    c("ARCH004")
        .version(version)
        .on(gpu)
        .model(glm5())
        .arg(option, json!(value))
}

/// GLM-5's layout.
fn glm5() -> ModelFacts {
    dsa("GlmMoeDsaForCausalLM")
}

/// A DeepSeek-sparse-attention model on SM12x, whose indexer needs DeepGEMM's SM120 kernels
/// (first in sgl-deep-gemm 0.1.5, 0.5.17's pin).
fn arch016() -> Vec<Case> {
    let glm = |v| {
        c("ARCH016")
            .version(v)
            .on(PRO)
            .tp(8)
            .model(dsa("GlmMoeDsaForCausalLM"))
    };
    vec![
        glm("0.5.12"),
        glm("0.5.16"),
        c("ARCH016")
            .version("0.5.5")
            .on(PRO)
            .tp(8)
            .model(dsa("DeepseekV32ForCausalLM")),
        // 0.5.17 pins sgl-deep-gemm 0.1.5.post1, which has the kernels.
        glm("0.5.17").no(),
        // Another attention backend gives the indexer no metadata: dense attention, no
        // DeepGEMM (GLM-5.2-NVFP4 served this way on 0.5.15.post1); a DSA prefill still runs it.
        glm("0.5.15")
            .arg("--attention-backend", json!("triton"))
            .no(),
        glm("0.5.15")
            .arg("--prefill-attention-backend", json!("dsa"))
            .arg("--decode-attention-backend", json!("triton")),
        glm("0.5.15").arg("--attention-backend", json!("dsa")),
        // An sgl-deep-gemm with SM120 kernels installed by hand (0.5.12+ import it).
        glm("0.5.14").pkgs(&[("sgl-deep-gemm", "0.1.5.post1")]).no(),
        glm("0.5.14").pkgs(&[("sgl-deep-gemm", "0.1.4.post1")]),
        // Hopper and SM100 have the kernels; a config without index_topk runs no indexer.
        c("ARCH016")
            .version("0.5.12")
            .on(H100)
            .tp(8)
            .model(dsa("GlmMoeDsaForCausalLM"))
            .no(),
        c("ARCH016")
            .version("0.5.12")
            .on(PRO)
            .tp(8)
            .model(ModelFacts {
                index_topk: None,
                ..dsa("DeepseekV3ForCausalLM")
            })
            .no(),
    ]
}

/// DSpark on SM12x meets a FlashInfer without the top-k 192 decode instance (0.5.16–0.5.18).
fn arch013() -> Vec<Case> {
    let dspark = |v| {
        c("ARCH013")
            .version(v)
            .on(PRO)
            .tp(2)
            .model(model("DeepseekV4ForCausalLM"))
            .arg("--speculative-algorithm", json!("DSPARK"))
    };
    vec![
        dspark("0.5.16"),
        dspark("0.5.18"),
        // A model the launcher could not read may be a Qwen3 target, which DSpark also drafts for.
        c("ARCH013")
            .version("0.5.16")
            .on(PRO)
            .tp(2)
            .arg("--speculative-algorithm", json!("DSPARK"))
            .no(),
        // The installed FlashInfer is what runs: 0.6.18 has the instance, 0.6.17 does not.
        dspark("0.5.18")
            .pkgs(&[("flashinfer-python", "0.6.18")])
            .no(),
        dspark("0.5.17").pkgs(&[("flashinfer-python", "0.6.17")]),
        // SGLang 0.5.19 pins FlashInfer 0.6.18.
        dspark("0.5.19").no(),
        // The Triton fallback does not go through FlashInfer.
        dspark("0.5.16")
            .env("SGLANG_SM120_FLASHMLA_BACKEND", "triton")
            .no(),
        dspark("0.5.16").env("SGLANG_SM120_FLASHMLA_BACKEND", "flashinfer"),
        // Hopper and SM100 take other kernels.
        c("ARCH013")
            .version("0.5.16")
            .on(B200)
            .tp(2)
            .arg("--speculative-algorithm", json!("DSPARK"))
            .no(),
    ]
}

fn arch001_to_arch005() -> Vec<Case> {
    vec![
        c("ARCH001")
            .on(PRO)
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion"),
        c("ARCH001")
            .on(PRO)
            .tp(8)
            .arg("--flashinfer-allreduce-fusion-backend", json!("trtllm")),
        c("ARCH001")
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH001")
            .version("0.5.5")
            .on(PRO)
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion")
            .no(),
        // SGLang's own auto-enable reached SM12x for Qwen3 MoE in 0.5.7 only (0.5.8 gates
        // SM90/SM100), for GPT-OSS from 0.5.4.post2 to 0.5.7.
        c("ARCH001").version("0.5.7").on(PRO).tp(8).model(moe()),
        c("ARCH001")
            .version("0.5.8")
            .on(PRO)
            .tp(8)
            .model(moe())
            .no(),
        c("ARCH001")
            .version("0.5.6")
            .on(PRO)
            .tp(8)
            .model(mla())
            .no(),
        c("ARCH001")
            .version("0.5.6")
            .on(PRO)
            .tp(8)
            .model(model("GptOssForCausalLM")),
        c("ARCH001")
            .version("0.5.10.post1")
            .on(PRO)
            .tp(8)
            .model(moe())
            .no(),
        c("ARCH001")
            .version("0.5.10.post1")
            .on(PRO)
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH002")
            .version("0.5.5")
            .on(PRO)
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion"),
        c("ARCH002")
            .version("0.5.5")
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH002")
            .version("0.5.10.post1")
            .on(PRO)
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion"),
        c("ARCH002")
            .version("0.5.10.post1")
            .on(PRO)
            .flag("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH003")
            .version("0.5.10.post1")
            .tp(16)
            .arg("--nnodes", json!(2))
            .flag("--enable-flashinfer-allreduce-fusion"),
        c("ARCH003")
            .version("0.5.10.post1")
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH003")
            .on(B200)
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--flashinfer-allreduce-fusion-backend", json!("mnnvl"))
            .no(),
        c("ARCH004")
            .on(PRO)
            .arg("--decode-attention-backend", json!("trtllm_mla")),
        c("ARCH004")
            .on(PRO)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .no(),
        c("ARCH004")
            .on(B200)
            .arg("--decode-attention-backend", json!("trtllm_mla"))
            .no(),
        // The trtllm DSA backend runs the same trtllm-gen MLA kernels.
        glm_dsa("0.5.20", PRO, "--dsa-decode-backend", "trtllm"),
        c("ARCH004")
            .version("0.5.20")
            .on(PRO)
            .arg("--dsa-prefill-backend", json!("trtllm")),
        glm_dsa("0.5.12", PRO, "--nsa-prefill-backend", "trtllm"),
        // From 0.5.13 --nsa-* is an alias of --dsa-*: one option, named once.
        glm_dsa("0.5.17", PRO, "--nsa-prefill-backend", "trtllm"),
        glm_dsa("0.5.20", B200, "--dsa-decode-backend", "trtllm").no(),
        // Another attention backend named: the DSA backends are not built.
        glm_dsa("0.5.20", PRO, "--dsa-decode-backend", "trtllm")
            .arg("--attention-backend", json!("triton"))
            .no(),
        // A model without sparse attention never builds the DSA backend.
        c("ARCH004")
            .version("0.5.20")
            .on(PRO)
            .model(mla())
            .arg("--dsa-decode-backend", json!("trtllm"))
            .no(),
        glm_dsa(
            "0.5.20",
            PRO,
            "--dsa-decode-backend",
            "flashinfer_sparse_mla",
        )
        .no(),
        c("ARCH011")
            .on(PRO)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm")),
        c("ARCH011")
            .on(B200)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .no(),
        // 0.5.2–0.5.9 pin a FlashInfer that builds the trtllm-gen MoE module for 10.x only.
        c("ARCH020")
            .version("0.5.9")
            .on(PRO)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm")),
        c("ARCH020")
            .version("0.5.2")
            .on(PRO)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm")),
        c("ARCH011")
            .version("0.5.9")
            .on(PRO)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .no(),
        c("ARCH020")
            .version("0.5.10")
            .on(PRO)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .no(),
        c("ARCH020")
            .version("0.5.9")
            .on(B200)
            .arg("--moe-runner-backend", json!("flashinfer_trtllm"))
            .no(),
        // SGLang's model runner stops below SM75 (major < 8 and minor < 5) in every release.
        c("ARCH012").on(V100).tp(1),
        c("ARCH012").version("0.4.6.post5").on(V100).tp(1),
        c("ARCH012").on(T4).tp(1).no(),
        c("ARCH012").on(A100).tp(1).no(),
        c("ARCH012")
            .on(V100)
            .tp(1)
            .arg("--device", json!("cpu"))
            .no(),
        c("ARCH005")
            .on(PRO)
            .arg("--moe-runner-backend", json!("deep_gemm")),
        c("ARCH005").on(PRO).model(model("DeepseekV32ForCausalLM")),
        c("ARCH005")
            .arg("--moe-runner-backend", json!("deep_gemm"))
            .no(),
    ]
}

fn arch006_to_arch010() -> Vec<Case> {
    vec![
        c("ARCH006")
            .version("0.5.10.post1")
            .on(PRO)
            .tp(8)
            .flag("--enable-torch-symm-mem"),
        c("ARCH006")
            .version("0.5.10.post1")
            .tp(8)
            .flag("--enable-torch-symm-mem")
            .no(),
        c("ARCH006")
            .on(PRO)
            .tp(8)
            .flag("--enable-torch-symm-mem")
            .no(),
        c("ARCH007").on(PRO).tp(8).flag("--enable-torch-symm-mem"),
        c("ARCH007").on(A100).tp(8).flag("--enable-torch-symm-mem"),
        c("ARCH007")
            .version("0.5.10.post1")
            .on(PRO)
            .tp(8)
            .flag("--enable-torch-symm-mem")
            .no(),
        c("ARCH007").tp(3).flag("--enable-torch-symm-mem"),
        c("ARCH007")
            .on("4x-a100-pcie-40gb-nvlink-pairs")
            .tp(4)
            .flag("--enable-torch-symm-mem"),
        c("ARCH007").tp(8).flag("--enable-torch-symm-mem").no(),
        c("ARCH008")
            .version("0.5.2")
            .on(PRO)
            .model(model("GptOssForCausalLM")),
        c("ARCH008")
            .version("0.5.2")
            .model(model("GptOssForCausalLM"))
            .no(),
        c("ARCH009").arg("--moe-a2a-backend", json!("flashinfer_megamoe")),
        c("ARCH009")
            .on(B200)
            .arg("--moe-a2a-backend", json!("flashinfer_megamoe"))
            .no(),
        c("ARCH010")
            .version("0.5.10.post1")
            .on("8x-h20-nvlink")
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion"),
        c("ARCH010")
            .version("0.5.10.post1")
            .on("8x-h200-nvlink")
            .tp(8)
            .flag("--enable-flashinfer-allreduce-fusion")
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("ARCH", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

/// The DeepGEMM MegaMoE all-to-all (0.5.21+): SM90/SM100 only, no batch overlap.
fn arch015() -> Vec<Case> {
    let mega = |v, on| {
        c("ARCH015")
            .version(v)
            .on(on)
            .tp(8)
            .model(moe())
            .arg("--moe-a2a-backend", json!("megamoe"))
    };
    vec![
        mega("0.5.21", A100),
        mega("0.5.23", PRO),
        mega("0.5.23", H100).no(),
        mega("0.5.23", B200).no(),
        mega("0.5.23", H100).flag("--enable-two-batch-overlap"),
        // Before 0.5.21 SGLang does not check.
        mega("0.5.18", A100).no(),
    ]
}

/// ARCH019: DeepSeek-V4 NVFP4 exports with SGLang's own MoE runner pick on SM12x (0.5.14-0.5.18).
fn arch019() -> Vec<Case> {
    let export = |nvfp4_experts| ModelFacts {
        deepseek_v4: Some(V4Layout {
            nvfp4_experts,
            ..V4Layout::default()
        }),
        ..model("DeepseekV4ForCausalLM")
    };
    let v4 = |v, gpu| c("ARCH019").version(v).on(gpu).tp(8).model(export(true));
    vec![
        // The GCP recipe's first run: nvidia/DeepSeek-V4-Pro-NVFP4 on RTX PRO 6000s, 0.5.14.
        v4("0.5.14", PRO),
        v4("0.5.18", PRO).arg("--moe-runner-backend", json!("auto")),
        v4("0.5.14", PRO)
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        v4("0.5.14", B200).no(),
        v4("0.5.13", PRO).no(),
        v4("0.5.19", PRO).no(),
        c("ARCH019")
            .version("0.5.14")
            .on(PRO)
            .tp(8)
            .model(export(false))
            .no(),
    ]
}

/// ARCH021: the AMD monokernel on NVIDIA GPUs (0.5.23).
fn arch021() -> Vec<Case> {
    vec![
        c("ARCH021").flag("--enable-amd-monokernel"),
        c("ARCH021").arg("--monokernel-backend", json!(true)),
        c("ARCH021").flag("--enable-nvidia-megakernel").no(),
        c("ARCH021").no(),
    ]
}

/// The CuteDSL MoE runner off compute capability 10.x (0.5.12+): FlashInfer builds its MoE
/// wrapper's helpers for 10.x only.
fn arch022() -> Vec<Case> {
    let cutedsl = |topo, v| {
        c("ARCH022")
            .on(topo)
            .version(v)
            .model(moe())
            .arg("--quantization", json!("modelopt_fp4"))
            .arg("--moe-runner-backend", json!("flashinfer_cutedsl"))
    };
    vec![
        cutedsl(PRO, "0.5.12"),
        cutedsl(PRO, "0.5.23"),
        cutedsl(H100, "0.5.14"),
        cutedsl(B200, "0.5.14").no(),
        cutedsl(PRO, "0.5.10").no(),
        cutedsl(PRO, "0.5.14")
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        cutedsl(PRO, "0.5.14")
            .arg("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        // The draft's runner is left alone (an EAGLE head builds no MoE), and so is a dense model.
        c("ARCH022")
            .on(PRO)
            .version("0.5.14")
            .model(moe())
            .arg(
                "--speculative-moe-runner-backend",
                json!("flashinfer_cutedsl"),
            )
            .no(),
        cutedsl(PRO, "0.5.14").model(model("Qwen3ForCausalLM")).no(),
    ]
}
