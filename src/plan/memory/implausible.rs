//! MEM013: the model's files hold a value no real model has. The plan is then made as for an
//! unknown model (SGLang's own defaults shown, no fraction of ours, no fit judged): acting on
//! garbage could only add a wrong `--mem-fraction-static` or block a command on a wrong size.

use super::MemoryOutcome;
use crate::facts::model::{Implausible, ModelFacts};
use crate::resolve::Context;
use crate::rules::{Code, Finding};

/// One MEM013 per implausible value of the model and of the separate draft.
pub(super) fn findings(ctx: &Context) -> Vec<Finding> {
    let target = ctx.model.into_iter().map(|m| ("", m));
    let draft = ctx.draft_facts().into_iter().map(|m| ("draft model ", m));
    target
        .chain(draft)
        .flat_map(|(whose, m)| m.implausible.iter().map(move |i| hit(whose, m, i)))
        .collect()
}

fn hit(whose: &str, m: &ModelFacts, i: &Implausible) -> Finding {
    Finding::new(
        Code::MEM013,
        format!(
            "{whose}{}: {} is {}, but a real model has {} there: the memory plan is not made on \
             it (no --mem-fraction-static of ours, no fit judged; SGLang's defaults shown); fix \
             {} or override the key with --json-model-override-args",
            m.dir.join(&i.file).display(),
            i.key,
            i.value,
            i.expected,
            i.file,
        ),
    )
}

/// The plan for a model whose facts are implausible: the unknown model's, with `bad` in
/// place of MEM001, and none of the findings that judge the model's size.
pub(super) fn unplanned(ctx: &Context, bad: Vec<Finding>) -> MemoryOutcome {
    let mut server = ctx.server.clone();
    // The unknown model's context: none derived (the planner sizes its stand-in).
    server.decided.context_length = None;
    let blind = Context {
        model: None,
        draft: None,
        server,
        ..*ctx
    };
    let mut outcome = super::plan_known(&blind, &super::Measured::default());
    // MEM001 says the model is not available, MEM003 judges a fraction on stand-in activations.
    outcome
        .findings
        .retain(|h| !matches!(h.code, Code::MEM001 | Code::MEM003));
    outcome.findings.extend(bad);
    outcome.planned_mem_fraction_static = None;
    outcome
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, node, run};
    use crate::facts::model::plausible::largest_plausible_config;
    use crate::facts::model::{ModelFacts, estimate_weight_bytes, facts_from_config};
    use serde_json::{Value, json};

    fn largest(mla: bool) -> ModelFacts {
        let config = largest_plausible_config(mla);
        let f = facts_from_config(config.as_object().unwrap());
        assert!(f.plausible(), "{:?}", f.implausible);
        f
    }

    /// Every fact at the top of its range: the plan is made (no MEM013), nothing overflows
    /// (a debug build panics on overflow), the numbers stay in range.
    #[test]
    fn the_largest_plausible_facts_plan_without_overflow() {
        let topo = node(8, 143771, 0, "9.0", true);
        for mla in [true, false] {
            let mut m = largest(mla);
            if let Some(w) = estimate_weight_bytes(&m) {
                assert!(w <= crate::facts::model::MAX_WEIGHT_ESTIMATE_BYTES, "{w}");
            }
            m.weight_bytes = Some(crate::facts::model::plausible::MAX_TOTAL_SIZE);
            for version in ["0.4.10.post2", "0.5.23"] {
                for values in [
                    vec![("--tp-size", json!(8))],
                    vec![
                        ("--tp-size", json!(8)),
                        ("--speculative-algorithm", json!("EAGLE")),
                        ("--kv-cache-dtype", json!("fp8_e5m2")),
                    ],
                ] {
                    let values: Vec<(&str, Value)> = values;
                    let o = run(version, &values, &topo, Some(&m));
                    assert!(!codes(&o).contains(&"MEM013"), "{:?}", o.findings);
                    let mem = o.memory.expect("GPUs given");
                    assert_eq!(mem.fits, Some(false), "{mla} {version}");
                    if let Some(p) = o.planned_mem_fraction_static {
                        assert!((0.05..=0.98).contains(&p), "{p}");
                    }
                }
            }
        }
    }

    #[test]
    fn implausible_facts_give_no_fraction_and_no_memory_block() {
        let topo = node(8, 81559, 0, "9.0", true);
        let mut config = largest_plausible_config(true);
        config["num_hidden_layers"] = json!(1_000_000_000_000u64);
        let m = facts_from_config(config.as_object().unwrap());
        // A user fraction too low for any real weights is not judged on garbage either.
        for values in [vec![], vec![("--mem-fraction-static", json!(0.1))]] {
            let o = run("0.5.23", &values, &topo, Some(&m));
            assert_eq!(codes(&o), ["MEM013"], "{:?}", o.findings);
            assert!(
                o.findings[0]
                    .message
                    .contains("num_hidden_layers is 1000000000000")
            );
            assert_eq!(o.planned_mem_fraction_static, None);
            let mem = o.memory.unwrap();
            assert_eq!((mem.fits, mem.kv_cache_tokens), (None, None));
        }
    }
}
