//! SRV: server options (served name, scheduling, gRPC, tokenizer).

use serde_json::json;
use sglang_launch::facts::model::ModelFacts;

use crate::support::{Case, assert_cases, c, messages, model, vlm};

/// A Llama whose server runs `tokens` of context.
fn context(tokens: u64) -> ModelFacts {
    ModelFacts {
        context_length: Some(tokens),
        ..model("LlamaForCausalLM")
    }
}

/// Every SRV case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [
        srv010(),
        srv011(),
        srv012(),
        workers_and_grpc(),
        options(),
        preferred_without_tokenizer(),
        ple_offload(),
        load_publish(),
        expert_pack(),
        base(),
    ]
    .concat()
}

/// The preferred sampling parameters SGLang builds at start-up without a tokenizer (SRV018).
fn preferred_without_tokenizer() -> Vec<Case> {
    let prefs = |v: &'static str, p: serde_json::Value| {
        c("SRV018")
            .version(v)
            .flag("--skip-tokenizer-init")
            .arg("--preferred-sampling-params", p)
    };
    vec![
        prefs("0.5.18", json!({"beam_width": 2})),
        prefs("0.5.19", json!({"beam_width": 2})).no(),
        prefs("0.5.14", json!({"stop_strs": "x"})),
        prefs("0.5.15", json!({"stop_strs": "x"})).no(),
        prefs("0.5.23", json!({"stop": "</s>"})),
        prefs("0.5.13", json!({"stop": "</s>"})).no(),
        c("SRV018")
            .arg("--preferred-sampling-params", json!({"stop": "</s>"}))
            .no(),
        prefs("0.5.16", json!({"stop_regex": ""})),
        prefs("0.5.23", json!({"min_new_tokens": 4})),
        prefs(
            "0.5.23",
            json!({"stop": [], "min_new_tokens": 0, "top_k": 20}),
        )
        .no(),
        prefs("0.5.23", json!({})).no(),
    ]
}

/// Worker counts (SRV013) and the native gRPC server (SRV014).
fn workers_and_grpc() -> Vec<Case> {
    vec![
        c("SRV013").arg("--tokenizer-worker-num", json!(0)),
        c("SRV013")
            .version("0.5.2rc0")
            .arg("--tokenizer-worker-num", json!(0)),
        c("SRV013")
            .version("0.5.12")
            .arg("--detokenizer-worker-num", json!(0)),
        c("SRV013")
            .arg("--detokenizer-worker-num", json!(0))
            .flag("--skip-tokenizer-init")
            .no(),
        c("SRV013").arg("--mm-io-worker-num", json!(-2)),
        c("SRV013").flag("--enable-http-worker-reuseport"),
        c("SRV013")
            .flag("--enable-http-worker-reuseport")
            .arg("--tokenizer-worker-num", json!(2))
            .no(),
        c("SRV014")
            .arg("--grpc-port", json!(31000))
            .arg("--api-key", json!("sk-test")),
        c("SRV014")
            .flag("--grpc-mode")
            .arg("--grpc-port", json!(31000))
            .arg("--tokenizer-worker-num", json!(2))
            .no(),
        c("SRV014").arg("--sidecar", json!("smg")),
        c("SRV014")
            .arg("--sidecar", json!("smg"))
            .env("SGLANG_GRPC_PORT", "31000")
            .no(),
        c("SRV014").arg("--sidecar-args", json!(["--verbose"])),
        c("SRV014").arg("--grpc-port", json!(70000)),
        c("SRV014").flag("--grpc-mode").arg("--port", json!(60000)),
        c("SRV014").arg("--port", json!(60000)).no(),
        c("SRV014").arg("--grpc-response-timeout-secs", json!(0)),
    ]
}

