//! PAR: tensor, pipeline and multi-node parallelism.

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;
use sglang_launch::facts::model::registry::RegistryKeys;

use crate::support::{
    B200, Case, assert_cases, c, heads, host, messages, mla, model, moe, no_rdma,
};

/// Every PAR case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [
        par001_to_par006(),
        par007_to_par008(),
        par013(),
        par014(),
        par015(),
        par016(),
        par017(),
        par018(),
        par019(),
        par020(),
        par021(),
        par022(),
        par023(),
        par024(),
        par025(),
        par026_to_par028(),
        par029(),
    ]
    .concat()
}

/// DWDP (PAR026), decode context parallelism (PAR027) and layer-norm SP (PAR028).
fn par026_to_par028() -> Vec<Case> {
    let dwdp = |n: i64| c("PAR026").tp(4).arg("--dwdp-size", json!(n));
    let dcp = |v: &'static str| c("PAR027").version(v).model(mla()).tp(8);
    let sp = |tp: i64| {
        c("PAR028")
            .tp(tp)
            .model(model("Qwen3ForCausalLM"))
            .flag("--enable-layernorm-sp")
    };
    vec![
        dwdp(2),
        dwdp(4).no(),
        dwdp(1).tp(8).no(),
        dwdp(4).arg("--disaggregation-mode", json!("decode")),
        dwdp(4).arg("--disaggregation-mode", json!("prefill")).no(),
        dwdp(4).flag("--enable-two-batch-overlap"),
        dwdp(4).arg("--speculative-algorithm", json!("NGRAM")),
        dcp("0.5.23").arg("--dcp-comm-backend", json!("a2a")),
        dcp("0.5.23")
            .arg("--dcp-size", json!(2))
            .arg("--dcp-comm-backend", json!("a2a"))
            .no(),
        dcp("0.5.23").flag("--dcp-replicate-q-proj"),
        dcp("0.5.19")
            .arg("--dcp-size", json!(2))
            .flag("--dcp-replicate-q-proj"),
        dcp("0.5.23")
            .arg("--dcp-size", json!(2))
            .flag("--dcp-replicate-q-proj")
            .no(),
        dcp("0.5.16")
            .arg("--dcp-size", json!(2))
            .arg("--speculative-algorithm", json!("NGRAM")),
        dcp("0.5.17")
            .arg("--dcp-size", json!(2))
            .arg("--speculative-algorithm", json!("NGRAM"))
            .no(),
        dcp("0.5.22")
            .arg("--dcp-size", json!(2))
            .flag("--enable-prefill-cp"),
        dcp("0.5.21")
            .arg("--dcp-size", json!(2))
            .flag("--enable-prefill-cp")
            .no(),
        dcp("0.5.15").arg("--dcp-size", json!(0)),
        dcp("0.5.17")
            .arg("--dcp-size", json!(2))
            .flag("--enable-hierarchical-cache")
            .no(),
        dcp("0.5.17")
            .model(model("LlamaForCausalLM"))
            .arg("--dcp-size", json!(2))
            .flag("--enable-hierarchical-cache"),
        dcp("0.5.22")
            .arg("--dcp-size", json!(2))
            .flag("--enable-hierarchical-cache")
            .arg("--hicache-storage-backend", json!("file")),
        dcp("0.5.23")
            .arg("--dcp-size", json!(2))
            .flag("--enable-hierarchical-cache")
            .arg("--hicache-storage-backend", json!("file"))
            .no(),
        dcp("0.5.23")
            .arg("--dcp-size", json!(2))
            .flag("--enable-hierarchical-cache")
            .arg("--hicache-storage-backend", json!("file"))
            .arg("--hicache-host-memory-mode", json!("buffer_only")),
        sp(4).no(),
        sp(4).model(model("LlamaForCausalLM")),
        sp(1),
        sp(4)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(2)),
        sp(2).arg("--pp-size", json!(2)),
        sp(2).version("0.5.21").arg("--pp-size", json!(2)).no(),
        c("PAR028").flag("--enable-megamoe-for-layernorm-sp"),
    ]
}

