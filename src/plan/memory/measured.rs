//! What a start of the line on this machine measured (SGLang's own `memory_usage`), where the
//! planner stands on it instead of its estimates: the weights as loaded and the captured graphs
//! in the terms that size the pool and the reserve (and so plan the fraction), and the KV
//! tokens the pool really got, for the line that runs at the fraction it started with.

use super::{MemoryOutcome, Sizing};
use crate::rules::{Code, Finding};

/// The measured figures, per GPU; `None` where the start did not tell or does not apply.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Measured {
    /// The target model's weights as loaded (its encoders included; a separate draft's are
    /// not: its own worker loads them), MiB.
    pub(crate) weights_mib: Option<f64>,
    /// The captured CUDA graphs, MiB.
    pub(crate) graphs_mib: Option<f64>,
    /// The KV tokens the pool got: only for the very line that started, at its fraction.
    pub(crate) kv_tokens: Option<u64>,
}

/// Findings that predict a failure during the start itself (the weights or the load peak do
/// not fit): a start of this very line that served contradicts them.
const START_FAILURES: [Code; 5] = [
    Code::MEM004,
    Code::MEM005,
    Code::MEM010,
    Code::MEM012,
    Code::MEM018,
];

impl Measured {
    /// This very line started, at the fraction it runs with.
    pub(crate) fn started(&self) -> bool {
        self.kv_tokens.is_some_and(|t| t > 0)
    }

    /// The weights and graphs terms where the planner sized them.
    pub(super) fn size(&self, s: &mut Sizing) {
        if let (Some(w), Some(_)) = (self.weights_mib, s.weights_mib) {
            s.weights_mib = Some(w + s.draft_mib);
            s.encoder_mib = s.encoder_mib.min(w);
        }
        s.graphs_mib = self.graphs_mib.map(|g| g.ceil() as u64);
    }

    /// The KV tokens the plan stands on: the start's where it sized the pool too.
    pub(super) fn kv_tokens(&self, predicted: Option<u64>) -> Option<u64> {
        predicted.map(|p| self.kv_tokens.unwrap_or(p))
    }

