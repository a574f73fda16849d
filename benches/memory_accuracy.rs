//! Memory-planner accuracy against real SGLang start-up logs.
//! Run: `cargo bench --bench memory_accuracy`.

#[path = "../tests/memory_support/mod.rs"]
mod memory_support;

use memory_support::{median, rows, table};

fn main() {
    let rows = rows();
    print!("{}", table(&rows));
    let w: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.weights_err())
        .map(f64::abs)
        .collect();
    let t: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.tokens_err())
        .map(f64::abs)
        .collect();
    let kv: Vec<bool> = rows.iter().filter_map(|r| r.kv_bytes_exact()).collect();
    let g: Vec<f64> = rows
        .iter()
        .filter_map(|r| Some(r.graph_pred_gib? - r.graph_log_gib?))
        .collect();
    println!();
    println!(
        "weights per GPU: {} cases, median |err| {:.2}%, within 3%: {}",
        w.len(),
        median(w.clone()).unwrap_or(0.0) * 100.0,
        w.iter().filter(|e| **e <= 0.03).count()
    );
    println!(
        "KV bytes/token: {} cases, {} reproduce the logged KV size exactly",
        kv.len(),
        kv.iter().filter(|b| **b).count()
    );
    println!(
        "KV tokens: {} cases, median |err| {:.2}%",
        t.len(),
        median(t).unwrap_or(0.0) * 100.0
    );
    println!(
        "graph memory: {} cases, median (pred - log) {:+.2} GiB",
        g.len(),
        median(g).unwrap_or(0.0)
    );
}
