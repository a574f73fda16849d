//! Replaces this process with SGLang (`execve`): same PID, so signals go straight to SGLang and
//! systemd, scripts and supervisors see SGLang as the process they started.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::facts::Env;

/// Why exec did not happen (on success it never returns).
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("argument or variable contains a NUL byte: {0}")]
    Nul(String),
    #[error("cannot exec {program}: {source}")]
    Exec { program: String, source: nix::Error },
}

fn cstring(bytes: &[u8]) -> Result<CString, ExecError> {
    CString::new(bytes).map_err(|_| ExecError::Nul(String::from_utf8_lossy(bytes).into_owned()))
}

/// Exec `argv[0]` with `argv` and exactly the environment `env`, both byte-exact (the plan's
/// environment holds every variable's bytes, with its changes applied).
pub fn exec(argv: &[OsString], env: &Env) -> Result<std::convert::Infallible, ExecError> {
    let program = argv.first().cloned().unwrap_or_default();
    let c_args = argv
        .iter()
        .map(|a| cstring(a.as_bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    let c_env = env
        .raw()
        .map(|(k, v)| kv(k, v))
        .collect::<Result<Vec<_>, _>>()?;
    // Rust ignores SIGPIPE for its own writes, and an ignored signal stays ignored across
    // exec: SGLang gets the default back, as it would from a shell (and we take the ignore
    // back if exec fails, so the error message cannot kill us).
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: only default and ignore dispositions, no handler runs.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
    let err = nix::unistd::execve(&cstring(program.as_bytes())?, &c_args, &c_env).unwrap_err();
    // SAFETY: as above.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigIgn) };
    Err(ExecError::Exec {
        program: program.to_string_lossy().into_owned(),
        source: err,
    })
}

fn kv(k: &[u8], v: &[u8]) -> Result<CString, ExecError> {
    let mut b = Vec::with_capacity(k.len() + v.len() + 1);
    b.extend_from_slice(k);
    b.push(b'=');
    b.extend_from_slice(v);
    cstring(&b)
}
