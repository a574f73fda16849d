//! The observation loop at the edges: `run` records its plan for the process it execs,
//! `check`/`plan` attach what a start of the same line on this machine really did, and
//! `observed` lists the store.

use crate::exit;
use crate::observe::{self, Observation, Planned, RunRecord, store};
use crate::plan::{Fatal, Outcome};

use super::print_out;

/// The line's key for this outcome.
fn key(o: &Outcome) -> String {
    observe::key::of(&o.plan.sglang_version, &o.args, &o.topology, &o.plan.gpus)
}

/// What the plan says the server will allocate.
fn planned(o: &Outcome) -> Planned {
    let m = o.plan.memory.as_ref();
    Planned {
        weights_gib: m.and_then(|m| m.weights_per_gpu_gib),
        kv_cache_tokens: m.and_then(|m| m.kv_cache_tokens),
        cuda_graphs_gib: m.map(|m| m.reserved_mib.cuda_graphs as f64 / 1024.0),
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
    if o.plan.memory.is_none() {
        return;
    }
    let r = RunRecord {
        key: key(o),
        planned: planned(o),
    };
    let _ = store::save_run(std::process::id(), &r);
}

/// The newest observation of this line on this machine, into plan/v1 `memory.observed`. This
/// very line started here and reported its pools, so the verdict `fits` stands on that.
pub(super) fn attach(o: &mut Outcome) {
    let k = key(o);
    if let Some(m) = o.plan.memory.as_mut() {
        m.observed = store::latest(&k);
        if m.observed
            .as_ref()
            .is_some_and(|s| s.real.kv_cache_tokens > 0)
        {
            m.fits = Some(true);
        }
    }
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
