//! Shared by `tests/memory.rs` and `benches/memory_accuracy.rs`: predictions of the memory
//! planner for each real start-up log in `tests/fixtures/memory/logs.jsonl`.

use serde_json::{Value, json};
use sglang_launch::facts::model::{self, ModelFacts};
use sglang_launch::facts::{Env, Gpu, Topology};
use sglang_launch::plan::memory::{self, kv};
use sglang_launch::resolve::{Context, Facts, Speculative};
use sglang_launch::sglang::Parallel;
use sglang_launch::sglang::{SglangArgs, flagset};

/// `n` identical GPUs with no link facts: what a log tells about a box.
pub fn uniform_node(n: u32, name: &str, cc: &str, total_mib: u64, used_mib: u64) -> Topology {
    Topology {
        schema: "sglang-launch/topology/v1".into(),
        source: "test".into(),
        hostname: None,
        driver_version: None,
        cuda_driver_version: None,
        gpus: (0..n)
            .map(|i| Gpu {
                index: i,
                uuid: format!("GPU-{i}"),
                name: name.to_owned(),
                pci_bus_id: format!("0000:{i:02x}:00.0"),
                compute_capability: cc.into(),
                memory_total_mib: total_mib,
                memory_used_mib: Some(used_mib),
                mig_enabled: false,
                numa_node: None,
                pcie_gen: None,
                pcie_width: None,
            })
            .collect(),
        links: Vec::new(),
        host: None,
    }
}

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
    pub ev: Evidence,
}

/// Non-static memory (outside SGLang's static pool) per GPU, GiB: what the real server had and
/// used, and what our plan would reserve and leave on the same GPU.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub oom: bool,
    /// The free memory SGLang's fraction applied to (`Load weight begin. avail mem`, or derived).
    pub baseline_gib: Option<f64>,
    /// What the real server had outside the static pool: `Memory pool end. avail mem`, else
    /// B·(1 − mfs) for the fraction it ran with.
    pub real_slack_gib: Option<f64>,
    /// What start-up took out of it: pool end → graph end (backend workspaces + graph capture),
    /// else the graph `mem usage`; for a run-time OOM, what PyTorch held outside the static pool
    /// plus the allocation that failed.
    pub real_used_gib: Option<f64>,
    /// Free after capture: what was left for the first prefill.
    pub real_left_gib: Option<f64>,
    /// Needed = real_used + the largest prefill chunk's activations, decode logits, workspaces
    /// and (where the log gives its size) the req-to-token table, without any fragmentation
    /// allowance: logs never show the run-time peak, so it is computed from the shape.
    pub needed_gib: Option<f64>,
    /// Our reserve: graphs + activations (with fragmentation) + margin.
    pub reserve_gib: Option<f64>,
    pub sglang_default_mfs: Option<f64>,
    pub physics_mfs: Option<f64>,
    pub planned_mfs: Option<f64>,
    /// B·(1 − planned): what our plan would leave outside the static pool on this GPU.
    pub planned_slack_gib: Option<f64>,
    /// B·(1 − physics): what our reserve terms alone (without the cap) would leave.
    pub physics_slack_gib: Option<f64>,
}

