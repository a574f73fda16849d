//! `docs/rules.md`: the rule catalogue, one table per family, then each rule as
//! `sglang-launch explain` prints it.

use crate::rules::{self, FixAvailability, Rule};

use super::cell;

/// Family titles, in the words of the catalogue's code table. A family missing here is listed
/// under its bare code, so a new family never breaks generation.
const FAMILIES: &[(&str, &str)] = &[
    ("AR", "Custom all-reduce"),
    ("ARCH", "Architecture gates"),
    ("ARG", "SGLang's argument parser"),
    ("ATTN", "Attention backends"),
    ("CACHE", "Caches and chunked prefill"),
    ("CG", "CUDA graphs"),
    ("COMM", "Communication and NCCL environment"),
    ("DPA", "Data-parallel attention"),
    ("ENV", "Environment variables"),
    ("EP", "Expert parallelism and MoE all-to-all"),
    ("FLAG", "Flags by version"),
    ("HUB", "Model files from the Hugging Face Hub"),
    ("MEM", "Memory plan"),
    ("MIX", "Features SGLang rejects or breaks together"),
    ("MODEL", "Model architectures"),
    ("PAR", "Parallelism and multi-node"),
    ("PKG", "Installed packages"),
    ("QUANT", "Quantisation"),
    ("SPEC", "Speculative decoding"),
    ("SRV", "Serving options"),
    ("TOP", "GPUs in use"),
    ("VER", "SGLang version"),
];

fn family_title(family: &str) -> &str {
    FAMILIES
        .iter()
        .find(|(f, _)| *f == family)
        .map_or(family, |(_, t)| t)
}

/// The catalogue grouped by family, in code order.
fn families() -> Vec<(&'static str, Vec<&'static Rule>)> {
    let mut out: Vec<(&'static str, Vec<&'static Rule>)> = Vec::new();
    for r in rules::all() {
        match out.iter_mut().find(|(f, _)| *f == r.family()) {
            Some((_, list)) => list.push(r),
            None => out.push((r.family(), vec![r])),
        }
    }
    out
}

fn fix_word(fix: FixAvailability) -> &'static str {
    match fix {
        FixAvailability::None => "none",
        FixAvailability::Sometimes => "sometimes",
        FixAvailability::Always => "always",
    }
}

/// The whole of `docs/rules.md`.
pub(crate) fn rules_markdown() -> String {
    let families = families();
    let mut s = String::from(
        "# Rule catalogue\n\n\
         <!-- Generated from data/rules/*.md by scripts/gen-docs.sh; edit those files, not this one. -->\n\n",
    );
    let count =
        |sev: crate::rules::Severity| rules::all().iter().filter(|r| r.severity == sev).count();
    s.push_str(&format!(
        "{} rules in {} families ({} can block, {} warn, {} inform). Each has a stable code (never reused) and a stable kebab-case \
         name; `--allow` and `--deny` take either, or a family prefix (`--allow AR`). The severity \
         is the default: `--deny` makes a rule's findings errors, `--strict` makes warnings block. \
         *Fix* says whether the launcher can repair what the rule finds (`--no-fix` only reports). \
         `sglang-launch rules` lists the same table and `sglang-launch explain CODE` prints one \
         section below.\n\n",
        rules::all().len(),
        families.len(),
        count(crate::rules::Severity::Error),
        count(crate::rules::Severity::Warning),
        count(crate::rules::Severity::Info),
    ));
    for (family, list) in &families {
        s.push_str(&format!(
            "- [{family}: {}](#family-{}) ({})\n",
            family_title(family),
            family.to_ascii_lowercase(),
            list.len()
        ));
    }
    for (family, list) in &families {
        s.push_str(&format!(
            "\n<a id=\"family-{}\"></a>\n\n## {family}: {}\n\n",
            family.to_ascii_lowercase(),
            family_title(family)
        ));
        s.push_str("| code | name | severity | SGLang versions | fix | summary |\n");
        s.push_str("|---|---|---|---|---|---|\n");
        for r in list {
            s.push_str(&format!(
                "| [{}](#{}) | `{}` | {} | `{}` | {} | {} |\n",
                r.code,
                r.code.to_ascii_lowercase(),
                r.name,
                r.severity,
                r.versions,
                fix_word(r.fix),
                cell(r.summary)
            ));
        }
        for r in list {
            s.push_str(&format!(
                "\n<a id=\"{}\"></a>\n\n",
                r.code.to_ascii_lowercase()
            ));
            s.push_str(&demote(&rules::render_explain(r), 2));
        }
    }
    s
}

/// Markdown with every ATX heading `levels` deeper (outside code fences), so a rule's own
/// `#`/`##` headings nest under the family's `##`.
fn demote(markdown: &str, levels: usize) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let hashes = line.len() - line.trim_start_matches('#').len();
        if !fenced && (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            out.push_str(&"#".repeat(levels));
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
