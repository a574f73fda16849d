//! Prediction meets reality: `run` records what it planned for the process it execs,
//! `wait-ready --pid` reads what the started server really allocated (`/server_info`) and keeps
//! the pair, and the next plan of the same line on the same machine shows it. Nothing leaves the
//! machine: the store is a directory under the user's state directory.

pub mod key;
pub mod server_info;
pub mod store;

use serde::{Deserialize, Serialize};

/// What the launcher planned for one server, per GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Planned {
    pub weights_gib: Option<f64>,
    pub kv_cache_tokens: Option<u64>,
    pub cuda_graphs_gib: Option<f64>,
    /// The main attention backend `resolved` names.
    pub attention_backend: Option<String>,
}

/// What the server reported for its first rank (`memory_usage` and its resolved arguments).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Real {
    pub weights_gib: f64,
    pub kv_cache_gib: f64,
    pub kv_cache_tokens: u64,
    pub cuda_graphs_gib: Option<f64>,
    pub attention_backend: Option<String>,
    pub sglang_version: Option<String>,
}

/// One start: the line's key, what was planned and what the server did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Observation {
    pub key: String,
    /// Seconds since the Unix epoch.
    pub at: u64,
    pub planned: Planned,
    pub real: Real,
}

/// What `run` leaves for `wait-ready --pid`: the line's key and the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub key: String,
    pub planned: Planned,
}

/// The planner's stated error bounds: beyond these a disagreement is named.
const KV_TOKENS_TOLERANCE: f64 = 0.05;
const WEIGHTS_TOLERANCE: f64 = 0.03;

fn rel(real: f64, planned: f64) -> Option<f64> {
    (planned > 0.0).then(|| (real - planned) / planned)
}

impl Observation {
    /// One line: how close the plan was, naming what is beyond the planner's stated error.
    pub fn summary(&self) -> String {
        let (p, r) = (&self.planned, &self.real);
        let mut parts = Vec::new();
        let mut beyond = Vec::new();
        if let Some(pw) = p.weights_gib {
            let e = rel(r.weights_gib, pw).unwrap_or(0.0);
            parts.push(format!(
                "weights {:.2} GiB (planned {pw:.2}, {:+.1}%)",
                r.weights_gib,
                e * 100.0
            ));
            if e.abs() > WEIGHTS_TOLERANCE {
                beyond.push("weights");
            }
        }
        if let Some(pt) = p.kv_cache_tokens {
            let e = rel(r.kv_cache_tokens as f64, pt as f64).unwrap_or(0.0);
            parts.push(format!(
                "KV cache {} tokens (planned {pt}, {:+.1}%)",
                r.kv_cache_tokens,
                e * 100.0
            ));
            if e.abs() > KV_TOKENS_TOLERANCE {
                beyond.push("KV cache");
            }
        }
        if let (Some(pg), Some(rg)) = (p.cuda_graphs_gib, r.cuda_graphs_gib) {
            parts.push(format!("CUDA graphs {rg:.2} GiB (planned {pg:.2})"));
        }
        let mut line = parts.join(", ");
        if let (Some(pa), Some(ra)) = (&p.attention_backend, &r.attention_backend)
            && pa != ra
        {
            line.push_str(&format!(
                "; SGLang chose the {ra} attention backend, the plan said {pa}"
            ));
        }
        if !beyond.is_empty() {
            line.push_str(&format!(
                "; {} beyond the planner's stated error ({:.0}% weights, {:.0}% KV tokens)",
                beyond.join(" and "),
                WEIGHTS_TOLERANCE * 100.0,
                KV_TOKENS_TOLERANCE * 100.0
            ));
        }
        line
    }
}
