//! The compact human report: one header line, one line per finding, the changes, memory, verdict.

use std::fmt::Write;

use crate::facts::Topology;
use crate::plan::Outcome;
use crate::plan::json::{MfsSource, Verdict};
use crate::rules::{Severity, ranges};

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    fn severity(&self, s: Severity) -> String {
        match s {
            Severity::Error => self.paint("1;31", "error  "),
            Severity::Warning => self.paint("1;33", "warning"),
            Severity::Info => self.paint("1;36", "info   "),
        }
    }
}

/// "8× NVIDIA H100 80GB HBM3 (cc 9.0, 79.6 GiB, NVLink)" for the GPUs in use (or all of them).
pub fn gpu_summary(topology: &Topology, gpus: &[u32]) -> String {
    let used: Vec<_> = if gpus.is_empty() {
        topology.gpus.iter().collect()
    } else {
        gpus.iter().filter_map(|&i| topology.gpu(i)).collect()
    };
    if used.is_empty() {
        return "no GPUs".to_owned();
    }
    let mut groups: Vec<(String, String, u64, usize)> = Vec::new();
    for g in &used {
        match groups.iter_mut().find(|(n, c, m, _)| {
            *n == g.name && *c == g.compute_capability && *m == g.memory_total_mib
        }) {
            Some(grp) => grp.3 += 1,
            None => groups.push((
                g.name.clone(),
                g.compute_capability.clone(),
                g.memory_total_mib,
                1,
            )),
        }
    }
    let idx: Vec<u32> = used.iter().map(|g| g.index).collect();
    let link = if idx.len() < 2 {
        ""
    } else if topology.fully_nvlinked(&idx) {
        ", NVLink"
    } else {
        ", PCIe"
    };
    groups
        .iter()
        .map(|(n, c, m, k)| format!("{k}× {n} (cc {c}, {:.1} GiB{link})", *m as f64 / 1024.0))
        .collect::<Vec<_>>()
        .join(" + ")
}

pub fn human(outcome: &Outcome, color: bool) -> String {
    let st = Style { on: color };
    let plan = &outcome.plan;
    let mut out = String::new();
    let src = match plan.sglang_version_source {
        crate::sglang::version::VersionSource::Detected => "detected",
        crate::sglang::version::VersionSource::Option => "--sglang-version",
        crate::sglang::version::VersionSource::Fallback => "fallback",
    };
    let _ = writeln!(
        out,
        "{} SGLang {} ({src}) · {} · GPUs {}",
        st.paint("1", "sglang-launch:"),
        plan.sglang_version,
        gpu_summary(&outcome.topology, &plan.gpus),
        if plan.gpus.is_empty() {
            "none selected".to_owned()
        } else {
            ranges(&plan.gpus)
        },
    );
    for f in &plan.findings {
        let fixed = if f.fixed {
            st.paint("32", " [fixed]")
        } else {
            String::new()
        };
        // A fixed finding no longer blocks: its severity is shown plain, the fix in green.
        let severity = if f.fixed {
            format!("{:<7}", f.severity.as_str())
        } else {
            st.severity(f.severity)
        };
        let _ = writeln!(
            out,
            "  {severity} {:<6} {}: {}{fixed}",
            f.code, f.name, f.message
        );
    }
    let mut changes: Vec<String> = plan
        .findings
        .iter()
        .filter(|f| f.fixed)
        .filter_map(|f| f.fix.as_ref().map(|x| format!("{x} ({})", f.code)))
        .collect();
    if let Some(m) = plan.memory.as_ref().filter(|m| {
        m.mem_fraction_static_source == MfsSource::Planned
            && outcome.args.is_set("--mem-fraction-static")
    }) {
        let default = m
            .sglang_default_mem_fraction_static
            .map(|d| format!("; SGLang's default would be {d}"))
            .unwrap_or_default();
        changes.push(format!(
            "set --mem-fraction-static {} (planned{default})",
            m.mem_fraction_static
        ));
    }
    if !changes.is_empty() {
        let _ = writeln!(out, "{}", st.paint("1", "changes:"));
        for c in changes {
            let _ = writeln!(out, "  {c}");
        }
    }
    if let Some(c) = plan
        .resolved
        .as_ref()
        .and_then(|r| super::chosen::sglang_choices(r, outcome.args.is_set("--page-size")))
    {
        let _ = writeln!(out, "{} {c}", st.paint("1", "SGLang will choose:"));
    }
    if let Some(m) = &plan.memory {
        let _ = writeln!(out, "{}", st.paint("1", "memory (per GPU):"));
        let context = outcome.model.as_ref().and_then(|f| f.context_length);
        let _ = write!(
            out,
            "{}",
            super::memory::render_table_with_context(m, context)
        );
    }
    let blocking = plan
        .findings
        .iter()
        .filter(|f| !f.fixed && f.severity == Severity::Error)
        .count();
    let warnings = plan
        .findings
        .iter()
        .filter(|f| !f.fixed && f.severity == Severity::Warning)
        .count();
    let verdict = match plan.verdict {
        Verdict::Ok => st.paint("1;32", "ok"),
        Verdict::Warning => st.paint("1;33", "warning"),
        Verdict::Error => st.paint("1;31", "error"),
    };
    let _ = writeln!(
        out,
        "verdict: {verdict} ({blocking} error{}, {warnings} warning{})",
        if blocking == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    );
    out
}

#[cfg(test)]
mod tests {
    use crate::rules::ranges;

    #[test]
    fn gpu_lists_are_compact_in_headers_and_findings_alike() {
        assert_eq!(ranges(&[0, 1, 2, 3, 4, 5, 6, 7]), "0–7");
        assert_eq!(ranges(&[0, 2, 4, 6]), "0, 2, 4, 6");
        assert_eq!(ranges(&[0, 1, 4, 5, 6]), "0, 1, 4–6");
    }
}
