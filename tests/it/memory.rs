//! The memory planner against SGLang's own resolution (oracle goldens, every case) and against
//! real start-up logs (accuracy targets).

use std::path::Path;

use serde_json::{Value, json};
use sglang_launch::facts::Env;
use sglang_launch::facts::model::{self, ModelFacts};
use sglang_launch::resolve::defaults as sg;
use sglang_launch::resolve::{Context, Facts, Speculative};
use sglang_launch::sglang::Parallel;
use sglang_launch::sglang::{SglangArgs, flagset, release};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The flag set a golden's release parses with: its own when embedded, else the embedded one
/// nearest in release order (every release from the sweep table's list; the nearer of two at
/// equal distance is the older) that knows every option the case uses. Option defaults come
/// from the flag set, so a far one can lend a default its release did not have.
fn flags_for(version: &str, argv: &[&str]) -> &'static flagset::FlagSet {
    if let Some(f) = flagset::get(version) {
        return f;
    }
    static ORDER: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let order = ORDER.get_or_init(|| Goldens::read("sglang-defaults-sweep.tsv").releases);
    let at = |v: &str| order.iter().position(|r| r == v);
    // A release missing from the list sits where it sorts.
    let here = at(version).unwrap_or_else(|| {
        order
            .iter()
            .position(|r| release::cmp(r, version).is_gt())
            .unwrap_or(order.len())
    });
    let mut known: Vec<(usize, &str)> = flagset::KNOWN_VERSIONS
        .iter()
        .filter_map(|k| at(k).map(|i| (i.abs_diff(here) * 2 + usize::from(i > here), *k)))
        .collect();
    known.sort_unstable();
    known
        .iter()
        .map(|(_, k)| flagset::get(k).unwrap())
        .find(|f| {
            argv.iter()
                .filter(|a| a.starts_with("--"))
                .all(|a| f.action(a).is_some())
        })
        .unwrap_or_else(|| panic!("no embedded flag set knows every option of {argv:?}"))
}

/// A small reader for the goldens' argv: options by exact name, typed by the flag set.
fn args_from_argv(version: &str, argv: &[&str]) -> SglangArgs {
    let flags = flags_for(version, argv);
    let mut values: Vec<(String, Value)> = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let opt = argv[i];
        let action = flags
            .action(opt)
            .unwrap_or_else(|| panic!("{opt} unknown in {version}"));
        i += 1;
        let mut vals = Vec::new();
        while i < argv.len() && !argv[i].starts_with("--") {
            vals.push(argv[i]);
            i += 1;
        }
        let typed = |s: &str| -> Value {
            use flagset::ValueType::*;
            match action.value_type {
                Int => json!(s.parse::<i64>().unwrap()),
                Float => json!(s.parse::<f64>().unwrap()),
                _ => json!(s),
            }
        };
        let v = if vals.is_empty() {
            json!(true)
        } else if matches!(
            action.nargs,
            flagset::Nargs::OneOrMore | flagset::Nargs::ZeroOrMore
        ) {
            Value::Array(vals.iter().map(|s| typed(s)).collect())
        } else {
            typed(vals[0])
        };
        let v = if opt == "--model-path" || opt == "--speculative-draft-model-path" {
            json!(format!("{FIXTURES}/models/{}", v.as_str().unwrap()))
        } else {
            v
        };
        values.push((opt.to_owned(), v));
    }
    let refs: Vec<(&str, Value)> = values
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    SglangArgs::with_values(flags, &refs)
}

fn opt_i64(s: &str) -> Option<i64> {
    (s != "-").then(|| s.parse().unwrap())
}

/// One golden table (scripts/gen-defaults.py): header lines, then one row per case and result,
/// with the releases it holds for as ranges over the `# releases:` list.
struct Goldens {
    releases: Vec<String>,
    models: Vec<(String, String)>,
    /// `# args <id>: <arguments>`.
    args: Vec<(String, String)>,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Goldens {
    fn read(file: &str) -> Goldens {
        let text = std::fs::read_to_string(format!("{FIXTURES}/memory/{file}")).unwrap();
        let meta = |key: &str| -> Vec<String> {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .unwrap_or_else(|| panic!("{file}: no `{key}` line"))
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        };
        let models = meta("# models: ")
            .iter()
            .map(|m| m.split_once('=').unwrap())
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let args = text
            .lines()
            .filter_map(|l| l.strip_prefix("# args ")?.split_once(": "))
            .map(|(id, a)| (id.to_owned(), a.to_owned()))
            .collect();
        let mut lines = text.lines().filter(|l| !l.starts_with('#'));
        let header = lines
            .next()
            .unwrap()
            .split('\t')
            .map(str::to_owned)
            .collect();
        let rows = lines
            .map(|l| l.split('\t').map(str::to_owned).collect())
            .collect();
        Goldens {
            releases: meta("# releases: "),
            models,
            args,
            header,
            rows,
        }
    }

    fn col(&self, row: &[String], name: &str) -> String {
        let i = self.header.iter().position(|h| h == name).unwrap();
        row[i].clone()
    }

    /// `a-b,c` → every listed release from a to b, and c.
    fn expand(&self, ranges: &str) -> Vec<String> {
        let at = |v: &str| {
            self.releases
                .iter()
                .position(|r| r == v)
                .unwrap_or_else(|| panic!("{v} not in the release list"))
        };
        let mut out = Vec::new();
        for part in ranges.split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            out.extend(self.releases[at(a)..=at(b)].iter().cloned());
        }
        out
    }

