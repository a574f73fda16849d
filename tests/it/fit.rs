//! `--fit`: the values it chooses reach the command line and the report, it is opt-in, it never
//! touches what it must not, and its own result is a fixpoint.

use serde_json::Value;

use crate::common;
use common::launcher as sl;

const LLAMA_8B: &str = "tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct";
const QWQ_32B: &str = "tests/fixtures/models/Qwen__QwQ-32B";

/// `plan --json` on a fixture box for an SGLang release, with launcher options and SGLang args.
fn plan(topology: &str, version: &str, launcher: &[&str], sglang: &[&str]) -> Value {
    let out = sl()
        .args(["plan", "--json", "--sglang-version", version, "--topology"])
        .arg(format!("tests/fixtures/topologies/{topology}.json"))
        .args(launcher)
        .arg("--")
        .args(sglang)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Llama-3.1-8B (131072-token context) alone on a 24 GiB RTX 4090.
fn llama_on_4090(launcher: &[&str], extra: &[&str]) -> Value {
    let mut sglang = vec!["--model-path", LLAMA_8B];
    sglang.extend(extra);
    plan("2x-rtx-4090-pcie", "0.5.23", launcher, &sglang)
}

fn findings<'a>(v: &'a Value, code: &str) -> Vec<&'a Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

