//! The memory table of the human report, per GPU in MiB: the plan's terms, each on its own line
//! under the label the plan gives it, in three groups that follow SGLang's own arithmetic: what
//! is set aside before the weights, the static pool (`--mem-fraction-static` × the free memory
//! left), and the rest outside it.
//! Each `=` line is the sum of the lines above it back to the previous `=` line; the last one,
//! the GPU's capacity, is the sum of the `=` lines (and so of every other line). What the pool
//! or the reserve leaves over, or lacks, has a line of its own, so the sums always hold.
//! A term that stands on a start of the line on this machine is marked `(observed)`.

use crate::plan::memory::{Group, MemoryPlan, Role};
use crate::plan::v1::MfsSource;
use crate::rules::Code;

/// One line of the table: a term, or with `total` the sum of the terms above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) label: String,
    pub(crate) mib: i64,
    pub(crate) total: bool,
}

/// What the table's last lines say besides the sums.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Context {
    /// The model's context length: how many requests of it fit at once.
    pub(crate) context_len: Option<u64>,
    /// MEM003 was reported: the first use is short of memory outside the pool.
    pub(crate) first_use_short: bool,
}

const LABEL: usize = 44;
const VALUE: usize = 10;

/// Compact human table: the sums, then the KV capacity, the fraction and whether it fits.
#[cfg(test)]
pub(crate) fn render_table(m: &MemoryPlan) -> String {
    render(m, Context::default())
}

/// Compact human table: the sums, then the KV capacity, the fraction and whether it fits, and
/// how many requests fit at full `context_len` tokens at once.
pub fn render_table_with_context(m: &MemoryPlan, context_len: Option<u64>) -> String {
    render(
        m,
        Context {
            context_len,
            ..Context::default()
        },
    )
}

/// The table, then the lines under it.
pub(crate) fn render(m: &MemoryPlan, cx: Context) -> String {
    let mut out = table(m);
    for n in notes(m, cx) {
        out.push_str(&format!("  {n}\n"));
    }
    out
}

/// The table's lines only: fixed width, never wrapped.
pub(crate) fn table(m: &MemoryPlan) -> String {
    let mut out = String::new();
    for r in rows(m) {
        let mark = if r.total { "= " } else { "  " };
        // A label can quote a model's or a quantization's name: escaped, one line.
        let label = crate::out::escape(&r.label);
        out.push_str(&format!(
            "  {mark}{label:<w$} {:>VALUE$}\n",
            r.mib,
            w = LABEL - 2
        ));
    }
    out
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX / 4)
}

/// Whether the KV cache and the fit stand on a start.
fn kv_seen(m: &MemoryPlan) -> bool {
    m.observed_use
        .as_ref()
        .is_some_and(|u| u.started && m.kv_cache_tokens.is_some())
}

/// The table's lines, sums included: each group's terms under the group's total, then the
/// GPU's capacity, the sum of the totals.
pub(crate) fn rows(m: &MemoryPlan) -> Vec<Row> {
    let b = m.baseline_mib;
    let groups = [
        (Group::SetAside, "set aside before the weights".to_owned()),
        (
            Group::StaticPool,
            format!("static pool: {:.3} of {b} free", m.mem_fraction_static),
        ),
        (Group::Outside, "outside the static pool".to_owned()),
    ];
    let mut rows = Vec::new();
    let mut capacity = 0;
    for (group, label) in groups {
        for (t, mib) in m.lines(group) {
            rows.push(Row {
                label: if t.observed {
                    format!("{} (observed)", t.label)
                } else {
                    t.label.clone()
                },
                mib,
                total: false,
            });
        }
        let sum = m.total(group);
        capacity = sum.saturating_add(capacity);
        rows.push(Row {
            label,
            mib: sum,
            total: true,
        });
    }
    rows.push(Row {
        label: if capacity == int(m.gpu_memory_mib) {
            "GPU capacity".to_owned()
        } else {
            "GPU capacity (the GPU with least free memory)".to_owned()
        },
        mib: capacity,
        total: true,
    });
    rows
}

