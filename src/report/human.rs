//! The compact human report: one header line, one line per finding, the changes, memory, verdict.

use crate::facts::Topology;
use crate::out::escape;
use crate::plan::Outcome;
use crate::plan::Verdict;
use crate::plan::v1::MfsSource;
use crate::rules::{Code, Severity, ranges};
use crate::sglang::opt;

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            crate::out::paint(code, text)
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
pub(crate) fn gpu_summary(topology: &Topology, gpus: &[u32]) -> String {
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
        .map(|(n, c, m, k)| {
            // Names come from a file or the driver: one line, no terminal controls.
            let (n, c) = (escape(n), escape(c));
            format!("{k}× {n} (cc {c}, {:.1} GiB{link})", *m as f64 / 1024.0)
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Where a finding's message starts: continuation lines of a wrapped finding align with it.
const FINDING_INDENT: usize = 17;

/// The human report, in colour or not, wrapped or not (see [`super::Output`]).
pub fn human(outcome: &Outcome, output: impl Into<super::Output>) -> String {
    human_refused(outcome, output, None)
}

/// [`human`] for a launch refused for a reason of its own besides the findings (`refused`,
/// say a profile not for this machine): the verdict says blocked and names it.
pub(crate) fn human_refused(
    outcome: &Outcome,
    output: impl Into<super::Output>,
    refused: Option<&str>,
) -> String {
    let output = output.into();
    let st = Style { on: output.color };
    let width = output.width;
    let plan = &outcome.plan;
    let mut out = String::new();
    let put = |out: &mut String, line: String, indent: usize| {
        out.push_str(&super::wrap::line(&line, width, indent));
        out.push('\n');
    };
    put(&mut out, header(outcome, &st), 4);
    // Open findings first, by what they do to the launch; the fixed ones after, as fixed.
    // A finding, a change and a note are one line each: whatever data they quote (a GPU
    // name, a config key, an argument) is escaped whole, newlines included.
    for f in outcome.findings.iter().filter(|f| !f.fixed) {
        let line = format!(
            "  {} {:<6} {}: {}",
            st.severity(f.severity),
            f.code.as_str(),
            f.name(),
            escape(&f.message)
        );
        put(&mut out, line, FINDING_INDENT);
    }
    for f in outcome.findings.iter().filter(|f| f.fixed) {
        let label = st.paint("32", "fixed  ");
        put(
            &mut out,
            format!(
                "  {label} {:<6} {}: {}",
                f.code.as_str(),
                f.name(),
                escape(&f.message)
            ),
            FINDING_INDENT,
        );
    }
    let changes = changes(outcome);
    if !changes.is_empty() {
        put(&mut out, st.paint("1", "changes:"), 4);
        for c in changes {
            put(&mut out, format!("  {}", escape(&c)), 4);
        }
    }
    if let Some(c) = plan.resolved.as_ref().and_then(|r| {
        let given = super::chosen::Given {
            page_size: outcome.args.is_set(opt::PAGE_SIZE),
            overlap_off: outcome.args.flag(opt::DISABLE_OVERLAP_SCHEDULE),
        };
        super::chosen::sglang_choices(r, &given)
    }) {
        put(
            &mut out,
            format!("{} {}", st.paint("1", "SGLang will choose:"), escape(&c)),
            4,
        );
    }
    if let Some(m) = &outcome.memory {
        put(&mut out, st.paint("1", "memory (per GPU, MiB):"), 4);
        let cx = super::memory::Context {
            context_len: outcome.model.as_ref().and_then(|f| f.context_length),
            first_use_short: outcome.findings.iter().any(|f| f.code == Code::MEM003),
        };
        // The table keeps its columns; the lines under it wrap.
        out.push_str(&super::memory::table(m));
        for note in super::memory::notes(m, cx) {
            put(&mut out, format!("  {}", escape(&note)), 4);
        }
    }
    put(&mut out, verdict(outcome, refused, &st), 4);
    out
}

fn header(outcome: &Outcome, st: &Style) -> String {
    let plan = &outcome.plan;
    let src = escape(match plan.sglang_version_source {
        crate::install::select::VersionSource::Detected => "detected",
        crate::install::select::VersionSource::Option => outcome
            .version_from
            .as_deref()
            .unwrap_or("--sglang-version"),
        crate::install::select::VersionSource::Fallback => "fallback",
    });
    if outcome.verdict == Verdict::PassThrough
        || (outcome.verdict == Verdict::Error
            && outcome.findings.iter().any(|f| f.code == Code::TOP005))
    {
        return format!(
            "{} SGLang {} ({src}) · not an NVIDIA GPU server: not planned",
            st.paint("1", "sglang-launch:"),
            escape(&plan.sglang_version),
        );
    }
    format!(
        "{} SGLang {} ({src}) · {} · GPUs {}",
        st.paint("1", "sglang-launch:"),
        escape(&plan.sglang_version),
        gpu_summary(&outcome.topology, &plan.gpus),
        if plan.gpus.is_empty() {
            "none selected".to_owned()
        } else {
            ranges(&plan.gpus)
        },
    )
}

/// What the launcher changed: each fix with its code, and a planned fraction it wrote.
fn changes(outcome: &Outcome) -> Vec<String> {
    let mut changes: Vec<String> = outcome
        .findings
        .iter()
        .filter_map(|f| f.applied().map(|x| format!("{x} ({})", f.code)))
        .collect();
    if let Some(m) = outcome.memory.as_ref().filter(|m| {
        m.mem_fraction_static_source == MfsSource::Planned
            && outcome.args.is_set(opt::MEM_FRACTION_STATIC)
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
    changes
}

/// `verdict: ok — 2 fixed, 1 warning` / `verdict: blocked — 1 error`: whether the server is
/// launched, then what blocks (`refused`, then the errors), what was fixed and what warns.
fn verdict(outcome: &Outcome, refused: Option<&str>, st: &Style) -> String {
    let count = |fixed: bool, s: Severity| {
        outcome
            .findings
            .iter()
            .filter(|f| f.fixed == fixed && (fixed || f.severity == s))
            .count()
    };
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let (errors, fixed) = (count(false, Severity::Error), count(true, Severity::Error));
    let warnings = count(false, Severity::Warning);
    let by_findings = outcome.verdict == Verdict::Error;
    let blocked = by_findings || refused.is_some();
    let mut parts: Vec<String> = refused.map(str::to_owned).into_iter().collect();
    if errors > 0 {
        parts.push(plural(errors, "error"));
    }
    if fixed > 0 {
        parts.push(format!("{fixed} fixed"));
    }
    if warnings > 0 {
        // Only --strict makes a warning block.
        let strict = if by_findings && errors == 0 {
            " (--strict)"
        } else {
            ""
        };
        parts.push(format!("{}{strict}", plural(warnings, "warning")));
    }
    let word = if blocked {
        st.paint("1;31", "blocked")
    } else if outcome.verdict == Verdict::PassThrough {
        st.paint("1;36", "pass-through")
    } else if warnings > 0 {
        st.paint("1;33", "ok")
    } else {
        st.paint("1;32", "ok")
    };
    if parts.is_empty() {
        format!("verdict: {word}")
    } else {
        format!("verdict: {word} — {}", parts.join(", "))
    }
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
