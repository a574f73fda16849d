//! Plans that stand on a real start. A start `run` and `wait-ready --pid` kept (read with the
//! other facts) belongs to a line by its key: the host, the GPUs, the release and the options
//! that shape memory, as the rules' fixes and `--fit` leave them and before the launcher plans a
//! fraction (that fraction is the launcher's answer for the line, not part of it). A line whose
//! key differs in any part uses nothing. Of a start of this line, the weights it loaded and the
//! graphs it captured stand in for the planner's estimates, so the fraction is planned on them;
//! the KV tokens it got, and the fact that it started, only where the server runs at the fraction
//! it started with, of the free memory it started with, since they hold there alone.

use super::memory::Measured;
use crate::facts::Topology;
use crate::observe::{self, Observation};
use crate::sglang::SglangArgs;

/// The start a plan stands on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Use<'o> {
    pub(crate) observation: &'o Observation,
    /// The server runs at the fraction it started with: its KV tokens and its start stand.
    pub(crate) started: bool,
}

/// The newest start of this line on this machine that reads as one (a store line that
/// does not is not used).
pub(crate) fn find<'o>(
    all: &'o [Observation],
    version: &str,
    args: &SglangArgs,
    topology: &Topology,
    gpus: &[u32],
) -> Option<&'o Observation> {
    if all.is_empty() || gpus.is_empty() {
        return None;
    }
    let key = observe::key::of(version, args, topology, gpus);
    let capacity = gpus
        .iter()
        .filter_map(|&i| topology.gpu(i))
        .map(|g| g.memory_total_mib)
        .min()? as f64;
    all.iter()
        .rev()
        .find(|o| o.key == key && plausible(o, capacity))
}

/// Figures a server on GPUs of `capacity_mib` can have reported.
fn plausible(o: &Observation, capacity_mib: f64) -> bool {
    let r = &o.real;
    let size = |gib: f64| gib.is_finite() && gib >= 0.0 && gib * 1024.0 <= capacity_mib;
    size(r.weights_gib)
        && r.weights_gib > 0.0
        && size(r.kv_cache_gib)
        && r.cuda_graphs_gib.is_none_or(size)
        && (1..1 << 40).contains(&r.kv_cache_tokens)
        && o.planned
            .mem_fraction_static
            .is_none_or(|f| f > 0.0 && f < 1.0)
}

/// The weights and graphs a start measured, MiB.
fn sized(o: &Observation) -> Measured {
    Measured {
        weights_mib: Some(o.real.weights_gib * 1024.0),
        graphs_mib: o.real.cuda_graphs_gib.map(|g| g * 1024.0),
        kv_tokens: None,
    }
}

/// How one line is planned on what a start measured, in the pipeline's terms.
pub(crate) struct Planner<P, R, F> {
    /// The plan on these figures, at this fraction where given (else the planner's own).
    pub(crate) plan: P,
    /// The fraction a plan gives the server and the free memory before the weights it applies
    /// to, MiB (none when nothing is planned).
    pub(crate) runs_at: R,
    /// A plan's verdict.
    pub(crate) fits: F,
}