    fn argv(&self, row: &[String]) -> Vec<String> {
        let kind = self.col(row, "model");
        let model = &self.models.iter().find(|(k, _)| *k == kind).unwrap().1;
        let mut argv = vec![
            "--model-path".to_owned(),
            format!("oracle/{model}"),
            "--tp-size".to_owned(),
            self.col(row, "tp"),
        ];
        let id = self.col(row, "args");
        if id != "-" {
            let extra = &self.args.iter().find(|(k, _)| *k == id).unwrap().1;
            argv.extend(extra.split(' ').map(str::to_owned));
        }
        argv
    }
}

/// Replays every (release, case) of a golden table through `resolve::defaults`; returns the
/// number of results compared and the disagreements.
fn replay(file: &str) -> (usize, Vec<String>) {
    let g = Goldens::read(file);
    let env = Env::default();
    let (mut total, mut bad) = (0, Vec::new());
    for row in &g.rows {
        let argv = g.argv(row);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        for version in g.expand(&g.col(row, "releases")) {
            total += 1;
            let diffs = compare(&g, row, &version, &argv, &env);
            if !diffs.is_empty() {
                bad.push(format!(
                    "{version} gpu={} [{}]: {}",
                    g.col(row, "gpu_mem_mib"),
                    argv[2..].join(" "),
                    diffs.join("; ")
                ));
            }
        }
    }
    (total, bad)
}

/// What SGLang resolved for one release and case (a golden row) against `resolve::defaults`.
fn compare(g: &Goldens, row: &[String], version: &str, argv: &[&str], env: &Env) -> Vec<String> {
    let gpu: u64 = g.col(row, "gpu_mem_mib").parse().unwrap();
    let args = args_from_argv(version, argv);
    let model_dir = args.str("--model-path").unwrap().to_owned();
    let facts: Option<ModelFacts> = model::load(&model_dir, env, &args).facts;
    assert!(facts.is_some(), "{model_dir}");
    let d = sg::resolve(
        version,
        &args,
        env,
        &Parallel::of(&args),
        Some(gpu),
        facts.as_ref(),
    );
    let mut diffs = Vec::new();
    let want_mfs: f64 = g.col(row, "mem_fraction_static").parse().unwrap();
    if (d.mem_fraction_static - want_mfs).abs() > 1e-9 {
        diffs.push(format!("mfs {} want {want_mfs}", d.mem_fraction_static));
    }
    let want_cps = opt_i64(&g.col(row, "chunked_prefill_size")).unwrap();
    if d.chunked_prefill_size != want_cps {
        diffs.push(format!("cps {} want {want_cps}", d.chunked_prefill_size));
    }
    let want_graph = g.col(row, "decode_cuda_graph") == "true";
    if d.decode_graph != want_graph {
        diffs.push(format!("decode graph {} want {want_graph}", d.decode_graph));
    }
    let want_max = opt_i64(&g.col(row, "decode_max_bs"));
    if d.decode_max_bs != want_max {
        diffs.push(format!(
            "decode max bs {:?} want {want_max:?}",
            d.decode_max_bs
        ));
    }
    let bs_len = opt_i64(&g.col(row, "decode_bs_len"));
    let bs_sum = opt_i64(&g.col(row, "decode_bs_sum"));
    let got_len = d.decode_bs.as_ref().map(|b| b.len() as i64);
    let got_sum = d.decode_bs.as_ref().map(|b| b.iter().sum::<i64>());
    if (got_len, got_sum) != (bs_len, bs_sum) {
        diffs.push(format!(
            "decode bs len/sum {got_len:?}/{got_sum:?} want {bs_len:?}/{bs_sum:?}"
        ));
    }
    let want_mrr = opt_i64(&g.col(row, "max_running_requests"));
    if d.max_running_requests != want_mrr {
        diffs.push(format!(
            "mrr {:?} want {want_mrr:?}",
            d.max_running_requests
        ));
    }
    if let Some(want_page) = opt_i64(&g.col(row, "page_size")) {
        // The server's page size follows the attention backend it resolves for this GPU.
        let topology = memory_support::uniform_node(8, "golden", &g.col(row, "cc"), gpu, 0);
        let gpus: Vec<u32> = (0..8).collect();
        let server = Context::new(Facts {
            version,
            args: &args,
            env,
            topology: &topology,
            gpus: &gpus,
            model: facts.as_ref(),
            draft: None,
            host: None,
            packages: None,
        })
        .server;
        if server.page_size != want_page as u64 {
            diffs.push(format!("page size {} want {want_page}", server.page_size));
        }
    }
    diffs
}