/// Metrics (SRV015), watermarking (SRV016), value ranges (SRV017), JSON options (SRV018) and
/// serving features a layout cannot carry (SRV019).
fn options() -> Vec<Case> {
    let buckets = |v: serde_json::Value| c("SRV015").arg("--prompt-tokens-buckets", v);
    vec![
        buckets(json!(["tse", "1000"])),
        buckets(json!(["tse", "1000", "2", "10"])).no(),
        buckets(json!(["custom", "10", "10"])),
        buckets(json!(["custom", "10", "100"])).no(),
        buckets(json!(["customer", "10", "100"])),
        buckets(json!(["customer", "10", "100"]))
            .version("0.5.3rc0")
            .no(),
        c("SRV015")
            .arg(
                "--tokenizer-metrics-allowed-custom-labels",
                json!(["tenant"]),
            )
            .arg("--tokenizer-metrics-custom-labels-header", json!("")),
        c("SRV015")
            .arg(
                "--tokenizer-metrics-allowed-custom-labels",
                json!(["tenant"]),
            )
            .no(),
        c("SRV015").flag("--export-metrics-to-file"),
        c("SRV016")
            .flag("--enable-watermark")
            .arg("--disaggregation-mode", json!("prefill")),
        c("SRV016")
            .flag("--enable-watermark")
            .arg("--speculative-algorithm", json!("NGRAM"))
            .no(),
        c("SRV016").arg("--watermark-config", json!("/etc/watermark.json")),
        c("SRV016")
            .flag("--enable-watermark")
            .env("SGLANG_RUST_SERVER", "1"),
        c("SRV017").arg("--gc-threshold", json!([700, 10, 10, 5])),
        c("SRV017").arg("--gc-threshold", json!([700, 10, 10])).no(),
        c("SRV017").arg("--kv-canary-sweep-interval", json!(100)),
        c("SRV017")
            .arg("--kv-canary-sweep-interval", json!(100))
            .arg("--kv-canary", json!("log"))
            .no(),
        c("SRV017").arg("--schedule-conservativeness", json!(-0.5)),
        c("SRV017")
            .version("0.5.4")
            .arg("--schedule-conservativeness", json!(-0.5))
            .no(),
        c("SRV017")
            .flag("--enable-http2")
            .arg("--http2-max-concurrent-streams", json!(0)),
        c("SRV017")
            .arg("--http2-max-concurrent-streams", json!(0))
            .no(),
        c("SRV017").arg("--prefill-decode-interval", json!(-1)),
        c("SRV017").arg("--prefill-decode-interval", json!(4)).no(),
        c("SRV017").arg("--sampling-mask-max-tokens", json!(0)),
        c("SRV017").arg("--prefill-decode-interval-min-bs", json!(-1)),
        c("SRV017").arg("--pp-max-micro-batch-size", json!(0)),
        c("SRV017")
            .version("0.5.10")
            .arg("--pp-max-micro-batch-size", json!(0))
            .no(),
        c("SRV017").arg("--cuda-graph-prefill-max-context", json!(0)),
        c("SRV017")
            .model(context(4096))
            .arg("--cuda-graph-prefill-max-context", json!(8192)),
        c("SRV017")
            .model(context(8192))
            .arg("--cuda-graph-prefill-max-context", json!(8192))
            .no(),
        // Without the model's config the limit is not known.
        c("SRV017")
            .arg("--context-length", json!(4096))
            .arg("--cuda-graph-prefill-max-context", json!(8192))
            .no(),
        c("SRV018").arg("--default-chat-template-kwargs", json!([1])),
        c("SRV018")
            .arg(
                "--default-chat-template-kwargs",
                json!({"enable_thinking": false}),
            )
            .no(),
        c("SRV018").arg("--limit-mm-data-per-request", json!({"images": 2})),
        c("SRV018")
            .arg("--limit-mm-data-per-request", json!({"image": 2}))
            .no(),
        c("SRV018").arg("--preferred-sampling-params", json!({"watermark": true})),
        c("SRV019")
            .flag("--enable-response-store")
            .arg("--disaggregation-mode", json!("decode")),
        c("SRV019").flag("--enable-response-store").no(),
        c("SRV019")
            .arg("--mm-feature-transport", json!("cuda_ipc"))
            .arg("--nnodes", json!(2)),
        c("SRV019")
            .arg("--mm-feature-transport", json!("cuda_ipc"))
            .arg("--nnodes", json!(2))
            .flag("--encoder-only")
            .model(vlm())
            .no(),
        c("SRV019")
            .arg("--min-free-slots-delay", json!(4))
            .arg("--pp-size", json!(2)),
        c("SRV019")
            .version("0.5.17")
            .arg("--min-free-slots-delay", json!(4))
            .arg("--pp-size", json!(2))
            .no(),
    ]
}

