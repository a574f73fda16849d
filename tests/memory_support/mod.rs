//! Shared by `tests/memory.rs` and `benches/memory_accuracy.rs`: predictions of the memory
//! planner for each real start-up log in `tests/fixtures/memory/logs.jsonl`.

use serde_json::{Value, json};
use sglang_launch::facts::model::{self, ModelFacts};
use sglang_launch::facts::{Env, Gpu, Topology};
use sglang_launch::plan::memory::{self, MemoryInput, kv};
use sglang_launch::sglang::{SglangArgs, flagset};

pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// One log compared with our predictions. `None`: the log (or we) lack the number.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: String,
    #[allow(dead_code)] // shown by Debug in failures
    pub model: String,
    pub tp: i64,
    pub weights_log_gib: Option<f64>,
    pub weights_pred_gib: Option<f64>,
    /// KV pool size as logged (K+V or KV, GB = GiB) and ours for the logged token count.
    pub kv_size_log_gib: Option<f64>,
    pub kv_size_pred_gib: Option<f64>,
    pub kv_bytes_per_token: Option<u64>,
    pub kv_tokens_log: Option<u64>,
    pub kv_tokens_pred: Option<u64>,
    pub graph_log_gib: Option<f64>,
    pub graph_pred_gib: Option<f64>,
}

impl Row {
    pub fn weights_err(&self) -> Option<f64> {
        Some(self.weights_pred_gib? / self.weights_log_gib? - 1.0)
    }
    pub fn tokens_err(&self) -> Option<f64> {
        Some(self.kv_tokens_pred? as f64 / self.kv_tokens_log? as f64 - 1.0)
    }
    /// Our KV size for the logged tokens reproduces the logged size to its printed precision.
    pub fn kv_bytes_exact(&self) -> Option<bool> {
        Some((self.kv_size_pred_gib? - self.kv_size_log_gib?).abs() <= 0.0051 * 2.0)
    }
}

/// The nearest flag set at or below the log's version (0.4.10 for older or unknown versions).
fn flags_for(version: &str) -> &'static str {
    let v = version
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_start_matches('v');
    let known = ["0.5.23", "0.5.10.post1", "0.5.5", "0.5.2", "0.4.10.post2"];
    if v.is_empty() || !v.starts_with('0') {
        return "0.4.10.post2";
    }
    known
        .iter()
        .copied()
        .find(|k| sglang_launch::sglang::version::at_least(v, k))
        .unwrap_or("0.4.10.post2")
}

