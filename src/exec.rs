//! Replaces this process with SGLang (`execve`): same PID, so signals go straight to SGLang and
//! systemd, scripts and supervisors see SGLang as the process they started.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::facts::Env;
use crate::secrets;
use crate::sglang::SglangArgs;

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

/// Exec `argv[0]` with `argv` and exactly the environment `env` (byte-exact arguments: the
/// planned env holds the process's variables as strings, so non-UTF-8 variables that no fix
/// touched are taken from the real environment instead).
pub fn exec(argv: &[OsString], env: &Env) -> Result<std::convert::Infallible, ExecError> {
    let program = argv.first().cloned().unwrap_or_default();
    let c_args = argv
        .iter()
        .map(|a| cstring(a.as_bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    let c_env = environment(env)?;
    nix::unistd::execve(&cstring(program.as_bytes())?, &c_args, &c_env).map_err(|source| {
        ExecError::Exec {
            program: program.to_string_lossy().into_owned(),
            source,
        }
    })
}

/// `NAME=value` entries: the real process environment (byte-exact) with the plan's changes.
fn environment(env: &Env) -> Result<Vec<CString>, ExecError> {
    let mut out = Vec::new();
    for (k, v) in std::env::vars_os() {
        let name = k.to_string_lossy();
        match env.get(&name) {
            // Unchanged (lossless) variables keep their original bytes.
            Some(planned)
                if planned.as_bytes() == v.as_bytes() || planned == v.to_string_lossy() =>
            {
                out.push(kv(k.as_bytes(), v.as_bytes())?);
            }
            Some(planned) => out.push(kv(k.as_bytes(), planned.as_bytes())?),
            None => {} // unset by the plan
        }
    }
    for (k, v) in &env.vars {
        if std::env::var_os(k).is_none() {
            out.push(kv(k.as_bytes(), v.as_bytes())?);
        }
    }
    Ok(out)
}

/// What exec will change in the environment it inherited: `(name, value)` set and names unset.
pub fn env_changes(env: &Env) -> (Vec<(String, String)>, Vec<String>) {
    let mut unset: Vec<String> = Vec::new();
    let mut set: Vec<(String, String)> = Vec::new();
    for (k, v) in std::env::vars_os() {
        let name = k.to_string_lossy().into_owned();
        match env.get(&name) {
            Some(planned)
                if planned.as_bytes() == v.as_bytes() || planned == v.to_string_lossy() => {}
            Some(planned) => set.push((name, planned.to_owned())),
            None => unset.push(name),
        }
    }
    set.extend(
        env.vars
            .iter()
            .filter(|(k, _)| std::env::var_os(k).is_none())
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    set.sort();
    unset.sort();
    (set, unset)
}

/// The line logged before exec, so service logs show what runs: the command, shell-quoted with
/// secret values as `***`, and the environment changes (`+NAME=value`, `-NAME`).
pub fn describe(program: &std::path::Path, args: &SglangArgs, env: &Env) -> String {
    let mut words = vec![
        program.to_string_lossy().into_owned(),
        "-m".to_owned(),
        "sglang.launch_server".to_owned(),
    ];
    words.extend(secrets::mask_tokens(args, &args.tokens));
    let mut line = format!("exec: {}", shell_words::join(words));
    let (set, unset) = env_changes(env);
    if !set.is_empty() || !unset.is_empty() {
        let shown = set
            .iter()
            .map(|(k, v)| {
                let v = if secrets::is_secret_env(k) {
                    secrets::MASK
                } else {
                    v.as_str()
                };
                format!("+{}", shell_words::quote(&format!("{k}={v}")))
            })
            .chain(unset.iter().map(|k| format!("-{k}")));
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
