//! Replays SGLang's own start-up resolution, recorded by `scripts/gen-resolution.py` (the
//! defaults oracle: SGLang's real `ServerArgs` resolution on a fake GPU with the model's
//! config.json), and checks the launcher's resolved server field by field: attention, vision
//! tower, sampling and MoE backends, page size, speculative defaults, and the radix cache,
//! overlap scheduler and CUDA-graph switches, expert parallelism, the memory fraction and the
//! prefill graphs. Where SGLang refused the line, the launcher's rules must block it.

use std::ffi::OsString;
use std::path::Path;

use serde_json::Value;
use sglang_launch::facts::model::{self, ModelFacts};
use sglang_launch::facts::{Env, Gpu, Topology};
use sglang_launch::resolve::{Context, Facts, Server, legacy_mla, vision};
use sglang_launch::rules::{self, RuleSettings, Severity};
use sglang_launch::sglang::{flagset, parser, release};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/resolution");
const MODELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/models");

/// Eight GPUs of one kind: what the oracle's fake node reports.
fn node(cc: &str, mem: u64) -> Topology {
    Topology {
        schema: "sglang-launch/topology/v1".into(),
        source: "test".into(),
        hostname: None,
        driver_version: None,
        cuda_driver_version: None,
        host: None,
        accelerators: Vec::new(),
        gpus: (0..8)
            .map(|i| Gpu {
                index: i,
                uuid: format!("GPU-{i}"),
                name: "fake".into(),
                pci_bus_id: format!("0000:{i:02x}:00.0"),
                compute_capability: cc.into(),
                memory_total_mib: mem,
                memory_used_mib: Some(0),
                mig_enabled: false,
                numa_node: None,
                pcie_gen: None,
                pcie_width: None,
            })
            .collect(),
        links: Vec::new(),
    }
}

/// The oracle's model placeholders, mapped onto the fixture copies of the same configs.
fn local(arg: &str) -> String {
    arg.replace("@models/", &format!("{MODELS}/oracle/"))
        .replace("@shared/", &format!("{MODELS}/"))
}

/// The release's own flag set; a release recorded here without one embedded yet is parsed with
/// the nearest older set (the grid's options exist in both), while resolution uses its version.
fn flag_set(version: &str) -> &'static flagset::FlagSet {
    flagset::get(version).unwrap_or_else(|| {
        let older = flagset::KNOWN_VERSIONS
            .iter()
            .filter(|k| release::cmp(k, version).is_lt())
            .max_by(|a, b| release::cmp(a, b))
            .expect("an older embedded flag set");
        flagset::get(older).expect("embedded")
    })
}

struct Case {
    label: String,
    version: String,
    cc: String,
    want: serde_json::Map<String, Value>,
    server: Server,
    /// The codes of the rules that block this line.
    errors: Vec<String>,
    /// `--mm-attention-backend` as given.
    user_mm: Option<String>,
    /// `--speculative-algorithm NGRAM`.
    ngram: bool,
    /// A speculative algorithm is named.
    spec: bool,
    /// `architectures[0]` of the model's config.
    arch: Option<String>,
}

fn load(r: &Value) -> Option<Case> {
    let version = r["version"].as_str()?.to_owned();
    let want = r
        .get("resolved")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let argv: Vec<OsString> = r["argv"]
        .as_array()?
        .iter()
        .map(|a| OsString::from(local(a.as_str().unwrap_or_default())))
        .collect();
    let flags = flag_set(&version);
    let args = parser::parse(flags, argv);
    assert!(args.is_ok(), "{}: argv parses", r["label"]);
    // The case's own variables (SGLang's spec-v2 switch), as SGLang read them.
    let env = Env::from_pairs(
        r["env"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())),
    );
    let path = args.str("--model-path").unwrap_or_default().to_owned();
    let facts: Option<ModelFacts> = model::load(&path, &env, &args).facts;
    let cc = r["cc"].as_str()?.to_owned();
    let topology = node(&cc, r["gpu_mem_mib"].as_u64()?);
    let gpus: Vec<u32> = (0..8).collect();
    let ctx = Context::new(Facts {
        version: &version,
        args: &args,
        env: &env,
        topology: &topology,
        gpus: &gpus,
        model: facts.as_ref(),
        draft: None,
        host: None,
        packages: None,
    });
    let errors = rules::evaluate(&ctx, &RuleSettings::default())
        .into_iter()
        .filter(|h| h.severity == Severity::Error)
        .map(|h| h.code.to_string())
        .collect();
    Some(Case {
        label: r["label"].as_str()?.to_owned(),
        cc,
        version: version.clone(),
        want,
        server: ctx.server,
        errors,
        user_mm: args.str("--mm-attention-backend").map(str::to_owned),
        ngram: args.str("--speculative-algorithm") == Some("NGRAM"),
        spec: args.str("--speculative-algorithm").is_some(),
        arch: facts.as_ref().and_then(|f| f.architecture.clone()),
    })
}

