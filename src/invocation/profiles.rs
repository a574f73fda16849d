//! `profiles list` and `profiles show`: every profile planned on this machine (or a topology
//! file), grouped by what launching it would take.

use std::ffi::OsString;

use serde_json::{Value, json};

use super::cli::{ProfilesCommand, ProfilesListArgs};
use super::context::{Context, Layers};
use super::print_out;
use crate::exit;
use crate::facts::Topology;
use crate::out::escape;
use crate::plan::{self, Fatal, Outcome};
use crate::profile::{self, Profile, Search};
use crate::report;
use crate::rules::Severity;
use crate::secrets;

/// How a profile would run here.
enum Verdict {
    Runnable,
    /// The fixes the launcher would make.
    WithChanges(Vec<String>),
    /// Blocking rule codes, or unmet hardware conditions.
    Incompatible(Vec<String>),
    /// The profile itself is broken (never launched).
    Invalid(String),
    /// No GPUs could be read: listed, not planned.
    Unplanned,
}

/// `layers`: the settings under each profile's `[launcher]` table (`profiles list|show`'s own
/// options are the command-line layer); a broken one makes each profile invalid.
pub(crate) fn command(cmd: &ProfilesCommand, layers: &Result<Layers, Fatal>) -> Result<i32, Fatal> {
    match cmd {
        ProfilesCommand::List(a) => list(a, layers),
        ProfilesCommand::Show(a) => show(&a.name, &a.list, layers),
    }
}

/// The run context a profile plans with: the same layers, its own `[launcher]` table.
fn context(p: &Profile, layers: &Result<Layers, Fatal>) -> Result<Context, Fatal> {
    Context::new(layers.as_ref().map_err(Clone::clone)?, Some(p.clone()))
}

fn search(a: &ProfilesListArgs) -> Search {
    Search::from_process(a.profiles_dir.dir.as_deref())
}

/// The GPUs to plan for, as `topology` and `nvml-lib` say (the options, `SGLANG_LAUNCH_*`, the
/// config files); without a driver (and no topology file), none: the profiles are still listed
/// and shown, and the reason is said once.
fn gpus(layers: &Result<Layers, Fatal>) -> Result<Option<Topology>, Fatal> {
    let ctx = Context::new(layers.as_ref().map_err(Clone::clone)?, None)?;
    let s = ctx.settings();
    match plan::load_topology(s.topology.as_deref(), s.nvml_lib.as_deref()) {
        Ok(t) => Ok(Some(t)),
        Err(e) if s.topology.is_none() => {
            crate::out::warn(&format!(
                "{e}; profiles are not planned (--topology FILE plans them for a machine described by its file)"
            ));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

fn list(a: &ProfilesListArgs, layers: &Result<Layers, Fatal>) -> Result<i32, Fatal> {
    let search = search(a);
    let topo = gpus(layers)?;
    let rows: Vec<(String, String, Option<String>, Verdict)> = search
        .names()
        .into_iter()
        .map(|(name, origin)| match profile::load(&search, &name) {
            Ok(p) => {
                let ctx = context(&p, layers);
                hide_secrets(&p, ctx.as_ref().ok());
                let v = topo
                    .as_ref()
                    .map_or(Verdict::Unplanned, |t| judge(&p, &ctx, t));
                (name, origin, p.description, v)
            }
            Err(e) => (name, origin, None, Verdict::Invalid(e.0)),
        })
        .collect();
    let invalid = rows.iter().any(|r| matches!(r.3, Verdict::Invalid(_)));
    if a.json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|(n, o, d, v)| row_json(n, o, d, v))
            .collect();
        print_out(&crate::out::json_safe(
            serde_json::to_string_pretty(&json!({ "profiles": rows })).expect("json"),
        ))?;
    } else {
        print_out(&human_list(&rows))?;
    }
    Ok(if invalid { exit::USAGE } else { exit::OK })
}

/// Hardware conditions first; then the plan's blocking findings and fixes.
fn judge(p: &Profile, ctx: &Result<Context, Fatal>, topo: &Topology) -> Verdict {
    let unmet = profile::hardware::unmet(&p.hardware, topo);
    if !unmet.is_empty() {
        return Verdict::Incompatible(unmet);
    }
    match ctx
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|c| plan_profile(c, topo))
    {
        Ok(outcome) => classify(&outcome),
        Err(e) => Verdict::Invalid(e.message),
    }
}

