//! CACHE: radix and hierarchical caches, page sizes, chunked prefill.

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;

use crate::support::{B200, Case, H100, PRO, assert_cases, c, messages, mla, model};

/// Every CACHE case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [
        base(),
        cache007(),
        cache008(),
        cache009(),
        cache010(),
        cache011(),
        cache012(),
        cache013(),
        cache014(),
        cache015(),
        cache016(),
        cache017(),
        cache018(),
        cache019(),
        cache020(),
        cache021(),
        cache022(),
        cache023(),
        cache024(),
        cache025(),
        cache026(),
        cache027(),
    ]
    .concat()
}

/// EAGLE with HiCache's Mooncake store as a standalone store's dummy client (CACHE027,
/// 0.5.13-0.5.14): the draft's host pool is not from Mooncake's allocator.
fn cache027() -> Vec<Case> {
    const STANDALONE: &str =
        r#"{"standalone_storage": true, "client_server_address": "127.0.0.1:50052"}"#;
    let line = |v, algo: &str, extra: &str| {
        c("CACHE027")
            .version(v)
            .arg("--speculative-algorithm", json!(algo))
            .flag("--enable-hierarchical-cache")
            .arg("--hicache-storage-backend", json!("mooncake"))
            .arg("--hicache-storage-backend-extra-config", json!(extra))
    };
    let plain = r#"{"master_server_address": "10.0.0.1:50051"}"#;
    vec![
        line("0.5.13", "EAGLE", STANDALONE),
        line("0.5.14", "EAGLE3", STANDALONE),
        line("0.5.12", "EAGLE", STANDALONE).no(),
        line("0.5.15", "EAGLE", STANDALONE).no(),
        line("0.5.13", "NGRAM", STANDALONE).no(),
        line("0.5.13", "EAGLE", plain).no(),
        // Without a server address in the extra config the store reads the environment.
        line("0.5.13", "EAGLE", "{}").env("MOONCAKE_STANDALONE_STORAGE", "1"),
        line("0.5.13", "EAGLE", "{}")
            .env("MOONCAKE_STANDALONE_STORAGE", "1")
            .env("SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", "/etc/mooncake.json")
            .no(),
        line("0.5.13", "EAGLE", plain)
            .env("MOONCAKE_STANDALONE_STORAGE", "1")
            .no(),
    ]
}

/// The session radix cache on the priority eviction policy only (CACHE026, 0.5.15-0.5.16).
fn cache026() -> Vec<Case> {
    let session = |v| {
        c("CACHE026")
            .version(v)
            .flag("--enable-session-radix-cache")
    };
    vec![
        session("0.5.16"),
        session("0.5.15").arg("--radix-eviction-policy", json!("lfu")),
        session("0.5.16")
            .arg("--radix-eviction-policy", json!("priority"))
            .no(),
        session("0.5.17").no(),
        c("CACHE026").version("0.5.16").no(),
    ]
}

/// HiSparse's requirements (CACHE019): the radix cache off, a sparse-attention model, no mixed
/// chunks.
fn cache019() -> Vec<Case> {
    let dsa = || ModelFacts {
        index_topk: Some(2048),
        ..mla()
    };
    let hisparse = |m: ModelFacts| c("CACHE019").model(m).flag("--enable-hisparse");
    vec![
        hisparse(dsa()),
        hisparse(dsa()).flag("--disable-radix-cache").no(),
        hisparse(dsa())
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        hisparse(model("LlamaForCausalLM")).flag("--disable-radix-cache"),
        hisparse(mla())
            .version("0.5.10rc0")
            .flag("--disable-radix-cache")
            .no(),
        hisparse(model("DeepseekV4ForCausalLM"))
            .flag("--disable-radix-cache")
            .no(),
        hisparse(model("DeepseekV4ForCausalLM"))
            .version("0.5.11")
            .flag("--disable-radix-cache"),
        hisparse(dsa())
            .flag("--disable-radix-cache")
            .flag("--enable-mixed-chunk"),
        hisparse(dsa())
            .version("0.5.21")
            .flag("--disable-radix-cache")
            .flag("--enable-mixed-chunk")
            .no(),
    ]
}

/// FlashInfer GDN decode named with the no_buffer Mamba strategy (0.5.10.x).
fn cache017() -> Vec<Case> {
    let fi = |arch: &str, v| {
        c("CACHE017")
            .version(v)
            .model(model(arch))
            .arg("--linear-attn-decode-backend", json!("flashinfer"))
    };
    let qwen = |v| fi("Qwen3_5MoeForConditionalGeneration", v);
    vec![
        qwen("0.5.10"),
        qwen("0.5.10.post1"),
        qwen("0.5.10.post1").flag("--disable-radix-cache"),
        qwen("0.5.10.post1").on(B200),
        fi("NemotronHForCausalLM", "0.5.10.post1"),
        fi("FalconH1ForCausalLM", "0.5.10.post1"),
        qwen("0.5.11").no(),
        qwen("0.5.10.post1")
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
            .no(),
        fi("LlamaForCausalLM", "0.5.10.post1").no(),
        // Only the decode option is read in this step.
        c("CACHE017")
            .version("0.5.10.post1")
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg("--linear-attn-backend", json!("flashinfer"))
            .no(),
    ]
}