/// The lines under the sums: capacity in tokens and requests, the fraction, the fit.
pub(crate) fn notes(m: &MemoryPlan, cx: Context) -> Vec<String> {
    let mut v = Vec::new();
    if let (Some(t), Some(b)) = (m.kv_cache_tokens, m.kv_cache_bytes_per_token) {
        let swa = m
            .swa_kv_cache_tokens
            .map(|s| format!(", {s} in the sliding-window pool"))
            .unwrap_or_default();
        let predicted = m
            .observed_use
            .as_ref()
            .filter(|_| kv_seen(m))
            .and_then(|u| u.predicted.kv_cache_tokens)
            .map(|p| format!(" (observed; predicted {p})"))
            .unwrap_or_default();
        v.push(format!("KV cache: {t} tokens × {b} B{swa}{predicted}"));
    }
    let mut requests = Vec::new();
    if let Some(r) = m.max_running_requests {
        requests.push(format!("max running requests {r}"));
    }
    if let (Some(t), Some(c)) = (m.kv_cache_tokens, cx.context_len.filter(|&c| c > 0)) {
        requests.push(format!("{} requests at {c} tokens at once", t / c));
    }
    if !requests.is_empty() {
        v.push(requests.join("; "));
    }
    if let Some(p) = m.load_peak_per_gpu_gib {
        v.push(format!(
            "weights at load (online quantisation): {} MiB, of {} MiB free before the weights",
            (p * 1024.0).round(),
            m.baseline_mib
        ));
    }
    // Without the model's size nothing is planned: the fraction shown is SGLang's own.
    let unsized_default = m.mem_fraction_static_source == MfsSource::Planned
        && m.mib(Role::Weights).is_none()
        && m.sglang_default_mem_fraction_static == Some(m.mem_fraction_static);
    let src = match m.mem_fraction_static_source {
        MfsSource::User => "user",
        MfsSource::Planned if unsized_default => "SGLang default; the model is not sized",
        MfsSource::Planned => "planned",
    };
    let sg = m
        .sglang_default_mem_fraction_static
        .filter(|_| !unsized_default)
        .map(|v| format!(" (SGLang default {v:.3})"))
        .unwrap_or_default();
    let alone = m
        .observed_use
        .as_ref()
        .map(|u| u.predicted.mem_fraction_static)
        .filter(|a| (a - m.mem_fraction_static).abs() >= 0.0005)
        .map(|a| format!("; the planner alone: {a:.3}"))
        .unwrap_or_default();
    v.push(format!(
        "--mem-fraction-static {:.3} [{src}]{sg}{alone}",
        m.mem_fraction_static
    ));
    v.push(fits(m, cx));
    v.extend(observed(m));
    v
}