impl Evidence {
    /// Our plan leaves at least what the run needed (None: the log lacks the numbers).
    pub fn planned_covers_need(&self) -> Option<bool> {
        Some(self.planned_slack_gib? >= self.needed_gib?)
    }
    /// The same for the uncapped fraction from our reserve terms alone.
    pub fn physics_covers_need(&self) -> Option<bool> {
        Some(self.physics_slack_gib? >= self.needed_gib?)
    }
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
/// Older logs are thus judged as if launched on 0.4.10.post2, the oldest version we support:
/// its default fraction (the `sgl` column) is 0.4.10's formula, not the one the run had.
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
        if let Some(q) = r.get("quantization").and_then(Value::as_str) {
            vals.push(("--quantization", json!(q)));
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
        let weights_pred = kv::target_weights_per_gpu_bytes(
            &Parallel::of(&args),
            Speculative::of(&args, Some(&facts)).as_ref(),
            &facts,
        )
        .map(|b| b as f64 / GIB);
        let cell = kv::kv_cell(
            &args,
            &Parallel::of(&args),
            Speculative::of(&args, Some(&facts)).as_ref(),
            &facts,
            None,
        );
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

        // The full planner on a node of the logged GPU whose free memory before the weights is
        // the logged B. Overheads (context, NCCL) come from a first pass.
        let total_gib = f(&r, "gpu_mem_total_gb").or(baseline.map(|b| b + 1.5));
        let ev_planner = total_gib.map(|gb| {
            let n = tp.max(1) as u32;
            let name = r
                .get("gpu_model")
                .and_then(Value::as_str)
                .unwrap_or("gpu")
                .to_owned();
            let hopper = ["H100", "H800", "H20", "H200"]
                .iter()
                .any(|h| name.contains(h));
            let cc = if hopper { "9.0" } else { "8.0" };
            let topo_with =
                |total_mib: u64, used_mib: u64| uniform_node(n, &name, cc, total_mib, used_mib);
            let gpus: Vec<u32> = (0..n).collect();
            // Planned: SGLang's defaults for everything the log did not set, no user fraction.
            let planned_vals: Vec<(&str, Value)> = vals
                .iter()
                .filter(|(k, _)| *k != "--mem-fraction-static")
                .cloned()
                .collect();
            let planned_args = SglangArgs::with_values(flags, &planned_vals);
            let run = |topo: &Topology, a: &SglangArgs| {
                memory::plan(&Context::new(Facts {
                    version,
                    args: a,
                    env: &env,
                    topology: topo,
                    gpus: &gpus,
                    model: Some(&facts),
                    draft: None,
                    host: None,
                    packages: None,
                }))
            };
            let total_mib = (gb * 1024.0) as u64;
            let first = run(&topo_with(total_mib, 0), &planned_args);
            let topo = match (baseline, first.memory.as_ref()) {
                (Some(b), Some(m)) => {
                    let r = &m.reserved_mib;
                    let overheads = r.cuda_context + r.nccl + r.custom_allreduce;
                    let want_free = (b * 1024.0) as u64 + overheads;
                    let total = total_mib.max(want_free);
                    topo_with(total, total - want_free)
                }
                _ => topo_with(total_mib, 0),
            };
            (run(&topo, &planned_args), run(&topo, &args))
        });
        let graph_pred = ev_planner.as_ref().and_then(|(_, o)| {
            o.memory
                .as_ref()
                .map(|m| m.reserved_mib.cuda_graphs as f64 / 1024.0)
        });
        let ev = evidence(
            &r,
            baseline,
            ev_planner.as_ref().map(|(p, _)| p),
            weights_pred,
            &facts,
            &args,
        );
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
            ev,
        });
    }
    out
}