/// The Mamba radix cache without the extra buffer and pages above one (0.5.4–0.5.10.post1).
fn cache016() -> Vec<Case> {
    let paged = |arch: &str, v| {
        c("CACHE016")
            .version(v)
            .model(model(arch))
            .arg("--page-size", json!(64))
    };
    let next = |v| paged("Qwen3NextForCausalLM", v);
    vec![
        next("0.5.4"),
        next("0.5.9"),
        next("0.5.10.post1"),
        // SGLang sets the page size to 1 itself from 0.5.11.
        next("0.5.11").no(),
        paged("Qwen3_5MoeForConditionalGeneration", "0.5.9"),
        paged("NemotronHForCausalLM", "0.5.7"),
        // Before 0.5.7 the scheduler gives NemotronH the plain radix cache.
        paged("NemotronHForCausalLM", "0.5.6").no(),
        next("0.5.9").flag("--disable-radix-cache").no(),
        next("0.5.9")
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
            .no(),
        next("0.5.9").flag("--enable-hierarchical-cache").no(),
        next("0.5.9")
            .env("SGLANG_EXPERIMENTAL_CPP_RADIX_TREE", "1")
            .no(),
        // A draft turns the radix cache off in these releases' Mamba handling.
        next("0.5.9")
            .arg("--speculative-algorithm", json!("NEXTN"))
            .no(),
        next("0.5.9")
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        c("CACHE016")
            .version("0.5.9")
            .model(model("Qwen3NextForCausalLM"))
            .no(),
        paged("LlamaForCausalLM", "0.5.9").no(),
    ]
}

/// The Mamba extra buffer with the radix cache off (0.5.10–0.5.13).
fn cache015() -> Vec<Case> {
    let extra = |arch: &str, v| {
        c("CACHE015")
            .version(v)
            .model(model(arch))
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
            .flag("--disable-radix-cache")
    };
    vec![
        extra("Qwen3_5MoeForConditionalGeneration", "0.5.10"),
        extra("Qwen3_5MoeForConditionalGeneration", "0.5.13"),
        extra("Qwen3_5MoeForConditionalGeneration", "0.5.9").no(),
        extra("Qwen3_5MoeForConditionalGeneration", "0.5.14").no(),
        extra("NemotronHForCausalLM", "0.5.13"),
        // CACHE012's: the branch refuses the extra buffer itself.
        extra("NemotronHForCausalLM", "0.5.12").no(),
        c("CACHE015")
            .version("0.5.13")
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
            .no(),
    ]
}

/// The no_buffer Mamba cache's own checks (0.5.14+).
fn cache014() -> Vec<Case> {
    let qwen = |v| {
        c("CACHE014")
            .version(v)
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg("--mamba-radix-cache-strategy", json!("no_buffer"))
    };
    let lfm2 = |v| c("CACHE014").version(v).model(model("Lfm2ForCausalLM"));
    vec![
        qwen("0.5.14"),
        qwen("0.5.23"),
        c("CACHE014")
            .version("0.5.13")
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg("--mamba-scheduler-strategy", json!("no_buffer"))
            .no(),
        qwen("0.5.23").flag("--disable-overlap-schedule").no(),
        qwen("0.5.23").flag("--disable-radix-cache").no(),
        // A draft keeps the overlap scheduler on (0.5.14+).
        qwen("0.5.23").arg("--speculative-algorithm", json!("NEXTN")),
        qwen("0.5.23")
            .flag("--disable-overlap-schedule")
            .arg("--page-size", json!(64)),
        // SGLang sets the page size itself for Qwen's hybrids on SM100 without a named backend.
        qwen("0.5.23")
            .on(B200)
            .flag("--disable-overlap-schedule")
            .arg("--page-size", json!(64))
            .no(),
        lfm2("0.5.14").arg("--page-size", json!(64)),
        // Another linear-attention backend settles `auto` on no_buffer, which refuses pages.
        c("CACHE014")
            .version("0.5.23")
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg("--linear-attn-backend", json!("cutedsl"))
            .arg("--page-size", json!(64)),
        c("CACHE014")
            .version("0.5.23")
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg("--linear-attn-backend", json!("cutedsl"))
            .no(),
        lfm2("0.5.14").no(),
        // `auto` with paging takes the extra buffer for a listed model.
        c("CACHE014")
            .version("0.5.23")
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .arg("--page-size", json!(64))
            .no(),
    ]
}

/// TRT-LLM MHA under the no_buffer Mamba cache (0.5.14+).
fn cache013() -> Vec<Case> {
    let nemotron = |v| {
        c("CACHE013")
            .version(v)
            .on(B200)
            .model(model("NemotronHForCausalLM"))
            .flag("--disable-overlap-schedule")
    };
    let named = |arch: &str, v| {
        c("CACHE013")
            .version(v)
            .on(B200)
            .model(model(arch))
            .arg("--attention-backend", json!("trtllm_mha"))
    };
    vec![
        // NemotronH's own pick on SM100 from 0.5.19; FlashInfer before.
        nemotron("0.5.20"),
        nemotron("0.5.18").no(),
        nemotron("0.5.23").on(H100).no(),
        nemotron("0.5.23").arg("--page-size", json!(64)).no(),
        nemotron("0.5.23").flag("--disable-radix-cache").no(),
        // With a draft its pick takes the extra buffer too.
        nemotron("0.5.23")
            .arg("--speculative-algorithm", json!("NEXTN"))
            .no(),
        // A model without the extra buffer resolves `auto` to no_buffer.
        named("Lfm2ForCausalLM", "0.5.14"),
        named("Lfm2ForCausalLM", "0.5.13").no(),
        // Listed models keep the extra buffer while the overlap scheduler is on.
        named("Qwen3_5MoeForConditionalGeneration", "0.5.14").no(),
        named("Qwen3_5MoeForConditionalGeneration", "0.5.23").flag("--disable-overlap-schedule"),
        named("Qwen3_5MoeForConditionalGeneration", "0.5.23")
            .arg("--mamba-radix-cache-strategy", json!("no_buffer")),
        named("Qwen3ForCausalLM", "0.5.23")
            .flag("--disable-overlap-schedule")
            .no(),
    ]
}