fn assert_agree(file: &str, expected_total: usize) {
    let (total, bad) = replay(file);
    assert_eq!(
        total, expected_total,
        "every golden (release × case) is read"
    );
    assert!(
        bad.is_empty(),
        "{} of {total} disagree:\n{}",
        bad.len(),
        bad[..bad.len().min(40)].join("\n")
    );
}

/// The full grid (558 cases) at the releases it was recorded for.
#[test]
fn sglang_defaults_agree_with_every_oracle_golden() {
    assert_agree("sglang-defaults.tsv", 2232);
}

/// 18 cases on 9 GPUs (some exist only in some releases) for the releases on both sides of every
/// formula boundary.
#[test]
fn sglang_defaults_agree_at_every_boundary() {
    assert_agree("sglang-defaults-probe.tsv", 6944);
}

/// 6 cases on 3 GPUs for every release from 0.4.0 on (the sweep that found the boundaries).
#[test]
fn sglang_defaults_agree_at_every_release() {
    assert_agree("sglang-defaults-sweep.tsv", 1707);
}

#[test]
fn model_fixtures_load() {
    let env = Env::default();
    let flags = flagset::get("0.5.23").unwrap();
    let args = SglangArgs::with_values(flags, &[]);
    let p = Path::new(FIXTURES).join("models/oracle/DeepSeek-V3");
    let f = model::load(p.to_str().unwrap(), &env, &args).facts.unwrap();
    assert!(f.is_mla());
    assert_eq!(f.kv_lora_rank, Some(512));
    assert_eq!(f.quant_method.as_deref(), Some("fp8"));
}

#[path = "../memory_support/mod.rs"]
mod memory_support;

/// Accuracy targets over the real start-up logs (benches/memory_accuracy.rs prints the table).
#[test]
fn predictions_meet_the_accuracy_targets_on_real_logs() {
    let rows = memory_support::rows();
    let table = memory_support::table(&rows);
    // ROCm builds of 0.4.8/0.4.9 hold DeepSeek's block-FP8 checkpoint larger than CUDA's: with
    // the routed experts in BF16 and the rest as CUDA's (DP attention's unsharded attention
    // included) both logs are met within 1% (166.6 GiB at tp8 dp8, 90.1 at tp16 dp16), 1.7-1.9×
    // our CUDA figure. Not a planner error: ROCm is not planned.
    let rocm_bf16 = [
        "sglang-7691-dsr1-rocm-dp8-negative-pool",
        "sglang-7847-dsr1-mi300x-tp16-dp16",
    ];
    // Gemma-3 AWQ: the BF16 embeddings (transformers' default vocabulary) and the vision tower
    // are counted; the log is still ~3 GiB above the estimate, a part of the checkpoint the
    // config does not describe (listed as an unmodelled OOM cause).
    let awq_vision = "sglang-4895-gemma3-27b-awq-4090";
    let mut w = Vec::new();
    for r in &rows {
        if let Some(e) = r.weights_err() {
            if r.id == awq_vision {
                assert!((-0.20..-0.12).contains(&e), "{}: {e}\n{table}", r.id);
                continue;
            }
            if rocm_bf16.contains(&r.id.as_str()) {
                let bf16_ratio = r.weights_log_gib.unwrap() / r.weights_pred_gib.unwrap();
                assert!(
                    bf16_ratio > 1.65 && bf16_ratio < 1.9,
                    "{}: {bf16_ratio}\n{table}",
                    r.id
                );
                continue;
            }
            // A sub-GiB checkpoint's figure is a difference of two two-decimal readings plus the
            // allocator's rounding: 0.1 GiB is the resolution there.
            let gib = (r.weights_pred_gib.unwrap() - r.weights_log_gib.unwrap()).abs();
            assert!(
                e.abs() <= 0.03 || gib <= 0.1,
                "{}: weights off by {:.1}%\n{table}",
                r.id,
                e * 100.0
            );
            w.push(e.abs());
        }
        if let Some(exact) = r.kv_bytes_exact() {
            assert!(
                exact,
                "{}: KV size {:?} vs logged {:?}\n{table}",
                r.id, r.kv_size_pred_gib, r.kv_size_log_gib
            );
        }
    }
    assert!(
        w.len() >= 10,
        "weights compared on {} logs\n{table}",
        w.len()
    );
    let kv_cases = rows.iter().filter(|r| r.kv_bytes_exact().is_some()).count();
    assert!(
        kv_cases >= 8,
        "KV size compared on {kv_cases} logs\n{table}"
    );
    let t: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.tokens_err())
        .map(f64::abs)
        .collect();
    assert!(t.len() >= 6, "tokens compared on {} logs\n{table}", t.len());
    let med = memory_support::median(t).unwrap();
    assert!(
        med <= 0.05,
        "KV tokens median error {:.1}%\n{table}",
        med * 100.0
    );
}

