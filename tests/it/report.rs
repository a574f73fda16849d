//! Snapshots of the human report for realistic command lines (review with `cargo insta review`).

use crate::common;

use std::ffi::OsString;

use sglang_launch::facts::Env;
use sglang_launch::plan::{self, Request};
use sglang_launch::report;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn human(topology: &str, version: &str, line: &str, env: &[(&str, &str)]) -> String {
    let req = Request {
        tokens: line.split_whitespace().map(OsString::from).collect(),
        topology: Some(format!("{ROOT}/examples/topologies/{topology}.json").into()),
        sglang_version: Some(version.into()),
        python: Some("/usr/bin/python3".into()),
        env: Env::from_pairs(env.iter().copied()),
        ..Request::default()
    };
    let outcome = plan::build(&req).unwrap();
    report::human(&outcome, false)
}

#[test]
fn seed_story_box_with_every_lesson() {
    insta::assert_snapshot!(human(
        "8x-rtx-pro-6000-pcie",
        "0.5.23",
        "--model-path examples/models/Qwen3-32B --tp 8 --enable-flashinfer-allreduce-fusion \
         --enable-torch-symm-mem --cuda-graph-max-bs 512 --speculative-algorithm EAGLE3 \
         --speculative-draft-model-path some/eagle3-draft",
        &[
            ("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"),
            ("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
        ],
    ));
}

#[test]
fn healthy_h100_box_is_quiet() {
    insta::assert_snapshot!(human(
        "8x-h100-sxm-nvlink",
        "0.5.23",
        "--model-path examples/models/Qwen3-32B --tp 8 --port 30000",
        &[],
    ));
}

#[test]
fn consumer_pair_without_p2p() {
    insta::assert_snapshot!(human(
        "2x-rtx-4090-pcie",
        "0.5.5",
        "--model-path examples/models/Qwen3-32B --tp 2 --attention-backend fa3",
        &[],
    ));
}

#[test]
fn typo_and_ambiguity_read_like_argparse() {
    insta::assert_snapshot!(human(
        "1x-l4",
        "0.5.23",
        "--model-path examples/models/Qwen3-32B --reasoning_parser qwen3",
        &[],
    ));
}

/// The memory table's lines: (label, MiB, is a `=` total), up to the notes under it.
fn table(report: &str) -> Vec<(String, i64, bool)> {
    let mut rows = Vec::new();
    let lines = report
        .lines()
        .skip_while(|l| !l.starts_with("memory (per GPU, MiB):"))
        .skip(1);
    for l in lines {
        let (total, rest) = if let Some(r) = l.strip_prefix("  = ") {
            (true, r)
        } else if let Some(r) = l.strip_prefix("    ") {
            (false, r)
        } else {
            break;
        };
        let (label, value) = rest.trim_end().rsplit_once(' ').expect("label and value");
        let mib = value.parse().unwrap_or_else(|_| panic!("not MiB: {l:?}"));
        rows.push((label.trim().to_owned(), mib, total));
    }
    rows
}

/// Every `=` line is the sum of the lines above it back to the previous `=` line; the last, the
/// GPU's capacity, the sum of the `=` lines. Checked on the rendered text, as a reader would.
fn assert_sums_hold(report: &str) -> Vec<(String, i64, bool)> {
    let rows = table(report);
    assert!(rows.len() > 8, "no memory table:\n{report}");
    let (mut leaves, mut totals) = (0i64, Vec::new());
    let last = rows.len() - 1;
    for (i, (label, mib, total)) in rows.iter().enumerate() {
        if !total {
            leaves += mib;
            continue;
        }
        if i == last {
            assert_eq!(leaves, 0, "lines after the last subtotal:\n{report}");
            assert_eq!(*mib, totals.iter().sum::<i64>(), "{label}:\n{report}");
        } else {
            assert_eq!(*mib, leaves, "{label}:\n{report}");
            totals.push(*mib);
            leaves = 0;
        }
    }
    assert_eq!(totals.len(), 3, "{report}");
    rows
}

fn request(topology: &str, line: &str) -> Request {
    Request {
        tokens: line.split_whitespace().map(OsString::from).collect(),
        topology: Some(format!("{ROOT}/tests/fixtures/topologies/{topology}.json").into()),
        sglang_version: Some("0.5.23".into()),
        python: Some("/usr/bin/python3".into()),
        ..Request::default()
    }
}

fn outcome(topology: &str, line: &str) -> plan::Outcome {
    plan::build(&request(topology, line)).unwrap()
}

fn value(rows: &[(String, i64, bool)], prefix: &str) -> i64 {
    rows.iter()
        .filter(|(l, _, t)| !t && l.starts_with(prefix))
        .map(|(_, m, _)| m)
        .sum()
}

#[test]
fn memory_table_lines_add_up_for_real_models_and_boxes() {
    let m = |name: &str| format!("--model-path {ROOT}/tests/fixtures/models/{name}");
    let cases = [
        ("1x-l4", m("meta-llama__Llama-3.1-8B-Instruct")),
        // the user's fraction leaves too little for graphs and the first prefill (MEM003)
        (
            "1x-l4",
            m("meta-llama__Llama-3.1-8B-Instruct") + " --mem-fraction-static 0.95",
        ),
        // a token cap leaves part of the pool unallocated
        (
            "8x-h100-sxm-nvlink",
            m("Qwen__Qwen3-8B") + " --tp 2 --max-total-tokens 100000",
        ),
        // MLA with its MTP layer as the draft: draft weights and draft KV layers
        (
            "8x-h200-nvlink",
            m("deepseek-ai__DeepSeek-V3") + " --tp 8 --speculative-algorithm EAGLE",
        ),
        // a sliding-window pool of its own
        ("8x-h100-sxm-nvlink", m("openai__gpt-oss-20b") + " --tp 1"),
        // a vision tower
        (
            "4x-a100-pcie-40gb-nvlink-pairs",
            m("google__gemma-3-27b-it") + " --tp 2",
        ),
        // a Mamba hybrid, online quantisation, another process on one GPU
        (
            "2x-h100-one-busy",
            m("synthetic__Qwen3-Next-80B-A3B") + " --tp 2 --quantization fp8",
        ),
        // too big: the pool is short of the weights
        ("2x-rtx-4090-pcie", m("Qwen__QwQ-32B") + " --tp 2"),
        ("8x-b200-nvlink", m("Qwen__Qwen3-235B-A22B-FP8") + " --tp 8"),
    ];
    for (topo, line) in cases {
        let o = outcome(topo, &line);
        let report = report::human(&o, false);
        let rows = assert_sums_hold(&report);
        let mem = o.plan.memory.as_ref().expect("a memory plan");
        let at = |label: &str| rows.iter().find(|r| r.0.starts_with(label)).unwrap().1;
        // The totals are the plan's own figures.
        assert_eq!(at("GPU capacity"), mem.gpu_memory_mib as i64, "{report}");
        let pool = (mem.baseline_mib as f64 * mem.mem_fraction_static).floor() as i64;
        assert!((at("static pool") - pool).abs() <= 3, "{pool}:\n{report}");
        assert_eq!(
            at("set aside before the weights") + at("static pool") + at("outside"),
            mem.gpu_memory_mib as i64
        );
        let weights = value(&rows, "weights") + value(&rows, "model weights");
        let weights = weights + value(&rows, "draft model weights") + value(&rows, "vision");
        assert_eq!(Some(weights as u64), mem.weights_per_gpu_mib, "{report}");
        assert_eq!(
            Some(value(&rows, "KV cache") as u64),
            mem.kv_cache_mib,
            "{report}"
        );
        // One fits line, and never a yes next to a finding that expects the launch to fail.
        let fits = report.lines().find(|l| l.starts_with("  fits: ")).unwrap();
        let failing = ["MEM003", "MEM004", "MEM005", "MEM010", "MEM012"];
        if o.plan
            .findings
            .iter()
            .any(|f| failing.contains(&f.code.as_str()))
        {
            assert!(fits.starts_with("  fits: NO"), "{report}");
        }
    }
}

#[test]
fn fixed_findings_read_as_fixed_and_the_verdict_counts_what_blocks() {
    let line = |extra: &str| {
        format!(
            "--model-path {ROOT}/examples/models/Qwen3-32B --tp 8 --cuda-graph-max-bs 512 {extra}"
        )
    };
    let fusion = line("--enable-flashinfer-allreduce-fusion");
    let report = report::human(&outcome("8x-rtx-pro-6000-pcie", &fusion), false);
    // Both were fixed (the fusion is a warning, the spelling an error): each reads as fixed.
    assert!(!report.contains("  error "), "{report}");
    for code in ["FLAG001", "ARCH001"] {
        assert!(
            report.contains(&format!("  fixed   {code}")),
            "{code}:\n{report}"
        );
    }
    assert!(report.ends_with("verdict: ok — 2 fixed\n"), "{report}");
    // With --no-fix the spelling blocks (argparse rejects it: ARG001 too), and the verdict
    // says so; the warnings are counted apart.
    let mut req = request(
        "8x-rtx-pro-6000-pcie",
        &line("--enable-flashinfer-allreduce-fusion --mem-fraction-static 0.95"),
    );
    req.no_fix = true;
    let report = report::human(&plan::build(&req).unwrap(), false);
    assert!(report.contains("  warning ARCH001"), "{report}");
    assert!(report.contains("  error   FLAG001"), "{report}");
    assert!(report.contains("  warning MEM003"), "{report}");
    assert!(!report.contains("  fixed "), "{report}");
    assert!(
        report.ends_with("verdict: blocked — 2 errors, 2 warnings\n"),
        "{report}"
    );
    // Under --strict a warning alone blocks, and the verdict says why.
    let mut req = request("8x-rtx-pro-6000-pcie", &line("--mem-fraction-static 0.95"));
    req.settings.strict = true;
    let report = report::human(&plan::build(&req).unwrap(), false);
    assert!(
        report.ends_with("verdict: blocked — 1 fixed, 1 warning (--strict)\n"),
        "{report}"
    );
}

#[test]
fn columns_wraps_the_report_but_never_the_command_line() {
    let run = |columns: Option<&str>| {
        let mut c = common::launcher();
        c.args([
            "run",
            "--dry-run",
            "--topology",
            "tests/fixtures/topologies/8x-rtx-pro-6000-pcie.json",
            "--sglang-version",
            "0.5.23",
            "--python",
            "/usr/bin/python3",
            "--",
            "--model-path",
            "examples/models/Qwen3-32B",
            "--tp",
            "8",
            "--enable-flashinfer-allreduce-fusion",
            "--cuda-graph-max-bs",
            "512",
        ]);
        if let Some(w) = columns {
            c.env("COLUMNS", w);
        }
        let out = c.assert().success().get_output().clone();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (command, wide) = run(None);
    let (wrapped_command, narrow) = run(Some("72"));
    // Not a terminal and no COLUMNS: one line per finding, however long.
    assert!(wide.lines().any(|l| l.chars().count() > 72), "{wide}");
    for l in narrow.lines() {
        assert!(l.chars().count() <= 72, "{l:?} in\n{narrow}");
    }
    // Wrapping only moves line breaks: the same words, flags and paths whole.
    let words = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(words(&wide), words(&narrow));
    assert!(narrow.contains("--cuda-graph-max-bs-decode"), "{narrow}");
    // The command line to copy stays one line.
    assert_eq!(command, wrapped_command);
    assert_eq!(command.lines().count(), 1, "{command}");
    assert!(command.chars().count() > 72, "{command}");
}

/// The "SGLang will choose:" line says so when SGLang overrides the user's own switch: EAGLE
/// on the spec-v2 worker of 0.5.5 runs the overlap scheduler whatever the command line says.
#[test]
fn sglang_turning_the_overlap_scheduler_back_on_is_reported() {
    let line = "--model-path examples/models/Qwen3-32B --tp 8 --speculative-algorithm EAGLE \
                --speculative-draft-model-path some/draft --disable-overlap-schedule";
    let chosen = |env: &[(&str, &str)]| {
        human("8x-h100-sxm-nvlink", "0.5.5", line, env)
            .lines()
            .find(|l| l.starts_with("SGLang will choose:"))
            .unwrap_or_default()
            .to_owned()
    };
    let forced = chosen(&[("SGLANG_ENABLE_SPEC_V2", "1")]);
    assert!(
        forced.contains("overlap scheduler on (over --disable-overlap-schedule"),
        "{forced}"
    );
    assert!(!chosen(&[]).contains("overlap scheduler on"));
}