/// The Mamba extra buffer on hybrids the release refuses it for.
fn cache012() -> Vec<Case> {
    let extra = |arch: &str, v| {
        c("CACHE012")
            .version(v)
            .model(model(arch))
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
    };
    vec![
        extra("NemotronHForCausalLM", "0.5.7"),
        extra("NemotronHForCausalLM", "0.5.12"),
        extra("NemotronHForCausalLM", "0.5.13").no(),
        extra("FalconH1ForCausalLM", "0.5.10.post1"),
        extra("JetVLMForConditionalGeneration", "0.5.8"),
        extra("Lfm2ForCausalLM", "0.5.8").no(),
        extra("Lfm2ForCausalLM", "0.5.13"),
        // From 0.5.14: models outside the release's extra-buffer list, with the radix cache on.
        extra("Lfm2ForCausalLM", "0.5.14"),
        extra("Lfm2ForCausalLM", "0.5.14")
            .flag("--disable-radix-cache")
            .no(),
        extra("NemotronHForCausalLM", "0.5.14").no(),
        c("CACHE012")
            .version("0.5.23")
            .model(model("JetVLMForConditionalGeneration"))
            .arg("--mamba-radix-cache-strategy", json!("extra_buffer")),
        // From 0.5.21 a model without Mamba state, with the radix cache on.
        c("CACHE012")
            .version("0.5.23")
            .model(model("LlamaForCausalLM"))
            .arg("--mamba-radix-cache-strategy", json!("extra_buffer")),
        c("CACHE012")
            .version("0.5.20")
            .model(model("LlamaForCausalLM"))
            .arg("--mamba-radix-cache-strategy", json!("extra_buffer"))
            .no(),
        c("CACHE012")
            .version("0.5.23")
            .model(model("LlamaForCausalLM"))
            .arg("--mamba-radix-cache-strategy", json!("extra_buffer"))
            .flag("--disable-radix-cache")
            .no(),
        c("CACHE012")
            .version("0.5.23")
            .model(model("KimiLinearForCausalLM"))
            .arg("--mamba-radix-cache-strategy", json!("extra_buffer"))
            .no(),
        // A hybrid SGLang knows from its linear-attention registry, not its list.
        c("CACHE012")
            .version("0.5.23")
            .model(model("GigaChat35ForCausalLM"))
            .arg("--mamba-radix-cache-strategy", json!("extra_buffer"))
            .no(),
        // Qwen3-Next takes the extra buffer; the default strategy is never refused.
        extra("Qwen3NextForCausalLM", "0.5.12").no(),
        // From 0.5.11 a PD decode server's chunk cache falls back to no_buffer first.
        extra("Lfm2ForCausalLM", "0.5.13")
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        extra("Lfm2ForCausalLM", "0.5.10").arg("--disaggregation-mode", json!("decode")),
        c("CACHE012")
            .version("0.5.12")
            .model(model("NemotronHForCausalLM"))
            .arg("--mamba-scheduler-strategy", json!("no_buffer"))
            .no(),
        // From 0.5.14 only triton's linear-attention kernels keep the extra buffer.
        extra("Qwen3_5MoeForConditionalGeneration", "0.5.18")
            .arg("--linear-attn-backend", json!("cutedsl")),
        extra("Qwen3_5MoeForConditionalGeneration", "0.5.18")
            .arg("--linear-attn-backend", json!("triton"))
            .no(),
        extra("Qwen3_5MoeForConditionalGeneration", "0.5.13")
            .arg("--linear-attn-backend", json!("cutedsl"))
            .no(),
        c("CACHE012")
            .version("0.5.20")
            .model(model("LlamaForCausalLM"))
            .arg("--mamba-radix-cache-strategy", json!("extra_buffer"))
            .arg("--linear-attn-backend", json!("cutedsl"))
            .no(),
    ]
}

/// HiCache on DeepSeek-V4 (0.5.12, 0.5.12.post1).
fn cache011() -> Vec<Case> {
    let hi = |v| {
        c("CACHE011")
            .version(v)
            .on(H100)
            .tp(8)
            .model(model("DeepseekV4ForCausalLM"))
            .flag("--enable-hierarchical-cache")
    };
    vec![
        // sglang#26690: DeepSeek-V4-Flash at TP 8.
        hi("0.5.12.post1"),
        hi("0.5.12"),
        hi("0.5.12")
            .env("SGLANG_ENABLE_UNIFIED_RADIX_TREE", "1")
            .no(),
        hi("0.5.12").flag("--disable-radix-cache").no(),
        hi("0.5.13").no(),
        c("CACHE011")
            .version("0.5.12")
            .on(H100)
            .tp(8)
            .model(model("DeepseekV3ForCausalLM"))
            .flag("--enable-hierarchical-cache")
            .no(),
    ]
}