/// The dimension-based estimate against the checkpoints' real tensor totals (the index files in
/// the fixtures carry INDEX.md's Σ tensor bytes).
#[test]
fn weight_estimates_match_checkpoint_totals() {
    let env = Env::default();
    let args = SglangArgs::with_values(flagset::get("0.5.23").unwrap(), &[]);
    let known = [
        ("Qwen__QwQ-32B", 65_527_752_704u64),
        ("Qwen__Qwen2.5-7B-Instruct", 15_231_233_024),
        ("meta-llama__Llama-3.1-8B-Instruct", 16_060_522_496),
        ("zai-org__GLM-4.7-Flash", 62_442_983_168),
        // MXFP4 experts, BF16 attention/router/embeddings (INDEX.md Σ table)
        ("openai__gpt-oss-20b", 13_761_264_768),
    ];
    for (name, total) in known {
        let dir = format!("{FIXTURES}/models/{name}");
        let f = model::load(&dir, &env, &args).facts.unwrap();
        let est = model::estimate_weight_bytes(&f).unwrap() as f64;
        let err = est / total as f64 - 1.0;
        assert!(
            err.abs() < 0.03,
            "{name}: estimate {est} vs {total} ({:+.1}%)",
            err * 100.0
        );
    }
}

#[test]
fn gpt_oss_sliding_layers_use_the_hybrid_pool() {
    let env = Env::default();
    let args = SglangArgs::with_values(flagset::get("0.5.23").unwrap(), &[("--tp-size", json!(1))]);
    let f = model::load(
        &format!("{FIXTURES}/models/openai__gpt-oss-20b"),
        &env,
        &args,
    )
    .facts
    .unwrap();
    let cell = sglang_launch::plan::memory::kv::kv_cell(
        &args,
        None,
        None,
        &Parallel::of(&args),
        Speculative::of(&args, Some(&f)).as_ref(),
        &f,
        None,
    )
    .unwrap();
    // 12 full layers + 0.8 × 12 sliding layers, 8 KV heads × (64 + 64) × 2 B each
    let per_layer: u64 = 8 * 128 * 2;
    assert_eq!(
        cell.target,
        (12 * per_layer) + (12 * per_layer * 4).div_ceil(5)
    );
    assert_eq!(cell.swa_ratio, Some(0.8));
}

/// Every record is read; each one not evaluated says why, and enough are evaluated to mean
/// something.
#[test]
fn every_record_is_evaluated_or_says_why() {
    let rows = memory_support::rows();
    assert_eq!(rows.len(), memory_support::records().len());
    let table = memory_support::scope_table(&rows);
    for r in &rows {
        let why = r.skip.as_ref().or(r.plan_skip.as_ref());
        assert!(r.judged() || why.is_some(), "{}\n{table}", r.id);
    }
    assert!(rows.iter().filter(|r| r.judged()).count() >= 12, "{table}");
}

/// Outcomes on real logs: no server that worked gets a blocking memory finding, and every
/// judged OOM whose cause is a modelled term is flagged (the others are listed, with why).
#[test]
fn plan_agrees_with_real_outcomes() {
    let rows = memory_support::rows();
    let table = memory_support::verdict_table(&rows);
    let judged: Vec<_> = rows.iter().filter(|r| r.judged()).collect();
    // Qwen3-235B-A22B FP8 at TP 4 with 0.93 on 0.4.9 started with 5.5 GiB outside the pool, 0.8
    // GiB less than our start need (0.4.9's default graph batch and the first prefill chunk), so
    // MEM003 warns; only its KV line is quoted, so which term runs high is not known. A warning:
    // it blocks nothing.
    // Qwen2.5-0.5B on an 8 GB laptop GPU stopped before capture for another reason (no Ninja),
    // with 0.83 GiB outside SGLang's default pool; our first-use term (float32 logits for the
    // 2,753 requests we expect at once over a 152k vocabulary, 1.6 GiB) is larger, so MEM003
    // warns where it is unknown whether the default would have held.
    let warned = [
        ("vllm-21348-qwen3-235b-fp8-4xh100", "MEM003"),
        ("sglang-2527-qwen25-0.5b-3070laptop", "MEM003"),
    ];
    for r in judged.iter().filter(|r| !r.oom) {
        let v = r.verdict.as_ref().unwrap();
        match warned.iter().find(|(id, _)| *id == r.id) {
            Some((_, code)) => assert!(
                v.flags.iter().all(|f| f == code || f == "fits: no"),
                "{}: {:?}\n{table}",
                r.id,
                v.flags
            ),
            None => assert!(v.flags.is_empty(), "{}: {:?}\n{table}", r.id, v.flags),
        }
    }
    let unmodelled = |id: &str| memory_support::UNMODELLED.iter().any(|(u, _)| *u == id);
    for r in judged.iter().filter(|r| r.oom && !unmodelled(&r.id)) {
        let v = r.verdict.as_ref().unwrap();
        assert!(v.flagged(), "{}: OOM not flagged\n{table}", r.id);
    }
    // The list names judged OOM records only.
    for (id, _) in memory_support::UNMODELLED {
        assert!(
            judged.iter().any(|r| r.id == *id && r.oom),
            "{id} is not a judged OOM\n{table}"
        );
    }
    // Attention-DP servers are among those judged.
    assert!(judged.iter().any(|r| r.dp_attention && !r.oom), "{table}");
}