/// A model whose class in the release has no pipeline-parallel forward, under `--pp-size` > 1
/// (the table `scripts/gen-architectures.py` reads from each release's model modules).
fn par018() -> Vec<Case> {
    let named = |arch: &str| ModelFacts {
        registry: RegistryKeys {
            architectures: vec![arch.into()],
            ..Default::default()
        },
        ..model(arch)
    };
    let pp = |v, arch: &str| {
        c("PAR018")
            .version(v)
            .tp(8)
            .arg("--pp-size", json!(2))
            .model(named(arch))
    };
    vec![
        // MiniMax-M2 gained the pp_proxy_tensors forward in 0.5.10rc0; Kimi-K2.5 after 0.5.9.
        pp("0.5.9", "MiniMaxM2ForCausalLM"),
        pp("0.5.9", "KimiK25ForConditionalGeneration"),
        pp("0.5.10", "MiniMaxM2ForCausalLM").no(),
        pp("0.5.11", "KimiK25ForConditionalGeneration").no(),
        // Before 0.5.5.post1 the runner does not assert it; models with the forward never fire.
        pp("0.5.5", "MiniMaxM2ForCausalLM").no(),
        pp("0.5.9", "DeepseekV3ForCausalLM").no(),
        pp("0.5.9", "LlamaForCausalLM").no(),
        // Without PP, or with another implementation than SGLang's own class, nothing to say.
        c("PAR018")
            .version("0.5.9")
            .tp(8)
            .model(named("MiniMaxM2ForCausalLM"))
            .no(),
        pp("0.5.9", "MiniMaxM2ForCausalLM")
            .arg("--model-impl", json!("transformers"))
            .no(),
    ]
}

/// Decode context parallelism with any draft (0.5.15 and 0.5.16 on CUDA).
fn par017() -> Vec<Case> {
    let dcp = |v| {
        c("PAR017")
            .version(v)
            .tp(8)
            .arg("--dcp-size", json!(2))
            .arg("--speculative-algorithm", json!("NGRAM"))
    };
    vec![
        dcp("0.5.16"),
        dcp("0.5.15"),
        dcp("0.5.17").no(),
        c("PAR017")
            .version("0.5.16")
            .tp(8)
            .arg("--dcp-size", json!(2))
            .no(),
        c("PAR017")
            .version("0.5.16")
            .tp(8)
            .arg("--dcp-size", json!(1))
            .arg("--speculative-algorithm", json!("NGRAM"))
            .no(),
        // From 0.5.17 trtllm_mla decoding refuses it: SGLang's pick for DeepSeek on Blackwell.
        dcp("0.5.17").on(B200).model(mla()),
        dcp("0.5.23").on(B200).model(mla()),
        dcp("0.5.23")
            .on(B200)
            .model(mla())
            .arg("--decode-attention-backend", json!("cutedsl_mla"))
            .no(),
        dcp("0.5.23").model(mla()).no(),
        dcp("0.5.23")
            .on(B200)
            .model(mla())
            .arg("--dcp-size", json!(1))
            .no(),
    ]
}

/// Decode context parallelism for DeepSeek sparse attention (0.5.22+).
fn par016() -> Vec<Case> {
    let dsa = ModelFacts {
        index_topk: Some(2048),
        index_head_dim: Some(128),
        ..mla()
    };
    let dcp = |v| {
        c("PAR016")
            .version(v)
            .tp(8)
            .model(dsa.clone())
            .arg("--dcp-size", json!(2))
    };
    vec![
        dcp("0.5.23").arg("--disaggregation-mode", json!("prefill")),
        dcp("0.5.23").flag("--enable-hierarchical-cache"),
        dcp("0.5.23")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(4)),
        dcp("0.5.23")
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-eagle-topk", json!(1))
            .no(),
        dcp("0.5.23").no(),
        dcp("0.5.21")
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
        c("PAR016")
            .tp(8)
            .model(mla())
            .arg("--dcp-size", json!(2))
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
    ]
}

