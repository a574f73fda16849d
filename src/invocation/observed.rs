//! The observation loop at the edges: `run` records its plan for the process it execs,
//! `wait-ready --pid` keeps what the started server reports, and `observed` lists the store.
//! The planning pipeline reads the store with its other facts.

use crate::exit;
use crate::observe::{self, Observation, Planned, RunRecord, store};
use crate::plan::v1::Memory;
use crate::plan::{Fatal, Outcome};

use super::print_out;

/// What the planner predicts the server will allocate: its own estimates, also where the plan
/// stands on an earlier start, so the next start measures the planner again.
fn planned(o: &Outcome, m: &Memory) -> Planned {
    let (weights_gib, kv_cache_tokens, graphs_mib) = match &m.observed_use {
        Some(u) => (
            u.predicted.weights_per_gpu_gib,
            u.predicted.kv_cache_tokens,
            u.predicted.cuda_graphs_mib,
        ),
        None => (m.weights_per_gpu_gib, m.kv_cache_tokens, m.captured_mib),
    };
    Planned {
        weights_gib,
        kv_cache_tokens,
        cuda_graphs_gib: Some(graphs_mib as f64 / 1024.0),
        mem_fraction_static: Some(m.mem_fraction_static),
        baseline_mib: Some(m.baseline_mib),
        attention_backend: o
            .plan
            .resolved
            .as_ref()
            .and_then(|r| r.backends.attention.as_ref())
            .map(|a| a.value.clone()),
    }
}

/// Before exec: what this process (whose PID SGLang keeps) was planned to allocate. Best
/// effort: a launch never fails for the store.
pub(super) fn record_run(o: &Outcome) {
    let (Some(key), Some(m)) = (&o.line_key, &o.plan.memory) else {
        return;
    };
    let r = RunRecord {
        key: key.clone(),
        planned: planned(o, m),
    };
    let _ = store::save_run(std::process::id(), &r);
}

/// After `wait-ready --pid PID` saw the server answer: what it really allocated, kept next to
/// what `run` planned for that process. `None` when `run` did not start it.
pub(super) fn observe_ready(pid: i32, base: &str) -> Option<String> {
    let run = store::run_of(u32::try_from(pid).ok()?)?;
    let real = match observe::server_info::fetch(base, std::time::Duration::from_secs(10)) {
        Ok(r) => r,
        Err(e) => return Some(format!("no observation kept: {e}")),
    };
    let o = Observation {
        key: run.key,
        at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        planned: run.planned,
        real,
    };
    let line = o.summary();
    Some(match store::append(&o) {
        Ok(_) => format!("observed: {line}"),
        Err(e) => format!("observed: {line} (not kept: {e})"),
    })
}

/// `sglang-launch observed [--json]`.
pub(super) fn list(json: bool) -> Result<i32, Fatal> {
    let all = store::all();
    if json {
        let text = crate::out::json_safe(
            serde_json::to_string_pretty(&all).unwrap_or_else(|_| "[]".into()),
        );
        print_out(&text)?;
        return Ok(exit::OK);
    }
    let place = store::dir().map_or("(no state directory)".into(), |d| d.display().to_string());
    // The place, the keys and what servers answered are data: escaped, one line each.
    let esc = crate::out::escape;
    let mut text = format!("{} observation(s) in {}\n", all.len(), esc(&place));
    for o in &all {
        let line = format!(
            "{} SGLang {}: {}",
            o.key,
            o.real.sglang_version.as_deref().unwrap_or("?"),
            o.summary()
        );
        text.push_str(&esc(&line));
        text.push('\n');
    }
    print_out(text.trim_end())?;
    Ok(exit::OK)
}
