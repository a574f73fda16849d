//! A planning request started from a profile: its launcher settings as a layer of the
//! layered settings, its SGLang tokens before the user's, its environment under the user's.

use std::ffi::OsString;

use super::cli::ProfileArg;
use crate::exit;
use crate::facts::{Env, Topology};
use crate::plan::json::EnvChanges;
use crate::plan::{Fatal, resolve_interpreter};
use crate::profile::{self, Profile, Search};
use crate::settings::Settings;
use crate::sglang::{self, version};

/// The request's parts after the profile, and what the user overrode.
pub struct Prepared {
    pub tokens: Vec<OsString>,
    pub env: Env,
    /// What the profile's `[env]` sets in `env` (shown wherever the plan's changes are).
    pub changes: EnvChanges,
    pub overrides: Vec<String>,
}

/// The profile `--profile` / `SGLANG_LAUNCH_PROFILE` names, if any.
pub fn load(arg: &ProfileArg) -> Result<Option<Profile>, Fatal> {
    let Some(name) = arg.profile.as_deref().filter(|n| !n.trim().is_empty()) else {
        return Ok(None);
    };
    let search = Search::from_process(arg.profiles_dir.dir.as_deref());
    profile::load(&search, name)
        .map(Some)
        .map_err(|e| Fatal::usage(e.0))
}

/// The profile's `[launcher]` table, as the profile layer of the layered settings (a bad
/// `mode` value is refused there, naming the profile).
pub fn launcher_layer(p: &Profile) -> Result<(String, toml::Table), Fatal> {
    let table = toml::Table::try_from(&p.launcher)
        .map_err(|e| Fatal::usage(format!("profile {}: [launcher]: {e}", p.name)))?;
    Ok((p.name.clone(), table))
}

/// The flag set of the release the merged settings select (`--sglang-version`, else the
/// interpreter's SGLang).
pub fn flags(s: &Settings) -> &'static sglang::FlagSet {
    let python = resolve_interpreter(s.python.as_deref());
    version::select(
        s.sglang_version.as_deref(),
        python.found.then_some(python.path.as_path()),
    )
    .flags
}

/// The profile's SGLang tokens before the user's and its environment under the user's, for
/// the flag set the merged settings select; without a profile, the user's as they are.
pub fn prepare(
    profile: Option<&Profile>,
    s: &Settings,
    user_tokens: Vec<OsString>,
    user_env: Env,
) -> Result<Prepared, Fatal> {
    let Some(profile) = profile else {
        return Ok(Prepared {
            tokens: user_tokens,
            env: user_env,
            changes: EnvChanges::default(),
            overrides: Vec::new(),
        });
    };
    let flags = flags(s);
    let ours = profile::tokens(&profile.args, flags).map_err(|e| Fatal::usage(e.0))?;
    let mut overrides = overridden(flags, &ours, &user_tokens);
    let (env, changes, env_overrides) = merge_env(profile, user_env);
    overrides.extend(env_overrides);
    Ok(Prepared {
        tokens: ours.into_iter().chain(user_tokens).collect(),
        env,
        changes,
        overrides,
    })
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
        crate::secrets::mask_tokens_lossy(a, &a.tokens)[o.start..o.start + o.len].join(" ")
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
fn merge_env(profile: &Profile, mut env: Env) -> (Env, EnvChanges, Vec<String>) {
    let mut overrides = Vec::new();
    let mut changes = EnvChanges::default();
    for s in &profile.env {
        let value = s.text();
        match env.get(&s.key) {
            Some(mine) if mine != value => {
                let masked = |v: &str| {
                    if crate::secrets::is_secret_env(&s.key) {
                        crate::out::MASK.to_owned()
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
                env.set(&s.key, &value);
                changes.set.insert(s.key.clone(), value);
            }
        }
    }
    (env, changes, overrides)
}

/// A profile run on hardware it does not describe is refused (exit 1), naming the conditions.
pub fn check_hardware(profile: &Profile, topo: &Topology) -> Result<(), Fatal> {
    let unmet = profile::hardware::unmet(&profile.hardware, topo);
    if unmet.is_empty() {
        return Ok(());
    }
    Err(Fatal {
        code: exit::BLOCKED,
        notes: Vec::new(),
        message: format!(
            "profile {} is not for this machine: {}; pick another (`sglang-launch profiles list`)",
            profile.name,
            unmet.join("; ")
        ),
    })
}