/// Prefill context parallelism needs a strategy (0.5.14+).
fn par015() -> Vec<Case> {
    vec![
        c("PAR015").tp(8).flag("--enable-prefill-cp"),
        c("PAR015")
            .tp(8)
            .flag("--enable-prefill-cp")
            .arg("--cp-strategy", json!("zigzag"))
            .no(),
        c("PAR015").tp(8).no(),
    ]
}

/// A PD decode server with DP above 1 needs --prefill-round-robin-balance (0.5.2-0.5.7).
fn par013() -> Vec<Case> {
    let decode = |v| {
        c("PAR013")
            .version(v)
            .tp(4)
            .arg("--dp-size", json!(4))
            .flag("--enable-dp-attention")
            .arg("--disaggregation-mode", json!("decode"))
    };
    vec![
        decode("0.5.5"),
        decode("0.5.2"),
        decode("0.5.7").flag("--prefill-round-robin-balance").no(),
        decode("0.5.8").no(),
        decode("0.5.1").no(),
        decode("0.5.5").env("SGLANG_IS_IN_CI", "true").no(),
        c("PAR013")
            .version("0.5.5")
            .tp(4)
            .arg("--dp-size", json!(4))
            .flag("--enable-dp-attention")
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
        c("PAR013")
            .version("0.5.5")
            .tp(4)
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        // DeepSeek's sparse-attention model: SGLang turns DP attention on itself (DP = TP in
        // 0.5.3-0.5.5; 0.5.6-0.5.7 keep the DP given).
        c("PAR013")
            .version("0.5.4")
            .tp(8)
            .model(dsa())
            .arg("--disaggregation-mode", json!("decode")),
        c("PAR013")
            .version("0.5.6")
            .tp(8)
            .model(dsa())
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
    ]
}