/// The evidence columns for one log; `planned` is the planner run without a user fraction.
fn evidence(
    r: &Value,
    baseline: Option<f64>,
    planned: Option<&memory::MemoryOutcome>,
    weights_gib: Option<f64>,
    facts: &ModelFacts,
    args: &SglangArgs,
) -> Evidence {
    let mfs = f(r, "mem_fraction_static");
    let pool_end = f(r, "mem_pool_end_avail_gb");
    let real_slack = pool_end.or_else(|| Some(baseline? * (1.0 - mfs?)));
    let graph_end = f(r, "graph_end_avail_gb");
    // A run-time OOM message gives what PyTorch held: minus the static pool (our weights, the
    // logged KV size) it is the non-static memory in use, plus the allocation that failed.
    // Activations in flight are already in it.
    let oom_in_use = (|| {
        let held = f(r, "oom_allocated_gb")? + f(r, "oom_reserved_unallocated_gb")?;
        let kv = f(r, "kv_size_gb").or_else(|| Some(f(r, "k_size_gb")? + f(r, "v_size_gb")?))?;
        Some(held - weights_gib? - kv + f(r, "oom_tried_gb")?)
    })();
    let real_used = match (pool_end, graph_end) {
        (Some(p), Some(e)) => Some(p - e),
        _ => f(r, "graph_mem_usage_gb").map(|g| {
            g + pool_end
                .zip(f(r, "graph_begin_avail_gb"))
                .map_or(0.0, |(p, b)| p - b)
        }),
    }
    .or(oom_in_use);
    let mut ev = Evidence {
        oom: r.get("oom").and_then(Value::as_bool).unwrap_or(false),
        baseline_gib: baseline,
        real_slack_gib: real_slack,
        real_used_gib: real_used,
        real_left_gib: graph_end,
        ..Evidence::default()
    };
    let Some(o) = planned else { return ev };
    let Some(m) = o.memory.as_ref() else {
        return ev;
    };
    let res = &m.reserved_mib;
    ev.reserve_gib = Some((res.cuda_graphs + res.activations + res.margin) as f64 / 1024.0);
    ev.sglang_default_mfs = m.sglang_default_mem_fraction_static;
    ev.physics_mfs = Some(o.physics_mem_fraction_static);
    ev.planned_mfs = o.planned_mem_fraction_static;
    // Judged only where our plan models the run (weights fit): otherwise the fraction says
    // nothing about the non-static memory.
    ev.planned_slack_gib = o
        .planned_mem_fraction_static
        .filter(|_| m.fits == Some(true))
        .map(|p| o.baseline_mib * (1.0 - p) / 1024.0);
    ev.physics_slack_gib = ev
        .planned_slack_gib
        .map(|_| o.baseline_mib * (1.0 - o.physics_mem_fraction_static) / 1024.0);
    // The run's own activations (no fragmentation allowance), at the chunk and requests it ran.
    let tp = args.int("--tp-size").unwrap_or(1);
    let chunk = m
        .sglang_default_chunked_prefill_size
        .filter(|c| *c > 0)
        .unwrap_or(8192)
        // attention DP: the MLP/MoE layers run on the chunk gathered from every DP rank
        * Parallel::of(args).attn_dp.max(1);
    // The req-to-token table is counted only where the log prints the run's request pool and
    // context (its size is then known); elsewhere the run's context length is unknown (a 1M-token
    // config default alone would add 8 GiB the run may never have had).
    let logged_pool = r
        .get("context_len_log")
        .and_then(Value::as_u64)
        .zip(r.get("max_running_requests").and_then(Value::as_u64));
    let (mrr, ctx) = match logged_pool {
        Some((ctx, mrr)) => (mrr, ctx),
        None => (m.max_running_requests.unwrap_or(2048), 0),
    };
    let act = memory::activations(Some(facts), chunk, tp, mrr, ctx).needed_mib() / 1024.0;
    ev.needed_gib = match oom_in_use {
        Some(u) => Some(u),
        None => real_used.map(|u| u + act),
    };
    ev
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

fn yes_no(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "-",
    }
}

/// The evidence table: per log, what the real server had/used outside the static pool and what
/// our plan reserves/leaves (GiB; fractions as planned). Rows without any non-static numbers
/// are left out.
pub fn evidence_table(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<44} {:>3} {:>4} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>7} {:>5} {:>7} {:>5}\n",
        "case",
        "tp",
        "oom",
        "G log",
        "G ours",
        "B",
        "real",
        "used",
        "left",
        "need",
        "ours R",
        "sgl",
        "phys",
        "plan",
        "plan sl",
        "ok",
        "phys sl",
        "ok"
    );
    for r in rows {
        let e = &r.ev;
        if e.real_slack_gib.is_none() && e.real_used_gib.is_none() {
            continue;
        }
        s.push_str(&format!(
            "{:<44} {:>3} {:>4} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>7} {:>5} {:>7} {:>5}\n",
            r.id.chars().take(44).collect::<String>(),
            r.tp,
            if e.oom { "OOM" } else { "-" },
            opt(r.graph_log_gib, 2),
            opt(r.graph_pred_gib, 2),
            opt(e.baseline_gib, 1),
            opt(e.real_slack_gib, 2),
            opt(e.real_used_gib, 2),
            opt(e.real_left_gib, 2),
            opt(e.needed_gib, 2),
            opt(e.reserve_gib, 2),
            opt(e.sglang_default_mfs, 3),
            opt(e.physics_mfs, 3),
            opt(e.planned_mfs, 3),
            opt(e.planned_slack_gib, 2),
            yes_no(e.planned_covers_need()),
            opt(e.physics_slack_gib, 2),
            yes_no(e.physics_covers_need()),
        ));
    }
    s
}
