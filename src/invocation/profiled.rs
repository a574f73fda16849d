//! A planning request started from a profile: its launcher settings as a layer of the
//! layered settings, its SGLang tokens before the user's, its environment under the user's.

use std::ffi::OsString;

use super::context::Context;
use crate::exit;
use crate::facts::{Env, Topology};
use crate::plan::Fatal;
use crate::plan::v1::EnvChanges;
use crate::profile::{self, Profile};
use crate::sglang;

/// The request's parts after the profile, and what the user overrode.
pub(crate) struct Prepared {
    pub(crate) tokens: Vec<OsString>,
    pub(crate) env: Env,
    /// What the profile's `[env]` sets in `env` (shown wherever the plan's changes are).
    pub(crate) changes: EnvChanges,
    pub(crate) overrides: Vec<String>,
}

/// The context profile's SGLang tokens before the user's and its environment under the
/// user's, for the context's release; without a profile, the user's as they are.
pub(crate) fn prepare(
    ctx: &Context,
    user_tokens: Vec<OsString>,
    user_env: Env,
) -> Result<Prepared, Fatal> {
    let Some(profile) = &ctx.profile else {
        return Ok(Prepared {
            tokens: user_tokens,
            env: user_env,
            changes: EnvChanges::default(),
            overrides: Vec::new(),
        });
    };
    let flags = ctx.flags();
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
pub(crate) fn check_hardware(profile: &Profile, topo: &Topology) -> Result<(), Fatal> {
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
