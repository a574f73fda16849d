//! The memory terms beyond weights and the plain KV cache: state pools, SWA pools, LoRA
//! buffers, drafts, encoders, the online-quantisation load peak and other processes.

use super::buffers::fa3_page_tables_mib;
use super::terms::{MIB, mib_term};
use super::tests::{model, node, run};
use super::*;
use crate::facts::Env;
use crate::facts::model::ModelFacts;
use crate::rules::Code;
use crate::sglang::{SglangArgs, flagset};
use serde_json::{Value, json};

const H200: u64 = 143771;
const H100: u64 = 81559;
const L40S: u64 = 46068;

fn has(o: &MemoryOutcome, code: Code) -> bool {
    o.findings.iter().any(|h| h.code == code)
}

/// The plan/v1 object of the plan: the contract's terms.
fn mem(o: &MemoryOutcome) -> crate::plan::v1::Memory {
    o.memory.as_ref().unwrap().v1()
}

/// A fixture read with these SGLang arguments (for `--quantization`).
fn model_with(name: &str, values: &[(&str, Value)]) -> ModelFacts {
    let dir = format!(
        "{}/tests/fixtures/models/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let args = SglangArgs::with_values(flagset::get("0.5.23").unwrap(), values);
    crate::facts::model::load(&dir, &Env::default(), &args)
        .facts
        .unwrap()
}

#[test]
fn qwen3_next_state_pool_takes_its_ratio_of_the_rest() {
    let m = model("synthetic__Qwen3-Next-80B-A3B");
    let topo = node(4, H200, 0, "9.0", true);
    let o = run("0.5.5", &[("--tp-size", json!(4))], &topo, Some(&m));
    let mm = mem(&o);
    // 12 full-attention layers × 2 KV heads (one per rank at TP 4) × 256 × 2 (K, V) × 2 B.
    assert_eq!(mm.kv_cache_bytes_per_token, Some(12 * 256 * 2 * 2));
    // 36 GDN layers × (conv 8192/4 × 3 × bf16 + SSM 32/4 × 128 × 128 × fp32).
    let per_req = 36.0 * (2048.0 * 3.0 * 2.0 + 8.0 * 128.0 * 128.0 * 4.0);
    let slots = mm.mamba_cache_size.unwrap();
    let state = mm.static_mib.mamba_state as f64;
    assert!(
        (state - slots as f64 * per_req / MIB).abs() <= 1.0,
        "{state} {slots}"
    );
    // State : KV = 0.9 : 1 (--mamba-full-memory-ratio's default).
    let kv = mm.kv_cache_tokens.unwrap() as f64 * 12288.0 / MIB;
    assert!((state / kv - 0.9).abs() < 0.01, "{state} vs {kv}");
    // The radix cache keeps three slots per request.
    assert!(mm.max_running_requests.unwrap() <= slots / 3);
    // A release without the state pool (no --mamba-full-memory-ratio) has no such term.
    let old = run("0.4.10.post2", &[("--tp-size", json!(4))], &topo, Some(&m));
    assert_eq!(mem(&old).mamba_cache_size, None);
    assert_eq!(mem(&old).static_mib.mamba_state, 0);
}

#[test]
fn explicit_state_slots_and_speculative_states_per_release() {
    let m = model("synthetic__Qwen3-Next-80B-A3B");
    let topo = node(4, H200, 0, "9.0", true);
    let given = run(
        "0.5.10.post1",
        &[
            ("--tp-size", json!(4)),
            ("--max-mamba-cache-size", json!(100)),
        ],
        &topo,
        Some(&m),
    );
    assert_eq!(mem(&given).mamba_cache_size, Some(100));
    let plain = run("0.5.10.post1", &[("--tp-size", json!(4))], &topo, Some(&m));
    assert!(mem(&given).kv_cache_tokens > mem(&plain).kv_cache_tokens);
    // 0.5.5 prices each slot with one state per draft token as well: fewer slots.
    let spec = [
        ("--tp-size", json!(4)),
        ("--mem-fraction-static", json!(0.85)),
        ("--speculative-algorithm", json!("EAGLE")),
        ("--speculative-num-steps", json!(3)),
        ("--speculative-eagle-topk", json!(1)),
        ("--speculative-num-draft-tokens", json!(4)),
    ];
    let s55 = run("0.5.5", &spec, &topo, Some(&m));
    let p55 = run("0.5.5", &spec[..2], &topo, Some(&m));
    let ratio =
        mem(&p55).mamba_cache_size.unwrap() as f64 / mem(&s55).mamba_cache_size.unwrap() as f64;
    assert!((ratio - 5.0).abs() < 0.1, "{ratio}");
}

#[test]
fn before_the_ratio_the_state_pool_is_a_fixed_512_slots_and_can_leave_no_kv_cache() {
    let m = model("synthetic__Qwen3-Next-80B-A3B");
    let topo = node(4, H200, 0, "9.0", true);
    // 0.5.2: --max-mamba-cache-size exists, --mamba-full-memory-ratio not yet.
    let o = run("0.5.2", &[("--tp-size", json!(4))], &topo, Some(&m));
    let per_req = 36.0 * (2048.0 * 3.0 * 2.0 + 8.0 * 128.0 * 128.0 * 4.0);
    assert_eq!(mem(&o).mamba_cache_size, Some(512));
    let state = mem(&o).static_mib.mamba_state as f64;
    assert!((state - 512.0 * per_req / MIB).abs() <= 1.0, "{state}");
    // The requests given size the pool; the radix cache is off, so one slot serves a request.
    let given = run(
        "0.5.2",
        &[
            ("--tp-size", json!(4)),
            ("--max-running-requests", json!(64)),
        ],
        &topo,
        Some(&m),
    );
    assert_eq!(mem(&given).mamba_cache_size, Some(64));
    assert_eq!(mem(&given).max_running_requests, Some(64));
    // Two 96 GB H20s: the weights fit, but not with 512 states beside them, so SGLang has no
    // KV cache ("Not enough memory"); from the ratio on, the pool shrinks to what is left.
    let two = node(2, 97871, 0, "9.0", true);
    let short = run("0.5.2", &[("--tp-size", json!(2))], &two, Some(&m));
    assert_eq!(mem(&short).fits, Some(false), "{:?}", mem(&short));
    assert!(has(&short, Code::MEM005));
    let ratio = run("0.5.5", &[("--tp-size", json!(2))], &two, Some(&m));
    assert_eq!(mem(&ratio).fits, Some(true), "{:?}", mem(&ratio));
}

#[test]
fn swa_pool_follows_each_release() {
    let gpt = model("openai__gpt-oss-20b");
    let topo = node(1, H100, 0, "9.0", false);
    // 0.5.5 turns GPT-OSS's separate SWA pool off; 0.5.23 keeps it at 0.8 of the full tokens.
    let old = run("0.5.5", &[], &topo, Some(&gpt));
    assert_eq!(mem(&old).swa_kv_cache_tokens, None);
    assert_eq!(
        mem(&old).kv_cache_bytes_per_token,
        Some(24 * 8 * 64 * 2 * 2)
    );
    let new = run("0.5.23", &[], &topo, Some(&gpt));
    let mm = mem(&new);
    let full = mm.kv_cache_tokens.unwrap();
    let swa = mm.swa_kv_cache_tokens.unwrap();
    assert!(
        swa <= full * 8 / 10 && swa + 64 > full * 8 / 10,
        "{swa} {full}"
    );
    let per_swa_token = 12.0 * 8.0 * 64.0 * 2.0 * 2.0;
    assert_eq!(
        mm.static_mib.swa_kv_cache,
        terms::mib_term(swa as f64 * per_swa_token / MIB)
    );
    // Gemma-3: turned off in every release read.
    let gemma = model("google__gemma-3-27b-it");
    let g = run(
        "0.5.23",
        &[("--tp-size", json!(2))],
        &node(2, H100, 0, "9.0", true),
        Some(&gemma),
    );
    assert_eq!(mem(&g).swa_kv_cache_tokens, None);
}

#[test]
fn llama4_chunked_pool_only_with_hybrid_kvcache_ratio() {
    let m = model("meta-llama__Llama-4-Maverick-17B-128E-Instruct");
    let topo = node(8, H200, 0, "9.0", true);
    let plain = run("0.5.5", &[("--tp-size", json!(8))], &topo, Some(&m));
    assert_eq!(mem(&plain).swa_kv_cache_tokens, None);
    let hybrid = run(
        "0.5.5",
        &[
            ("--tp-size", json!(8)),
            ("--hybrid-kvcache-ratio", json!(1.0)),
        ],
        &topo,
        Some(&m),
    );
    // 12 full layers, 36 chunked at 8192 / 1048576 of the full tokens: about a quarter of
    // the cell of 48 full layers.
    let (a, b) = (
        mem(&plain).kv_cache_bytes_per_token.unwrap(),
        mem(&hybrid).kv_cache_bytes_per_token.unwrap(),
    );
    assert_eq!(
        b,
        (a as f64 / 48.0 * (12.0 + 36.0 * 8192.0 / 1048576.0)).ceil() as u64
    );
    assert!(mem(&hybrid).swa_kv_cache_tokens.is_some());
}

#[test]
fn lora_buffers_by_rank_slots_and_modules() {
    let m = model("meta-llama__Llama-3.1-8B-Instruct");
    let topo = node(1, H100, 0, "9.0", false);
    let base = run("0.5.5", &[], &topo, Some(&m));
    let lora = [
        ("--enable-lora", json!(true)),
        ("--max-lora-rank", json!(64)),
    ];
    let all = run("0.5.5", &lora, &topo, Some(&m));
    // Per layer: qkv 3·64·4096 + 6144·64, o 2·64·4096, gate_up 2·64·4096 + 28672·64,
    // down 64·14336 + 4096·64 = 5 242 880 elements; × 32 layers × 8 slots × 2 B = 2560 MiB.
    assert_eq!(mem(&all).static_mib.lora, 2560);
    assert!(mem(&all).kv_cache_tokens < mem(&base).kv_cache_tokens);
    let mut qv = lora.to_vec();
    qv.push(("--lora-target-modules", json!(["q_proj", "v_proj"])));
    assert_eq!(
        mem(&run("0.5.5", &qv, &topo, Some(&m))).static_mib.lora,
        576
    );
    // Without a known rank the buffers cannot be sized: no made-up term.
    let unknown = run("0.5.5", &[("--enable-lora", json!(true))], &topo, Some(&m));
    assert_eq!(mem(&unknown).static_mib.lora, 0);
}

#[test]
fn mtp_draft_shares_the_targets_embedding_and_head() {
    let m = model("oracle/DeepSeek-V3");
    let topo = node(8, H200, 0, "9.0", true);
    let plain = run("0.5.5", &[("--tp-size", json!(8))], &topo, Some(&m));
    let spec = run(
        "0.5.5",
        &[
            ("--tp-size", json!(8)),
            ("--speculative-algorithm", json!("EAGLE")),
        ],
        &topo,
        Some(&m),
    );
    let b = crate::facts::model::weight_breakdown(&m).unwrap();
    let shared = 2.0 * 129280.0 * 7168.0 * 2.0;
    let draft_mib = (b.mtp - shared) / 8.0 / MIB;
    assert_eq!(
        mem(&spec).static_mib.draft_weights,
        terms::mib_term(draft_mib)
    );
    let gained = (mem(&spec).weights_per_gpu_gib.unwrap()
        - mem(&plain).weights_per_gpu_gib.unwrap())
        * 1024.0;
    assert!((gained - draft_mib).abs() < 12.0, "{gained} vs {draft_mib}");
    assert_eq!(mem(&plain).static_mib.draft_weights, 0);
}

#[test]
fn estimated_weights_count_the_vision_tower() {
    let m = model("google__gemma-3-27b-it");
    let text_only = crate::facts::model::estimate_weight_bytes(&m).unwrap();
    assert_eq!(m.weight_bytes, Some(text_only + m.encoder_bytes()));
    assert!(m.encoder_bytes() > 800_000_000);
    let o = run(
        "0.5.23",
        &[("--tp-size", json!(2))],
        &node(2, H100, 0, "9.0", true),
        Some(&m),
    );
    assert_eq!(
        mem(&o).static_mib.encoder_weights,
        terms::mib_term(m.encoder_bytes() as f64 / 2.0 / MIB)
    );
}

#[test]
fn a_text_only_llama4_does_not_build_its_vision_tower_from_0_4_9_post4() {
    let dir = format!(
        "{}/tests/field/models/meta-llama__Llama-4-Scout-17B-16E-Instruct",
        env!("CARGO_MANIFEST_DIR")
    );
    let args = SglangArgs::with_values(flagset::get("0.5.23").unwrap(), &[]);
    let m = crate::facts::model::load(&dir, &Env::default(), &args)
        .facts
        .unwrap();
    assert!(m.encoder_bytes() > 0);
    let topo = node(8, H200, 0, "9.0", true);
    let tp = ("--tp-size", json!(8));
    let weights = |o: &MemoryOutcome| mem(o).weights_per_gpu_gib.unwrap() * 1024.0;
    let tower_mib = m.encoder_bytes() as f64 / 8.0 / MIB;
    for v in ["0.4.9.post4", "0.5.23"] {
        let text = run(v, std::slice::from_ref(&tp), &topo, Some(&m));
        let mm = run(
            v,
            &[tp.clone(), ("--enable-multimodal", json!(true))],
            &topo,
            Some(&m),
        );
        assert_eq!(mem(&text).static_mib.encoder_weights, 0, "{v}");
        assert!(mem(&mm).static_mib.encoder_weights > 0, "{v}");
        let saved = weights(&mm) - weights(&text);
        assert!(
            (saved - tower_mib).abs() < 2.0,
            "{v}: {saved} vs {tower_mib}"
        );
    }
    // Before, the tower was built even when the model was served text-only.
    let old = run("0.4.9.post3", std::slice::from_ref(&tp), &topo, Some(&m));
    assert!(mem(&old).static_mib.encoder_weights > 0);
}

#[test]
fn online_fp8_loads_the_bf16_checkpoint_first() {
    let q = [("--quantization", json!("fp8"))];
    let m = model_with("Qwen__QwQ-32B", &q);
    let plain = model("Qwen__QwQ-32B");
    assert_eq!(m.online_quant_load_bytes, plain.weight_bytes);
    let w = m.weight_bytes.unwrap() as f64 / plain.weight_bytes.unwrap() as f64;
    assert!((0.5..0.6).contains(&w), "{w}");
    // One 48 GB L40S: 61 GiB of BF16 at load, 33 GiB of FP8 after.
    let topo = node(1, L40S, 0, "8.9", false);
    let mut values = q.to_vec();
    values.push(("--tp-size", json!(1)));
    let o = run("0.5.23", &values, &topo, Some(&m));
    // The steady state would fit; the load does not, so the start fails.
    assert_eq!(mem(&o).fits, Some(false));
    assert!(has(&o, Code::MEM010), "{:?}", o.findings);
    let peak = mem(&o).load_peak_per_gpu_gib.unwrap();
    assert!(
        peak > 30.0 && peak > mem(&o).weights_per_gpu_gib.unwrap() * 1.7,
        "{peak}"
    );
    values.push(("--load-format", json!("layered")));
    let layered = run("0.5.23", &values, &topo, Some(&m));
    assert!(!has(&layered, Code::MEM010));
    assert_eq!(mem(&layered).fits, Some(true));
    // Estimated checkpoint size: a warning, and the verdict still says the start fails.
    let est = model_with("deepseek-ai__DeepSeek-R1-Distill-Qwen-32B", &q);
    let e = run("0.5.23", &values[..2], &topo, Some(&est));
    assert!(has(&e, Code::MEM012), "{:?}", e.findings);
    assert_eq!(mem(&e).fits, Some(false));
}

#[test]
fn other_processes_on_one_gpu_cost_every_rank() {
    let m = model("meta-llama__Llama-3.1-8B-Instruct");
    let mut topo = node(2, H100, 0, "9.0", true);
    let free = run("0.5.23", &[("--tp-size", json!(2))], &topo, Some(&m));
    assert!(!has(&free, Code::MEM011));
    topo.gpus[1].memory_used_mib = Some(12288);
    let busy = run("0.5.23", &[("--tp-size", json!(2))], &topo, Some(&m));
    let h = busy
        .findings
        .iter()
        .find(|h| h.code == Code::MEM011)
        .unwrap();
    let cost = mem(&free).kv_cache_tokens.unwrap() - mem(&busy).kv_cache_tokens.unwrap();
    assert!(
        h.message.contains("GPU 1 (test)") && h.message.contains("12.0 GiB"),
        "{}",
        h.message
    );
    assert!(
        h.message.contains(&format!("costs {cost} KV tokens")),
        "{} vs {cost}",
        h.message
    );
}

#[test]
fn cpu_offload_keeps_that_much_of_the_weights_off_the_gpu() {
    // Llama-3.1-8B (15 GiB of BF16 weights) on one 24 GiB GPU with half of it static.
    let m = model("meta-llama__Llama-3.1-8B-Instruct");
    let topo = node(1, 24564, 0, "8.9", false);
    let half = ("--mem-fraction-static", json!(0.5));
    let plain = run("0.5.5", std::slice::from_ref(&half), &topo, Some(&m));
    assert!(has(&plain, Code::MEM004), "{:?}", plain.findings);
    let offload = run(
        "0.5.5",
        &[half, ("--cpu-offload-gb", json!(10))],
        &topo,
        Some(&m),
    );
    assert!(!has(&offload, Code::MEM004), "{:?}", offload.findings);
    let (w0, w1) = (
        mem(&plain).weights_per_gpu_mib.unwrap(),
        mem(&offload).weights_per_gpu_mib.unwrap(),
    );
    assert_eq!(w0 - w1, 10 * 1024);
}

#[test]
fn fa3_keeps_a_page_table_copy_per_captured_batch_size_before_0_4_10_post2() {
    // Scout's 0.4.6.post5 capture list on a 141 GB GPU: 1, 2, 4, 8, 16 … 256 (35 sizes, 4231
    // slots); at a million-token context each slot's row is 4 MB of int32 page indices.
    let mut bs = vec![1, 2, 4, 8];
    bs.extend((16..=256).step_by(8));
    assert_eq!(bs.iter().sum::<i64>(), 4231);
    let old = fa3_page_tables_mib("0.4.6.post5", &bs, 1_000_000, 1);
    assert_eq!(old, mib_term((256.0 + 4231.0) * 4e6 / MIB));
    assert!(old > 16 * 1024);
    // From 0.4.10.post2 the captured graphs slice one table.
    let new = fa3_page_tables_mib("0.4.10.post2", &bs, 1_000_000, 1);
    assert_eq!(new, mib_term(256.0 * 4e6 / MIB));
    // Pages of 64 tokens shrink the rows.
    assert_eq!(
        fa3_page_tables_mib("0.5.5", &bs, 1_000_000, 64),
        mib_term(256.0 * 15625.0 * 4.0 / MIB)
    );
    assert_eq!(fa3_page_tables_mib("0.4.6", &[], 1_000_000, 1), 0);
}

#[test]
fn fa3_page_tables_are_a_term_outside_the_pool_only_when_decode_runs_on_fa3() {
    let m = model("meta-llama__Llama-4-Maverick-17B-128E-Instruct");
    let topo = node(8, H200, 0, "9.0", true);
    let plan = |backend: &str| {
        let args = [
            ("--tp-size", json!(8)),
            ("--context-length", json!(1_000_000)),
            ("--attention-backend", json!(backend)),
        ];
        run("0.4.9.post2", &args, &topo, Some(&m))
    };
    let (fa3, flashinfer) = (plan("fa3"), plan("flashinfer"));
    let tables = |o: &MemoryOutcome| {
        let m = o.memory.as_ref().unwrap();
        m.term(super::model::Role::AttentionPageTables)
            .map(|t| t.mib)
    };
    // 256 + 4231 rows of a million int32 page indices: about 16.7 GiB, outside the pool.
    assert!(tables(&fa3).unwrap() > 16 * 1024);
    assert_eq!(tables(&flashinfer), None);
    let line = mem(&fa3)
        .terms
        .into_iter()
        .find(|t| t.term == "attention_page_tables")
        .unwrap();
    assert_eq!(line.group, "outside");
    // The CUDA-graph pools themselves do not change with the backend.
    assert_eq!(
        mem(&fa3).reserved_mib.cuda_graphs,
        mem(&flashinfer).reserved_mib.cuda_graphs
    );
}
