//! `cargo bench --bench check`: the latency and memory figures the project promises.
//!
//! * `check` with a topology file and a 12-flag command line: median wall time and peak RSS of
//!   the release binary, over many runs (targets: ≤ 10 ms, ≤ 15 MB);
//! * release binary size (target ≤ 5 MB);
//! * `check --fit` on a line it lowers, next to the same check without it;
//! * a completion request (`__complete`, run on every TAB): an SGLang option's choices, a rule code;
//! * time rule evaluation adds to a check (in process; target well under 1 ms).

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sglang_launch::facts::{Env, Topology};
use sglang_launch::resolve::{Context, Facts};
use sglang_launch::rules::{self, RuleSettings};
use sglang_launch::sglang::{self, flagset};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The seed story's command line on its box: 12 SGLang flags (6 options with values, 6 switches).
const ARGS: &[&str] = &[
    "--model-path",
    "examples/models/Qwen3-32B",
    "--tp",
    "8",
    "--port",
    "30000",
    "--host",
    "0.0.0.0",
    "--cuda-graph-max-bs",
    "512",
    "--context-length",
    "32768",
    "--enable-flashinfer-allreduce-fusion",
    "--enable-torch-symm-mem",
    "--trust-remote-code",
    "--enable-metrics",
    "--disable-radix-cache",
    "--skip-server-warmup",
];

/// Median and p90 wall time of `check --sglang-version 0.5.23 <launcher> -- <sglang>` over
/// `runs` runs of the release binary.
fn wall(bin: &str, launcher: &[&str], sglang: &[&str], runs: usize) -> (Duration, Duration) {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let status = Command::new(bin)
            .current_dir(ROOT)
            .args(["check", "--sglang-version", "0.5.23"])
            .args(launcher)
            .arg("--")
            .args(sglang)
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run sglang-launch");
        times.push(start.elapsed());
        assert!(
            status.code().is_some_and(|c| c <= 1),
            "check failed: {status:?}"
        );
    }
    times.sort();
    (times[runs / 2], times[runs * 9 / 10])
}

/// Median and p90 wall time of `__complete --line LINE` (what the bash script runs per TAB).
fn complete_wall(bin: &str, line: &str, runs: usize) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let status = Command::new(bin)
                .args(["__complete", "--line", line])
                .stdout(Stdio::null())
                .status()
                .expect("launcher runs");
            assert!(status.success());
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[runs / 2], times[runs * 9 / 10])
}

fn main() {
    let bin = env!("CARGO_BIN_EXE_sglang-launch");
    let topo = format!("{ROOT}/examples/topologies/8x-rtx-pro-6000-pcie.json");
    let runs = 200;
    let (med, p90) = wall(bin, &["--topology", &topo], ARGS, runs);
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    let size = std::fs::metadata(bin).map(|m| m.len()).unwrap_or(0);
    println!("check, 12 SGLang flags, topology file ({runs} runs of the release binary)");
    println!(
        "  median wall: {:.2} ms   p90: {:.2} ms",
        med.as_secs_f64() * 1e3,
        p90.as_secs_f64() * 1e3
    );
    println!("  peak RSS:    {:.1} MB", usage.max_rss() as f64 / 1024.0);
    println!(
        "  binary size: {:.2} MB ({})",
        size as f64 / 1e6,
        Path::new(bin).display()
    );
    // `--fit` on a line it changes: Llama-3.1-8B at its 128k context on one RTX 4090.
    let small = format!("{ROOT}/tests/fixtures/topologies/2x-rtx-4090-pcie.json");
    let llama = [
        "--model-path",
        "tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct",
    ];
    let (plain, _) = wall(bin, &["--topology", &small], &llama, runs);
    let (fit, _) = wall(bin, &["--topology", &small, "--fit"], &llama, runs);
    println!(
        "--fit on a line it lowers (Llama-3.1-8B, 128k context, RTX 4090): median {:.2} ms, \
         without --fit {:.2} ms",
        fit.as_secs_f64() * 1e3,
        plain.as_secs_f64() * 1e3
    );

    // A TAB: completing an SGLang option's choices for the release on the line, and a rule code.
    for line in [
        "sglang-launch run --sglang-version 0.5.23 -- --model-path m --attention-backend ",
        "sglang-launch check --allow AR00",
    ] {
        let (med, p90) = complete_wall(bin, line, runs);
        println!(
            "completion ({line:?}): median {:.2} ms, p90 {:.2} ms",
            med.as_secs_f64() * 1e3,
            p90.as_secs_f64() * 1e3
        );
    }

    // Rule evaluation alone, in process, on the same facts.
    let topology = Topology::load(Path::new(&topo)).expect("topology");
    // First use decodes a release's lines of the history tables; each release only once.
    let start = Instant::now();
    let flags = flagset::get("0.5.23").expect("flag set");
    let registry = sglang::envs::for_version("0.5.23").0;
    println!(
        "embedded data, first use: {:.0} µs (0.5.23's {} actions and {} env variables)",
        start.elapsed().as_secs_f64() * 1e6,
        flags.actions.len(),
        registry.registry.len()
    );
    // The same line as the fixes leave it (0.5.23 renamed --cuda-graph-max-bs), so every rule
    // sees parsed values.
    let tokens: Vec<OsString> = ARGS
        .iter()
        .map(|a| {
            OsString::from(if *a == "--cuda-graph-max-bs" {
                "--cuda-graph-max-bs-decode"
            } else {
                a
            })
        })
        .collect();
    let args = sglang::parse(flags, tokens);
    assert!(args.is_ok(), "{:?}", args.errors);
    let env = Env::default();
    let gpus: Vec<u32> = (0..8).collect();
    let facts = Facts {
        version: "0.5.23",
        args: &args,
        env: &env,
        topology: &topology,
        gpus: &gpus,
        model: None,
        draft: None,
        host: None,
        packages: None,
    };
    let start = Instant::now();
    for _ in 0..20_000 {
        std::hint::black_box(Context::new(facts));
    }
    println!(
        "server resolution: {:.1} µs per round",
        start.elapsed().as_secs_f64() / 20_000.0 * 1e6
    );
    let ctx = Context::new(facts);
    let settings = RuleSettings::default();
    let iters = 20_000;
    let start = Instant::now();
    let mut hits = 0;
    for _ in 0..iters {
        hits += std::hint::black_box(rules::evaluate(&ctx, &settings)).len();
    }
    let per = start.elapsed().as_secs_f64() / iters as f64;
    println!(
        "rule evaluation: {:.1} µs per check ({} rules, {} findings on this command line)",
        per * 1e6,
        rules::all().len(),
        hits / iters
    );
    let start = Instant::now();
    for _ in 0..iters {
        std::hint::black_box(sglang::parse(
            flags,
            ARGS.iter().map(OsString::from).collect(),
        ));
    }
    println!(
        "argument parsing: {:.1} µs per command line",
        start.elapsed().as_secs_f64() / iters as f64 * 1e6
    );
}
