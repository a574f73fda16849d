//! `systemd-unit` and `wait-ready`.

use std::time::Duration;

use crate::exit;
use crate::plan::Fatal;
use crate::service::ready::{self, Wait};
use crate::service::unit::{Profile, Scope, UnitSpec};

use super::cli::{SystemdUnitArgs, WaitReadyArgs};
use super::print_out;

pub(super) fn systemd_unit(a: &SystemdUnitArgs) -> Result<i32, Fatal> {
    let launcher = std::env::current_exe()
        .map_err(|e| Fatal::usage(format!("cannot tell the launcher's own path: {e}")))?;
    let spec = UnitSpec {
        launcher,
        name: a.name.clone(),
        profile: match &a.profile {
            Some(p) if !a.template => Profile::Named(p.clone()),
            _ => Profile::Instance,
        },
        port: a.port,
        scope: if a.user { Scope::User } else { Scope::System },
    };
    let text = spec.render().map_err(|e| Fatal::usage(e.to_string()))?;
    print_out(&text)?;
    Ok(exit::OK)
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
            message: e.to_string(),
        }),
    }
}