/// What stands on a start of this line here, and what the start reported.
fn observed(m: &MemoryPlan) -> Vec<String> {
    let Some(o) = &m.observed else {
        return Vec::new();
    };
    let mut v = Vec::new();
    if let Some(u) = &m.observed_use {
        let terms: Vec<&str> = [
            (u.weights, "the weights"),
            (u.cuda_graphs, "the CUDA graphs"),
            (kv_seen(m), "the KV cache and the fit"),
        ]
        .into_iter()
        .filter_map(|(on, what)| on.then_some(what))
        .collect();
        let p = &u.predicted;
        let predicted = format!(
            "the planner alone: weights {}, graphs {} MiB, KV cache {}",
            p.weights_per_gpu_gib
                .map_or("not sized".to_owned(), |w| format!("{w:.2} GiB")),
            p.cuda_graphs_mib,
            p.kv_cache_tokens
                .map_or("not sized".to_owned(), |t| format!("{t} tokens")),
        );
        let why = if u.started {
            String::new()
        } else {
            let then = match (o.planned.mem_fraction_static, o.planned.baseline_mib) {
                (Some(f), Some(b)) => format!("{f:.3} of {b} MiB free"),
                _ => "a fraction not kept".to_owned(),
            };
            format!(
                "; it ran at {then}, this line at {:.3} of {} MiB, so its KV cache is planned",
                m.mem_fraction_static, m.baseline_mib
            )
        };
        let terms = match terms.as_slice() {
            [] => "nothing the plan sizes".to_owned(),
            [one] => (*one).to_owned(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        };
        v.push(format!(
            "(observed): from this machine's start on {}: {terms}{why} ({predicted})",
            crate::observe::date(u.at),
        ));
    }
    v.push(format!(
        "observed on this machine (this line, this release): {}",
        o.summary()
    ));
    v
}

/// Whether everything the table counts fits: the static pool's lines in the pool, the load
/// peak in the free memory, and outside the pool what the first use needs. Each shortfall is
/// named; a finding that predicts one never sits next to a `yes`.
fn fits(m: &MemoryPlan, cx: Context) -> String {
    if let Some(u) = m.observed_use.as_ref().filter(|u| u.started) {
        return format!(
            "fits: yes: this line started on this machine on {} (observed below)",
            crate::observe::date(u.at)
        );
    }
    let outside = m.total(Group::Outside);
    let first_use = int(m.first_use_mib);
    let size = |r: Role| m.mib(r).unwrap_or(0);
    let mut why = Vec::new();
    if let Some(short) = m.mib(Role::Unallocated).filter(|&l| l < 0) {
        let lora = if size(Role::Lora) > 0 {
            " and LoRA buffers"
        } else {
            ""
        };
        let state = match m.mamba_cache_size {
            Some(slots) if size(Role::MambaState) > 0 => {
                format!(" and the Mamba state pool ({slots} slots)")
            }
            _ => String::new(),
        };
        why.push(format!(
            "the static pool is {} MiB short of the weights{lora}{state}",
            -short
        ));
    } else if m.kv_cache_tokens == Some(0) {
        why.push("the static pool has no room left for one KV-cache page".to_owned());
    }
    if let Some(p) = m.load_peak_per_gpu_gib {
        let peak = (p * 1024.0).round() as i64;
        if peak > m.baseline_mib {
            why.push(format!(
                "the weights at load take {peak} MiB of {} MiB free",
                m.baseline_mib
            ));
        }
    }
    // Without the model sized, the activations are a stand-in (no MEM003): not a "no".
    if cx.first_use_short || (outside < first_use && m.fits.is_some()) {
        why.push(first_use_text(outside, first_use, cx));
    }
    if !why.is_empty() {
        return format!("fits: NO: {}", why.join("; "));
    }
    let short_of_reserve = m
        .term(Role::LeftFree)
        .and_then(|t| t.line)
        .filter(|&left| left < 0)
        .map(i64::saturating_neg);
    match (m.fits, short_of_reserve) {
        (None, _) => "fits: unknown (the weights or the KV cache are not sized)".to_owned(),
        (Some(false), _) => "fits: NO: see the memory findings above".to_owned(),
        (Some(true), Some(short)) => format!(
            "fits: yes, tightly: graphs and the first prefill ({first_use} MiB) fit outside \
             the static pool, {short} MiB short of the full reserve (activation allowance, margin)"
        ),
        (Some(true), None) => "fits: yes (weights and KV cache in the static pool; \
                               graphs, activations and margin outside it)"
            .to_owned(),
    }
}

/// MEM003's finding in the table's terms.
fn first_use_text(outside: i64, first_use: i64, cx: Context) -> String {
    format!(
        "{outside} MiB outside the static pool, but CUDA graphs and the first prefill need \
         {first_use} MiB: expect OOM during capture or at the first long prompt{}",
        if cx.first_use_short {
            format!(" ({})", Code::MEM003.as_str())
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::memory::lines::{Sizes, terms};

    /// An 80 GiB GPU: 78000 MiB free before the weights, 15 GiB of weights.
    fn memory(mfs: f64, weights: Option<u64>) -> MemoryPlan {
        let pool = (78000.0 * mfs) as i64;
        let kv = weights.map(|w| (pool - w as i64 - 7).max(0) as u64);
        let mut m = MemoryPlan {
            gpu_memory_mib: 80000,
            mem_fraction_static: mfs,
            mem_fraction_static_source: MfsSource::User,
            sglang_default_mem_fraction_static: Some(0.85),
            sglang_default_chunked_prefill_size: Some(8192),
            sglang_default_cuda_graph_max_bs: Some(256),
            weights_per_gpu_gib: weights.map(|w| w as f64 / 1024.0),
            kv_cache_bytes_per_token: weights.map(|_| 1024 * 1024),
            kv_cache_tokens: kv,
            max_running_requests: None,
            fits: weights.map(|_| true),
            swa_kv_cache_tokens: None,
            mamba_cache_size: None,
            load_peak_per_gpu_gib: None,
            baseline_mib: 78000,
            first_use_mib: 5000,
            observed: None,
            observed_use: None,
            terms: Vec::new(),
        };
        let sizes = Sizes {
            other_processes: 0,
            cuda_context: 600,
            nccl: 1000,
            custom_allreduce: 400,
            weights,
            draft_weights: 0,
            encoder_weights: 0,
            lora: 0,
            mamba_state: 0,
            swa_kv_cache: 0,
            fixed_kv: 0,
            kv_cache: kv,
            unallocated: weights.map(|_| 7),
            cuda_graphs: 3000,
            activations: 4000,
            buffers: Vec::new(),
            margin: 1600,
        };
        m.terms = terms(&m, &sizes);
        m
    }

    fn sums_hold(rows: &[Row]) {
        let mut since = 0;
        let mut totals = Vec::new();
        for r in &rows[..rows.len() - 1] {
            if r.total {
                assert_eq!(r.mib, since, "{rows:?}");
                totals.push(r.mib);
                since = 0;
            } else {
                since += r.mib;
            }
        }
        assert_eq!(rows.last().unwrap().mib, totals.iter().sum::<i64>());
        assert_eq!(rows.last().unwrap().mib, 80000);
    }

    #[test]
    fn fits_reads_yes_tightly_or_no_by_what_is_left_outside_the_pool() {
        // 0.85: 11700 outside, 8600 reserved.
        let roomy = memory(0.85, Some(15000));
        sums_hold(&rows(&roomy));
        assert!(render_table(&roomy).contains("  fits: yes ("));
        // 0.9: 7800 outside: the first use (5000) fits, the full reserve does not.
        let tight = memory(0.9, Some(15000));
        sums_hold(&rows(&tight));
        let t = render_table(&tight);
        assert!(t.contains("short of the reserve above"), "{t}");
        assert!(t.contains("fits: yes, tightly"), "{t}");
        // 0.95: 3900 outside, less than the first use.
        let short = memory(0.95, Some(15000));
        sums_hold(&rows(&short));
        assert!(render_table(&short).contains("fits: NO: 3900 MiB outside"));
    }

    #[test]
    fn an_unsized_model_still_adds_up_and_says_unknown() {
        let m = memory(0.85, None);
        let r = rows(&m);
        sums_hold(&r);
        assert!(
            r.iter()
                .any(|r| r.label == "weights and KV cache (not sized)")
        );
        assert!(render_table(&m).contains("fits: unknown"));
        // Nothing was planned: the fraction is SGLang's own, and says so.
        let sglangs = MemoryPlan {
            mem_fraction_static: 0.85,
            mem_fraction_static_source: MfsSource::Planned,
            ..m
        };
        assert!(
            render_table(&sglangs)
                .contains("--mem-fraction-static 0.850 [SGLang default; the model is not sized]\n")
        );
    }
}