/// HiCache's constructor mismatch (0.4.3.post3, 0.4.3.post4).
fn cache010() -> Vec<Case> {
    let hi = |v| c("CACHE010").version(v).flag("--enable-hierarchical-cache");
    vec![
        hi("0.4.3.post3"),
        hi("0.4.3.post4"),
        hi("0.4.3.post4").flag("--disable-radix-cache").no(),
        hi("0.4.3.post2").no(),
        hi("0.4.4").no(),
        c("CACHE010").version("0.4.3.post3").no(),
    ]
}

/// LMCache's companions SGLang refuses (0.5.21+).
fn cache009() -> Vec<Case> {
    let lm = |v| c("CACHE009").version(v).tp(1).flag("--enable-lmcache");
    vec![
        lm("0.5.23").arg("--speculative-algorithm", json!("NGRAM")),
        lm("0.5.21").flag("--disable-radix-cache"),
        lm("0.5.23").flag("--enable-hierarchical-cache"),
        lm("0.5.23").arg("--disaggregation-mode", json!("decode")),
        lm("0.5.20").flag("--disable-radix-cache").no(),
        lm("0.5.23").no(),
        lm("0.5.23")
            .tp(2)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(2)),
        lm("0.5.21").flag("--enable-streaming-session"),
        lm("0.5.23").arg("--hicache-host-memory-mode", json!("buffer_only")),
    ]
}

/// Cache options SGLang range-checks (CACHE020).
fn cache020() -> Vec<Case> {
    let o = |opt: &'static str, v: serde_json::Value| c("CACHE020").arg(opt, v);
    vec![
        o("--swa-full-tokens-ratio", json!(1.5)),
        o("--swa-full-tokens-ratio", json!(1.5))
            .version("0.5.6")
            .no(),
        o("--swa-full-tokens-ratio", json!(0.5)).no(),
        // An unread model under HiCache may be a Step-3p model, whose ratio SGLang resets.
        o("--swa-full-tokens-ratio", json!(1.5))
            .flag("--enable-hierarchical-cache")
            .no(),
        o("--swa-full-tokens-ratio", json!(1.5))
            .model(model("LlamaForCausalLM"))
            .flag("--enable-hierarchical-cache"),
        o("--hicache-host-memory-fraction", json!(1.5)),
        o("--swa-prefix-tails", json!(-1)),
        o("--radix-eviction-policy", json!("tlru")),
        o("--radix-eviction-policy", json!("tlru"))
            .arg(
                "--radix-eviction-policy-config",
                json!({"threshold": 600, "next_prompt_estimate": 60}),
            )
            .no(),
        o("--radix-eviction-policy", json!("lru")).no(),
        o("--hicache-host-memory-mode", json!("buffer_only")).flag("--enable-hierarchical-cache"),
        o("--hicache-host-memory-mode", json!("buffer_only"))
            .flag("--enable-hierarchical-cache")
            .arg("--hicache-storage-backend", json!("file"))
            .no(),
        o("--hicache-host-memory-mode", json!("buffer_only"))
            .arg("--disaggregation-mode", json!("decode")),
        o("--hicache-host-memory-mode", json!("buffer_only")).no(),
    ]
}

/// What the unified memory pool is refused with, by release (0.5.15+).
fn cache008() -> Vec<Case> {
    let um = |v| {
        c("CACHE008")
            .version(v)
            .tp(1)
            .flag("--enable-unified-memory")
            .arg("--attention-backend", json!("triton"))
    };
    let spec = |v, algo: &str| um(v).arg("--speculative-algorithm", json!(algo));
    vec![
        spec("0.5.16", "EAGLE"),
        spec("0.5.20", "EAGLE"),
        // From 0.5.23 EAGLE needs a hybrid target (Llama 4 is one: chunked attention) and a
        // linear chain: SGLang's own top-k for Llama is 4.
        spec("0.5.23", "EAGLE")
            .arg("--speculative-eagle-topk", json!(1))
            .model(model("LlamaForCausalLM")),
        spec("0.5.23", "EAGLE")
            .arg("--speculative-eagle-topk", json!(1))
            .model(model("Llama4ForConditionalGeneration"))
            .no(),
        spec("0.5.22", "EAGLE")
            .arg("--speculative-eagle-topk", json!(1))
            .no(),
        spec("0.5.22", "EAGLE").arg("--speculative-eagle-topk", json!(4)),
        spec("0.5.20", "DSPARK").no(),
        spec("0.5.23", "NGRAM"),
        um("0.5.20").flag("--enable-hierarchical-cache"),
        um("0.5.23").flag("--enable-hierarchical-cache").no(),
        um("0.5.23").flag("--enable-lmcache"),
        um("0.5.19").arg("--dcp-size", json!(2)),
        um("0.5.23").flag("--enable-two-batch-overlap"),
        um("0.5.18").flag("--enable-two-batch-overlap").no(),
        um("0.5.16").arg("--disaggregation-mode", json!("prefill")),
        um("0.5.23")
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
        um("0.5.23")
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--disaggregation-transfer-backend", json!("nixl")),
        um("0.5.23").no(),
        c("CACHE008")
            .version("0.5.23")
            .flag("--enable-lmcache")
            .no(),
    ]
}