/// The plan of a line on the start `found` of it: on its weights and graphs, and on its KV
/// tokens where the server runs at the fraction and free memory it started with. Where the
/// fraction the measured figures give would not fit while the start's, of the same free
/// memory, did, the start's fraction stands: a real start is the strongest evidence there is.
/// Without a start, the planner's own plan.
pub(crate) fn stand<'o, T, P, R, F>(
    found: Option<&'o Observation>,
    p: Planner<P, R, F>,
) -> (T, Option<Use<'o>>)
where
    P: Fn(&Measured, Option<f64>) -> T,
    R: Fn(&T) -> Option<(f64, i64)>,
    F: Fn(&T) -> Option<bool>,
{
    let Some(o) = found else {
        return ((p.plan)(&Measured::default(), None), None);
    };
    let sized = sized(o);
    let started = Measured {
        kv_tokens: Some(o.real.kv_cache_tokens),
        ..sized
    };
    let stood = |t: &T| (p.runs_at)(t).is_some_and(|(f, b)| o.ran_at(f, b));
    let informed = (p.plan)(&sized, None);
    if stood(&informed) {
        // The KV tokens do not move the fraction: the same line, judged on them too.
        let on_start = (p.plan)(&started, None);
        if stood(&on_start) {
            return (
                on_start,
                Some(Use {
                    observation: o,
                    started: true,
                }),
            );
        }
    } else if (p.fits)(&informed) == Some(false)
        && let Some(at) = o.planned.mem_fraction_static
    {
        let kept = (p.plan)(&started, Some(at));
        if stood(&kept) {
            return (
                kept,
                Some(Use {
                    observation: o,
                    started: true,
                }),
            );
        }
    }
    (
        informed,
        Some(Use {
            observation: o,
            started: false,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{Planned, Real};
    use crate::sglang::{self, flagset};
    use std::cell::RefCell;

    fn topology() -> Topology {
        let file = format!(
            "{}/tests/fixtures/topologies/1x-l4.json",
            env!("CARGO_MANIFEST_DIR")
        );
        Topology::load(std::path::Path::new(&file)).unwrap()
    }

    fn args(version: &str, line: &str) -> SglangArgs {
        let tokens = line.split_whitespace().map(Into::into).collect();
        sglang::parse(flagset::get(version).unwrap(), tokens)
    }

    const LINE: &str = "--model-path /m --context-length 8192";

    fn start(key: String, fraction: Option<f64>) -> Observation {
        Observation {
            key,
            at: 1_764_620_175,
            planned: Planned {
                weights_gib: Some(15.0),
                kv_cache_tokens: Some(40_000),
                cuda_graphs_gib: Some(0.5),
                attention_backend: None,
                mem_fraction_static: fraction,
                baseline_mib: Some(22_534),
            },
            real: Real {
                weights_gib: 14.0,
                kv_cache_gib: 4.9,
                kv_cache_tokens: 40_000,
                cuda_graphs_gib: Some(0.25),
                attention_backend: None,
                sglang_version: None,
            },
        }
    }

    fn key_of(version: &str, line: &str, topo: &Topology) -> String {
        observe::key::of(version, &args(version, line), topo, &[0])
    }

    #[test]
    fn only_a_start_of_this_very_line_here_is_found() {
        let topo = topology();
        let kept = vec![start(key_of("0.5.23", LINE, &topo), Some(0.8))];
        let find_for = |version: &str, line: &str, topo: &Topology| {
            find(&kept, version, &args(version, line), topo, &[0]).is_some()
        };
        assert!(find_for("0.5.23", LINE, &topo));
        // Ports and other options that do not shape memory do not make another line.
        assert!(find_for("0.5.23", &format!("{LINE} --port 31000"), &topo));
        // Another release, another memory-shaping option, another fraction the user sets.
        assert!(!find_for("0.5.22", LINE, &topo));
        assert!(!find_for(
            "0.5.23",
            "--model-path /m --context-length 4096",
            &topo
        ));
        assert!(!find_for(
            "0.5.23",
            &format!("{LINE} --mem-fraction-static 0.8"),
            &topo
        ));
        assert!(!find_for(
            "0.5.23",
            &format!("{LINE} --kv-cache-dtype fp8_e5m2"),
            &topo
        ));
        // Another GPU model, another memory size, another GPU, another host.
        let mut other = topo.clone();
        other.gpus[0].name = "NVIDIA L40S".into();
        assert!(!find_for("0.5.23", LINE, &other));
        let mut other = topo.clone();
        other.gpus[0].memory_total_mib = 46068;
        assert!(!find_for("0.5.23", LINE, &other));
        let mut other = topo.clone();
        other.gpus[0].uuid = "GPU-11111111-0000-4000-8000-000000000000".into();
        assert!(!find_for("0.5.23", LINE, &other));
        let mut other = topo.clone();
        other.hostname = Some("elsewhere".into());
        assert!(!find_for("0.5.23", LINE, &other));
        // What other processes hold is no part of the line.
        let mut busy = topo.clone();
        busy.gpus[0].memory_used_mib = Some(4096);
        assert!(find_for("0.5.23", LINE, &busy));
    }

    #[test]
    fn a_start_no_server_could_report_is_not_used_and_the_newest_wins() {
        let topo = topology();
        let key = key_of("0.5.23", LINE, &topo);
        let found = |kept: &[Observation]| {
            find(kept, "0.5.23", &args("0.5.23", LINE), &topo, &[0]).map(|o| o.at)
        };
        let mut odd = start(key.clone(), Some(0.8));
        odd.real.weights_gib = 1e9;
        assert_eq!(found(&[odd.clone()]), None);
        odd.real.weights_gib = -1.0;
        assert_eq!(found(&[odd.clone()]), None);
        let mut odd = start(key.clone(), Some(1.5));
        odd.at = 1;
        assert_eq!(found(&[odd]), None);
        let mut none = start(key.clone(), Some(0.8));
        none.real.kv_cache_tokens = 0;
        assert_eq!(found(&[none]), None);
        let mut older = start(key.clone(), Some(0.8));
        older.at = 7;
        let mut odd_newest = start(key.clone(), Some(0.8));
        odd_newest.real.cuda_graphs_gib = Some(f64::INFINITY);
        let newer = start(key, Some(0.8));
        assert_eq!(
            found(&[older.clone(), newer, odd_newest.clone()]),
            Some(1_764_620_175)
        );
        assert_eq!(found(&[older, odd_newest]), Some(7));
    }

    /// A stand-in plan: what it was asked, and the fraction it gives the server.
    #[derive(Debug, Clone, PartialEq)]
    struct Asked {
        measured: Measured,
        at: Option<f64>,
        fraction: f64,
        fits: bool,
    }

    /// Plans where the measured figures give `informed` (and whether it fits), the planner
    /// alone `alone`; a forced fraction always holds.
    fn stand_with(
        o: Option<&Observation>,
        (alone, informed, fits): (f64, f64, bool),
    ) -> (Asked, bool, Vec<Asked>) {
        let calls = RefCell::new(Vec::new());
        let planner = Planner {
            plan: |m: &Measured, at: Option<f64>| {
                let fraction = at.unwrap_or(if m.weights_mib.is_some() {
                    informed
                } else {
                    alone
                });
                let a = Asked {
                    measured: *m,
                    at,
                    fraction,
                    fits: fits || at.is_some() || m.weights_mib.is_none(),
                };
                calls.borrow_mut().push(a.clone());
                a
            },
            runs_at: |a: &Asked| Some((a.fraction, 22_534)),
            fits: |a: &Asked| Some(a.fits),
        };
        let (a, used) = stand(o, planner);
        let started = used.is_some_and(|u| u.started);
        (a, started, calls.into_inner())
    }

    #[test]
    fn without_a_start_the_planner_alone_plans_once() {
        let (a, started, calls) = stand_with(None, (0.8, 0.9, true));
        assert_eq!(
            (a.measured, a.at, started),
            (Measured::default(), None, false)
        );
        assert_eq!(calls.len(), 1);
    }

    #[test]
    fn the_start_s_tokens_stand_only_at_its_fraction_and_free_memory() {
        let o = start("k".into(), Some(0.8));
        // The measured figures give the fraction it ran at: it started, on all its figures.
        let (a, started, _) = stand_with(Some(&o), (0.7, 0.8, true));
        assert!(started);
        assert_eq!(a.measured.kv_tokens, Some(40_000));
        assert_eq!(a.measured.weights_mib, Some(14.0 * 1024.0));
        assert_eq!(a.measured.graphs_mib, Some(0.25 * 1024.0));
        // They give another: weights and graphs only, and the line is not the one that started.
        let (a, started, _) = stand_with(Some(&o), (0.8, 0.85, true));
        assert!(!started);
        assert_eq!((a.fraction, a.measured.kv_tokens), (0.85, None));
        assert_eq!(a.measured.weights_mib, Some(14.0 * 1024.0));
        // Another free memory (other processes): not the start's either.
        let mut busy = o.clone();
        busy.planned.baseline_mib = Some(18_000);
        let (a, started, _) = stand_with(Some(&busy), (0.7, 0.8, true));
        assert!(!started);
        assert_eq!(a.measured.kv_tokens, None);
        // A record from before the fraction was kept never stands for a start.
        let old = start("k".into(), None);
        let (a, started, _) = stand_with(Some(&old), (0.8, 0.8, false));
        assert!(!started);
        assert_eq!((a.at, a.measured.kv_tokens), (None, None));
    }

    #[test]
    fn a_fraction_that_would_not_fit_gives_way_to_the_one_that_started() {
        let o = start("k".into(), Some(0.8));
        let (a, started, calls) = stand_with(Some(&o), (0.8, 0.6, false));
        assert!(started);
        assert_eq!((a.at, a.fraction), (Some(0.8), 0.8));
        assert_eq!(a.measured.kv_tokens, Some(40_000));
        assert_eq!(calls.len(), 2);
    }
}
