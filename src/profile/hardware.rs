//! The `[hardware]` conditions against a topology: pure, and each unmet one named.

use super::cc::{holds, parse_cc};
use super::schema::Hardware;
use crate::facts::Topology;

/// Case-insensitive glob with `*` and `?`.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The conditions this machine does not meet, each as `key = value (what the machine has)`.
pub(crate) fn unmet(hw: &Hardware, topo: &Topology) -> Vec<String> {
    let gpus = &topo.gpus;
    let n = gpus.len() as u32;
    let mut out = Vec::new();
    if let Some(g) = &hw.gpu_name
        && let Some(other) = gpus.iter().find(|x| !glob(g, &x.name))
    {
        out.push(format!(
            "gpu-name = {g:?} (GPU {} is {})",
            other.index, other.name
        ));
    }
    if let Some(spec) = &hw.compute_capability {
        let cmps = parse_cc(spec).unwrap_or_default();
        if let Some(other) = gpus
            .iter()
            .find(|x| !x.cc().is_some_and(|cc| holds(&cmps, cc)))
        {
            out.push(format!(
                "compute-capability = {spec:?} (GPU {} has {})",
                other.index, other.compute_capability
            ));
        }
    }
    if let Some(c) = hw.gpu_count.filter(|c| *c != n) {
        out.push(format!("gpu-count = {c} (this machine has {n})"));
    }
    if let Some(c) = hw.min_gpus.filter(|c| *c > n) {
        out.push(format!("min-gpus = {c} (this machine has {n})"));
    }
    if let Some(gib) = hw.min_memory_gib {
        let least = gpus.iter().map(|g| g.memory_total_mib).min().unwrap_or(0);
        if (least as f64) < gib * 1024.0 {
            out.push(format!(
                "min-memory-gib = {gib} (the smallest GPU has {:.1} GiB)",
                least as f64 / 1024.0
            ));
        }
    }
    if let Some(want) = hw.nvlink {
        let all: Vec<u32> = gpus.iter().map(|g| g.index).collect();
        let has = n > 1 && topo.fully_nvlinked(&all);
        if has != want {
            let what = if has {
                "all GPUs are"
            } else {
                "not all GPUs are"
            };
            out.push(format!("nvlink = {want} ({what} NVLink-connected)"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_a_shell_ignoring_case() {
        assert!(glob(
            "*RTX PRO 6000*",
            "NVIDIA RTX PRO 6000 Blackwell Server Edition"
        ));
        assert!(glob("nvidia h?00*", "NVIDIA H100 80GB HBM3"));
        assert!(!glob("*H200*", "NVIDIA H100 80GB HBM3"));
        assert!(glob("*", ""));
    }

    #[test]
    fn compute_capability_ranges() {
        let c = parse_cc(">=12.0,<13").unwrap();
        assert!(holds(&c, (12, 0)));
        assert!(!holds(&c, (13, 0)));
        assert!(!holds(&c, (9, 0)));
        assert!(holds(&parse_cc("==8.9").unwrap(), (8, 9)));
        assert!(parse_cc("12").is_err());
        assert!(parse_cc(">=x").is_err());
    }
}