/// FP4 and MXFP8 KV caches off Blackwell (0.5.16+).
fn cache007() -> Vec<Case> {
    let kv = |on, dtype: &str| {
        c("CACHE007")
            .version("0.5.18")
            .on(on)
            .tp(1)
            .arg("--kv-cache-dtype", json!(dtype))
    };
    vec![
        kv(H100, "nvfp4"),
        kv(H100, "mxfp8"),
        kv(B200, "nvfp4").no(),
        kv(B200, "mxfp8").no(),
        kv(PRO, "nvfp4").no(),
        kv(PRO, "mxfp8").no(),
        // No GPU gate for the block-16 FP4 recipe.
        kv(H100, "fp4_mx_block16").no(),
        kv(H100, "fp8_e4m3").no(),
    ]
}

fn base() -> Vec<Case> {
    vec![
        c("CACHE001")
            .flag("--enable-hierarchical-cache")
            .flag("--disable-radix-cache"),
        c("CACHE001")
            .flag("--enable-hierarchical-cache")
            .arg("--page-size", json!(64))
            .no(),
        // A PD decode server's radix cache is off unless kept.
        c("CACHE001")
            .flag("--enable-hierarchical-cache")
            .arg("--disaggregation-mode", json!("decode")),
        c("CACHE001")
            .flag("--enable-hierarchical-cache")
            .arg("--disaggregation-mode", json!("decode"))
            .flag("--disaggregation-decode-enable-radix-cache")
            .no(),
        c("CACHE001")
            .flag("--enable-hierarchical-cache")
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
        // Deterministic inference turns the radix cache off under flashinfer; from 0.5.12 that
        // step runs before SGLang's HiCache check.
        c("CACHE001")
            .flag("--enable-hierarchical-cache")
            .flag("--enable-deterministic-inference")
            .arg("--attention-backend", json!("flashinfer")),
        c("CACHE001")
            .version("0.5.11")
            .flag("--enable-hierarchical-cache")
            .flag("--enable-deterministic-inference")
            .arg("--attention-backend", json!("flashinfer"))
            .no(),
        c("CACHE001")
            .flag("--enable-hierarchical-cache")
            .flag("--enable-deterministic-inference")
            .arg("--attention-backend", json!("fa3"))
            .no(),
        c("CACHE002")
            .arg("--chunked-prefill-size", json!(1000))
            .arg("--page-size", json!(64)),
        c("CACHE002")
            .arg("--chunked-prefill-size", json!(8192))
            .arg("--page-size", json!(64))
            .no(),
        c("CACHE002")
            .arg("--chunked-prefill-size", json!(1000))
            .arg("--attention-backend", json!("trtllm_mla")),
        // A prefill-only MLA backend forces no page size.
        c("CACHE002")
            .arg("--chunked-prefill-size", json!(1000))
            .arg("--prefill-attention-backend", json!("flashmla"))
            .no(),
        // trtllm_mha moves page 128 to 64 before 0.5.17, and keeps it after.
        c("CACHE002")
            .version("0.5.14")
            .arg("--chunked-prefill-size", json!(192))
            .arg("--page-size", json!(128))
            .arg("--attention-backend", json!("trtllm_mha"))
            .no(),
        c("CACHE002")
            .version("0.5.23")
            .arg("--chunked-prefill-size", json!(192))
            .arg("--page-size", json!(128))
            .arg("--attention-backend", json!("trtllm_mha")),
        // The chunk SGLang picks for an 80 GB GPU (8192) against a page of 48.
        c("CACHE002").arg("--page-size", json!(48)),
        c("CACHE002").arg("--page-size", json!(64)).no(),
        c("CACHE002")
            .arg("--page-size", json!(48))
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        // On SM100 SGLang sets the page size of Qwen's hybrids itself when no backend is named.
        c("CACHE002")
            .on(B200)
            .model(model("Qwen3NextForCausalLM"))
            .arg("--page-size", json!(48))
            .arg("--speculative-algorithm", json!("NEXTN"))
            .no(),
        // trtllm_mha moves a page of 48 to 64.
        c("CACHE002")
            .arg("--page-size", json!(48))
            .arg("--attention-backend", json!("trtllm_mha"))
            .no(),
        c("CACHE003").flag("--enable-hierarchical-cache"),
        // 0.4.4.post1–post3's HiCache takes page size 1 only.
        c("CACHE003")
            .version("0.4.4.post2")
            .flag("--enable-hierarchical-cache")
            .no(),
        // SGLang moves trtllm_mha to page 64; Blackwell's auto backend may page (review regression).
        c("CACHE003")
            .flag("--enable-hierarchical-cache")
            .arg("--attention-backend", json!("trtllm_mha"))
            .no(),
        c("CACHE003")
            .on(B200)
            .flag("--enable-hierarchical-cache")
            .no(),
        c("CACHE003")
            .on(B200)
            .flag("--enable-hierarchical-cache")
            .arg("--page-size", json!(1)),
        c("CACHE003")
            .flag("--enable-hierarchical-cache")
            .arg("--page-size", json!(64))
            .no(),
        // A sparse-attention model: SGLang runs it on its DSA backend with 64-token pages.
        c("CACHE003")
            .version("0.5.17")
            .flag("--enable-hierarchical-cache")
            .model(ModelFacts {
                index_topk: Some(2048),
                index_head_dim: Some(128),
                ..ModelFacts {
                    architecture: Some("DeepseekV32ForCausalLM".into()),
                    ..mla()
                }
            })
            .no(),
        // A DSA backend named, the config unknown: a sparse-attention model, paged by SGLang.
        c("CACHE003")
            .version("0.5.21")
            .flag("--enable-hierarchical-cache")
            .arg("--dsa-prefill-backend", json!("flashmla_sparse_q8"))
            .no(),
        c("CACHE004")
            .version("0.5.10.post1")
            .arg("--multi-item-scoring-delimiter", json!(151643)),
        c("CACHE004")
            .version("0.5.10.post1")
            .arg("--multi-item-scoring-delimiter", json!(151643))
            .flag("--disable-radix-cache")
            .arg("--chunked-prefill-size", json!(-1))
            .no(),
        c("CACHE005")
            .flag("--enable-hierarchical-cache")
            .arg("--attention-backend", json!("fa3")),
        c("CACHE005")
            .flag("--enable-hierarchical-cache")
            .arg("--attention-backend", json!("fa3"))
            .arg("--decode-attention-backend", json!("flashinfer"))
            .no(),
        qwen35("0.5.11"),
        qwen35("0.5.13")
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        qwen35("0.5.11").flag("--disable-radix-cache").no(),
        qwen35("0.5.11")
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
            .no(),
        qwen35("0.5.14").no(),
        // A PD decode server's chunk cache is settled before the check from 0.5.11.
        qwen35("0.5.10.post1").arg("--disaggregation-mode", json!("decode")),
        qwen35("0.5.11")
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        // NemotronH takes the same path (from 0.5.12 through its own hook); GraniteMoeHybrid only
        // with Mamba layers, which the facts do not tell.
        hybrid("NemotronHForCausalLM", "0.5.10.post1"),
        hybrid("NemotronHForCausalLM", "0.5.12"),
        hybrid("NemotronHForCausalLM", "0.5.14").no(),
        hybrid("MiniCPMV4_6ForConditionalGeneration", "0.5.11").no(),
        hybrid("MiniCPMV4_6ForConditionalGeneration", "0.5.12"),
        hybrid("GraniteMoeHybridForCausalLM", "0.5.12").no(),
        c("CACHE006")
            .version("0.5.11")
            .model(model("Qwen3_5MoeForConditionalGeneration"))
            .no(),
    ]
}

