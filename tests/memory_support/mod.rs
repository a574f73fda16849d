//! Shared by `tests/it/memory.rs` and `benches/memory_accuracy.rs`: the memory planner against every
//! real start-up record in `tests/fixtures/memory/logs.jsonl`, where the record's facts allow.

#![allow(dead_code)] // each of the two users reads part of it

mod evidence;
mod record;
mod run;
mod tables;
mod verdict;

use sglang_launch::facts::Env;
use sglang_launch::facts::model::{self, ModelFacts};
use sglang_launch::plan::memory::kv;
use sglang_launch::resolve::Speculative;
use sglang_launch::sglang::{Parallel, SglangArgs};

pub use evidence::Evidence;
pub use record::Record;
#[allow(unused_imports)] // tests/it/memory.rs builds golden nodes with it
pub use run::uniform_node;
pub use tables::{evidence_table, scope_table, table, verdict_table};
pub use verdict::{UNMODELLED, Verdict};

pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// One record compared with our predictions. `None`: the record (or we) lack the number.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub id: String,
    pub tp: i64,
    pub oom: bool,
    pub oom_runtime: bool,
    pub dp_attention: bool,
    /// Why the record is not evaluated at all (no model config, …).
    pub skip: Option<String>,
    /// Why the planner is not judged on it (non-NVIDIA, no GPU memory).
    pub plan_skip: Option<String>,
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
    /// Graph pools held at a run-time OOM (from its message), GiB.
    pub graph_pools_log_gib: Option<f64>,
    pub ev: Evidence,
    pub verdict: Option<Verdict>,
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
    /// The planner was run on this record's GPU and arguments.
    pub fn judged(&self) -> bool {
        self.verdict.is_some()
    }
}

pub fn records() -> Vec<Record> {
    let text = std::fs::read_to_string(format!("{FIXTURES}/memory/logs.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Record(serde_json::from_str(l).unwrap()))
        .collect()
}

pub fn rows() -> Vec<Row> {
    records().iter().map(row).collect()
}

fn row(r: &Record) -> Row {
    let base = Row {
        id: r.id().to_owned(),
        tp: r.tp(),
        oom: r.oom(),
        oom_runtime: r.oom_at_runtime(),
        dp_attention: r.dp_attention(),
        ..Row::default()
    };
    let dir = match record::model_dir(r) {
        Ok(d) => d,
        Err(why) => {
            return Row {
                skip: Some(why),
                ..base
            };
        }
    };
    let (version, flags) = record::version(r);
    let args = record::args(r, &dir, flags, true);
    let mut facts: ModelFacts = model::load(&dir, &Env::default(), &args)
        .facts
        .expect("fixture model loads");
    if record::prequantised(r) {
        facts.online_quant_load_bytes = None;
    }
    let mut row = measures(r, base, &facts, &args);
    row.plan_skip = record::plan_skip(r);
    if row.plan_skip.is_none() {
        let planned_args = record::args(r, &dir, flags, false);
        let runs = run::plan_like_log(r, &version, [&planned_args, &args], &facts);
        row.graph_pools_log_gib = record::graph_pools_gib(r);
        // A capture log's `mem usage` holds what capture allocated outside the graph pools too
        // (FA3's page tables); an OOM message's private pools do not.
        let with_tables = row.graph_log_gib.is_some();
        row.graph_pred_gib = runs
            .as_run
            .memory
            .as_ref()
            .map(|m| graph_mib(&m.v1(), with_tables) / 1024.0)
            .filter(|_| row.graph_log_gib.or(row.graph_pools_log_gib).is_some());
        row.ev = evidence::evidence(r, Some(&runs.planned), row.weights_pred_gib, &facts, &args);
        row.verdict = Some(verdict::judge(r, &runs, &row.ev));
    } else {
        row.ev = evidence::evidence(r, None, row.weights_pred_gib, &facts, &args);
    }
    row
}

/// Our CUDA-graph pools, with the page tables capture makes beside them when asked.
fn graph_mib(m: &sglang_launch::plan::v1::Memory, with_tables: bool) -> f64 {
    // As plan/v1 writes it: the terms are the contract's, not the crate's.
    let wire = serde_json::to_value(m).unwrap();
    let tables: i64 = wire["terms"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| with_tables && t["term"] == "attention_page_tables")
        .filter_map(|t| t["mib"].as_i64())
        .sum();
    (m.reserved_mib.cuda_graphs as i64 + tables) as f64
}

/// The model-level measures: weights per GPU, KV bytes per token, KV tokens at the logged fraction.
fn measures(r: &Record, base: Row, facts: &ModelFacts, args: &SglangArgs) -> Row {
    let p = Parallel::of(args);
    let spec = Speculative::of(args, Some(facts));
    let split = kv::Split::of(&record::version(r).0, args, &Env::default(), &p, facts);
    let weights_pred =
        kv::target_weights_per_gpu_bytes(&p, &split, spec.as_ref(), facts).map(|b| b as f64 / GIB);
    let cell = kv::kv_cell(args, None, None, &p, spec.as_ref(), facts, None);
    let kv_size_log = r
        .f("kv_size_gb")
        .or_else(|| Some(r.f("k_size_gb")? + r.f("v_size_gb")?));
    let tokens_log = r
        .i("kv_tokens")
        .or_else(|| r.i("max_total_num_tokens"))
        .map(|t| t.max(0) as u64);
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
    let tokens_pred = (|| {
        let b = record::baseline_gib(r)?;
        let mfs = r.f("mem_fraction_static")?;
        let rest_mib = (b - weights_pred? - b * (1.0 - mfs)) * 1024.0;
        Some(kv::tokens_from_rest(rest_mib, cell.as_ref()?, 1, args))
    })()
    .filter(|_| tokens_log.is_some());
    Row {
        weights_log_gib: r
            .f("weight_mem_usage_gb")
            .or_else(|| Some(r.f("load_begin_avail_gb")? - r.f("weight_load_end_avail_gb")?)),
        weights_pred_gib: weights_pred,
        kv_size_log_gib: kv_size_log,
        kv_size_pred_gib: kv_size_pred,
        kv_bytes_per_token: cell.map(|c| c.target),
        kv_tokens_log: tokens_log,
        kv_tokens_pred: tokens_pred,
        graph_log_gib: r.f("graph_mem_usage_gb"),
        ..base
    }
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
