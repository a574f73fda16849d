//! A planning request started from a profile: the profile's launcher settings where the user
//! set none, its SGLang tokens before the user's, its environment under the user's.

use std::ffi::OsString;

use super::cli::PlanOptions;
use crate::exit;
use crate::facts::{Env, Topology};
use crate::plan::{Fatal, resolve_interpreter};
use crate::profile::{self, Launcher, Profile, Search};
use crate::sglang::{self, version};

/// The request's parts after the profile, and what the user overrode.
pub struct Prepared {
    pub opts: PlanOptions,
    pub tokens: Vec<OsString>,
    pub env: Env,
    pub profile: Option<Profile>,
    pub overrides: Vec<String>,
}

/// Launcher option ids the user set (command line or `SGLANG_LAUNCH_*`), which a profile
/// never changes.
pub type Explicit<'a> = &'a dyn Fn(&str) -> bool;

pub fn prepare(
    opts: &PlanOptions,
    explicit: Explicit,
    tokens: Vec<OsString>,
) -> Result<Prepared, Fatal> {
    let Some(name) = opts.profile.as_deref().filter(|n| !n.trim().is_empty()) else {
        return Ok(Prepared {
            opts: opts.clone(),
            tokens,
            env: Env::from_process(),
            profile: None,
            overrides: Vec::new(),
        });
    };
    let search = Search::from_process(opts.profiles_dir.dir.as_deref());
    let profile = profile::load(&search, name).map_err(|e| Fatal::usage(e.0))?;
    from_profile(profile, opts, explicit, tokens, Env::from_process())
}

/// The same, for a profile already loaded.
pub fn from_profile(
    profile: Profile,
    opts: &PlanOptions,
    explicit: Explicit,
    user_tokens: Vec<OsString>,
    user_env: Env,
) -> Result<Prepared, Fatal> {
    let mut opts = opts.clone();
    apply_launcher(&mut opts, &profile.launcher, explicit);
    let python = resolve_interpreter(opts.python.as_deref());
    let flags = version::select(
        opts.sglang_version.as_deref(),
        python.found.then_some(python.path.as_path()),
    )
    .flags;
    let ours = profile::tokens(&profile.args, flags).map_err(|e| Fatal::usage(e.0))?;
    let mut overrides = overridden(flags, &ours, &user_tokens);
    let (env, env_overrides) = merge_env(&profile, user_env);
    overrides.extend(env_overrides);
    let tokens = ours.into_iter().chain(user_tokens).collect();
    Ok(Prepared {
        opts,
        tokens,
        env,
        profile: Some(profile),
        overrides,
    })
}

/// The profile's launcher settings where neither the command line nor `SGLANG_LAUNCH_*` set
/// one. The layered configuration replaces this with its own precedence.
pub fn apply_launcher(opts: &mut PlanOptions, l: &Launcher, explicit: Explicit) {
    let free = |id: &str| !explicit(id);
    if free("sglang_version") && l.sglang_version.is_some() {
        opts.sglang_version = l.sglang_version.clone();
    }
    if free("python") && l.python.is_some() {
        opts.python = l.python.clone();
    }
    if free("allow")
        && let Some(v) = &l.allow
    {
        opts.allow = v.clone();
    }
    if free("deny")
        && let Some(v) = &l.deny
    {
        opts.deny = v.clone();
    }
    for (id, value, field) in [
        ("strict", l.strict, &mut opts.strict),
        ("fit", l.fit, &mut opts.fit),
        ("offline", l.offline, &mut opts.offline),
    ] {
        if free(id)
            && let Some(v) = value
        {
            *field = v;
        }
    }
}

/// Each profile option the user's tokens set again (argparse keeps the last), with values
/// masked as in every report.
fn overridden(
    flags: &'static sglang::FlagSet,
    ours: &[OsString],
    user: &[OsString],
) -> Vec<String> {
    let p = sglang::parse(flags, ours.to_vec());
    let u = sglang::parse(flags, user.to_vec());
    let shown = |a: &sglang::SglangArgs, o: &sglang::Occurrence| {
        crate::secrets::mask_tokens(a, &a.tokens)[o.start..o.start + o.len].join(" ")
    };
    p.occurrences
        .iter()
        .filter_map(|o| {
            let mine = u.occurrences.iter().rev().find(|x| x.dest == o.dest)?;
            Some(format!(
                "`{}` overridden by the command line's `{}`",
                shown(&p, o),
                shown(&u, mine)
            ))
        })
        .collect()
}

/// The profile's `[env]` under the user's environment: a variable already set stays.
fn merge_env(profile: &Profile, mut env: Env) -> (Env, Vec<String>) {
    let mut overrides = Vec::new();
    for s in &profile.env {
        let value = match &s.value {
            toml::Value::String(v) => v.clone(),
            other => other.to_string(),
        };
        match env.get(&s.key) {
            Some(mine) if mine != value => {
                let masked = |v: &str| {
                    if crate::secrets::is_secret_env(&s.key) {
                        crate::secrets::MASK.to_owned()
                    } else {
                        v.to_owned()
                    }
                };
                overrides.push(format!(
                    "`{}={}` overridden by the environment's `{}={}`",
                    s.key,
                    masked(&value),
                    s.key,
                    masked(mine)
                ));
            }
            Some(_) => {}
            None => {
                env.vars.insert(s.key.clone(), value);
            }
        }
    }
    (env, overrides)
}

/// A profile run on hardware it does not describe is refused (exit 1), naming the conditions.
pub fn check_hardware(profile: &Profile, topo: &Topology) -> Result<(), Fatal> {
    let unmet = profile::hardware::unmet(&profile.hardware, topo);
    if unmet.is_empty() {
        return Ok(());
    }
    Err(Fatal {
        code: exit::BLOCKED,
        message: format!(
            "profile {} is not for this machine: {}; pick another (`sglang-launch profiles list`)",
            profile.name,
            unmet.join("; ")
        ),
    })
}