/// The encoder/language split on architectures each release lists.
fn srv012() -> Vec<Case> {
    let split = |v, role, arch: &str| c("SRV012").version(v).flag(role).model(model(arch));
    let encoder = |v, arch| split(v, "--encoder-only", arch);
    let language = |v, arch| split(v, "--language-only", arch);
    let (qwen35, kimi_vl) = (
        "Qwen3_5ForConditionalGeneration",
        "KimiVLForConditionalGeneration",
    );
    vec![
        encoder("0.5.23", "LlamaForCausalLM"),
        language("0.5.10rc0", qwen35),
        language("0.5.11", qwen35).no(),
        encoder("0.5.10.post1", kimi_vl),
        encoder("0.5.23", "Qwen2_5_VLForConditionalGeneration").no(),
        // Before 0.5.10rc0 the split takes any model; without a role there is no split.
        encoder("0.5.9", "LlamaForCausalLM").no(),
        c("SRV012")
            .version("0.5.23")
            .model(model("LlamaForCausalLM"))
            .no(),
    ]
}

/// A vision model's PD warmup (0.5.5.post1 to 0.5.15).
fn srv011() -> Vec<Case> {
    let pd = |v, mode| {
        c("SRV011")
            .version(v)
            .model(vlm())
            .arg("--disaggregation-mode", json!(mode))
    };
    vec![
        pd("0.5.10", "prefill"),
        pd("0.5.15", "decode"),
        pd("0.5.5", "prefill").no(),
        pd("0.5.16", "prefill").no(),
        pd("0.5.10", "prefill").flag("--skip-server-warmup").no(),
        pd("0.5.10", "prefill").flag("--skip-tokenizer-init").no(),
        c("SRV011")
            .version("0.5.10")
            .arg("--disaggregation-mode", json!("prefill"))
            .no(),
    ]
}

/// Encoder/language disaggregation roles (0.5.7+).
fn srv010() -> Vec<Case> {
    let epd = |v| c("SRV010").version(v);
    vec![
        epd("0.5.10.post1")
            .flag("--encoder-only")
            .flag("--language-only"),
        epd("0.5.23")
            .flag("--encoder-only")
            .arg("--disaggregation-mode", json!("prefill")),
        epd("0.5.10.post1").flag("--language-only"),
        epd("0.5.10.post1")
            .flag("--language-only")
            .arg("--encoder-urls", json!(["http://127.0.0.1:30001"]))
            .no(),
        // From 0.5.13 encoders register with the language server themselves.
        epd("0.5.13").flag("--language-only").no(),
        epd("0.5.23").flag("--encoder-only").no(),
        // The multimodal prefix cache is an encoder-only server's.
        epd("0.5.7").flag("--enable-prefix-mm-cache"),
        epd("0.5.23")
            .flag("--language-only")
            .flag("--enable-prefix-mm-cache"),
        epd("0.5.23")
            .flag("--encoder-only")
            .flag("--enable-prefix-mm-cache")
            .no(),
    ]
}