    /// The line started: it fits, and what said it would fail to start does not stand. The
    /// first long prompt is another matter: MEM003 stays, saying what the start showed.
    pub(super) fn stood(&self, o: &mut MemoryOutcome) {
        if !self.started() {
            return;
        }
        if let Some(m) = o.memory.as_mut() {
            m.fits = Some(true);
        }
        o.findings.retain(|h| !START_FAILURES.contains(&h.code));
        for h in o.findings.iter_mut().filter(|h| h.code == Code::MEM003) {
            *h = Finding {
                message: format!(
                    "{} (this line started on this machine: the graphs were captured; the first long prompt is what may run out)",
                    h.message
                ),
                ..h.clone()
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, model, node};
    use super::super::{int_arg, plan_measured};
    use super::*;
    use crate::facts::model::ModelFacts;
    use crate::facts::{Env, Topology};
    use crate::resolve::{Context, Facts};
    use crate::sglang::{SglangArgs, flagset};
    use serde_json::{Value, json};

    fn run(
        values: &[(&str, Value)],
        topo: &Topology,
        m: &ModelFacts,
        measured: &Measured,
    ) -> MemoryOutcome {
        let args = SglangArgs::with_values(flagset::get("0.5.23").unwrap(), values);
        let gpus: Vec<u32> =
            (0..int_arg(&args, "--tp-size").unwrap_or(1).clamp(1, 64) as u32).collect();
        let env = Env::default();
        let ctx = Context::new(Facts {
            version: "0.5.23",
            args: &args,
            env: &env,
            topology: topo,
            gpus: &gpus,
            model: Some(m),
            draft: None,
            host: None,
            packages: None,
        });
        plan_measured(&ctx, measured)
    }

    #[test]
    fn measured_weights_and_graphs_replace_the_estimates_and_plan_the_fraction() {
        let m = model("meta-llama__Llama-3.1-8B-Instruct");
        let l4 = node(1, 23034, 0, "8.9", false);
        let alone = run(&[], &l4, &m, &Measured::default());
        let mem = alone.memory.as_ref().unwrap();
        // SGLang's default leaves this L4 too little for one request: the planner lifts it.
        assert!(codes(&alone).contains(&"MEM016"), "{:?}", alone.findings);
        let measured = Measured {
            weights_mib: Some(14.0 * 1024.0),
            graphs_mib: Some(100.0),
            kv_tokens: None,
        };
        let seen = run(&[], &l4, &m, &measured);
        let s = seen.memory.as_ref().unwrap();
        assert_eq!(s.v1().weights_per_gpu_mib, Some(14 * 1024));
        assert_eq!(s.v1().reserved_mib.cuda_graphs, 100);
        assert!(s.v1().reserved_mib.cuda_graphs < mem.v1().reserved_mib.cuda_graphs);
        // Less reserved outside the pool: a larger fraction, and more tokens in it.
        assert!(
            seen.planned_mem_fraction_static > alone.planned_mem_fraction_static,
            "{:?} vs {:?}",
            seen.planned_mem_fraction_static,
            alone.planned_mem_fraction_static
        );
        assert!(s.kv_cache_tokens > mem.kv_cache_tokens);
        // Without their KV tokens it is still a plan: nothing said to have started.
        assert!(!measured.started());
    }

    #[test]
    fn a_line_that_started_fits_on_its_real_tokens() {
        let m = model("meta-llama__Llama-3.1-8B-Instruct");
        let l4 = node(1, 23034, 0, "8.9", false);
        // Predicted too low for the weights: MEM004, an error.
        let line = [("--mem-fraction-static", json!(0.66))];
        let alone = run(&line, &l4, &m, &Measured::default());
        assert!(codes(&alone).contains(&"MEM004"), "{:?}", alone.findings);
        assert_eq!(alone.memory.as_ref().unwrap().fits, Some(false));
        // It started with 4000 tokens: it fits, and MEM004 does not stand.
        let started = Measured {
            weights_mib: Some(14.2 * 1024.0),
            graphs_mib: Some(400.0),
            kv_tokens: Some(4000),
        };
        let seen = run(&line, &l4, &m, &started);
        let s = seen.memory.as_ref().unwrap();
        assert_eq!((s.fits, s.kv_cache_tokens), (Some(true), Some(4000)));
        assert!(!codes(&seen).contains(&"MEM004"), "{:?}", seen.findings);
        assert!(s.max_running_requests.is_some_and(|r| r > 0));
        // A user fraction that leaves too little outside the pool keeps MEM003, saying what
        // the start showed.
        let high = [("--mem-fraction-static", json!(0.97))];
        let seen = run(&high, &l4, &m, &started);
        let h = seen
            .findings
            .iter()
            .find(|h| h.code == Code::MEM003)
            .unwrap();
        assert!(
            h.message.contains("this line started on this machine"),
            "{}",
            h.message
        );
        assert_eq!(seen.memory.unwrap().fits, Some(true));
    }

    #[test]
    fn an_unsized_model_keeps_its_unsized_terms() {
        let mut s = Sizing {
            cell: None,
            weights_mib: None,
            draft_mib: 0.0,
            encoder_mib: 0.0,
            lora_mib: 0.0,
            fixed_kv_mib: 0.0,
            graphs_mib: None,
            state_per_req: None,
            context_len: 4096,
            page: 1,
        };
        let m = Measured {
            weights_mib: Some(1000.0),
            graphs_mib: Some(10.5),
            kv_tokens: Some(5),
        };
        m.size(&mut s);
        assert_eq!((s.weights_mib, s.graphs_mib), (None, Some(11)));
        assert_eq!(m.kv_tokens(None), None);
        assert_eq!(m.kv_tokens(Some(3)), Some(5));
    }
}
