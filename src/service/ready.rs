//! `wait-ready`: poll SGLang's cheap health endpoint until it answers 200, the time is up, or
//! the server's process is gone.

use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use ureq::Agent;

use crate::facts::hub::origin;

/// SGLang's liveness endpoint; `/health_generate` would run a generation on every poll.
pub(crate) const HEALTH_PATH: &str = "/health";

const FIRST_DELAY: Duration = Duration::from_millis(500);
const MAX_DELAY: Duration = Duration::from_secs(5);
/// How often a sleep between polls looks at `--pid`, so a dead server is noticed at once.
const PID_CHECK: Duration = Duration::from_millis(100);
/// A floor for one request's timeout, so the last poll at the deadline still gets an answer.
const MIN_REQUEST: Duration = Duration::from_millis(500);
/// Redirects followed within the URL's own origin (`/health` → `/health/`).
const MAX_REDIRECTS: u32 = 10;

#[derive(Debug, Clone)]
pub(crate) struct Wait {
    pub(crate) url: String,
    pub(crate) timeout: Duration,
    pub(crate) pid: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum WaitError {
    #[error(
        "{0:?} is not an http:// or https:// URL with a host: give --url SGLang's health URL (e.g. http://127.0.0.1:30000/health), or --host and --port"
    )]
    BadUrl(String),
    #[error("{url} did not answer 200 within {elapsed:.1} s ({attempts} requests; last: {last})")]
    Timeout {
        url: String,
        elapsed: f64,
        attempts: u32,
        last: String,
    },
    #[error(
        "process {pid} is gone after {elapsed:.1} s: the server exited before {url} answered 200 (last: {last})"
    )]
    Gone {
        pid: i32,
        url: String,
        elapsed: f64,
        last: String,
    },
}

/// `http://HOST:PORT/health`, with an IPv6 host in brackets.
pub(crate) fn health_url(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("http://[{host}]:{port}{HEALTH_PATH}")
    } else {
        format!("http://{host}:{port}{HEALTH_PATH}")
    }
}

/// Polls until HTTP 200; returns the seconds it took.
pub(crate) fn wait(w: &Wait) -> Result<f64, WaitError> {
    check_url(&w.url)?;
    let agent = Agent::config_builder()
        .http_status_as_error(false)
        // Followed in `probe`, within the URL's own origin only.
        .max_redirects(0)
        .user_agent(concat!("sglang-launch/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent();
    let start = Instant::now();
    let mut delay = FIRST_DELAY;
    let mut attempts = 0;
    let mut last = "no request made".to_owned();
    loop {
        gone(w, start, &last)?;
        let left = w.timeout.saturating_sub(start.elapsed());
        attempts += 1;
        match probe(&agent, &w.url, left.min(MAX_DELAY).max(MIN_REQUEST)) {
            Ok(200) => return Ok(start.elapsed().as_secs_f64()),
            Ok(status) => last = format!("HTTP {status}"),
            Err(e) => last = e,
        }
        let left = w.timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(WaitError::Timeout {
                url: w.url.clone(),
                elapsed: start.elapsed().as_secs_f64(),
                attempts,
                last,
            });
        }
        sleep_watching(w, start, &last, delay.min(left))?;
        delay = (delay * 2).min(MAX_DELAY);
    }
}

fn check_url(url: &str) -> Result<(), WaitError> {
    let bad = || WaitError::BadUrl(url.to_owned());
    let uri: ureq::http::Uri = url.parse().map_err(|_| bad())?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
    if !scheme_ok || uri.host().is_none_or(str::is_empty) {
        return Err(bad());
    }
    Ok(())
}

/// One GET: the status, or why there was none. A redirect is followed only within the URL's
/// own origin (scheme, host and port): another server's 200 says nothing about this one.
fn probe(agent: &Agent, url: &str, timeout: Duration) -> Result<u16, String> {
    let until = Instant::now() + timeout;
    let mut at = url.to_owned();
    for _ in 0..=MAX_REDIRECTS {
        let left = until.saturating_duration_since(Instant::now());
        let resp = agent
            .get(&at)
            .config()
            .timeout_global(Some(left.max(Duration::from_millis(1))))
            .build()
            .call()
            .map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        if !matches!(status, 301 | 302 | 303 | 307 | 308) {
            return Ok(status);
        }
        let location = resp.headers().get("location").and_then(|v| v.to_str().ok());
        match location.and_then(|l| origin::join(&at, l)) {
            Some(next) if origin::same(&next, url) => at = next,
            Some(next) => {
                let (scheme, host, port) = origin::of(&next).unwrap_or_default();
                return Err(format!(
                    "HTTP {status}, a redirect to another server ({scheme}://{host}:{port}), \
                     not followed: only the URL's own server counts"
                ));
            }
            None => return Ok(status),
        }
    }
    Err(format!("more than {MAX_REDIRECTS} redirects"))
}

fn sleep_watching(w: &Wait, start: Instant, last: &str, total: Duration) -> Result<(), WaitError> {
    let until = Instant::now() + total;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(PID_CHECK));
        gone(w, start, last)?;
    }
}

fn gone(w: &Wait, start: Instant, last: &str) -> Result<(), WaitError> {
    match w.pid {
        Some(pid) if !alive(pid) => Err(WaitError::Gone {
            pid,
            url: w.url.clone(),
            elapsed: start.elapsed().as_secs_f64(),
            last: last.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Signal 0 tests for existence; EPERM means it exists under another user.
fn alive(pid: i32) -> bool {
    !matches!(kill(Pid::from_raw(pid), None), Err(Errno::ESRCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_url_brackets_ipv6() {
        assert_eq!(
            health_url("127.0.0.1", 30000),
            "http://127.0.0.1:30000/health"
        );
        assert_eq!(health_url("::1", 8000), "http://[::1]:8000/health");
        assert_eq!(health_url("[::1]", 8000), "http://[::1]:8000/health");
    }

    #[test]
    fn urls_need_a_scheme_and_host() {
        assert!(check_url("http://h:1/health").is_ok());
        assert!(check_url("https://h/health").is_ok());
        for bad in ["h:1/health", "ftp://h/x", "http:///x", "not a url"] {
            assert_eq!(
                check_url(bad),
                Err(WaitError::BadUrl(bad.to_owned())),
                "{bad}"
            );
        }
    }

    #[test]
    fn this_process_is_alive() {
        assert!(alive(std::process::id() as i32));
    }
}