/// Attention DP on real logs: our reserve fits in what the working DP-attention servers had
/// outside the static pool, and our graph term is no more than 10% above the graph pools the
/// DP-attention OOM (sglang-6027) reported (the log its per-slot constant is bound by).
#[test]
fn attention_dp_terms_fit_real_dp_attention_servers() {
    let rows = memory_support::rows();
    let table = memory_support::evidence_table(&rows);
    let dp: Vec<_> = rows
        .iter()
        .filter(|r| r.dp_attention && r.judged())
        .collect();
    assert!(dp.len() >= 2, "{table}");
    for r in dp.iter().filter(|r| !r.oom) {
        let (ours, real) = (r.ev.reserve_gib.unwrap(), r.ev.real_slack_gib.unwrap());
        assert!(ours <= real, "{}: {ours} > {real}\n{table}", r.id);
    }
    let pools: Vec<_> = dp
        .iter()
        .filter_map(|r| Some((r, r.graph_pools_log_gib?, r.graph_pred_gib?)))
        .collect();
    assert!(!pools.is_empty(), "{table}");
    for (r, log, ours) in pools {
        assert!(
            ours >= log && ours <= log * 1.1,
            "{}: graphs {ours} vs pools {log}\n{table}",
            r.id
        );
    }
}

/// Policy check on real logs: for every log that shows what start-up used outside the static
/// pool (graph capture, workspaces; or a run-time OOM's in-use figures), the fraction we would
/// plan on that GPU leaves at least that plus the largest prefill chunk's activations.
#[test]
fn planned_fraction_leaves_what_real_servers_needed() {
    let rows = memory_support::rows();
    let table = memory_support::evidence_table(&rows);
    println!("{table}");
    let judged: Vec<_> = rows
        .iter()
        .filter_map(|r| Some((r, r.ev.planned_covers_need()?)))
        .collect();
    assert!(
        judged.len() >= 5,
        "only {} cases judged\n{table}",
        judged.len()
    );
    // sglang-6027's need includes a run-time transient no term models (UNMODELLED says why).
    let unmodelled = |id: &str| memory_support::UNMODELLED.iter().any(|(u, _)| *u == id);
    for (r, ok) in judged.iter().filter(|(r, _)| !unmodelled(&r.id)) {
        assert!(
            ok,
            "{}: planned leaves less than the run needed\n{table}",
            r.id
        );
    }
    // Never above SGLang's own default, unless that default leaves less than one request
    // (MEM016's reported fix).
    for r in rows.iter().filter(|r| !r.ev.raised_for_one_request) {
        if let (Some(p), Some(d)) = (r.ev.planned_mfs, r.ev.sglang_default_mfs) {
            assert!(
                p <= d + 1e-9,
                "{}: planned {p} above default {d}\n{table}",
                r.id
            );
        }
    }
}

/// No panic and bounded answers on any config.json or safetensors header (wrong types, zero,
/// negative and huge dimensions, missing fields, nested text_config).
mod robustness {
    use super::*;
    use proptest::prelude::*;
    use sglang_launch::facts::Topology;
    use sglang_launch::plan::memory::{self, kv};
    use sglang_launch::resolve::{Context, Facts, Speculative};
    use sglang_launch::sglang::Parallel;

