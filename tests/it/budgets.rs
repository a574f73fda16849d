//! Small inputs that stand for huge ones (YAML alias and merge bombs, deep nesting) end in the
//! loader's budget error, naming the file and the budget; large inputs (keys, GPUs, unknown
//! options, flow mappings) are read whole and right. Without the budgets these would exhaust
//! memory, overflow the stack or run for minutes; the figures are in `benches/scaling.rs`.

use crate::common;

use std::ffi::OsString;
use std::io::Write;

use sglang_launch::facts::Topology;
use sglang_launch::sglang::{self, SglangArgs, flagset};

fn yaml(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

/// SGLang 0.5.23's reading of `--model-path m --config FILE` with this file.
fn with_config(text: &str) -> (SglangArgs, String) {
    let f = yaml(text);
    let path = f.path().to_str().unwrap().to_owned();
    let toks = ["--model-path", "m", "--config", &path]
        .iter()
        .map(OsString::from)
        .collect();
    (sglang::parse(flagset::get("0.5.23").unwrap(), toks), path)
}

/// The one error of a config file that went past a budget; it names the file and the limit.
fn budget_error(text: &str, limit: &str) -> String {
    let (args, path) = with_config(text);
    let e = &args.errors.first().expect("an error").message;
    assert!(e.starts_with("YAML budget exceeded: "), "{e}");
    assert!(e.contains(&path), "{e}");
    assert!(e.contains(limit), "{e}");
    e.clone()
}

/// The 413-byte "billion laughs": nine levels of ten aliases each, 10⁹ strings.
fn billion_laughs() -> String {
    let mut s = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (prev, name) in "abcdefgh".chars().zip("bcdefghi".chars()) {
        let refs = vec![format!("*{prev}"); 9].join(",");
        s.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    s
}

#[test]
fn billion_laughs_is_a_budget_error_naming_the_file() {
    let bomb = billion_laughs();
    assert!(bomb.len() < 500, "{}", bomb.len());
    let e = budget_error(&bomb, "1000000 values");
    assert!(e.contains("alias expansion budget"), "{e}");
}

#[test]
fn merge_key_bomb_is_a_budget_error() {
    // Each level merges the one before ten times: 10^12 merged keys.
    let mut s = String::from("m0: &m0 {tp-size: 1, port: 2}\n");
    for i in 1..12 {
        let refs = vec![format!("*m{}", i - 1); 10].join(", ");
        s.push_str(&format!("m{i}: &m{i} {{<<: [{refs}]}}\n"));
    }
    budget_error(&s, "1000000 values");
}

#[test]
fn a_big_block_aliased_many_times_is_a_budget_error() {
    let block: Vec<String> = (0..1000).map(|i| format!("k{i}: {i}")).collect();
    let mut s = format!("base: &b {{{}}}\n", block.join(", "));
    for i in 0..2000 {
        s.push_str(&format!("x{i}: *b\n"));
    }
    budget_error(&s, "1000000 values");
}

#[test]
fn a_long_alias_chain_is_a_budget_error() {
    // l_i holds l_(i-1): l_n is n lists deep, and the document n²/2 values.
    let mut s = String::from("l0: &l0 [x]\n");
    for i in 1..5000 {
        s.push_str(&format!("l{i}: &l{i} [*l{}]\n", i - 1));
    }
    let (args, path) = with_config(&s);
    let e = &args.errors[0].message;
    assert!(
        e.starts_with("YAML budget exceeded: ") && e.contains(&path),
        "{e}"
    );
}

#[test]
fn a_long_text_aliased_many_times_is_a_budget_error() {
    let mut s = format!("t: &t \"{}\"\n", "x".repeat(64 << 10));
    s.push_str("copies: [");
    s.push_str(&vec!["*t"; 1000].join(", "));
    s.push_str("]\n");
    budget_error(&s, &format!("{} bytes", 32 << 20));
}

#[test]
fn nesting_deeper_than_pyyaml_reads_is_a_budget_error_not_a_crash() {
    // Block sequences: saphyr has no limit of its own here.
    let deep = format!("k:\n{}x\n", "- ".repeat(100_000));
    budget_error(&deep, "512 deep");
    // 400 levels: PyYAML reads it, and so do we.
    let (args, _) = with_config(&format!("k:\n{}x\n", "- ".repeat(400)));
    assert!(args.config.is_some(), "{:?}", args.errors);
}

#[test]
fn aliases_within_the_budget_load() {
    let block: Vec<String> = (0..100).map(|i| format!("k{i}: {i}")).collect();
    let mut s = format!(
        "model-path: m\njson-model-override-args: &b {{{}}}\n",
        block.join(", ")
    );
    // 500 copies of a 100-key block: 50,000 values, far below the budget.
    for i in 0..500 {
        s.push_str(&format!("x{i}: *b\n"));
    }
    let (args, _) = with_config(&s);
    let c = args.config.as_ref().unwrap();
    assert_eq!(c.tokens.len(), 2 * 502);
    assert_eq!(c.tokens[3], c.tokens[5]);
    assert!(
        c.tokens[3].starts_with("{\"k0\": 0, \"k1\": 1"),
        "{}",
        c.tokens[3]
    );
}

#[test]
fn long_integers_read_as_python_reads_them_or_hit_the_budget() {
    let digits = format!("1{}", "0".repeat(200_000));
    let (args, _) = with_config(&format!("model-path: m\nseed: 000{digits}\n"));
    // A leading 0 makes it octal to PyYAML: budget. Without it, decimal of any length.
    assert!(
        args.errors[0].message.contains("20000 digits"),
        "{:?}",
        args.errors
    );
    let (args, _) = with_config(&format!("model-path: m\nrevision: {digits}\n"));
    assert_eq!(args.config.unwrap().tokens[3], digits);
    let (args, _) = with_config("model-path: m\nrevision: 0x1F\n");
    assert_eq!(args.config.unwrap().tokens[3], "31");
}

#[test]
fn many_flow_mappings_and_quoted_comments_load() {
    // More than 64 spots where YAML 1.2 wants a space PyYAML does not.
    let mut s = String::from("model-path: m\n");
    for i in 0..2000 {
        s.push_str(&format!("k{i}: {{a:[{i}]}}\nq{i}: \"v{i}\"# note\n"));
    }
    let (args, _) = with_config(&s);
    let t = &args
        .config
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", args.errors))
        .tokens;
    assert_eq!(t.len(), 2 + 4 * 2000);
    assert_eq!(t[2..6], ["--k0", "{\"a\": [0]}", "--q0", "v0"]);
    assert_eq!(t[t.len() - 2..], ["--q1999", "v1999"]);
}

#[test]
fn a_config_with_many_keys_loads_whole() {
    let mut s = String::from("model-path: m\n");
    for i in 0..50_000 {
        s.push_str(&format!("k{i}: {i}\n"));
    }
    s.push_str("k7: again\n");
    let (args, _) = with_config(&s);
    let t = &args.config.as_ref().unwrap().tokens;
    // A repeated key keeps its first place and takes the last value, as in a Python dict.
    assert_eq!(t.len(), 2 + 2 * 50_000);
    assert_eq!(t[16..18], ["--k7", "again"]);
    assert!(
        args.errors[0]
            .message
            .starts_with("unrecognized arguments: --k0 0 --k1 1")
    );
}

#[test]
fn many_unknown_options_get_hints_for_the_first_ones() {
    let mut toks: Vec<OsString> = ["--model-path", "m", "--tensor-paralel-size", "2"]
        .iter()
        .map(OsString::from)
        .collect();
    toks.extend((0..20_000).map(|i| OsString::from(format!("--zz-unknown-option-{i}"))));
    let args = sglang::parse(flagset::get("0.5.23").unwrap(), toks);
    let e = &args.errors[0];
    assert!(
        e.message
            .starts_with("unrecognized arguments: --tensor-paralel-size 2 --zz-unknown-option-0")
    );
    assert!(e.message.ends_with("--zz-unknown-option-19999"));
    assert!(
        e.suggestions.contains(&"--tensor-parallel-size".to_owned()),
        "{:?}",
        e.suggestions
    );
    assert!(e.suggestions.len() <= 3 * 32, "{}", e.suggestions.len());
}

/// A topology-v1 document with `n` GPUs on one PCIe switch and, optionally, `extra` GPU JSON.
fn topology(n: usize, extra: &str, links: &str) -> String {
    let gpus: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"index": {i}, "uuid": "GPU-{i:08}", "name": "NVIDIA L4", "pci_bus_id": "00000000:{i:02x}:00.0", "compute_capability": "8.9", "memory_total_mib": 23034, "memory_used_mib": 0, "mig_enabled": false}}"#
            )
        })
        .collect();
    format!(
        r#"{{"schema": "sglang-launch/topology/v1", "source": "test", "driver_version": "580.95.05", "cuda_driver_version": "13.0", "gpus": [{}{extra}], "links": [{links}]}}"#,
        gpus.join(", ")
    )
}