/// Hides the profile's secrets in everything printed from now on; the profile with their
/// values as `***`, for showing it. Without settings to pick a release, the newest's options.
fn hide_secrets(p: &Profile, ctx: Option<&Context>) -> Profile {
    let newest = || {
        let v = crate::sglang::flagset::KNOWN_VERSIONS.last();
        v.and_then(|v| crate::sglang::flagset::get(v))
    };
    let flags = ctx.map(Context::flags).or_else(newest);
    let Some(flags) = flags else {
        return p.clone();
    };
    let (shown, hide) = secrets::in_profile(p, flags);
    hide.install();
    shown
}

/// The profile planned with no SGLang arguments of the user's; a topology file keeps it offline.
fn plan_profile(ctx: &Context, topo: &Topology) -> Result<Outcome, Fatal> {
    let prepared = super::profiled::prepare(ctx, Vec::<OsString>::new(), ctx.env.clone())?;
    plan::build(&ctx.request(prepared.tokens, prepared.env, Some(topo.clone())))
}

fn classify(o: &Outcome) -> Verdict {
    if o.exit_code() != exit::OK {
        return Verdict::Incompatible(blocking(o));
    }
    let fixes: Vec<String> = o
        .findings
        .iter()
        .filter_map(|f| f.applied().map(|x| format!("{x} ({})", f.code)))
        .collect();
    if fixes.is_empty() {
        Verdict::Runnable
    } else {
        Verdict::WithChanges(fixes)
    }
}

/// The unfixed errors; under `strict`, the warnings when there are no errors.
fn blocking(o: &Outcome) -> Vec<String> {
    let unfixed = |sev: Severity| -> Vec<String> {
        let found = o.findings.iter().filter(|f| !f.fixed && f.severity == sev);
        found.map(|f| format!("{} {}", f.code, f.name())).collect()
    };
    let errors = unfixed(Severity::Error);
    if errors.is_empty() {
        unfixed(Severity::Warning)
    } else {
        errors
    }
}

const GROUPS: [(&str, &str); 5] = [
    ("runnable", "runnable"),
    ("runnable_with_changes", "runnable with changes"),
    ("incompatible", "incompatible"),
    ("invalid", "invalid (never launched)"),
    ("unplanned", "not planned (no GPUs read)"),
];

fn group(v: &Verdict) -> usize {
    match v {
        Verdict::Runnable => 0,
        Verdict::WithChanges(_) => 1,
        Verdict::Incompatible(_) => 2,
        Verdict::Invalid(_) => 3,
        Verdict::Unplanned => 4,
    }
}

fn details(v: &Verdict) -> Vec<String> {
    match v {
        Verdict::Runnable | Verdict::Unplanned => vec![],
        Verdict::WithChanges(x) | Verdict::Incompatible(x) => x.clone(),
        Verdict::Invalid(m) => vec![m.clone()],
    }
}

fn human_list(rows: &[(String, String, Option<String>, Verdict)]) -> String {
    let mut out = String::new();
    for (g, (_, title)) in GROUPS.iter().enumerate() {
        let here: Vec<_> = rows.iter().filter(|r| group(&r.3) == g).collect();
        if here.is_empty() {
            continue;
        }
        out.push_str(&format!("{title}:\n"));
        for (name, origin, desc, v) in here {
            // Names, paths, descriptions and the reasons quoting GPU names are data: one
            // line each, escaped.
            let desc = desc
                .as_deref()
                .map(|d| format!(" — {}", escape(d)))
                .unwrap_or_default();
            let (name, origin) = (escape(name), escape(origin));
            out.push_str(&format!("  {name} ({origin}){desc}\n"));
            for d in details(v) {
                out.push_str(&format!("      {}\n", escape(&d)));
            }
        }
    }
    if rows.is_empty() {
        out.push_str("no profiles found\n");
    }
    out
}

fn row_json(name: &str, origin: &str, desc: &Option<String>, v: &Verdict) -> Value {
    json!({
        "name": name,
        "origin": origin,
        "description": desc,
        "status": GROUPS[group(v)].0,
        "details": details(v),
    })
}