    const KEYS: &[&str] = &[
        "num_hidden_layers",
        "hidden_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "kv_lora_rank",
        "qk_rope_head_dim",
        "qk_nope_head_dim",
        "v_head_dim",
        "q_lora_rank",
        "vocab_size",
        "max_position_embeddings",
        "num_experts",
        "n_routed_experts",
        "num_experts_per_tok",
        "intermediate_size",
        "moe_intermediate_size",
        "n_shared_experts",
        "first_k_dense_replace",
        "num_nextn_predict_layers",
        "sliding_window",
        "sliding_window_pattern",
        "full_attention_interval",
        "index_head_dim",
        "torch_dtype",
        "model_type",
        "architectures",
        "layer_types",
        "tie_word_embeddings",
        "quantization_config",
    ];

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            1 => Just(Value::Null),
            1 => any::<bool>().prop_map(Value::Bool),
            1 => Just(json!(0)),
            // mostly plausible dimensions, so that whole configs reach the arithmetic
            8 => (1u64..200_000).prop_map(|v| json!(v)),
            1 => any::<u64>().prop_map(|v| json!(v)),
            1 => any::<i64>().prop_map(|v| json!(v)),
            1 => (-1e30f64..1e30).prop_map(|v| json!(v)),
            1 => prop_oneof![
                Just("bfloat16"),
                Just("float32"),
                Just("fp8"),
                Just("mxfp4"),
                Just("sliding_attention"),
                Just("linear_attention"),
                Just("Llama4ForCausalLM"),
                Just(""),
            ]
            .prop_map(|s| json!(s)),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(2, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("quant_method"),
                            Just("bits"),
                            Just("quant_algo"),
                            Just("kv_cache_quant_algo"),
                            Just("num_bits"),
                            Just("weights"),
                        ],
                        inner
                    ),
                    0..4
                )
                .prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    fn config() -> impl Strategy<Value = Value> {
        (
            prop::collection::vec((0..KEYS.len(), value()), 0..40),
            prop::collection::vec((0..KEYS.len(), value()), 0..12),
            any::<bool>(),
        )
            .prop_map(|(top, text, nested)| {
                let mut o: serde_json::Map<String, Value> = top
                    .into_iter()
                    .map(|(k, v)| (KEYS[k].to_owned(), v))
                    .collect();
                if nested {
                    let t = text
                        .into_iter()
                        .map(|(k, v)| (KEYS[k].to_owned(), v))
                        .collect();
                    o.insert("text_config".into(), Value::Object(t));
                    o.insert("vision_config".into(), json!({"num_hidden_layers": 24}));
                }
                Value::Object(o)
            })
    }

    fn node(n: u32, total: u64) -> Topology {
        super::memory_support::uniform_node(n, "test", "9.0", total, 0)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_config_plans_without_panic(
            cfg in config(),
            tp in prop_oneof![Just(1i64), Just(2), Just(8), Just(64)],
            version in prop_oneof![Just("0.4.10.post2"), Just("0.5.5"), Just("0.5.23")],
            spec in any::<bool>(),
            deepep in any::<bool>(),
            total in prop_oneof![Just(0u64), Just(81559u64), 1u64..200_000, Just(u64::MAX)],
        ) {
            let d = tempfile::tempdir().unwrap();
            std::fs::write(d.path().join("config.json"), cfg.to_string()).unwrap();
            let flags = flagset::get(version).unwrap();
            let mut vals = vec![
                ("--model-path", json!(d.path().to_str().unwrap())),
                ("--tp-size", json!(tp)),
            ];
            if spec {
                vals.push(("--speculative-algorithm", json!("EAGLE")));
            }
            // DeepEP's buffers are sized from the config's hidden size and experts.
            if deepep && version != "0.4.10.post2" {
                vals.push(("--moe-a2a-backend", json!("deepep")));
            }
            let args = SglangArgs::with_values(flags, &vals);
            let env = Env::default();
            let load = model::load(d.path().to_str().unwrap(), &env, &args);
            let facts = load.facts.expect("a JSON object config gives facts");
            if let Some(w) = model::estimate_weight_bytes(&facts) {
                prop_assert!(w > 0 && w <= model::MAX_WEIGHT_ESTIMATE_BYTES);
            }
            let _ = kv::kv_cell(&args, None, None, &Parallel::of(&args), Speculative::of(&args, Some(&facts)).as_ref(), &facts, None);
            let p = Parallel::of(&args);
            let split = kv::Split::of(version, &args, &env, &p, &facts);
            let _ = kv::weights_per_gpu_bytes(&p, &split, Speculative::of(&args, Some(&facts)).as_ref(), &facts, None);
            let topo = node(tp.min(8) as u32, total);
            let gpus: Vec<u32> = (0..tp.min(8) as u32).collect();
            let o = memory::plan(&Context::new(Facts {
                version,
                args: &args,
                env: &env,
                topology: &topo,
                gpus: &gpus,
                model: Some(&facts),
                draft: None,
                host: None,
                packages: None,
            }));
            let m = o.memory.expect("GPUs given");
            prop_assert!(m.mem_fraction_static > 0.0 && m.mem_fraction_static < 1.0);
            if let Some(p) = o.planned_mem_fraction_static {
                prop_assert!((0.05..=0.98).contains(&p), "{}", p);
                let d = m.sglang_default_mem_fraction_static.unwrap();
                prop_assert!(d < 0.05 || p <= d + 1e-9, "planned {} default {}", p, d);
            }
        }

        #[test]
        fn any_safetensors_header_is_read_or_refused(
            len in prop_oneof![any::<u64>(), 0u64..64],
            body in prop::collection::vec(any::<u8>(), 0..256),
            json_body in config(),
            use_json in any::<bool>(),
        ) {
            let d = tempfile::tempdir().unwrap();
            let p = d.path().join("model.safetensors");
            let bytes = if use_json {
                let h = json_body.to_string().into_bytes();
                let mut v = (h.len() as u64).to_le_bytes().to_vec();
                v.extend_from_slice(&h);
                v
            } else {
                let mut v = len.to_le_bytes().to_vec();
                v.extend_from_slice(&body);
                v
            };
            std::fs::write(&p, bytes).unwrap();
            let _ = model::safetensors_tensor_bytes(&p);
        }

        #[test]
        fn safetensors_offsets_of_any_size_sum_without_overflow(
            offs in prop::collection::vec((any::<u64>(), any::<u64>()), 1..6),
        ) {
            let d = tempfile::tempdir().unwrap();
            let p = d.path().join("model.safetensors");
            let h: serde_json::Map<String, Value> = offs
                .iter()
                .enumerate()
                .map(|(i, (a, b))| {
                    (format!("t{i}"), json!({"dtype": "BF16", "shape": [1], "data_offsets": [a, b]}))
                })
                .collect();
            let h = Value::Object(h).to_string().into_bytes();
            let mut v = (h.len() as u64).to_le_bytes().to_vec();
            v.extend_from_slice(&h);
            std::fs::write(&p, v).unwrap();
            match model::safetensors_tensor_bytes(&p) {
                Ok(total) => {
                    let want = offs
                        .iter()
                        .try_fold(0u64, |t, (a, b)| (b >= a).then(|| t.saturating_add(b - a)));
                    prop_assert_eq!(Some(total), want);
                }
                Err(e) => prop_assert!(offs.iter().any(|(a, b)| b < a), "{}", e),
            }
        }
    }
}