/// Fields whose golden value is not what runs, so there is nothing to compare.
fn skipped(c: &Case, field: &str, want: &Value) -> bool {
    match field {
        // SGLang left it unset: decided later, at model load (releases before 0.5.5); or
        // before 0.4.5 the model runner replaces what ServerArgs holds for an MLA model.
        "attention" => want.is_null() || legacy_mla(&c.version, c.arch.as_deref()),
        // Before 0.4.5 ServerArgs declares draft parameters, unused without an algorithm.
        "spec_steps" | "spec_topk" | "spec_draft_tokens" => {
            !c.spec && !release::at_least(&c.version, "0.4.5")
        }
        // 0.4.0 has no expert parallelism to report.
        "ep" => want.is_null(),
        _ => false,
    }
}

fn name(c: Option<&sglang_launch::resolve::Chosen>) -> Value {
    c.map_or(Value::Null, |c| Value::String(c.value.clone()))
}

/// (field, ours) for every field the golden records; `None` where the golden's value is one
/// SGLang decides later than its arguments (then there is nothing to compare).
fn ours(c: &Case) -> Vec<(&'static str, Option<Value>)> {
    let s = &c.server;
    let b = &s.backends;
    let mut cc = c.cc.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let cc = (cc.next().unwrap_or(0), cc.next().unwrap_or(0));
    // The golden asks the tower's code directly, whether or not SGLang builds the tower.
    let user_mm = c.user_mm.as_deref();
    let tower = match vision::tower_backend(&c.version, cc, user_mm) {
        Ok(v) => Value::String(v.into()),
        Err(_) => Value::String("refused".into()),
    };
    let sp = s.spec_params;
    // NGRAM's draft parameters (top-k from its BFS breadth, draft tokens from its match
    // window) are not modelled: it has no draft model to size, and no rule reads them.
    let ngram = c.ngram;
    let int = |v: Option<i64>| (!ngram).then(|| v.map_or(Value::Null, Value::from));
    vec![
        ("attention", Some(name(b.attention.as_ref()))),
        (
            "prefill_attention",
            Some(name(b.prefill_attention.as_ref())),
        ),
        ("decode_attention", Some(name(b.decode_attention.as_ref()))),
        ("mm_attention_auto", Some(tower)),
        ("sampling", Some(name(b.sampling.as_ref()))),
        (
            "moe_runner",
            Some(
                b.moe_runner
                    .as_ref()
                    .map_or("auto".into(), |c| c.value.clone().into()),
            ),
        ),
        ("moe_a2a", Some(name(b.moe_a2a.as_ref()))),
        ("page_size", Some(s.page_size.into())),
        ("spec_steps", int(sp.map(|p| p.num_steps.value))),
        ("spec_topk", int(sp.map(|p| p.eagle_topk.value))),
        (
            "spec_draft_tokens",
            int(sp.map(|p| p.num_draft_tokens.value)),
        ),
        (
            "disable_radix_cache",
            Some((!s.switches.radix_cache.on).into()),
        ),
        (
            "disable_overlap_schedule",
            Some((!s.switches.overlap_schedule.on).into()),
        ),
        ("cuda_graph", Some(s.switches.cuda_graph.on.into())),
        ("ep", Some(s.parallel.ep.into())),
        // From 0.5.22 SGLang's `dp_size` counts replicas: DP attention's width is `attn_dp_size`.
        ("dp", Some(dp_size(&c.version, &s.parallel).into())),
        ("dp_attention", Some(s.parallel.dp_attention.into())),
        ("kv_cache_dtype", s.kv_cache_dtype().map(Value::from)),
        ("chunk", Some(s.defaults.chunked_prefill_size.into())),
        ("graph_max_bs", Some(s.defaults.decode_max_bs.into())),
        ("max_running", Some(s.defaults.max_running_requests.into())),
        ("mem_fraction", Some(s.mem_fraction_in_effect().into())),
        ("prefill_graph", Some(s.defaults.prefill_graph.into())),
        (
            "prefill_graph_sizes",
            Some((s.defaults.prefill_bs.len() as u64).into()),
        ),
        (
            "prefill_graph_max",
            Some(s.defaults.prefill_bs.iter().max().copied().into()),
        ),
    ]
}

fn dp_size(version: &str, p: &sglang_launch::sglang::Parallel) -> i64 {
    if release::at_least(version, "0.5.22") {
        p.replicas
    } else {
        p.dp
    }
}

/// Equal as SGLang's values: the fraction to its three decimals.
fn agree(field: &str, got: &Value, want: &Value) -> bool {
    match (field, got.as_f64(), want.as_f64()) {
        ("mem_fraction", Some(g), Some(w)) => (g - w).abs() < 5e-4,
        _ => got == want,
    }
}

