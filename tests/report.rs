//! Snapshots of the human report for realistic command lines (review with `cargo insta review`).

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
