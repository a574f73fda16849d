//! Prediction meets reality: `run` records what it planned for the process it execs,
//! `wait-ready --pid` reads what the started server really allocated (`/server_info`) and keeps
//! the pair, and the next plan of the same line on the same machine shows it. Nothing leaves the
//! machine: the store is a directory under the user's state directory.

pub(crate) mod key;
pub(crate) mod server_info;
pub(crate) mod store;

use serde::{Deserialize, Serialize};

/// What the launcher planned for one server, per GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Planned {
    pub(crate) weights_gib: Option<f64>,
    pub(crate) kv_cache_tokens: Option<u64>,
    pub(crate) cuda_graphs_gib: Option<f64>,
    /// The main attention backend `resolved` names.
    pub(crate) attention_backend: Option<String>,
    /// The `--mem-fraction-static` the server was given (SGLang's default where the line leaves
    /// it out): the KV tokens it reports hold at this fraction only. Absent from records made
    /// before it was kept.
    #[serde(default)]
    pub(crate) mem_fraction_static: Option<f64>,
    /// The free memory before the weights the fraction applies to, MiB (what other processes
    /// held shapes it). Absent from records made before it was kept.
    #[serde(default)]
    pub(crate) baseline_mib: Option<i64>,
}

/// What the server reported for its first rank (`memory_usage` and its resolved arguments).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Real {
    pub(crate) weights_gib: f64,
    pub(crate) kv_cache_gib: f64,
    pub(crate) kv_cache_tokens: u64,
    pub(crate) cuda_graphs_gib: Option<f64>,
    pub(crate) attention_backend: Option<String>,
    pub(crate) sglang_version: Option<String>,
}

/// One start: the line's key, what was planned and what the server did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Observation {
    pub(crate) key: String,
    /// Seconds since the Unix epoch.
    pub(crate) at: u64,
    pub(crate) planned: Planned,
    pub(crate) real: Real,
}

/// What `run` leaves for `wait-ready --pid`: the line's key and the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunRecord {
    pub(crate) key: String,
    pub(crate) planned: Planned,
}

/// `at` (Unix seconds) as a UTC date and minute, `2026-12-01 20:56 UTC`.
pub(crate) fn date(at: u64) -> String {
    let days = (at / 86_400) as i64;
    let (h, m) = ((at % 86_400) / 3600, (at % 3600) / 60);
    // Days since 1970-01-01 to a proleptic Gregorian date, by 400-year eras.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{d:02} {h:02}:{m:02} UTC")
}

/// The planner's stated error bounds: beyond these a disagreement is named.
const KV_TOKENS_TOLERANCE: f64 = 0.05;
const WEIGHTS_TOLERANCE: f64 = 0.03;

fn rel(real: f64, planned: f64) -> Option<f64> {
    (planned > 0.0).then(|| (real - planned) / planned)
}

impl Observation {
    /// Whether the server was given this fraction (to the three decimals the launcher writes)
    /// of this free memory (to within 1%: what other processes hold drifts a little).
    pub(crate) fn ran_at(&self, mem_fraction_static: f64, baseline_mib: i64) -> bool {
        let p = &self.planned;
        let same_fraction = p
            .mem_fraction_static
            .is_some_and(|f| (f - mem_fraction_static).abs() < 0.0005);
        let same_memory = p.baseline_mib.is_some_and(|b| {
            b.abs_diff(baseline_mib) as f64 <= 0.01 * baseline_mib.unsigned_abs() as f64
        });
        same_fraction && same_memory
    }

    /// One line: how close the plan was, naming what is beyond the planner's stated error.
    pub(crate) fn summary(&self) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_calendar_days() {
        assert_eq!(date(0), "1970-01-01 00:00 UTC");
        assert_eq!(date(1_764_620_175), "2025-12-01 20:16 UTC");
        assert_eq!(date(951_782_400 + 86_399), "2000-02-29 23:59 UTC");
        assert_eq!(date(4_107_542_400), "2100-03-01 00:00 UTC");
        // Whatever a store says, a date comes out.
        assert!(date(u64::MAX).ends_with(" UTC"));
    }
}