/// A hybrid model of this class with EAGLE speculative decoding.
fn hybrid(arch: &str, version: &'static str) -> Case {
    c("CACHE006")
        .version(version)
        .model(model(arch))
        .arg("--speculative-algorithm", json!("EAGLE"))
}

/// A Qwen3.5 MoE target with MTP speculative decoding.
fn qwen35(version: &'static str) -> Case {
    c("CACHE006")
        .version(version)
        .model(model("Qwen3_5MoeForConditionalGeneration"))
        .arg("--speculative-algorithm", json!("NEXTN"))
}

/// CACHE024: an embedding server without a KV cache.
fn cache024() -> Vec<Case> {
    let ready = || {
        c("CACHE024")
            .model(model("LlamaForCausalLM"))
            .flag("--prefill-only-disable-kv-cache")
            .flag("--is-embedding")
            .arg("--chunked-prefill-size", json!(-1))
            .flag("--disable-radix-cache")
    };
    vec![
        // fa3 is SGLang's pick on Hopper.
        ready().no(),
        c("CACHE024")
            .model(model("LlamaForCausalLM"))
            .flag("--prefill-only-disable-kv-cache"),
        // SGLang checks the chunk and the radix cache before it fills them in.
        c("CACHE024")
            .model(model("LlamaForCausalLM"))
            .flag("--prefill-only-disable-kv-cache")
            .flag("--is-embedding"),
        ready().arg("--kv-cache-dtype", json!("mxfp8")),
        ready().arg("--kv-cache-dtype", json!("fp8_e4m3")).no(),
        ready().flag("--enable-hisparse"),
        ready().arg("--attention-backend", json!("triton")),
        ready().arg("--attention-backend", json!("fa4")).no(),
        // On Blackwell SGLang's own pick is not FlashAttention.
        ready().on(B200),
        ready().version("0.5.12").no(),
        c("CACHE024")
            .version("0.5.12")
            .model(model("LlamaForCausalLM"))
            .flag("--prefill-only-disable-kv-cache"),
        // Without the config SGLang's pick is not known.
        c("CACHE024")
            .flag("--prefill-only-disable-kv-cache")
            .flag("--is-embedding")
            .arg("--chunked-prefill-size", json!(-1))
            .flag("--disable-radix-cache")
            .on(B200)
            .no(),
    ]
}

