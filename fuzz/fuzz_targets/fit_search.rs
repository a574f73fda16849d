//! `--fit` on any numbers: a context length, request count, CUDA-graph batch and typical
//! request length from the input (each possibly absent, up to `u64::MAX`), planned with the
//! fit on for Llama-3.1-8B on one of the fixture nodes. The search must end (it is arithmetic,
//! never an enumeration), never raise a value it was given, and never panic.
//!
//! Input: one byte choosing the node and which values are set, then up to four little-endian
//! `u64`s.

#![no_main]

use std::ffi::OsString;
use std::num::NonZeroU64;

use libfuzzer_sys::fuzz_target;
use sglang_launch::facts::Env;
use sglang_launch::plan::{self, Request};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const NODES: [&str; 4] = ["1x-l4", "2x-rtx-4090-pcie", "8x-h100-sxm-nvlink", "8x-h200-nvlink"];
const OPTIONS: [&str; 3] = ["--context-length", "--max-running-requests", "--cuda-graph-max-bs"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let numbers: Vec<u64> = rest
        .chunks(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect();
    let mut tokens: Vec<OsString> = vec![
        "--model-path".into(),
        format!("{ROOT}/tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct").into(),
    ];
    let mut asked = [None; 3];
    for (i, option) in OPTIONS.iter().enumerate() {
        if let Some(&n) = numbers.get(i).filter(|_| pick & (4 << i) != 0) {
            tokens.extend([OsString::from(*option), n.to_string().into()]);
            asked[i] = Some(n);
        }
    }
    let node = NODES[usize::from(pick & 3)];
    let req = Request {
        tokens,
        topology: Some(format!("{ROOT}/tests/fixtures/topologies/{node}.json").into()),
        sglang_version: Some("0.5.23".into()),
        python: Some("/usr/bin/python3".into()),
        fit: true,
        fit_request_tokens: numbers.get(3).copied().and_then(NonZeroU64::new),
        // Longer contexts than the model's are allowed, so the search meets the largest ones.
        env: Env::from_pairs([("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")]),
        ..Request::default()
    };
    let Ok(outcome) = plan::build(&req) else {
        return;
    };
    // A value --fit set is never above the one given.
    let args = &outcome.plan.sglang_args;
    for (option, given) in OPTIONS.iter().zip(asked) {
        let (Some(given), Some(at)) = (given, args.iter().rposition(|a| a == option)) else {
            continue;
        };
        if let Some(now) = args.get(at + 1).and_then(|v| v.parse::<u64>().ok()) {
            assert!(now <= given, "{option} {given} became {now}");
        }
    }
});
