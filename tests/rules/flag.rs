//! FLAG: SGLang flags by version (renamed, removed, added later, deprecated).

use serde_json::json;

use crate::support::{Case, assert_cases, c, messages, world};

/// Every FLAG case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    vec![
        c("FLAG001").tokens(&["--model-path", "m", "--cuda-graph-max-bs", "128"]),
        c("FLAG001")
            .version("0.5.5")
            .tokens(&["--cuda-graph-max-bs-decode=64"]),
        c("FLAG001")
            .version("0.5.5")
            .tokens(&["--cuda-graph-max-bs", "128"])
            .no(),
        // 0.5.19 still takes the old spelling as an alias; 0.5.20 does not.
        c("FLAG001")
            .version("0.5.20")
            .tokens(&["--mamba-scheduler-strategy", "extra_buffer"]),
        c("FLAG001")
            .version("0.5.19")
            .tokens(&["--mamba-scheduler-strategy", "extra_buffer"])
            .no(),
        c("FLAG002")
            .version("0.5.10.post1")
            .flag("--stream-output")
            .tokens(&["--stream-output"]),
        c("FLAG002")
            .version("0.5.10.post1")
            .flag("--incremental-streaming-output")
            .tokens(&["--incremental-streaming-output"])
            .no(),
        c("FLAG002").flag("--disable-cuda-graph"),
        c("FLAG002").version("0.5.5").flag("--stream-output").no(),
        c("FLAG003")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8)),
        c("FLAG003")
            .version("0.5.5")
            .tp(8)
            .flag("--enable-dp-attention")
            .arg("--dp-size", json!(8))
            .no(),
        c("FLAG004").tokens(&["--enable-double-sparsity"]),
        c("FLAG004")
            .version("0.5.5")
            .tokens(&["--attn-dp-size", "8"]),
        c("FLAG004").tokens(&["--attn-dp-size", "8"]).no(),
        c("FLAG004").tokens(&["--cuda-graph-max-bs", "8"]).no(),
        // argparse reads these as abbreviations: never FLAG004, which would block a line SGLang runs.
        c("FLAG004")
            .version("0.4.6")
            .tokens(&["--model", "m", "--tp", "2"])
            .no(),
        c("FLAG005")
            .version("0.4.6")
            .tokens(&["--model", "m", "--tp", "2"]),
        c("FLAG005").version("0.4.6").tokens(&["--ep", "2"]),
        c("FLAG005")
            .version("0.5.2")
            .tokens(&["--disable-flashinfer"])
            .no(),
        c("FLAG006")
            .version("0.5.2")
            .tokens(&["--disable-flashinfer"]),
        c("FLAG006").version("0.4.6").tokens(&["--model", "m"]).no(),
        c("FLAG007")
            .tp(8)
            .tokens(&["--tp", "8", "--enable-ep-moe", "--enable-deepep-moe"]),
        // 0.5.4 knows the flag only to raise naming its replacement.
        c("FLAG007")
            .version("0.5.4")
            .tokens(&["--enable-flashinfer-cutlass-moe"]),
        // 0.5.2 still rewrites it itself; 0.4.x had the flag.
        c("FLAG007")
            .version("0.5.2")
            .tokens(&["--enable-ep-moe"])
            .no(),
        c("FLAG007")
            .version("0.4.10.post2")
            .tokens(&["--enable-deepep-moe"])
            .no(),
        // Never FLAG004 as well: one mistake, one message.
        c("FLAG004").tokens(&["--enable-ep-moe"]).no(),
        // `sglang serve`'s server choice, which the launch_server parser lacks.
        c("FLAG008")
            .version("0.5.20")
            .tokens(&["--model-type", "llm", "--model-path", "m"]),
        c("FLAG008")
            .version("0.5.12")
            .tokens(&["--model-path", "m", "--model-type=auto"]),
        c("FLAG008")
            .version("0.5.20")
            .tokens(&["--model-type", "diffusion", "--model-path", "m"]),
        c("FLAG008")
            .version("0.5.20")
            .tokens(&["--model-path", "m", "--model-type"]),
        c("FLAG008")
            .version("0.5.9")
            .tokens(&["--model-type", "llm", "--model-path", "m"])
            .no(),
        c("FLAG004")
            .version("0.5.20")
            .tokens(&["--model-type", "llm", "--model-path", "m"])
            .no(),
        // `sglang serve`'s bare model path, first on the line (after its own --model-type).
        c("FLAG009")
            .version("0.5.20")
            .tokens(&["Qwen/Qwen3-8B", "--tp", "2"]),
        c("FLAG009")
            .version("0.5.16")
            .tokens(&["Qwen/Qwen3-8B", "--model-type=llm"]),
        // After serve's own --model-type: FLAG008's fix comes first, then this one.
        c("FLAG009")
            .version("0.5.20")
            .tokens(&["--model-type", "llm", "Qwen/Qwen3-8B"])
            .no(),
        c("FLAG009")
            .version("0.5.15")
            .tokens(&["Qwen/Qwen3-8B", "--tp", "2"])
            .no(),
        c("FLAG009")
            .version("0.5.20")
            .tokens(&["--model-path", "m", "--tp", "2"])
            .no(),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("FLAG", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}

#[test]
fn flag004_claims_no_first_version_the_flag_sets_cannot_prove() {
    let msg = |v: &'static str| {
        let w = world(&c("FLAG004").version(v).tokens(&["--attn-dp-size", "8"]));
        let h = w.hits("FLAG004");
        assert_eq!(h.len(), 1, "{v}");
        h[0].message.clone()
    };
    // Every release is embedded: --attn-dp-size arrived in 0.5.22, exactly.
    let m = msg("0.5.21");
    assert!(!m.contains("known from"), "{m}");
    assert!(
        m.contains("is not in SGLang 0.5.21; present in 0.5.22"),
        "{m}"
    );
    let m = msg("0.5.10.post1");
    assert!(
        m.contains("added after 0.5.21 and is present in 0.5.22"),
        "{m}"
    );
}