fn args(v: &Value) -> Vec<String> {
    v["sglang_args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect()
}

/// The value after `option` in the final arguments.
fn value_of(v: &Value, option: &str) -> Option<u64> {
    let a = args(v);
    let i = a.iter().position(|x| x == option)?;
    a.get(i + 1)?.parse().ok()
}

fn fix_texts(v: &Value) -> Vec<String> {
    findings(v, "MEM015")
        .iter()
        .map(|f| {
            assert_eq!(f["fixed"], true, "{f}");
            f["fix"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn a_context_the_kv_cache_cannot_hold_is_shortened_to_one_that_fits() {
    let before = llama_on_4090(&[], &[]);
    assert_eq!(findings(&before, "MEM007").len(), 1);
    let v = llama_on_4090(&["--fit"], &[]);
    let ctx = value_of(&v, "--context-length").expect("context length set");
    let kv = v["memory"]["kv_cache_tokens"].as_u64().unwrap();
    assert!(
        (2048..131072).contains(&ctx) && ctx.is_multiple_of(1024),
        "{ctx}"
    );
    // The largest step that fits: one more would not.
    assert!(kv >= ctx && kv < ctx + 1024, "kv {kv} ctx {ctx}");
    assert_eq!(v["memory"]["fits"], true);
    assert!(findings(&v, "MEM007").is_empty(), "{:#}", v["findings"]);
    let fixes = fix_texts(&v);
    assert_eq!(fixes.len(), 1, "{fixes:?}");
    assert!(
        fixes[0].starts_with(&format!(
            "set --context-length {ctx} (was 131072 from the model config): the KV cache holds"
        )),
        "{}",
        fixes[0]
    );
    // Nothing else moved: model, TP, request count, graphs.
    let a = args(&v);
    assert_eq!(&a[..2], ["--model-path", LLAMA_8B]);
    for untouched in [
        "--tp-size",
        "--tp",
        "--max-running-requests",
        "--cuda-graph-max-bs-decode",
        "--kv-cache-dtype",
        "--quantization",
        "--dtype",
    ] {
        assert!(!a.iter().any(|x| x == untouched), "{untouched} in {a:?}");
    }
}

#[test]
fn without_fit_or_under_no_fix_the_same_values_are_only_suggested() {
    let fitted = value_of(&llama_on_4090(&["--fit"], &[]), "--context-length").unwrap();
    let hint = format!("with --fit: --context-length {fitted}");
    for launcher in [&[][..], &["--no-fix", "--fit"][..]] {
        let v = llama_on_4090(launcher, &[]);
        assert!(findings(&v, "MEM015").is_empty(), "{launcher:?}");
        assert_eq!(value_of(&v, "--context-length"), None, "{launcher:?}");
        let mem007 = findings(&v, "MEM007");
        let msg = mem007[0]["message"].as_str().unwrap();
        assert!(msg.ends_with(&hint), "{launcher:?}: {msg}");
    }
    // --no-fix --fit runs the user's line exactly.
    let v = llama_on_4090(&["--no-fix", "--fit"], &[]);
    assert_eq!(args(&v), ["--model-path", LLAMA_8B]);
}

#[test]
fn the_fitted_line_is_a_fixpoint() {
    let v = llama_on_4090(&["--fit"], &["--max-running-requests", "16"]);
    let fitted = args(&v);
    let again = plan(
        "2x-rtx-4090-pcie",
        "0.5.23",
        &["--fit"],
        &fitted.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(
        findings(&again, "MEM015").is_empty(),
        "{:#}",
        again["findings"]
    );
    assert!(
        findings(&again, "MEM007").is_empty(),
        "{:#}",
        again["findings"]
    );
    assert_eq!(args(&again), fitted);
    assert_eq!(again["memory"]["fits"], true);
}

#[test]
fn a_typed_value_is_lowered_only_under_fit_and_said_to_be_yours() {
    // One request of 64000 tokens does not fit: the context goes first, then the count.
    let v = llama_on_4090(
        &["--fit"],
        &["--context-length", "64000", "--max-running-requests", "16"],
    );
    let fixes = fix_texts(&v);
    assert_eq!(fixes.len(), 2, "{fixes:?}");
    assert!(fixes[0].contains("(was 64000 (yours))"), "{}", fixes[0]);
    assert!(
        fixes[1].starts_with("set --max-running-requests "),
        "{}",
        fixes[1]
    );
    assert!(fixes[1].contains("(was 16 (yours))"), "{}", fixes[1]);
    let (ctx, mrr) = (
        value_of(&v, "--context-length").unwrap(),
        value_of(&v, "--max-running-requests").unwrap(),
    );
    let kv = v["memory"]["kv_cache_tokens"].as_u64().unwrap();
    // Sized at a typical request (4096 tokens), one of them at full context.
    assert!(
        mrr * 4096 <= kv && ctx <= kv && mrr < 16,
        "{mrr} × 4096, {ctx} vs {kv}"
    );
    // A context that holds one request is kept; only the count comes down to what fits.
    let v = llama_on_4090(
        &["--fit"],
        &["--context-length", "4096", "--max-running-requests", "16"],
    );
    let fixes = fix_texts(&v);
    assert_eq!(value_of(&v, "--context-length"), Some(4096));
    let mrr = value_of(&v, "--max-running-requests").unwrap();
    let kv = v["memory"]["kv_cache_tokens"].as_u64().unwrap();
    assert!(mrr * 4096 <= kv && (mrr + 1) * 4096 > kv, "{mrr} vs {kv}");
    assert_eq!(fixes.len(), 1, "{fixes:?}");
    // The user's own spelling and place are kept.
    let a = args(&v);
    let i = a
        .iter()
        .position(|x| x == "--max-running-requests")
        .unwrap();
    assert_eq!(a[i + 1], mrr.to_string());
    assert_eq!(a.len(), 6, "{a:?}");
}

#[test]
fn the_users_graph_batch_stays_while_context_and_requests_make_room() {
    // The context alone is enough: the graphs are not touched.
    let v = llama_on_4090(&["--fit"], &[]);
    assert!(
        !fix_texts(&v)
            .iter()
            .any(|f| f.contains("--cuda-graph-max-bs"))
    );
    // 0.5.17's default fraction pays for every graph slot of the user's 512 batch: on a 24 GiB
    // L4 the full context does not fit. SGLang's default holds the weights, so its request
    // estimate is there to lower; fewer requests shrink the captured batches and the
    // activations, and the user's own batch stays.
    let sglang = [
        "--model-path",
        LLAMA_8B,
        "--cuda-graph-max-bs-decode",
        "512",
    ];
    let before = plan("1x-l4", "0.5.17", &[], &sglang);
    let mem005 = findings(&before, "MEM005");
    let msg = mem005[0]["message"].as_str().unwrap();
    let v = plan("1x-l4", "0.5.17", &["--fit"], &sglang);
    let (ctx, mrr) = (
        value_of(&v, "--context-length").unwrap(),
        value_of(&v, "--max-running-requests").unwrap(),
    );
    assert_eq!(value_of(&v, "--cuda-graph-max-bs-decode"), Some(512));
    assert!(ctx >= 2048 && mrr >= 1, "{ctx} {mrr}");
    assert!(
        msg.ends_with(&format!(
            "with --fit: --context-length {ctx}, --max-running-requests {mrr}"
        )),
        "{msg}"
    );
    assert_eq!(v["memory"]["fits"], true);
    assert!(findings(&v, "MEM005").is_empty() && findings(&v, "MEM007").is_empty());
    assert!(
        !fix_texts(&v)
            .iter()
            .any(|f| f.contains("--cuda-graph-max-bs"))
    );
    // The context is the largest that fits with those requests.
    let longer = (ctx + 1024).to_string();
    let mrr = mrr.to_string();
    let at = plan(
        "1x-l4",
        "0.5.17",
        &[],
        &[
            &sglang[..],
            &["--max-running-requests", &mrr, "--context-length", &longer],
        ]
        .concat(),
    );
    assert!(!findings(&at, "MEM007").is_empty() || !findings(&at, "MEM005").is_empty());
}

#[test]
fn nothing_that_fits_changes_nothing_and_says_so() {
    let sglang = ["--model-path", QWQ_32B];
    let v = plan("1x-l4", "0.5.23", &["--fit"], &sglang);
    assert_eq!(args(&v), sglang);
    assert!(findings(&v, "MEM015").is_empty());
    let msg = findings(&v, "MEM005")[0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("--tp-size") && msg.ends_with("--fit changed nothing: no context length down to 2048, request count or CUDA-graph batch makes it fit"), "{msg}");
    // Without --fit MEM005 keeps only its ways out.
    let plain = plan("1x-l4", "0.5.23", &[], &sglang);
    let msg = findings(&plain, "MEM005")[0]["message"].as_str().unwrap();
    assert!(!msg.contains("--fit"), "{msg}");
}

#[test]
fn fit_comes_from_the_environment_and_allow_turns_it_off() {
    let out = sl()
        .env("SGLANG_LAUNCH_FIT", "1")
        .args([
            "plan",
            "--print-args",
            "--sglang-version",
            "0.5.23",
            "--topology",
        ])
        .arg("tests/fixtures/topologies/2x-rtx-4090-pcie.json")
        .args(["--", "--model-path", LLAMA_8B])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("--context-length "));
    // Only the fraction the planner lifts above SGLang's default (MEM016) is set: no --fit change.
    let v = llama_on_4090(&["--fit", "--allow", "MEM015"], &[]);
    let a = args(&v);
    assert_eq!(a[..2], ["--model-path", LLAMA_8B], "{a:?}");
    assert_eq!(
        a[2..].first().map(String::as_str),
        Some("--mem-fraction-static"),
        "{a:?}"
    );
    assert!(!findings(&v, "MEM016").is_empty());
    assert!(!findings(&v, "MEM007").is_empty());
}

#[test]
fn the_human_report_lists_each_change_with_its_reason() {
    let out = sl()
        .args(["check", "--fit", "--sglang-version", "0.5.23", "--topology"])
        .arg("tests/fixtures/topologies/2x-rtx-4090-pcie.json")
        .args(["--", "--model-path", LLAMA_8B])
        .output()
        .unwrap();
    // `check` reports on stdout.
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    let change = report
        .lines()
        .find(|l| l.trim_start().starts_with("set --context-length "))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        change.contains("(was 131072 from the model config): the KV cache holds")
            && change.ends_with("tokens at the planned fraction (MEM015)"),
        "{change}"
    );
    assert!(report.contains("MEM015 fit-to-memory: --fit: the KV cache holds about"));
    assert!(report.contains("verdict: ok"), "{report}");
}

#[test]
fn requests_are_sized_at_a_typical_length_the_report_names() {
    // 64 requests asked at a 32k context: sized at full context they would come down to what
    // holds 32k tokens each; --fit sizes them at a typical request and says which.
    let line = ["--context-length", "32768", "--max-running-requests", "64"];
    let typical = llama_on_4090(&["--fit"], &line);
    let kv = typical["memory"]["kv_cache_tokens"].as_u64().unwrap();
    assert_eq!(
        value_of(&typical, "--max-running-requests"),
        Some(kv / 4096)
    );
    assert_eq!(value_of(&typical, "--context-length"), Some(32768));
    let fixes = fix_texts(&typical);
    assert!(
        fixes
            .iter()
            .any(|f| f.contains("of 4,096 tokens fit") && f.contains("--fit-request-tokens")),
        "{fixes:?}"
    );
    // The option, the variable and a config file set the length.
    let option = llama_on_4090(&["--fit", "--fit-request-tokens", "16384"], &line);
    let kv = option["memory"]["kv_cache_tokens"].as_u64().unwrap();
    assert_eq!(
        value_of(&option, "--max-running-requests"),
        Some(kv / 16384)
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sglang-launch")).unwrap();
    let config = dir.path().join("sglang-launch/config.toml");
    std::fs::write(&config, "fit-request-tokens = 16384\n").unwrap();
    for (var, value) in [
        ("SGLANG_LAUNCH_FIT_REQUEST_TOKENS", "16384"),
        ("XDG_CONFIG_HOME", dir.path().to_str().unwrap()),
    ] {
        let out = sl()
            .env(var, value)
            .args([
                "plan",
                "--json",
                "--fit",
                "--sglang-version",
                "0.5.23",
                "--topology",
            ])
            .arg("tests/fixtures/topologies/2x-rtx-4090-pcie.json")
            .args(["--", "--model-path", LLAMA_8B])
            .args(line)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(args(&v), args(&option), "{var}");
    }
    // Zero is refused where it is written, naming it.
    let out = sl()
        .env("SGLANG_LAUNCH_FIT_REQUEST_TOKENS", "0")
        .args(["check", "--fit", "--", "--model-path", LLAMA_8B])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("SGLANG_LAUNCH_FIT_REQUEST_TOKENS=0 is not a whole number above 0"),
        "{err}"
    );
}

#[test]
fn a_context_sglang_refuses_comes_down_under_fit_and_nothing_stale_blocks() {
    let sglang = ["--model-path", LLAMA_8B, "--context-length", "200000"];
    // Without --fit 0.5.23's refusal (ENV006) blocks.
    let v = plan("8x-h200-nvlink", "0.5.23", &[], &sglang);
    assert_eq!(findings(&v, "ENV006").len(), 1);
    assert_eq!(v["verdict"], "error");
    // With it the context comes down to the model's, the refusal is gone and the line runs.
    let v = plan("8x-h200-nvlink", "0.5.23", &["--fit"], &sglang);
    assert_eq!(value_of(&v, "--context-length"), Some(131072));
    assert!(findings(&v, "ENV006").is_empty(), "{v}");
    assert_eq!(v["verdict"], "ok");
    let fixes = fix_texts(&v);
    assert!(
        fixes[0].contains("the longest context SGLang accepts"),
        "{fixes:?}"
    );
    // Lowered further for memory on a 24 GB GPU, no refusal is left behind either.
    let v = plan("1x-l4", "0.5.23", &["--fit"], &sglang);
    assert!(value_of(&v, "--context-length").unwrap() < 131072);
    assert!(findings(&v, "ENV006").is_empty(), "{v}");
}

mod any_numbers {
    use std::ffi::OsString;
    use std::num::NonZeroU64;

    use proptest::prelude::*;
    use sglang_launch::facts::Env;
    use sglang_launch::plan::{self, Request};

    use super::LLAMA_8B;

    const OPTIONS: [&str; 3] = [
        "--context-length",
        "--max-running-requests",
        "--cuda-graph-max-bs",
    ];

    /// Zero, small, large and absurd: the search must stay arithmetic whatever the number.
    fn number() -> impl Strategy<Value = u64> {
        prop_oneof![Just(0), 1..200_000u64, 200_000..u64::MAX, Just(u64::MAX)]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn fit_ends_and_never_raises_a_value_it_was_given(
            node in proptest::sample::select(&["1x-l4", "8x-h200-nvlink"][..]),
            given in proptest::collection::vec(proptest::option::of(number()), 3),
            typical in proptest::option::of(number()),
        ) {
            let mut tokens: Vec<OsString> = vec!["--model-path".into(), LLAMA_8B.into()];
            for (option, n) in OPTIONS.iter().zip(&given) {
                if let Some(n) = n {
                    tokens.extend([OsString::from(*option), n.to_string().into()]);
                }
            }
            let req = Request {
                tokens,
                topology: Some(format!("tests/fixtures/topologies/{node}.json").into()),
                sglang_version: Some("0.5.23".into()),
                python: Some("/usr/bin/python3".into()),
                fit: true,
                fit_request_tokens: typical.and_then(NonZeroU64::new),
                env: Env::from_pairs([("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")]),
                ..Request::default()
            };
            let outcome = plan::build(&req).unwrap();
            let args = &outcome.plan.sglang_args;
            for (option, given) in OPTIONS.iter().zip(&given) {
                let (Some(given), Some(at)) = (given, args.iter().rposition(|a| a == option)) else {
                    continue;
                };
                let now: u64 = args[at + 1].parse().unwrap();
                prop_assert!(now <= *given, "{option} {given} became {now}");
            }
        }
    }
}

/// A PD decode server receives its KV cache and runs decode batches only: a huge
/// `--chunked-prefill-size` (which its prefill partner uses) leaves the planned fraction at
/// SGLang's own default instead of reserving the chunk's activations.
#[test]
fn a_pd_decode_server_keeps_its_fraction_whatever_the_chunk() {
    let model = "tests/fixtures/models/deepseek-ai__DeepSeek-V2-Lite";
    let line = |mode: &'static str| {
        let sglang = [
            "--model-path",
            model,
            "--tp-size",
            "2",
            "--disaggregation-mode",
            mode,
            "--chunked-prefill-size",
            "393216",
        ];
        plan("8x-h20-nvlink", "0.5.10.post1", &[], &sglang)
    };
    let decode = line("decode");
    let m = &decode["memory"];
    let planned = m["mem_fraction_static"].as_f64().unwrap();
    let default = m["sglang_default_mem_fraction_static"].as_f64().unwrap();
    assert!(planned >= default - 0.01, "{planned} vs {default}: {m}");
    // The prefill server runs that chunk, and its reserve says so.
    let prefill = line("prefill");
    let prefill_planned = prefill["memory"]["mem_fraction_static"].as_f64().unwrap();
    assert!(prefill_planned < planned, "{prefill_planned} vs {planned}");
}