fn base() -> Vec<Case> {
    vec![
        // The gRPC port 0.5.11 to 0.5.15.post1 derive for every server (SRV009).
        c("SRV009").version("0.5.14").arg("--port", json!(60000)),
        c("SRV009")
            .version("0.5.11")
            .env("SGLANG_GRPC_PORT", "70000"),
        c("SRV009")
            .version("0.5.14")
            .arg("--port", json!(60000))
            .env("SGLANG_GRPC_PORT", "50051")
            .no(),
        c("SRV009")
            .version("0.5.14")
            .arg("--port", json!(55535))
            .no(),
        c("SRV009")
            .version("0.5.18")
            .arg("--port", json!(60000))
            .no(),
        // TLS options without their partner (SRV008, 0.5.10rc0+).
        c("SRV008")
            .version("0.5.18")
            .arg("--ssl-keyfile", json!("/etc/tls/server.key")),
        c("SRV008")
            .version("0.5.23")
            .arg("--ssl-ca-certs", json!("/etc/tls/ca.pem")),
        c("SRV008")
            .version("0.5.23")
            .arg("--ssl-keyfile", json!("/etc/tls/server.key"))
            .arg("--ssl-certfile", json!("/etc/tls/server.crt"))
            .flag("--enable-ssl-refresh")
            .no(),
        c("SRV008").version("0.5.23").no(),
        // LoRA settings SGLang's argument check refuses (SRV007).
        c("SRV007").version("0.5.18").flag("--enable-lora"),
        // Overlap loading: at most twice a batch's adapters, and the number given (0.5.8+).
        c("SRV007")
            .version("0.5.9")
            .arg("--lora-paths", json!(["a=/tmp/lora-a"]))
            .flag("--enable-lora-overlap-loading"),
        c("SRV007")
            .version("0.5.23")
            .arg("--lora-paths", json!(["a=/tmp/lora-a"]))
            .flag("--enable-lora-overlap-loading")
            .arg("--max-loaded-loras", json!(16))
            .no(),
        // 0.5.11's virtual experts need the triton backend; 0.5.12 dropped the check.
        c("SRV007")
            .version("0.5.11")
            .arg("--lora-paths", json!(["a=/tmp/lora-a"]))
            .flag("--lora-use-virtual-experts"),
        c("SRV007")
            .version("0.5.12")
            .arg("--lora-paths", json!(["a=/tmp/lora-a"]))
            .flag("--lora-use-virtual-experts")
            .no(),
        c("SRV007")
            .version("0.5.23")
            .arg("--lora-paths", json!(["a=/tmp/a"]))
            .arg("--max-loaded-loras", json!(4)),
        c("SRV007")
            .version("0.5.14")
            .flag("--enable-lora")
            .arg("--max-lora-rank", json!(16))
            .arg("--lora-target-modules", json!(["all", "q_proj"])),
        c("SRV007")
            .version("0.4.10.post2")
            .arg("--lora-paths", json!(["a=/tmp/a"])),
        c("SRV007")
            .version("0.4.10.post2")
            .arg("--lora-paths", json!(["a=/tmp/a"]))
            .flag("--disable-radix-cache")
            .no(),
        // Up to 0.4.6.post1 CUDA graphs must be off too.
        c("SRV007")
            .version("0.4.5.post1")
            .arg("--lora-paths", json!(["a=/tmp/a"]))
            .flag("--disable-radix-cache"),
        c("SRV007")
            .version("0.4.5.post1")
            .arg("--lora-paths", json!(["a=/tmp/a"]))
            .flag("--disable-radix-cache")
            .flag("--disable-cuda-graph")
            .no(),
        c("SRV007")
            .version("0.4.6.post2")
            .arg("--lora-paths", json!(["a=/tmp/a"]))
            .flag("--disable-radix-cache")
            .no(),
        // A PD decode server runs without the radix cache: SGLang turns it off before it asserts.
        c("SRV007")
            .version("0.4.6.post2")
            .arg("--lora-paths", json!(["a=/tmp/a"]))
            .arg("--disaggregation-mode", json!("decode"))
            .no(),
        c("SRV007")
            .version("0.5.18")
            .flag("--enable-lora")
            .arg("--max-lora-rank", json!(16))
            .arg("--lora-target-modules", json!(["all"]))
            .no(),
        c("SRV007")
            .version("0.5.23")
            .arg("--lora-paths", json!(["a=/tmp/a", "b=/tmp/b"]))
            .arg("--max-loaded-loras", json!(8))
            .no(),
        c("SRV007").version("0.5.23").no(),
        c("SRV001").arg("--served-model-name", json!("qwen3:32b")),
        c("SRV001")
            .arg("--served-model-name", json!("qwen3-32b"))
            .no(),
        // The served name defaults to the model path (QA regression).
        c("SRV001").arg("--model-path", json!("/models/qwen3:32b")),
        c("SRV001")
            .arg("--model-path", json!("/models/qwen3:32b"))
            .arg("--served-model-name", json!("qwen3-32b"))
            .no(),
        c("SRV001")
            .arg("--model-path", json!("/models/qwen3-32b"))
            .no(),
        // Object-store URIs are exempt in SGLang.
        c("SRV001")
            .arg("--served-model-name", json!("s3://bucket/qwen3"))
            .no(),
        c("SRV001")
            .arg("--model-path", json!("gs://bucket/qwen3"))
            .no(),
        c("SRV002")
            .flag("--enable-priority-scheduling")
            .arg("--schedule-policy", json!("lpm")),
        c("SRV002").flag("--enable-priority-scheduling").no(),
        c("SRV003").arg("--retraction-policy", json!("priority")),
        c("SRV003")
            .arg("--retraction-policy", json!("priority"))
            .flag("--enable-priority-scheduling")
            .no(),
        c("SRV004").arg("--grpc-port", json!(30000)),
        c("SRV004").arg("--grpc-port", json!(30001)).no(),
        c("SRV004")
            .arg("--grpc-port", json!(30000))
            .flag("--grpc-mode")
            .no(),
        c("SRV005")
            .flag("--enable-tokenizer-batch-encode")
            .flag("--enable-dynamic-batch-tokenizer"),
        c("SRV005").flag("--enable-tokenizer-batch-encode").no(),
        c("SRV006").tp(8).flag("--enable-quant-communications"),
        c("SRV006").no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("SRV", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

/// SRV020: the per-layer embedding offload against the layer offload and its own file backend.
fn ple_offload() -> Vec<Case> {
    let on = || c("SRV020").flag("--ple-offload-embedding");
    vec![
        on().arg("--cpu-offload-gb", json!(10)),
        on().version("0.5.20").arg("--offload-group-size", json!(4)),
        on().no(),
        c("SRV020").arg("--cpu-offload-gb", json!(10)).no(),
        c("SRV020")
            .arg("--ple-offload-embedding", json!(false))
            .arg("--ple-offload-backend", json!("file")),
        // Left to SGLang (Qwen4-Exp's own pick), the file backend is not judged.
        c("SRV020").arg("--ple-offload-backend", json!("file")).no(),
    ]
}

/// SRV021: the load publisher needs an active KV-events publisher and a port range that binds.
fn load_publish() -> Vec<Case> {
    let publish = |e: &'static str| c("SRV021").arg("--load-publish-endpoint", json!(e));
    let events =
        |e: &'static str, cfg: &'static str| publish(e).arg("--kv-events-config", json!(cfg));
    vec![
        publish("auto"),
        publish("off").no(),
        events("auto", "{}"),
        events("auto", r#"{"publisher": "zmq"}"#).no(),
        events(
            "auto",
            r#"{"publisher": "zmq", "endpoint": "tcp://10.0.0.1:5557"}"#,
        ),
        events(
            "auto",
            r#"{"publisher": "zmq", "endpoint": "tcp://*:65535"}"#,
        ),
        // auto packs past the replay range itself.
        events(
            "auto",
            r#"{"publisher": "zmq", "replay_endpoint": "tcp://*:5558"}"#,
        )
        .no(),
        events("tcp://10.0.0.1:6000", r#"{"publisher": "zmq"}"#),
        events("tcp://*:5557", r#"{"publisher": "zmq"}"#),
        events("tcp://*:6000", r#"{"publisher": "zmq"}"#).no(),
        events("tcp://[::]:6000", r#"{"publisher": "zmq"}"#).no(),
        events(
            "tcp://*:6000",
            r#"{"publisher": "zmq", "replay_endpoint": "tcp://*:6000"}"#,
        ),
        events(
            "tcp://*:6000",
            r#"{"publisher": "zmq", "endpoint": "ipc:///tmp/kv"}"#,
        ),
        events("tcp://*:65535", r#"{"publisher": "zmq"}"#).no(),
        events("tcp://*:65535", r#"{"publisher": "zmq"}"#).arg("--dp-size", json!(2)),
        // Eight DP-attention ranks are eight ports, however DP attention is spelled.
        events("tcp://*:5570", r#"{"publisher": "zmq"}"#)
            .version("0.5.19")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .no(),
        events("tcp://*:5550", r#"{"publisher": "zmq"}"#)
            .version("0.5.19")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8)),
        // Text SGLang's own model reads is left to it.
        events("auto", "publisher=zmq").no(),
    ]
}

/// SRV022: the expert-pack load format runs one unsharded, eager GPU from a named pack.
fn expert_pack() -> Vec<Case> {
    let v4 = || {
        let mut m = model("DeepseekV4ForCausalLM");
        m.registry.model_type = Some("deepseek_v4".into());
        m
    };
    let pack = |m: ModelFacts| {
        c("SRV022")
            .model(m)
            .arg("--load-format", json!("expert_pack"))
            .arg(
                "--model-loader-extra-config",
                json!(r#"{"pack_path": "/p"}"#),
            )
    };
    vec![
        pack(v4()).no(),
        pack(v4()).tp(2),
        pack(v4()).tp(2).arg("--attn-dp-size", json!(2)),
        pack(v4()).flag("--enable-waterfill"),
        pack(v4()).arg("--cuda-graph-backend-decode", json!("full")),
        pack(v4())
            .arg("--cuda-graph-backend-decode", json!("disabled"))
            .no(),
        // Its path from the environment instead.
        c("SRV022")
            .model(v4())
            .arg("--load-format", json!("expert_pack"))
            .env("SGLANG_EXPERT_PACK_PATH", "/p")
            .no(),
        c("SRV022")
            .model(v4())
            .arg("--load-format", json!("expert_pack")),
        // Another model type.
        pack({
            let mut m = model("Qwen3MoeForCausalLM");
            m.registry.model_type = Some("qwen3_moe".into());
            m
        }),
        // Without the config neither the model nor the path is judged.
        c("SRV022").arg("--load-format", json!("expert_pack")).no(),
    ]
}