#[test]
fn a_topology_with_20k_gpus_is_checked_whole() {
    let n = 20_000;
    let ok = topology(
        n,
        "",
        r#"{"gpus": [0, 19999], "path": "PHB", "nvlink": false, "p2p": "ok"}"#,
    );
    let t = Topology::from_json_str(&ok, "big.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.gpus.len(), n);
    // A repeated index at the very end is found, and the first one named.
    let dup = r#", {"index": 5, "uuid": "GPU-x", "name": "NVIDIA L4", "pci_bus_id": "x", "compute_capability": "8.9", "memory_total_mib": 23034, "memory_used_mib": 0, "mig_enabled": false}"#;
    let e = Topology::from_json_str(&topology(n, dup, ""), "big.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("gpus[20000].index"), "{e}");
    assert!(e.contains("gpus[5]"), "{e}");
    // A link to a GPU not listed names the first indices, not all 20,000.
    let bad_link = r#"{"gpus": [0, 20001], "path": "PHB", "nvlink": false, "p2p": "ok"}"#;
    let e = Topology::from_json_str(&topology(n, "", bad_link), "big.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("GPU 20001 is not in `gpus` (indices: 0, 1, 2,"),
        "{e}"
    );
    assert!(e.contains("… (20000 in all)") && e.len() < 1000, "{e}");
}

#[test]
fn a_repeated_key_among_200k_is_found() {
    let keys: Vec<String> = (0..200_000).map(|i| format!("\"k{i}\": {i}")).collect();
    let text = format!(
        "{{\"schema\": \"sglang-launch/topology/v1\", \"host\": {{{}, \"k17\": 1}}}}",
        keys.join(", ")
    );
    let e = Topology::from_json_str(&text, "keys.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("k17") && e.contains("host"), "{e}");
}

#[test]
fn the_launcher_reports_a_yaml_bomb_and_launches_nothing() {
    let f = yaml(&billion_laughs());
    let path = f.path().to_str().unwrap();
    let out = common::launcher()
        .args([
            "check",
            "--topology",
            "examples/topologies/8x-rtx-pro-6000-pcie.json",
            "--sglang-version",
            "0.5.23",
            "--",
            "--model-path",
            "examples/models/Qwen3-32B",
            "--config",
            path,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let all = format!("{stdout}{stderr}");
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("ARG001"), "{all}");
    assert!(
        all.contains("YAML budget exceeded") && all.contains(path),
        "{all}"
    );
}
