//! `cargo bench --bench scaling`: how the parsers' time grows with their input. Each input is
//! timed at n, 10n and 100n and the ratios printed: about 10 and 100 mean linear time, 100 and
//! 10,000 quadratic. Nothing is asserted about wall time; `tests/it/budgets.rs` checks the same
//! inputs for the right answers.
//!
//! * topology keys: an object of n keys (the duplicate-key pass, the last key repeating one);
//! * GPUs: a topology of n GPUs, every check passing;
//! * YAML keys: a `--config` file of n keys through SGLang's merge and argparse (every key an
//!   unknown option, so the "did you mean" path too);
//! * YAML flow spots: n `k: {a:[1]}` lines (where YAML 1.2 readers want a space PyYAML does not);
//! * YAML aliases: n keys aliasing one 10-key block;
//! * YAML alias chain: n anchors, each a list holding the one before (ends in the budget error);
//! * unknown flags: n distinct unknown options on the command line.

use std::ffi::OsString;
use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use sglang_launch::facts::Topology;
use sglang_launch::sglang::{self, flagset};

/// Median wall time of `f` over `runs` runs.
fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn topology_keys(n: usize) -> String {
    let keys: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {i}")).collect();
    format!(
        "{{\"schema\": \"sglang-launch/topology/v1\", \"host\": {{{}, \"k0\": 1}}}}",
        keys.join(", ")
    )
}

fn topology_gpus(n: usize) -> String {
    let gpus: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"index": {i}, "uuid": "GPU-{i:08}", "name": "NVIDIA L4", "pci_bus_id": "00000000:{i:02x}:00.0", "compute_capability": "8.9", "memory_total_mib": 23034, "memory_used_mib": 0, "mig_enabled": false}}"#
            )
        })
        .collect();
    let links: Vec<String> = (1..n)
        .map(|i| format!(r#"{{"gpus": [0, {i}], "path": "PHB", "nvlink": false, "p2p": "ok"}}"#))
        .collect();
    format!(
        r#"{{"schema": "sglang-launch/topology/v1", "source": "bench", "gpus": [{}], "links": [{}]}}"#,
        gpus.join(", "),
        links.join(", ")
    )
}

fn yaml_keys(n: usize) -> String {
    (0..n).map(|i| format!("k{i}: {i}\n")).collect()
}

fn yaml_flow(n: usize) -> String {
    (0..n).map(|i| format!("k{i}: {{a:[{i}]}}\n")).collect()
}

fn yaml_aliases(n: usize) -> String {
    let block: Vec<String> = (0..10).map(|i| format!("b{i}: {i}")).collect();
    let mut s = format!("base: &b {{{}}}\n", block.join(", "));
    s.extend((0..n).map(|i| format!("k{i}: *b\n")));
    s
}

fn yaml_chain(n: usize) -> String {
    let mut s = String::from("l0: &l0 [x]\n");
    s.extend((1..n).map(|i| format!("l{i}: &l{i} [*l{}]\n", i - 1)));
    s
}

/// `sglang::parse` of `--model-path m --config FILE` (SGLang 0.5.23), FILE holding `text`.
fn parse_config(text: &str) -> impl FnMut() + use<> {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    let flags = flagset::get("0.5.23").unwrap();
    move || {
        let path = f.path().to_str().unwrap();
        let toks = ["--model-path", "m", "--config", path].map(OsString::from);
        black_box(sglang::parse(flags, toks.to_vec()));
    }
}

fn unknown_flags(n: usize) -> impl FnMut() {
    let flags = flagset::get("0.5.23").unwrap();
    let mut toks: Vec<OsString> = vec!["--model-path".into(), "m".into()];
    toks.extend((0..n).map(|i| OsString::from(format!("--unknown-option-{i}"))));
    move || {
        black_box(sglang::parse(flags, toks.clone()));
    }
}

fn topology(text: String) -> impl FnMut() {
    move || {
        let _ = black_box(Topology::from_json_str(&text, "bench.json"));
    }
}

fn main() {
    type Case = (&'static str, usize, fn(usize) -> Box<dyn FnMut()>);
    let cases: Vec<Case> = vec![
        ("topology keys", 2_000, |n| {
            Box::new(topology(topology_keys(n)))
        }),
        ("GPUs", 1_000, |n| Box::new(topology(topology_gpus(n)))),
        ("YAML keys", 2_000, |n| {
            Box::new(parse_config(&yaml_keys(n)))
        }),
        ("YAML flow spots", 1_000, |n| {
            Box::new(parse_config(&yaml_flow(n)))
        }),
        ("YAML aliases", 1_000, |n| {
            Box::new(parse_config(&yaml_aliases(n)))
        }),
        ("YAML alias chain", 1_000, |n| {
            Box::new(parse_config(&yaml_chain(n)))
        }),
        ("unknown flags", 1_000, |n| Box::new(unknown_flags(n))),
    ];
    println!(
        "{:<18} {:>8} {:>11} {:>11} {:>11} {:>8} {:>8}",
        "input", "n", "t(n)", "t(10n)", "t(100n)", "10n/n", "100n/n"
    );
    for (name, n, make) in cases {
        let t: Vec<Duration> = [(n, 5), (10 * n, 3), (100 * n, 1)]
            .into_iter()
            .map(|(size, runs)| time(runs, make(size)))
            .collect();
        let ratio = |d: Duration| d.as_secs_f64() / t[0].as_secs_f64().max(1e-9);
        println!(
            "{name:<18} {n:>8} {:>9.2}ms {:>9.2}ms {:>9.2}ms {:>8.1} {:>8.1}",
            t[0].as_secs_f64() * 1e3,
            t[1].as_secs_f64() * 1e3,
            t[2].as_secs_f64() * 1e3,
            ratio(t[1]),
            ratio(t[2]),
        );
    }
}