/// Refusals the grid records that are not the launcher's rules' to catch: argparse's (the
/// parser conformance replays those) and transformers' own (the release's pinned transformers
/// does not know the model type at all).
fn outside_rules(error: &str) -> bool {
    error.starts_with("SystemExit(2)") || error.contains("Transformers does not recognize")
}

/// The rule that names each refusal's reason, by a piece of SGLang's message.
const REASONS: &[(&str, &str)] = &[
    ("required for Llama4 model", "ATTN012"),
    ("Gemma4 only supports", "ATTN019"),
    ("supported for deterministic inference", "ATTN013"),
    ("TRTLLM MHA backend is only supported", "ATTN004"),
    ("trtllm_mha backend only supports topk = 1", "SPEC005"),
    ("speculative_eagle_topk > 1 with page_size > 1", "SPEC004"),
];

/// The golden's value in the launcher's terms: the vision refusal as "refused".
fn golden(field: &str, v: &Value) -> Value {
    match (field, v.as_str()) {
        ("mm_attention_auto", Some(s)) if s.starts_with("error: ") => "refused".into(),
        _ => v.clone(),
    }
}

#[test]
fn resolution_matches_sglang_field_by_field() {
    let mut files: Vec<_> = std::fs::read_dir(DIR)
        .expect("tests/resolution")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let (mut cases, mut compared, mut rejected) = (0, 0, 0);
    let mut bad = Vec::new();
    let mut unblocked = Vec::new();
    let mut outside = 0;
    for f in &files {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            if let Some(error) = r["error"].as_str() {
                rejected += 1;
                if outside_rules(error) {
                    outside += 1;
                    continue;
                }
                let c = load(&r).unwrap_or_else(|| panic!("{}: loads", Path::new(f).display()));
                let reason = REASONS.iter().find(|(text, _)| error.contains(text));
                let named = match reason {
                    Some((_, code)) => c.errors.iter().any(|e| e == code),
                    None => !c.errors.is_empty(),
                };
                if !named {
                    unblocked.push(format!(
                        "{} {}: SGLang: {error}; launcher errors {:?}, want {:?}",
                        c.version,
                        c.label,
                        c.errors,
                        reason.map(|r| r.1)
                    ));
                }
                continue;
            }
            let c = load(&r).unwrap_or_else(|| panic!("{}: loads", Path::new(f).display()));
            cases += 1;
            for (field, got) in ours(&c) {
                let (Some(got), Some(want)) = (got, c.want.get(field)) else {
                    continue;
                };
                if skipped(&c, field, want) {
                    continue;
                }
                // Graph sizes SGLang lists but never captures (its prefill graph is off).
                let prefill_off = c.want.get("prefill_graph") == Some(&Value::Bool(false));
                if field.starts_with("prefill_graph_") && prefill_off {
                    continue;
                }
                compared += 1;
                let want = golden(field, want);
                if !agree(field, &got, &want) {
                    bad.push(format!(
                        "{} {} {field}: ours {got}, SGLang {want}",
                        c.version, c.label
                    ));
                }
            }
        }
    }
    eprintln!(
        "{cases} cases, {compared} fields, {} disagree; {rejected} refused by SGLang ({outside} by argparse or transformers), {} of the rest not blocked for SGLang's reason",
        bad.len(),
        unblocked.len()
    );
    assert!(
        bad.is_empty() && unblocked.is_empty(),
        "{} disagreements:\n{}\n{} refusals the launcher lets through:\n{}",
        bad.len(),
        bad.join("\n"),
        unblocked.len(),
        unblocked.join("\n")
    );
}

/// The tower backend SGLang builds for a line, as the launcher resolves it.
fn tower(version: &str, cc: &str, argv: &[&str]) -> Option<String> {
    let r = serde_json::json!({"version": version, "cc": cc, "gpu_mem_mib": 81559,
        "label": "unit", "argv": argv});
    let c = load(&r).expect("loads");
    c.server.backends.multimodal_attention.map(|m| m.value)
}

#[test]
fn the_vision_tower_is_built_only_where_sglang_serves_it_and_with_its_own_request() {
    let llama4 = "@shared/meta-llama__Llama-4-Maverick-17B-128E-Instruct";
    let gemma = "@shared/google__gemma-3-27b-it";
    // Text-only unless asked: no tower, so no tower backend.
    assert_eq!(tower("0.5.23", "9.0", &["--model-path", gemma]), None);
    let on = |m| vec!["--model-path", m, "--enable-multimodal"];
    assert_eq!(tower("0.5.23", "9.0", &on(gemma)).as_deref(), Some("fa3"));
    // Llama 4's tower asked for SDPA itself until 0.5.5.post3.
    assert_eq!(tower("0.5.5", "9.0", &on(llama4)).as_deref(), Some("sdpa"));
    assert_eq!(tower("0.5.6", "9.0", &on(llama4)).as_deref(), Some("fa3"));
}