fn show(name: &str, a: &ProfilesListArgs, layers: &Result<Layers, Fatal>) -> Result<i32, Fatal> {
    let p = profile::load(&search(a), name).map_err(|e| Fatal::usage(e.0))?;
    let ctx = context(&p, layers);
    let shown = hide_secrets(&p, ctx.as_ref().ok());
    let Some(topo) = gpus(layers)? else {
        if a.json {
            let mut v = profile_json(&shown);
            v["plan"] = Value::Null;
            print_out(&crate::out::json_safe(
                serde_json::to_string_pretty(&v).expect("json"),
            ))?;
        } else {
            print_out(&human_profile(&shown, &[]))?;
        }
        return Ok(exit::OK);
    };
    let unmet = profile::hardware::unmet(&p.hardware, &topo);
    let outcome = plan_profile(&ctx?, &topo)?;
    outcome.secrets.install();
    // As `profiles list` judges it: hardware conditions first, then the plan.
    let verdict = if unmet.is_empty() {
        classify(&outcome)
    } else {
        Verdict::Incompatible(unmet.clone())
    };
    let p = shown;
    if a.json {
        let mut v = profile_json(&p);
        v["status"] = json!(GROUPS[group(&verdict)].0);
        v["details"] = json!(details(&verdict));
        v["unmet_hardware"] = json!(unmet);
        v["plan"] = serde_json::from_str(&report::json(&outcome.plan)).expect("plan json");
        print_out(&crate::out::json_safe(
            serde_json::to_string_pretty(&v).expect("json"),
        ))?;
    } else {
        print_out(&human_profile(&p, &unmet))?;
        let refused = (!unmet.is_empty()).then_some("not for this machine");
        super::print_report(&report::human::human_refused(
            &outcome,
            report::use_color(&std::io::stdout()),
            refused,
        ))?;
    }
    Ok(match verdict {
        Verdict::Incompatible(_) => exit::BLOCKED,
        _ => exit::OK,
    })
}

fn profile_json(p: &Profile) -> Value {
    let settings = |s: &[profile::Setting]| -> Vec<Value> {
        s.iter()
            .map(|s| json!({ "key": s.key, "value": s.value, "from": s.origin }))
            .collect()
    };
    let table = |section: &str, t: toml::Table| -> Value {
        t.into_iter()
            .map(|(k, v)| {
                let from = p.from.get(&format!("{section}.{k}"));
                (k, json!({ "value": v, "from": from }))
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    json!({
        "name": p.name,
        "description": p.description,
        "chain": p.chain,
        "args": settings(&p.args),
        "env": settings(&p.env),
        "launcher": table("launcher", toml::Table::try_from(&p.launcher).expect("toml")),
        "hardware": table("hardware", toml::Table::try_from(&p.hardware).expect("toml")),
    })
}

fn human_profile(p: &Profile, unmet: &[String]) -> String {
    // Every value here is the profile's data: escaped, one line each.
    let mut out = format!(
        "profile {}: {}\n",
        escape(&p.name),
        escape(p.description.as_deref().unwrap_or(""))
    );
    out.push_str(&format!(
        "  files: {}\n",
        escape(&p.chain.join(" extends "))
    ));
    for (title, s) in [("args", &p.args), ("env", &p.env)] {
        for s in s.iter() {
            out.push_str(&format!(
                "  [{title}] {} = {}  ({})\n",
                escape(&s.key),
                escape(&s.value.to_string()),
                escape(&s.origin)
            ));
        }
    }
    for (k, from) in &p.from {
        let (section, key) = k.split_once('.').unwrap_or(("", k));
        let table = match section {
            "launcher" => toml::Table::try_from(&p.launcher),
            _ => toml::Table::try_from(&p.hardware),
        };
        if let Some(v) = table.ok().and_then(|t| t.get(key).cloned()) {
            out.push_str(&format!(
                "  [{section}] {} = {}  ({})\n",
                escape(key),
                escape(&v.to_string()),
                escape(from)
            ));
        }
    }
    for u in unmet {
        out.push_str(&format!("  not for this machine: {}\n", escape(u)));
    }
    out
}
