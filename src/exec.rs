//! Replaces this process with SGLang (`execve`): same PID, so signals go straight to SGLang and
//! systemd, scripts and supervisors see SGLang as the process they started.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use crate::facts::Env;
use crate::secrets;
use crate::sglang::SglangArgs;

/// Why exec did not happen (on success it never returns).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExecError {
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
pub(crate) fn exec(argv: &[OsString], env: &Env) -> Result<std::convert::Infallible, ExecError> {
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

/// What exec will change in the environment it inherited: `(name, value)` set and names
/// unset, compared byte for byte (as text for the log line).
pub(crate) fn env_changes(env: &Env) -> (Vec<(String, String)>, Vec<String>) {
    let inherited: std::collections::BTreeMap<Vec<u8>, Vec<u8>> = std::env::vars_os()
        .map(|(k, v)| (k.into_vec(), v.into_vec()))
        .collect();
    let planned: std::collections::BTreeMap<&[u8], &[u8]> = env.raw().collect();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let set = planned
        .iter()
        .filter(|(k, v)| inherited.get(**k).is_none_or(|old| old.as_slice() != **v))
        .map(|(k, v)| (text(k), text(v)))
        .collect();
    let unset = inherited
        .keys()
        .filter(|k| !planned.contains_key(k.as_slice()))
        .map(|k| text(k))
        .collect();
    (set, unset)
}

/// The line logged before exec, so service logs show what runs: the command, shell-quoted
/// (byte-exact, as `--print-args`) with secret values as `***`, and the environment changes
/// (`+NAME=value`, `-NAME`).
pub(crate) fn describe(program: &std::path::Path, args: &SglangArgs, env: &Env) -> String {
    let mut words: Vec<OsString> = vec![
        program.as_os_str().to_owned(),
        "-m".into(),
        "sglang.launch_server".into(),
    ];
    words.extend(secrets::mask_tokens(args, &args.tokens));
    let quoted: Vec<String> = words
        .iter()
        .map(|w| crate::report::quote_masked(w))
        .collect();
    let mut line = format!("exec: {}", quoted.join(" "));
    let (set, unset) = env_changes(env);
    if !set.is_empty() || !unset.is_empty() {
        let shown = set
            .iter()
            .map(|(k, v)| {
                let v = if secrets::is_secret_env(k) {
                    crate::out::MASK
                } else {
                    v.as_str()
                };
                format!(
                    "+{}",
                    crate::report::quote_masked(format!("{k}={v}").as_ref())
                )
            })
            .chain(
                unset
                    .iter()
                    .map(|k| format!("-{}", crate::report::quote(k.as_ref()))),
            );
        line += &format!(" (env: {})", shown.collect::<Vec<_>>().join(" "));
    }
    line
}

fn kv(k: &[u8], v: &[u8]) -> Result<CString, ExecError> {
    let mut b = Vec::with_capacity(k.len() + v.len() + 1);
    b.extend_from_slice(k);
    b.push(b'=');
    b.extend_from_slice(v);
    cstring(&b)
}