fn par001_to_par006() -> Vec<Case> {
    vec![
        c("PAR001").tp(8).model(heads(28, 4)),
        c("PAR001").tp(2).model(heads(32, 3)).no(),
        c("PAR011").tp(2).model(heads(32, 3)),
        c("PAR011").tp(8).model(heads(32, 8)).no(),
        c("PAR001").tp(8).model(heads(32, 8)).no(),
        c("PAR001").tp(8).model(heads(64, 2)).no(),
        c("PAR001").tp(8).model(mla()).no(),
        c("PAR002").tp(16).arg("--nnodes", json!(2)),
        c("PAR002")
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--dist-init-addr", json!("10.0.0.1:5000"))
            .no(),
        c("PAR003").tp(8).arg("--nnodes", json!(3)),
        c("PAR003").tp(8).arg("--nnodes", json!(2)).no(),
        c("PAR004")
            .arg("--pp-size", json!(2))
            .arg("--speculative-algorithm", json!("EAGLE")),
        c("PAR004").arg("--pp-size", json!(2)).no(),
        // 0.5.23 admits EAGLE with PP under SGLANG_ENABLE_PP_SPEC or on prefill nodes.
        c("PAR004")
            .arg("--pp-size", json!(2))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .env("SGLANG_ENABLE_PP_SPEC", "1")
            .no(),
        c("PAR004")
            .arg("--pp-size", json!(2))
            .arg("--speculative-algorithm", json!("NEXTN"))
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
        c("PAR004")
            .arg("--pp-size", json!(2))
            .arg("--speculative-algorithm", json!("EAGLE3"))
            .env("SGLANG_ENABLE_PP_SPEC", "1"),
        c("PAR004")
            .version("0.5.10.post1")
            .arg("--pp-size", json!(2))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .env("SGLANG_ENABLE_PP_SPEC", "1"),
        // Mixed chunked prefill: rejected with PP up to 0.5.10.post1, no longer in 0.5.23.
        c("PAR004")
            .version("0.5.10.post1")
            .arg("--pp-size", json!(2))
            .flag("--enable-mixed-chunk"),
        c("PAR004")
            .arg("--pp-size", json!(2))
            .flag("--enable-mixed-chunk")
            .no(),
        // A 64 GiB model fits one 8x H100 node: spanning is a pure loss.
        c("PAR005")
            .tp(16)
            .arg("--nnodes", json!(2))
            .model(ModelFacts {
                weight_bytes: Some(64 << 30),
                ..model("Qwen3ForCausalLM")
            }),
        // SGLang's documented DeepSeek recipe: too big for one node (QA regression).
        c("PAR005")
            .tp(16)
            .arg("--nnodes", json!(2))
            .model(ModelFacts {
                weight_bytes: Some(690_000_000_000),
                ..mla()
            })
            .no(),
        // Model unknown: no claim.
        c("PAR005").tp(16).arg("--nnodes", json!(2)).no(),
        // DP attention keeps the attention all-reduce inside a node.
        c("PAR005")
            .tp(16)
            .arg("--nnodes", json!(2))
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(16))
            .model(ModelFacts {
                weight_bytes: Some(64 << 30),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        c("PAR005")
            .tp(8)
            .arg("--pp-size", json!(2))
            .arg("--nnodes", json!(2))
            .no(),
        c("PAR006")
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--node-rank", json!(2)),
        c("PAR006")
            .tp(16)
            .arg("--nnodes", json!(2))
            .arg("--node-rank", json!(1))
            .no(),
    ]
}

fn par007_to_par008() -> Vec<Case> {
    vec![
        c("PAR007")
            .arg("--disaggregation-mode", json!("prefill"))
            .host(no_rdma()),
        c("PAR007")
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--disaggregation-transfer-backend", json!("nixl"))
            .host(no_rdma())
            .no(),
        c("PAR007").host(no_rdma()).no(),
        // Devices named on 0.5.9+: PAR023's error instead.
        c("PAR007")
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--disaggregation-ib-device", json!("mlx5_0"))
            .host(no_rdma())
            .no(),
        c("PAR007")
            .version("0.5.8")
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--disaggregation-ib-device", json!("mlx5_0"))
            .host(no_rdma()),
        c("PAR008").tp(8).arg("--moe-dense-tp-size", json!(2)),
        c("PAR008").tp(8).arg("--moe-dense-tp-size", json!(8)).no(),
        c("PAR008")
            .version("0.5.5")
            .tp(8)
            .arg("--moe-dense-tp-size", json!(8)),
        c("PAR008")
            .version("0.5.5")
            .tp(8)
            .arg("--moe-dense-tp-size", json!(1))
            .no(),
    ]
}

/// Decode host KV buffering (PAR024, 0.5.21+): the threshold's range and what the buffering
/// does not work with; 0.5.21 turns it on above 0, later releases below 1.
fn par024() -> Vec<Case> {
    let t = |v: &'static str, x: f64| {
        c("PAR024")
            .version(v)
            .arg("--disaggregation-decode-host-receive-threshold", json!(x))
    };
    vec![
        t("0.5.23", 1.5),
        t("0.5.23", 0.5).flag("--enable-hisparse"),
        t("0.5.23", 1.0).flag("--enable-hisparse").no(),
        t("0.5.21", 0.5).flag("--enable-pd-role-switch"),
        t("0.5.21", 0.0).flag("--enable-pd-role-switch").no(),
        t("0.5.23", 0.5).arg(
            "--disaggregation-decode-retraction-backup",
            json!("cpu_tensor"),
        ),
        t("0.5.23", 0.5)
            .arg(
                "--disaggregation-decode-retraction-backup",
                json!("host_pool"),
            )
            .no(),
        t("0.5.23", 0.5).no(),
    ]
}