fn f(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

pub fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(format!("{FIXTURES}/memory/logs.jsonl")).unwrap();
    let env = Env::default();
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let r: Value = serde_json::from_str(line).unwrap();
        let version = flags_for(
            r.get("sglang_version")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        let flags = flagset::get(version).unwrap();
        let tp = r.get("tp_size").and_then(Value::as_i64).unwrap_or(1);
        let model_dir = format!("{FIXTURES}/models/{}", r["model"].as_str().unwrap());
        let mut vals: Vec<(&str, Value)> =
            vec![("--model-path", json!(model_dir)), ("--tp-size", json!(tp))];
        if let Some(m) = f(&r, "mem_fraction_static") {
            vals.push(("--mem-fraction-static", json!(m)));
        }
        if let Some(c) = r.get("context_length_arg").and_then(Value::as_i64) {
            vals.push(("--context-length", json!(c)));
        }
        if let Some(c) = r.get("chunked_prefill_size").and_then(Value::as_i64) {
            vals.push(("--chunked-prefill-size", json!(c)));
        }
        if let Some(c) = r.get("cuda_graph_max_bs").and_then(Value::as_i64) {
            vals.push(("--cuda-graph-max-bs", json!(c)));
        }
        if r.get("cuda_graph_disabled").and_then(Value::as_bool) == Some(true) {
            vals.push(("--disable-cuda-graph", json!(true)));
        }
        if let Some(t) = r.get("max_total_tokens_arg").and_then(Value::as_i64) {
            vals.push(("--max-total-tokens", json!(t)));
        }
        let dp = r.get("dp_size").and_then(Value::as_i64).unwrap_or(1);
        if r.get("enable_dp_attention").and_then(Value::as_bool) == Some(true) {
            vals.push(("--enable-dp-attention", json!(true)));
            vals.push(("--dp-size", json!(dp)));
        }
        let args = SglangArgs::with_values(flags, &vals);
        let facts: ModelFacts = model::load(&model_dir, &env, &args)
            .facts
            .expect("fixture model loads");

        let weights_log = f(&r, "weight_mem_usage_gb")
            .or_else(|| Some(f(&r, "load_begin_avail_gb")? - f(&r, "weight_load_end_avail_gb")?));
        let weights_pred = kv::target_weights_per_gpu_bytes(&args, &facts).map(|b| b as f64 / GIB);
        let cell = kv::kv_cell(version, &args, &env, &facts);
        let kv_size_log =
            f(&r, "kv_size_gb").or_else(|| Some(f(&r, "k_size_gb")? + f(&r, "v_size_gb")?));
        let tokens_log = r
            .get("kv_tokens")
            .or_else(|| r.get("max_total_num_tokens"))
            .and_then(Value::as_u64);
        // Logs without #tokens: the count implied by the K size (older versions print sizes only).
        let tokens_for_size = tokens_log.or_else(|| {
            let c = cell.as_ref()?;
            Some((kv_size_log? * GIB / c.target as f64).round() as u64)
        });
        let kv_size_pred = cell
            .as_ref()
            .zip(tokens_for_size)
            .map(|(c, t)| t as f64 * c.target as f64 / GIB);
        // SGLang's profile: rest = (B - W) - B·(1 - mfs), B = free memory before the weights.
        let baseline = f(&r, "load_begin_avail_gb")
            .or_else(|| Some(f(&r, "weight_load_end_avail_gb")? + f(&r, "weight_mem_usage_gb")?));
        let tokens_pred = (|| {
            let b = baseline?;
            let mfs = f(&r, "mem_fraction_static")?;
            let w = weights_pred?;
            let rest_mib = (b - w - b * (1.0 - mfs)) * 1024.0;
            Some(kv::tokens_from_rest(rest_mib, cell.as_ref()?, 1, &args))
        })()
        .filter(|_| tokens_log.is_some());

        // Graph memory: the full planner on a node of the logged GPU.
        let graph_pred = f(&r, "gpu_mem_total_gb").map(|gb| {
            let n = tp.max(1) as u32;
            let topo = Topology {
                schema: "sglang-launch/topology/v1".into(),
                source: "test".into(),
                hostname: None,
                driver_version: None,
                cuda_driver_version: None,
                gpus: (0..n)
                    .map(|i| Gpu {
                        index: i,
                        uuid: format!("GPU-{i}"),
                        name: r
                            .get("gpu_model")
                            .and_then(Value::as_str)
                            .unwrap_or("gpu")
                            .into(),
                        pci_bus_id: format!("0000:{i:02x}:00.0"),
                        compute_capability: "8.0".into(),
                        memory_total_mib: (gb * 1024.0) as u64,
                        memory_used_mib: None,
                        mig_enabled: false,
                        numa_node: None,
                        pcie_gen: None,
                        pcie_width: None,
                    })
                    .collect(),
                links: Vec::new(),
            };
            let gpus: Vec<u32> = (0..n).collect();
            let o = memory::plan(&MemoryInput {
                version,
                args: &args,
                env: &env,
                topology: &topo,
                gpus: &gpus,
                model: Some(&facts),
            });
            o.memory
                .map(|m| m.reserved_mib.cuda_graphs as f64 / 1024.0)
                .unwrap_or(0.0)
        });
        out.push(Row {
            id: r["id"].as_str().unwrap().to_owned(),
            model: r["model"].as_str().unwrap().to_owned(),
            tp,
            weights_log_gib: weights_log,
            weights_pred_gib: weights_pred,
            kv_size_log_gib: kv_size_log,
            kv_size_pred_gib: kv_size_pred,
            kv_bytes_per_token: cell.map(|c| c.target),
            kv_tokens_log: tokens_log,
            kv_tokens_pred: tokens_pred,
            graph_log_gib: f(&r, "graph_mem_usage_gb"),
            graph_pred_gib: graph_pred.filter(|_| r.get("graph_mem_usage_gb").is_some()),
        });
    }
    out
}

pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$}"))
        .unwrap_or_else(|| "-".into())
}

pub fn table(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<44} {:>3} {:>8} {:>8} {:>7} {:>7} {:>7} {:>6} {:>9} {:>9} {:>7} {:>6} {:>6}\n",
        "case",
        "tp",
        "W log",
        "W pred",
        "W err",
        "KV log",
        "KV pred",
        "B/tok",
        "tok log",
        "tok pred",
        "tok err",
        "G log",
        "G pred"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<44} {:>3} {:>8} {:>8} {:>7} {:>7} {:>7} {:>6} {:>9} {:>9} {:>7} {:>6} {:>6}\n",
            r.id.chars().take(44).collect::<String>(),
            r.tp,
            opt(r.weights_log_gib, 2),
            opt(r.weights_pred_gib, 2),
            r.weights_err()
                .map(|e| format!("{:+.1}%", e * 100.0))
                .unwrap_or("-".into()),
            opt(r.kv_size_log_gib, 2),
            opt(r.kv_size_pred_gib, 2),
            r.kv_bytes_per_token
                .map(|b| b.to_string())
                .unwrap_or("-".into()),
            r.kv_tokens_log.map(|b| b.to_string()).unwrap_or("-".into()),
            r.kv_tokens_pred
                .map(|b| b.to_string())
                .unwrap_or("-".into()),
            r.tokens_err()
                .map(|e| format!("{:+.1}%", e * 100.0))
                .unwrap_or("-".into()),
            opt(r.graph_log_gib, 2),
            opt(r.graph_pred_gib, 2),
        ));
    }
    s
}