/// CACHE023: the extra buffer's track interval against the draft and the pages.
fn cache023() -> Vec<Case> {
    let next = |v: &'static str| {
        c("CACHE023")
            .version(v)
            .tp(4)
            .model(model("Qwen3NextForCausalLM"))
    };
    let nemotron = || {
        c("CACHE023")
            .version("0.5.23")
            .tp(4)
            .model(model("NemotronHForCausalLM"))
    };
    let draft = |case: Case| {
        case.arg("--speculative-algorithm", json!("NEXTN"))
            .arg("--speculative-num-steps", json!(3))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(4))
    };
    vec![
        // `auto` picks the extra buffer for pages above one: 256 is not a multiple of 48.
        next("0.5.23").arg("--page-size", json!(48)),
        next("0.5.23").arg("--page-size", json!(64)).no(),
        next("0.5.17")
            .arg("--mamba-track-interval", json!(100))
            .arg("--page-size", json!(64)),
        next("0.5.23")
            .arg("--mamba-track-interval", json!(100))
            .arg("--page-size", json!(64))
            .flag("--disable-radix-cache")
            .no(),
        next("0.5.23")
            .arg("--mamba-track-interval", json!(100))
            .arg("--page-size", json!(64))
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        // On SM100 SGLang sets the page size of Qwen's hybrids itself when no backend is named.
        next("0.5.23")
            .on(B200)
            .arg("--mamba-track-interval", json!(100))
            .arg("--page-size", json!(64))
            .no(),
        nemotron()
            .on(B200)
            .arg("--mamba-track-interval", json!(100))
            .arg("--page-size", json!(64)),
        draft(next("0.5.23").arg("--mamba-track-interval", json!(2))),
        draft(next("0.5.23").arg("--mamba-track-interval", json!(4))).no(),
        // A bare algorithm's draft tokens are filled in after the check.
        next("0.5.23")
            .arg("--mamba-track-interval", json!(2))
            .arg("--speculative-algorithm", json!("NEXTN"))
            .no(),
        // Another linear-attention backend takes no_buffer (CACHE014's).
        next("0.5.23")
            .arg("--linear-attn-backend", json!("cutedsl"))
            .arg("--page-size", json!(48))
            .no(),
        c("CACHE023")
            .version("0.5.23")
            .arg("--page-size", json!(48))
            .no(),
        // Before 0.5.14 the extra buffer is the user's only, and its pages must fit the FLA
        // chunk of 64: dividing it on 0.5.7, dividing or a multiple of it from 0.5.8.
        next("0.5.13").arg("--page-size", json!(48)).no(),
        next("0.5.7")
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
            .arg("--page-size", json!(128)),
        next("0.5.9")
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
            .arg("--page-size", json!(128))
            .no(),
        // 0.5.8's block sits in another model's branch: no hybrid is checked.
        next("0.5.8")
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
            .arg("--mamba-track-interval", json!(100))
            .arg("--page-size", json!(32))
            .no(),
        next("0.5.13")
            .arg("--mamba-scheduler-strategy", json!("extra_buffer"))
            .arg("--mamba-track-interval", json!(96))
            .arg("--page-size", json!(48)),
    ]
}

/// CACHE022: the Mamba cache's own settings.
fn cache022() -> Vec<Case> {
    let rounding = |topo: &'static str| {
        c("CACHE022")
            .on(topo)
            .flag("--enable-mamba-cache-stochastic-rounding")
            .arg("--mamba-ssm-dtype", json!("float16"))
    };
    let int8 = || c("CACHE022").flag("--enable-int8-mamba-checkpoint");
    vec![
        c("CACHE022").arg("--mamba-cache-philox-rounds", json!(-1)),
        c("CACHE022")
            .version("0.5.14")
            .arg("--max-mamba-cache-size", json!(8))
            .no(),
        c("CACHE022").arg("--mamba-max-states-per-path", json!(0)),
        c("CACHE022").arg("--mamba-max-states-per-path", json!(-2)),
        c("CACHE022")
            .arg("--mamba-max-states-per-path", json!(-1))
            .no(),
        rounding(H100),
        rounding(B200).no(),
        rounding(H100)
            .arg("--mamba-backend", json!("flashinfer"))
            .no(),
        rounding(B200).arg("--mamba-ssm-dtype", json!("bfloat16")),
        c("CACHE022")
            .on(B200)
            .flag("--enable-mamba-cache-stochastic-rounding"),
        int8().no(),
        int8().flag("--enable-hierarchical-cache"),
        int8().arg("--radix-cache-backend", json!("custom")),
        int8().flag("--enable-lmcache"),
        int8().version("0.5.20").flag("--enable-lmcache").no(),
    ]
}

