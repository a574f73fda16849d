//! The harness's printed tables.

use super::Row;

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$}"))
        .unwrap_or_else(|| "-".into())
}

pub fn table(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<44} {:>3} {:>8} {:>8} {:>7} {:>7} {:>7} {:>6} {:>9} {:>9} {:>7} {:>6} {:>6}\n",
        "case",
        "tp",
        "W log",
        "W pred",
        "W err",
        "KV log",
        "KV pred",
        "B/tok",
        "tok log",
        "tok pred",
        "tok err",
        "G log",
        "G pred"
    );
    for r in rows.iter().filter(|r| r.skip.is_none()) {
        s.push_str(&format!(
            "{:<44} {:>3} {:>8} {:>8} {:>7} {:>7} {:>7} {:>6} {:>9} {:>9} {:>7} {:>6} {:>6}\n",
            r.id.chars().take(44).collect::<String>(),
            r.tp,
            opt(r.weights_log_gib, 2),
            opt(r.weights_pred_gib, 2),
            r.weights_err()
                .map(|e| format!("{:+.1}%", e * 100.0))
                .unwrap_or("-".into()),
            opt(r.kv_size_log_gib, 2),
            opt(r.kv_size_pred_gib, 2),
            r.kv_bytes_per_token
                .map(|b| b.to_string())
                .unwrap_or("-".into()),
            r.kv_tokens_log.map(|b| b.to_string()).unwrap_or("-".into()),
            r.kv_tokens_pred
                .map(|b| b.to_string())
                .unwrap_or("-".into()),
            r.tokens_err()
                .map(|e| format!("{:+.1}%", e * 100.0))
                .unwrap_or("-".into()),
            opt(r.graph_log_gib, 2),
            opt(r.graph_pred_gib, 2),
        ));
    }
    s
}

fn yes_no(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "-",
    }
}

/// The evidence table: per log, what the real server had/used outside the static pool and what
/// our plan reserves/leaves (GiB; fractions as planned). Rows without any non-static numbers
/// are left out.
pub fn evidence_table(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<44} {:>3} {:>4} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>7} {:>5} {:>7} {:>5}\n",
        "case",
        "tp",
        "oom",
        "G log",
        "G ours",
        "B",
        "real",
        "used",
        "left",
        "need",
        "ours R",
        "sgl",
        "phys",
        "plan",
        "plan sl",
        "ok",
        "phys sl",
        "ok"
    );
    for r in rows {
        let e = &r.ev;
        if e.real_slack_gib.is_none() && e.real_used_gib.is_none() {
            continue;
        }
        s.push_str(&format!(
            "{:<44} {:>3} {:>4} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>7} {:>5} {:>7} {:>5}\n",
            r.id.chars().take(44).collect::<String>(),
            r.tp,
            if e.oom { "OOM" } else { "-" },
            opt(r.graph_log_gib, 2),
            opt(r.graph_pred_gib, 2),
            opt(e.baseline_gib, 1),
            opt(e.real_slack_gib, 2),
            opt(e.real_used_gib, 2),
            opt(e.real_left_gib, 2),
            opt(e.needed_gib, 2),
            opt(e.reserve_gib, 2),
            opt(e.sglang_default_mfs, 3),
            opt(e.physics_mfs, 3),
            opt(e.planned_mfs, 3),
            opt(e.planned_slack_gib, 2),
            yes_no(e.planned_covers_need()),
            opt(e.physics_slack_gib, 2),
            yes_no(e.physics_covers_need()),
        ));
    }
    s
}

/// How far each record is evaluated, and why not further.
pub fn scope_table(rows: &[Row]) -> String {
    let mut s = format!("{:<44} {:>4} scope\n", "case", "oom");
    for r in rows {
        let scope = match (&r.skip, &r.plan_skip) {
            (Some(why), _) => format!("skipped: {why}"),
            (None, Some(why)) => format!("model measures only: {why}"),
            (None, None) => "model measures + plan".into(),
        };
        s.push_str(&format!("{:<44} {:>4} {scope}\n", short(&r.id), oom(r)));
    }
    s
}

fn short(id: &str) -> String {
    id.chars().take(44).collect()
}

fn oom(r: &Row) -> &'static str {
    match (r.oom, r.oom_runtime) {
        (true, true) => "run",
        (true, false) => "OOM",
        _ => "-",
    }
}

/// Per judged record: what the plan says about the launch as it ran (GiB).
pub fn verdict_table(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<44} {:>3} {:>4} {:>4} {:>7} {:>7} {:>7}  verdict\n",
        "case", "tp", "dpa", "oom", "graphs", "activ", "slack"
    );
    for r in rows {
        let Some(v) = &r.verdict else { continue };
        let says = if v.averted {
            "planned fraction leaves what it needed".to_owned()
        } else if v.flags.is_empty() {
            "no blocking finding".to_owned()
        } else {
            v.flags.join(", ")
        };
        let term = v
            .term
            .map(|t| format!("; short by: {t}"))
            .unwrap_or_default();
        s.push_str(&format!(
            "{:<44} {:>3} {:>4} {:>4} {:>7.2} {:>7.2} {:>7.2}  {says}{term}\n",
            short(&r.id),
            r.tp,
            if r.dp_attention { "yes" } else { "-" },
            oom(r),
            v.graphs_gib,
            v.activations_gib,
            v.slack_gib,
        ));
    }
    s
}