/// The prefill-complete decode allocation policy (PAR025, 0.5.22+).
fn par025() -> Vec<Case> {
    let policy = |mode: &'static str| {
        c("PAR025")
            .arg(
                "--disaggregation-decode-allocation-policy",
                json!("prefill_complete"),
            )
            .arg("--disaggregation-mode", json!(mode))
    };
    vec![
        policy("null"),
        policy("decode").tp(8),
        // DP attention over every rank does not help: SGLang reads it as off in this check.
        policy("decode")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8)),
        policy("decode").no(),
        policy("prefill").arg("--disaggregation-transfer-backend", json!("nixl")),
        policy("prefill")
            .arg("--disaggregation-transfer-backend", json!("mooncake_tcp"))
            .no(),
        policy("decode").flag("--enable-hierarchical-cache"),
        policy("prefill")
            .flag("--enable-hierarchical-cache")
            .arg("--hicache-write-policy", json!("write_back"))
            .no(),
        policy("prefill").env("SGLANG_DISAGG_STAGING_BUFFER", "1"),
        c("PAR025")
            .arg("--disaggregation-mode", json!("decode"))
            .tp(8)
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("PAR", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

/// The decode layout options: not on a decode server; a prefill server's decode TP must divide
/// or be a multiple of its TP.
fn par014() -> Vec<Case> {
    let pd = |mode| {
        c("PAR014")
            .version("0.5.5")
            .arg("--disaggregation-mode", json!(mode))
    };
    vec![
        pd("decode").arg("--disaggregation-decode-tp", json!(2)),
        pd("decode").arg("--disaggregation-decode-dp", json!(2)),
        pd("decode").no(),
        pd("prefill")
            .tp(2)
            .arg("--disaggregation-decode-tp", json!(3)),
        pd("prefill")
            .tp(2)
            .arg("--disaggregation-decode-tp", json!(8))
            .no(),
        pd("prefill")
            .tp(8)
            .arg("--disaggregation-decode-tp", json!(2))
            .no(),
        pd("prefill").tp(2).no(),
    ]
}

/// PAR020: PD options of the other role, or without what they build on.
fn par020() -> Vec<Case> {
    let pd = |v, mode| {
        c("PAR020")
            .version(v)
            .arg("--disaggregation-mode", json!(mode))
    };
    let offload = "--disaggregation-decode-enable-offload-kvcache";
    let backup = "--disaggregation-decode-retraction-backup";
    let storage = |case: Case| case.arg("--hicache-storage-backend", json!("file"));
    vec![
        pd("0.5.3rc2", "prefill").flag(offload),
        pd("0.5.23", "null").flag(offload),
        // Host KV buffering sets the host-pool backup itself (0.5.21+).
        pd("0.5.23", "prefill").arg("--disaggregation-decode-host-receive-threshold", json!(0.5)),
        pd("0.5.23", "decode")
            .arg("--disaggregation-decode-host-receive-threshold", json!(0.5))
            .no(),
        // A decode server's offload needs a storage backend from 0.5.10rc0 on.
        pd("0.5.9", "decode").flag(offload).no(),
        pd("0.5.10rc0", "decode").flag(offload),
        storage(pd("0.5.23", "decode").flag(offload)).no(),
        storage(pd("0.5.18", "decode").flag(offload)).arg(backup, json!("host_pool")),
        pd("0.5.18", "prefill").arg(backup, json!("host_pool")),
        pd("0.5.23", "decode").arg(backup, json!("host_pool")).no(),
        pd("0.5.23", "decode").arg(backup, json!("cpu_tensor")).no(),
        pd("0.5.23", "decode")
            .arg(backup, json!("host_pool"))
            .arg("--dcp-size", json!(2)),
        pd("0.5.23", "decode")
            .arg(backup, json!("host_pool"))
            .flag("--enable-priority-scheduling"),
        pd("0.5.23", "decode")
            .arg(backup, json!("host_pool"))
            .flag("--enable-priority-scheduling")
            .flag("--disable-priority-preemption")
            .no(),
        // The fake backend stands in for a prefill server: on a decode server only (0.5.10rc0+).
        pd("0.5.10rc0", "prefill").arg("--disaggregation-transfer-backend", json!("fake")),
        pd("0.5.9", "prefill")
            .arg("--disaggregation-transfer-backend", json!("fake"))
            .no(),
        pd("0.5.23", "decode")
            .arg("--disaggregation-transfer-backend", json!("fake"))
            .no(),
        pd("0.5.23", "prefill").no(),
    ]
}

/// PAR021: a decode server's own radix cache: the transfer backends each release takes it over,
/// and never with HiSparse.
fn par021() -> Vec<Case> {
    let radix = |v, backend| {
        c("PAR021")
            .version(v)
            .arg("--disaggregation-mode", json!("decode"))
            .flag("--disaggregation-decode-enable-radix-cache")
            .arg("--disaggregation-transfer-backend", json!(backend))
    };
    vec![
        radix("0.5.11", "mooncake"),
        radix("0.5.11", "nixl").no(),
        radix("0.5.12", "mooncake").no(),
        radix("0.5.13", "mori"),
        radix("0.5.14", "mori").no(),
        radix("0.5.23", "fake"),
        radix("0.5.23", "nixl").flag("--enable-hisparse"),
        radix("0.5.23", "mooncake").no(),
        // Without the option, or off a decode server, there is no decode radix cache to check.
        c("PAR021")
            .version("0.5.11")
            .arg("--disaggregation-mode", json!("prefill"))
            .flag("--disaggregation-decode-enable-radix-cache")
            .no(),
    ]
}

/// PAR022: MoE DP runs only as the MoE side of attention CP of the same size.
fn par022() -> Vec<Case> {
    let moe_dp = |tp, n| {
        c("PAR022")
            .version("0.5.23")
            .tp(tp)
            .arg("--moe-dp-size", json!(n))
    };
    let cp = |case: Case, n| case.arg("--attn-cp-size", json!(n));
    vec![
        moe_dp(8, 2),
        cp(moe_dp(8, 2), 2).no(),
        cp(moe_dp(8, 2), 4),
        cp(moe_dp(6, 4), 4),
        cp(moe_dp(8, 2), 2).arg("--ep-size", json!(4)).no(),
        cp(moe_dp(8, 2), 2).arg("--ep-size", json!(2)),
        cp(moe_dp(4, 2), 2).arg("--pp-size", json!(2)),
        // Prefill CP sets the attention CP size itself.
        moe_dp(8, 2)
            .flag("--enable-prefill-cp")
            .arg("--cp-strategy", json!("interleave"))
            .no(),
        moe_dp(8, 1).no(),
        // Before 0.5.11 MoE DP alone is taken; its layout is checked from 0.5.9.
        moe_dp(8, 2).version("0.5.10.post1").no(),
        moe_dp(6, 4).version("0.5.9"),
        // The layout is asserted before an all-to-all backend sets EP to TP: SGLang takes these.
        cp(moe_dp(4, 2), 2)
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
        moe_dp(4, 2)
            .version("0.5.9")
            .arg("--moe-a2a-backend", json!("deepep"))
            .no(),
    ]
}

/// PAR023: the RDMA devices named for mooncake, against the host's (two: mlx5_0 and mlx5_1).
fn par023() -> Vec<Case> {
    let ib = |v, devices| {
        c("PAR023")
            .version(v)
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--disaggregation-ib-device", json!(devices))
    };
    let rdma = || host(true, Some(16 << 30));
    vec![
        ib("0.5.23", "mlx5_0").host(no_rdma()),
        ib("0.5.23", "mlx5_0,mlx5_1").host(rdma()).no(),
        ib("0.5.23", "mlx5_0, mlx5_bond_0").host(rdma()),
        // A per-GPU mapping is checked for the class only.
        ib("0.5.23", r#"{"0": "mlx5_9"}"#).host(rdma()).no(),
        ib("0.5.23", r#"{"0": "mlx5_0"}"#).host(no_rdma()),
        // Before 0.5.13 a mapping is split into names: a repeated device in 0.5.9 (sglang#20241).
        ib("0.5.12", r#"{"0": "mlx5_0"}"#).host(rdma()),
        ib(
            "0.5.9",
            r#"{"0":"mlx5_0,mlx5_1","1":"mlx5_0,mlx5_1","2":"mlx5_2"}"#,
        ),
        // Naming no device fails anywhere; without the host's devices nothing else is known.
        ib("0.5.9", " , "),
        ib("0.5.23", "mlx5_0").no(),
        // 0.5.9 refuses a device named twice; later releases drop the repeat.
        ib("0.5.9", "mlx5_0,mlx5_0").host(rdma()),
        ib("0.5.10rc0", "mlx5_0,mlx5_0").host(rdma()).no(),
        // Before 0.5.9, over another backend, or without PD, SGLang reads no device here.
        ib("0.5.8", "mlx5_0").host(no_rdma()).no(),
        ib("0.5.23", "mlx5_0")
            .arg("--disaggregation-transfer-backend", json!("nixl"))
            .host(no_rdma())
            .no(),
        c("PAR023")
            .version("0.5.23")
            .arg("--disaggregation-ib-device", json!("mlx5_0"))
            .host(no_rdma())
            .no(),
    ]
}

/// PAR019: sparse-attention prefill context parallelism across nodes or on a decode server.
fn par019() -> Vec<Case> {
    let cp = |v, tp| {
        c("PAR019")
            .version(v)
            .tp(tp)
            .model(dsa())
            .flag("--enable-nsa-prefill-context-parallel")
    };
    vec![
        cp("0.5.9", 16).arg("--nnodes", json!(2)),
        cp("0.5.6", 4),
        // 0.5.12 lets TP go below 8 on one machine; across two it still refuses.
        cp("0.5.12", 16).arg("--nnodes", json!(2)),
        cp("0.5.13", 4).no(),
        cp("0.5.9", 8).arg("--disaggregation-mode", json!("decode")),
        cp("0.5.13", 8).arg("--disaggregation-mode", json!("decode")),
        cp("0.5.7", 8)
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        cp("0.5.9", 8)
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
        cp("0.5.9", 8).no(),
        c("PAR019")
            .version("0.5.9")
            .tp(16)
            .arg("--nnodes", json!(2))
            .model(mla())
            .flag("--enable-nsa-prefill-context-parallel")
            .no(),
    ]
}

/// DeepSeek-V3.2's sparse attention (an indexer top-k on the DeepSeek-V3 architecture).
fn dsa() -> ModelFacts {
    ModelFacts {
        index_topk: Some(2048),
        ..mla()
    }
}

/// PAR029: PD role switching with what a role flip does not rebuild (0.5.21+).
fn par029() -> Vec<Case> {
    let switch = |mode: &'static str| {
        c("PAR029")
            .model(moe())
            .arg("--disaggregation-mode", json!(mode))
            .flag("--enable-pd-role-switch")
    };
    vec![
        switch("prefill").tp(2).arg("--ep-size", json!(2)),
        switch("prefill").no(),
        switch("prefill").tp(2).arg("--pp-size", json!(2)),
        switch("prefill").arg("--speculative-algorithm", json!("NGRAM")),
        switch("prefill").tp(2).arg("--dcp-size", json!(2)),
        switch("prefill")
            .tp(2)
            .arg("--moe-a2a-backend", json!("deepep")),
        // Attention DP: refused to 0.5.22; 0.5.23 refuses only its local control broadcast.
        switch("decode")
            .version("0.5.22")
            .tp(2)
            .arg("--attn-dp-size", json!(2)),
        switch("decode").tp(2).arg("--attn-dp-size", json!(2)).no(),
        switch("decode")
            .tp(2)
            .arg("--attn-dp-size", json!(2))
            .flag("--enable-dp-attention-local-control-broadcast"),
        // Not a PD server: no role to switch.
        c("PAR029")
            .model(moe())
            .tp(2)
            .flag("--enable-pd-role-switch")
            .arg("--ep-size", json!(2))
            .no(),
    ]
}
