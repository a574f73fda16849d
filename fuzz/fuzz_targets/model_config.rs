//! The model loader on a config.json (facts, `--json-model-override-args`, the weight
//! estimate, online quantisation), then what the pipeline does with the result: GPU placement,
//! the server's resolution, the memory plan (which must not panic, overflow or plan a fraction
//! outside 0–1), the rule checks and the memory table.
//!
//! Input: the config.json text, optionally followed by a NUL and NUL-separated SGLang
//! arguments for the newest release (`--tp 8`, `--context-length 1000000`, …). The GPUs are a
//! fixed 8× H200 NVLink node.

#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use sglang_launch::facts::model::load_config_text;
use sglang_launch::facts::{Env, Topology, gpus};
use sglang_launch::plan::memory;
use sglang_launch::report;
use sglang_launch::resolve::{Context, Facts};
use sglang_launch::rules::{self, RuleSettings};
use sglang_launch::sglang::release::KNOWN_VERSIONS;
use sglang_launch::sglang::{self, ArgError, config_file, flagset};

static NODE: LazyLock<Topology> = LazyLock::new(|| {
    let text = include_str!("../seeds/topology/8x-h200-nvlink.json");
    Topology::from_json_str(text, "8x-h200-nvlink.json").expect("seed topology")
});

fuzz_target!(|data: &[u8]| {
    let (json, rest) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let version = KNOWN_VERSIONS[KNOWN_VERSIONS.len() - 1];
    let flags = flagset::get(version).expect("newest release");
    let tokens: Vec<OsString> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(|&b| b == 0)
            .map(|t| OsString::from_vec(t.to_vec()))
            .collect()
    };
    let parsed = sglang::parse_with(flags, tokens, &mut |text| {
        config_file::convert(flags, "fuzz.yaml", text).map_err(ArgError::from)
    });
    // The checks read a rejected line's best-effort parse, as the pipeline does.
    let args = if parsed.is_ok() {
        parsed
    } else {
        parsed.recover().args
    };

    let load = load_config_text(json, &args);
    let Some(model) = load.facts.as_ref() else {
        return;
    };
    let _ = (
        model.weight_bytes,
        model.head_dim_or_derived(),
        model.encoder_bytes(),
    );
    let env = Env::default();
    let used = gpus::placement(&NODE, &env, &args)
        .map(|p| p.gpus())
        .unwrap_or_else(|_| vec![0]);
    let ctx = Context::new(Facts {
        version,
        args: &args,
        env: &env,
        topology: &NODE,
        gpus: &used,
        model: Some(model),
        draft: None,
        host: None,
        packages: None,
    });
    let outcome = memory::plan(&ctx);
    if let Some(f) = outcome.planned_mem_fraction_static {
        assert!(
            (0.0..=1.0).contains(&f),
            "planned --mem-fraction-static {f}"
        );
    }
    if let Some(m) = &outcome.memory {
        let _ = report::memory::render_table_with_context(m, model.context_length);
    }
    let _ = rules::evaluate(&ctx, &RuleSettings::default());
});
