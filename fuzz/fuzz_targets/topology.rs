//! The topology/v1 reader (`--topology FILE`), and what the checks ask of a topology it
//! accepts: an accepted document must also survive its own round trip unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sglang_launch::facts::{Env, Topology, gpus};
use sglang_launch::report;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(t) = Topology::from_json_str(text, "fuzz.json") else {
        return;
    };
    assert!(t.validate().is_ok(), "accepted but inconsistent: {t:?}");
    let again = Topology::from_json_str(&t.to_json_pretty(), "round-trip")
        .expect("an accepted topology rereads from its own output");
    assert_eq!(again, t);

    let _ = report::topology::topology(&t);
    let all: Vec<u32> = t.gpus.iter().map(|g| g.index).collect();
    let _ = t.fully_nvlinked(&all);
    let _ = t.p2p_broken_pairs(&all);
    for g in &t.gpus {
        let _ = (g.cc(), g.memory_free_mib());
    }
    let env = Env::default();
    let _ = gpus::cuda_order(&t, &env);
    let _ = gpus::visible(&t, &env);
});
