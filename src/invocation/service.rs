//! `systemd-unit` and `wait-ready`.

use std::time::Duration;

use crate::exit;
use crate::plan::Fatal;
use crate::profile::{self, Search};
use crate::service::ready::{self, Wait};
use crate::service::unit::{Profile, Ready, Scope, UnitSpec};

use super::cli::{SystemdUnitArgs, WaitReadyArgs};
use super::print_out;

pub(super) fn systemd_unit(a: &SystemdUnitArgs) -> Result<i32, Fatal> {
    let launcher = std::env::current_exe()
        .map_err(|e| Fatal::usage(format!("cannot tell the launcher's own path: {e}")))?;
    let scope = if a.user { Scope::User } else { Scope::System };
    let profiles_dir = a
        .profiles_dir
        .as_deref()
        .map(std::path::absolute)
        .transpose()
        .map_err(|e| Fatal::usage(format!("--profiles-dir: {e}")))?;
    let profile = match &a.profile {
        Some(p) if !a.template => Some(service_profile(p, scope, profiles_dir.as_deref())?),
        _ => None,
    };
    let spec = UnitSpec {
        launcher,
        name: a.name.clone(),
        profile: match &a.profile {
            Some(p) if !a.template => Profile::Named(p.clone()),
            _ => Profile::Instance,
        },
        port: a.port,
        ready: ready_address(profile.as_ref(), a.port, a.timeout),
        scope,
        profiles_dir,
        hardened: a.hardened.then(|| a.writable.clone()),
    };
    let text = spec.render().map_err(|e| Fatal::usage(e.to_string()))?;
    print_out(&text)?;
    Ok(exit::OK)
}

/// The profile as the service will find it. A system service has no `HOME`: it sees
/// `--profiles-dir`, `/etc/sglang-launch/profiles` and the shipped profiles, never the
/// user's config directory; a user service sees its `HOME`'s.
fn service_profile(
    name: &str,
    scope: Scope,
    dir: Option<&std::path::Path>,
) -> Result<profile::Profile, Fatal> {
    let search = match scope {
        Scope::System => Search::new(dir, |_| None),
        Scope::User => Search::new(dir, |k| {
            (k == "HOME").then(|| std::env::var(k).ok()).flatten()
        }),
    };
    profile::load(&search, name).map_err(|e| {
        let mine = Search::from_process(None).find(name).ok().flatten();
        let Some(found) = mine.filter(|f| !f.origin.starts_with("shipped:")) else {
            return Fatal::usage(format!("{e} (looked where the service will look)"));
        };
        Fatal::usage(format!(
            "profile {name} is {origin}, where this {what} will not look for it: install it with \
             `sudo install -D -m 644 {origin} /etc/sglang-launch/profiles/{name}.toml`, or pass \
             --profiles-dir with its directory{user}",
            origin = found.origin,
            what = if scope == Scope::System {
                "system service (it has no HOME)"
            } else {
                "user service"
            },
            user = if scope == Scope::System {
                ", or generate a --user unit"
            } else {
                ""
            },
        ))
    })
}

/// Where `wait-ready` polls: the unit's `--port`, else the profile's, else SGLang's default; the
/// profile's host (a wildcard address polled on loopback).
fn ready_address(profile: Option<&profile::Profile>, port: Option<u16>, timeout_s: u64) -> Ready {
    let arg = |key: &str| {
        profile?
            .args
            .iter()
            .rev()
            .find(|s| s.key == key)
            .map(profile::Setting::text)
    };
    let host = match arg("host").as_deref().map(str::trim) {
        None | Some("" | "0.0.0.0") => "127.0.0.1".to_owned(),
        Some("::" | "[::]") => "::1".to_owned(),
        Some(h) => h.to_owned(),
    };
    let port = port
        .or_else(|| arg("port")?.trim().parse().ok())
        .unwrap_or(crate::service::unit::DEFAULT_PORT);
    Ready {
        host,
        port,
        timeout_s,
    }
}

/// `scheme://authority` of the health URL: where SGLang's other endpoints are.
fn base_of(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split('/').next().unwrap_or(rest);
    format!("{scheme}://{authority}")
}

pub(super) fn wait_ready(a: &WaitReadyArgs) -> Result<i32, Fatal> {
    let w = Wait {
        url: a
            .url
            .clone()
            .unwrap_or_else(|| ready::health_url(&a.host, a.port)),
        timeout: Duration::from_secs(a.timeout),
        pid: a.pid,
    };
    match ready::wait(&w) {
        Ok(secs) => {
            crate::out::report_line(&format!(
                "sglang-launch: {} answered 200 after {secs:.1} s",
                w.url
            ));
            if let Some(line) = a
                .pid
                .and_then(|pid| super::observed::observe_ready(pid, &base_of(&w.url)))
            {
                crate::out::report_line(&format!("sglang-launch: {line}"));
            }
            Ok(exit::OK)
        }
        Err(e @ ready::WaitError::BadUrl(_)) => Err(Fatal::usage(e.to_string())),
        Err(e) => Err(Fatal {
            code: exit::NOT_READY,
            notes: Vec::new(),
            message: e.to_string(),
        }),
    }
}