/// DeepSeek sparse attention's `auto` KV cache is FP8 on SM100 (SGLang sets it) and the model
/// dtype on Hopper: B200 prices 576 latent bytes per layer, H200 1,152 (plus the indexer keys,
/// 128 FP8 values and one 4-byte scale, on both). FP8 under SGLang's FlashMLA kernels (Hopper,
/// or Blackwell before 0.5.10) is the pool's scaled layout: 512 FP8 latent values, four fp32
/// scales and the rope part in BF16, 656 bytes.
#[test]
fn deepseek_v32_kv_cache_is_fp8_by_default_on_blackwell_only() {
    let bytes = |topology: &str, extra: &[&str]| bytes_at("0.5.23", topology, extra);
    let layers = 61;
    assert_eq!(bytes("8x-b200-nvlink", &[]), (576 + 132) * layers);
    assert_eq!(bytes("8x-h200-nvlink", &[]), (1152 + 132) * layers);
    // The user's dtype stays.
    let bf16 = ["--kv-cache-dtype", "bf16"];
    assert_eq!(bytes("8x-b200-nvlink", &bf16), (1152 + 132) * layers);
    let fp8 = ["--kv-cache-dtype", "fp8_e4m3"];
    assert_eq!(bytes("8x-h200-nvlink", &fp8), (656 + 132) * layers);
    assert_eq!(
        bytes_at("0.5.9", "8x-b200-nvlink", &[]),
        (656 + 132) * layers
    );
    let trtllm = ["--nsa-decode-backend", "trtllm"];
    assert_eq!(
        bytes_at("0.5.9", "8x-b200-nvlink", &trtllm),
        (576 + 132) * layers
    );
    // 0.5.3 to 0.5.4.post1 set FP8 on SM100 over the dtype given; 0.5.4.post2 keeps it.
    let scaled_fp8 = (656 + 132) * layers;
    assert_eq!(bytes_at("0.5.4.post1", "8x-b200-nvlink", &bf16), scaled_fp8);
    assert_eq!(
        bytes_at("0.5.4.post2", "8x-b200-nvlink", &bf16),
        (1152 + 132) * layers
    );
}

/// SGLang 0.5.3rc2 and 0.5.3 set a DSA model's fraction to 0.8 over the one given, so the plan
/// sizes the pools at 0.8 and plans no other; 0.5.3.post1 keeps the user's.
#[test]
fn deepseek_v32_fraction_is_sglangs_own_on_0_5_3() {
    let fraction = |version: &str, extra: &[&str]| {
        dsa_plan(version, "8x-h200-nvlink", extra)["memory"]["mem_fraction_static"]
            .as_f64()
            .unwrap()
    };
    let given = ["--mem-fraction-static", "0.85"];
    assert_eq!(fraction("0.5.3", &given), 0.8);
    assert_eq!(fraction("0.5.3", &[]), 0.8);
    assert_eq!(fraction("0.5.3.post1", &given), 0.85);
}

fn bytes_at(version: &str, topology: &str, extra: &[&str]) -> u64 {
    dsa_plan(version, topology, extra)["memory"]["kv_cache_bytes_per_token"]
        .as_u64()
        .unwrap()
}

fn dsa_plan(version: &str, topology: &str, extra: &[&str]) -> Value {
    let model = format!("{FIXTURES}/models/deepseek-ai__DeepSeek-V3.2");
    let args = [&["--model-path", model.as_str(), "--tp", "8"][..], extra].concat();
    plan_json(version, topology, &args)
}