/// CACHE021: KV sharding on a prefill server and what it does not take.
fn cache021() -> Vec<Case> {
    let shard = |v: &'static str| {
        c("CACHE021")
            .version(v)
            .tp(8)
            .model(mla())
            .flag("--enable-kv-cache-sharding")
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--page-size", json!(64))
    };
    vec![
        c("CACHE021").flag("--enable-kv-cache-sharding"),
        shard("0.5.23").no(),
        shard("0.5.22"),
        shard("0.5.22").flag("--disable-radix-cache").no(),
        shard("0.5.22")
            .env("SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND", "python")
            .no(),
        shard("0.5.23").env("SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND", "rust"),
        shard("0.5.23")
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8)),
        shard("0.5.23").tp(1),
        shard("0.5.23").model(model("LlamaForCausalLM")),
        shard("0.5.23")
            .model(model("LlamaForCausalLM"))
            .flag("--enable-prefill-cp")
            .arg("--attn-cp-size", json!(4))
            .no(),
        shard("0.5.23").flag("--enable-streaming-session"),
        shard("0.5.23").flag("--enable-hierarchical-cache").no(),
        shard("0.5.22")
            .flag("--disable-radix-cache")
            .flag("--enable-hierarchical-cache"),
        shard("0.5.23")
            .flag("--enable-hierarchical-cache")
            .arg("--hicache-storage-backend", json!("file")),
        shard("0.5.23").arg("--disaggregation-transfer-backend", json!("fake")),
        shard("0.5.23")
            .arg("--disaggregation-transfer-backend", json!("mooncake_tcp"))
            .no(),
        shard("0.5.23")
            .arg("--disaggregation-transfer-backend", json!("nixl"))
            .no(),
        shard("0.5.23").arg("--attention-backend", json!("flashinfer")),
        shard("0.5.23")
            .arg("--attention-backend", json!("fa3"))
            .no(),
        shard("0.5.23").arg("--speculative-algorithm", json!("NGRAM")),
        // Without a page size, H100's MLA backend keeps one-token pages.
        c("CACHE021")
            .tp(8)
            .model(mla())
            .flag("--enable-kv-cache-sharding")
            .arg("--disaggregation-mode", json!("prefill")),
        // An unread model may be GLM DSA, whose NextN 0.5.23 takes; 0.5.22 takes no draft.
        c("CACHE021")
            .flag("--enable-kv-cache-sharding")
            .arg("--disaggregation-mode", json!("prefill"))
            .arg("--speculative-algorithm", json!("EAGLE"))
            .arg("--speculative-num-steps", json!(1))
            .arg("--speculative-eagle-topk", json!(1))
            .arg("--speculative-num-draft-tokens", json!(2))
            .no(),
        // Unknown model: the backend, and so the page size, is unknown too (B200's trtllm_mla
        // sets 64 for an MLA model).
        c("CACHE021")
            .on(B200)
            .tp(8)
            .flag("--enable-kv-cache-sharding")
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("CACHE", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

/// CACHE018: HiCache's hf3fs tier on DeepSeek-V4 (a zero-byte logical anchor page).
fn cache018() -> Vec<Case> {
    let hi = |v, arch, backend| {
        c("CACHE018")
            .version(v)
            .on(H100)
            .tp(8)
            .model(model(arch))
            .flag("--enable-hierarchical-cache")
            .arg("--hicache-storage-backend", json!(backend))
    };
    let v4 = "DeepseekV4ForCausalLM";
    vec![
        // sglang#34969: DeepSeek-V4 with HF3FS as the L3 tier, 0.5.17.
        hi("0.5.17", v4, "hf3fs"),
        hi("0.5.13", v4, "hf3fs"),
        hi("0.5.23", v4, "hf3fs"),
        hi("0.5.23", v4, "hf3fs").flag("--disable-radix-cache").no(),
        hi("0.5.23", v4, "mooncake").no(),
        hi("0.5.23", "DeepseekV3ForCausalLM", "hf3fs").no(),
        hi("0.5.12.post1", v4, "hf3fs").no(),
    ]
}

/// CACHE025: the unified cache's external linker and what it replaces.
fn cache025() -> Vec<Case> {
    let linker = || c("CACHE025").flag("--enable-unified-cache-external-linker");
    let dynamic = || linker().arg("--unified-cache-external-linker-backend", json!("dynamic"));
    let config = "--unified-cache-external-linker-config";
    vec![
        linker().flag("--enable-hierarchical-cache"),
        linker()
            .version("0.5.20")
            .arg("--hicache-storage-backend", json!("mooncake")),
        c("CACHE025").flag("--enable-linker-mla-dedup"),
        linker()
            .flag("--enable-linker-mla-dedup")
            .arg("--unified-cache-external-linker-backend", json!("mori")),
        linker().flag("--enable-linker-mla-dedup").no(),
        // The radix cache off: 0.5.23 refuses it, 0.5.22 takes it.
        linker().flag("--disable-radix-cache"),
        linker()
            .version("0.5.22")
            .flag("--disable-radix-cache")
            .no(),
        linker().arg("--radix-cache-backend", json!("custom")),
        // A PD decode server's own radix cache is off unless kept.
        linker().arg("--disaggregation-mode", json!("decode")),
        linker()
            .arg("--disaggregation-mode", json!("decode"))
            .flag("--disaggregation-decode-enable-radix-cache")
            .no(),
        dynamic(),
        dynamic().arg(
            config,
            json!({"linker": "L", "linker_module_path": "m", "x": 1}),
        ),
        dynamic().arg(config, json!({"linker": "L", "linker_module_path": " "})),
        dynamic().arg(
            config,
            json!({"linker": "L", "linker_module_path": "m", "linker_extra_config": 1}),
        ),
        dynamic()
            .arg(config, json!({"linker": "L", "linker_module_path": "m"}))
            .no(),
        // With the linker off and no configuration, the dynamic backend is never read.
        c("CACHE025")
            .arg("--unified-cache-external-linker-backend", json!("dynamic"))
            .no(),
        c("CACHE025").arg(config, json!([1])),
        linker().no(),
    ]
}