/// `plan --json` of a line for a release on one of the fixture topologies.
fn plan_json(version: &str, topology: &str, args: &[&str]) -> Value {
    let out = crate::common::launcher()
        .args(["plan", "--json", "--sglang-version", version, "--topology"])
        .arg(format!("{FIXTURES}/topologies/{topology}.json"))
        .arg("--")
        .args(args)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Kimi-K3 (KDA and MLA layers, a latent MoE with MXFP4 routed experts) at TP 8 / EP 8 with
/// DeepEP on eight B300s: a public deployment write-up measured 214.88 GiB of weights per GPU,
/// and 265.87 GiB with DP attention 8, which replicates the attention weights (field case
/// s61a-k3-deepep-v2-dp8-chunk8192-load-oom-b300). The estimate meets both within 3%.
#[test]
fn kimi_k3_weights_meet_the_measured_b300_figures() {
    let model = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/field/models/moonshotai__Kimi-K3"
    );
    let line = ["--model-path", model, "--tp", "8", "--ep", "8"];
    let a2a = [
        "--moe-a2a-backend",
        "deepep",
        "--moe-runner-backend",
        "deep_gemm",
    ];
    let weights = |extra: &[&str]| -> f64 {
        let plan = plan_json(
            "0.5.20",
            "8x-b300-nvlink",
            &[&line[..], &a2a, extra].concat(),
        );
        plan["memory"]["weights_per_gpu_gib"].as_f64().unwrap()
    };
    let dp8 = ["--enable-dp-attention", "--dp", "8"];
    for (extra, measured) in [(&[][..], 214.88), (&dp8[..], 265.87)] {
        let ours = weights(extra);
        let err = ours / measured - 1.0;
        assert!(err.abs() <= 0.03, "{extra:?}: {ours} GiB vs {measured}");
    }
}

/// A fraction too high for the graphs and a large prefill chunk, where SGLang's own default for
/// that chunk cannot hold the weights: MEM003 names the fraction the plan gives without the
/// user's (the one it lifts, MEM016), never the default, which would fail at load.
#[test]
fn a_fraction_too_high_names_the_lifted_plan_not_a_default_below_the_weights() {
    let model = format!("{FIXTURES}/models/deepseek-ai__DeepSeek-V3");
    let line = [
        "--model-path",
        model.as_str(),
        "--tp",
        "8",
        "--enable-dp-attention",
    ];
    let dp = ["--dp", "8", "--chunked-prefill-size", "32768"];
    let plan = |extra: &[&str]| {
        plan_json(
            "0.5.23",
            "8x-h200-nvlink",
            &[&line[..], &dp, extra].concat(),
        )
    };
    let left_out = plan(&[]);
    let m = &left_out["memory"];
    let planned = m["mem_fraction_static"].as_f64().unwrap();
    let default = m["sglang_default_mem_fraction_static"].as_f64().unwrap();
    let weights_share =
        m["weights_per_gpu_gib"].as_f64().unwrap() * 1024.0 / m["gpu_memory_mib"].as_f64().unwrap();
    assert!(default < weights_share && weights_share < planned, "{m}");
    let given = plan(&["--mem-fraction-static", "0.9"]);
    let mem003: Vec<&str> = given["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "MEM003")
        .filter_map(|f| f["message"].as_str())
        .collect();
    let named = format!("leave it out to get the planned value {planned:.3}");
    assert!(
        mem003.len() == 1 && mem003[0].ends_with(&named),
        "{mem003:?}"
    );
}

/// DeepSeek-R1 at TP 16 over two 8×H100 nodes with DP attention on 0.4.2.post4 (a SkyPilot
/// recipe whose log shows it serving): our reserve for every rank's prefill chunk at once leaves
/// the weights no room below SGLang's default, but the default holds the weights, a KV cache
/// and the start's own graphs. The line is not blocked: SGLang's default is kept and the load is
/// what the warning names.
#[test]
fn a_reserve_for_full_load_does_not_block_what_sglangs_default_starts() {
    let model = format!("{FIXTURES}/models/deepseek-ai__DeepSeek-R1");
    let nodes = ["--tp", "16", "--nnodes", "2", "--node-rank", "0"];
    let rest = ["--dist-init-addr", "10.0.0.1:5000", "--enable-dp-attention"];
    let line = [
        &["--model-path", model.as_str()][..],
        &nodes,
        &rest,
        &["--trust-remote-code"],
    ];
    let plan = plan_json("0.4.2.post4", "8x-h100-sxm-nvlink", &line.concat());
    let m = &plan["memory"];
    assert_eq!(plan["verdict"], "warning", "{plan}");
    assert_eq!(
        m["mem_fraction_static"], m["sglang_default_mem_fraction_static"],
        "{m}"
    );
    assert!(m["kv_cache_tokens"].as_u64().unwrap() > 0, "{m}");
    let mem005: Vec<&Value> = plan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "MEM005")
        .collect();
    assert!(
        mem005.len() == 1 && mem005[0]["severity"] == "warning",
        "{mem005:?}"
    );
}
