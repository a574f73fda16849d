//! Which values are secrets, found once per invocation and handed to [`crate::out`], which
//! hides them (and every URL password) in everything written. The exec'd process always gets
//! the real values; only what we print is masked.
//!
//! What counts as a secret:
//! * the value of an SGLang option whose dest is a secret ([`SECRET_DESTS`]), in every spelling
//!   argparse takes: exact, abbreviated (`--api`), `--opt=value`, repeated, from a `--config`
//!   file (its keys become `--key` tokens: `api_key:`, `api-key:`, list values);
//! * the value of any other option or variable whose *name* is secret by [`is_secret_name`];
//! * each of those values wherever else it recurs (another flag, a variable, a message).
//!
//! The name rule works on whole words: the name is split on `-` and `_`, and it is secret when
//! its last word is one of [`SECRET_WORDS`] (`--hf-token`, `HF_TOKEN`, `api_key`,
//! `AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD`). So `--tokenizer-mode`, `max_tokens`,
//! `--ssl-keyfile` (a path), `HF_TOKEN_PATH` and `SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE` are
//! not secrets. Exceptions: a last word after `per` (`…_PER_TOKEN` is a granularity) and the
//! names in [`NOT_SECRET`].

use std::ffi::{OsStr, OsString};

use crate::facts::Env;
use crate::out::{self, MASK, Redactor};
use crate::profile::Profile;
use crate::sglang::parser::CLOSE_OPTION;
use crate::sglang::{FlagSet, SglangArgs};

/// argparse dests whose values are secrets (every SGLang version).
pub(crate) const SECRET_DESTS: &[&str] = &["api_key", "admin_api_key", "ssl_keyfile_password"];

/// A name whose last word is one of these names a secret.
pub(crate) const SECRET_WORDS: &[&str] = &[
    "token",
    "key",
    "apikey",
    "password",
    "passwd",
    "secret",
    "credential",
    "credentials",
];

/// Names that end in a secret word but hold no secret.
pub(crate) const NOT_SECRET: &[&str] = &["SGLANG_LOG_DECODE_GRAPH_KEY"];

pub(crate) fn is_secret_dest(dest: &str) -> bool {
    SECRET_DESTS.contains(&dest)
}

/// The word rule (module docs) for an option, key or variable name, leading dashes ignored.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let bare = name.trim_start_matches('-');
    if NOT_SECRET.iter().any(|n| n.eq_ignore_ascii_case(bare)) {
        return false;
    }
    let words: Vec<String> = bare
        .split(['-', '_'])
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let after_per = words.len() >= 2 && words[words.len() - 2] == "per";
    !after_per
        && words
            .last()
            .is_some_and(|w| SECRET_WORDS.contains(&w.as_str()))
}

/// Environment variables whose values are secrets: tokens, keys, passwords.
pub(crate) fn is_secret_env(name: &str) -> bool {
    is_secret_name(name)
}

/// The tokens with every secret value replaced by `***` (`--api-key=x` → `--api-key=***`) and
/// every URL password hidden; byte-exact otherwise.
pub(crate) fn mask_tokens(args: &SglangArgs, tokens: &[OsString]) -> Vec<OsString> {
    mask(args, tokens, false)
}

/// [`mask_tokens`] as text (for JSON and messages).
pub(crate) fn mask_tokens_lossy(args: &SglangArgs, tokens: &[OsString]) -> Vec<String> {
    mask_tokens(args, tokens)
        .iter()
        .map(|t| t.to_string_lossy().into_owned())
        .collect()
}

/// The `--config` file's tokens, masked the same way.
fn mask_config(args: &SglangArgs) -> Vec<(String, OsString)> {
    let Some(c) = &args.config else {
        return Vec::new();
    };
    let toks: Vec<OsString> = c.tokens.iter().map(OsString::from).collect();
    c.tokens
        .iter()
        .cloned()
        .zip(mask(args, &toks, true))
        .collect()
}

fn mask(args: &SglangArgs, tokens: &[OsString], from_config: bool) -> Vec<OsString> {
    let mut out = tokens.to_vec();
    // Whatever the parser made of the line (it may have stopped early), a token that spells a
    // secret option, or a prefix argparse could expand to one, hides the values after it.
    let mut i = 0;
    while i < out.len() {
        let t = out[i].to_string_lossy().into_owned();
        match t.split_once('=').filter(|_| t.starts_with('-')) {
            Some((opt, _)) if names_secret(args.flags, opt) => {
                out[i] = format!("{opt}={MASK}").into()
            }
            None if names_secret(args.flags, &t) => {
                // The value's place is hidden whatever it holds (argparse refuses `-sk…` as
                // "expected one argument" and names it as unrecognized), unless it is one of
                // SGLang's options as spelled: then the user left the value out.
                if out.get(i + 1).is_some_and(|n| !is_option(args.flags, n)) {
                    out[i + 1] = MASK.into();
                    i += 1;
                }
                while out.get(i + 1).is_some_and(|n| !looks_like_option(n)) {
                    out[i + 1] = MASK.into();
                    i += 1;
                }
            }
            _ => {
                if let Some(s) = out[i].to_str() {
                    let masked = out::mask_userinfo(s);
                    if masked != s {
                        out[i] = masked.into();
                    }
                }
            }
        }
        i += 1;
    }
    // And every value the parser gave a secret option (whatever the spelling was).
    for occ in &args.occurrences {
        if !is_secret_dest(&occ.dest) || occ.from_config != from_config || occ.start >= out.len() {
            continue;
        }
        let first = out[occ.start].to_string_lossy().into_owned();
        if let Some((opt, _)) = first.split_once('=') {
            out[occ.start] = format!("{opt}={MASK}").into();
        }
        let end = (occ.start + occ.len).min(out.len());
        for t in &mut out[occ.start + 1..end] {
            *t = MASK.into();
        }
    }
    out
}

/// What argparse reads as an option rather than a value: `-x`, `--x` (not `-1`, not `-`, not a
/// token with a space), so `--api-key --port 1` keeps `--port` as written.
fn looks_like_option(token: &OsStr) -> bool {
    let t = token.as_encoded_bytes();
    t.len() > 1 && t[0] == b'-' && !t.contains(&b' ') && !(t[1].is_ascii_digit() || t[1] == b'.')
}

/// One of the flag set's option strings exactly (`--port`, `--port=1`, `-h`): what sits in a
/// secret option's value place and is kept, since it is an option and no value.
fn is_option(flags: &FlagSet, token: &OsStr) -> bool {
    let t = token.to_string_lossy();
    let name = t
        .split_once('=')
        .filter(|_| t.starts_with("--"))
        .map_or(&*t, |(o, _)| o);
    flags
        .actions
        .iter()
        .any(|a| a.option_strings.iter().any(|o| o == name))
}

/// Parsed values with secret dests replaced by `***` and URL passwords hidden.
pub(crate) fn mask_values(
    values: &std::collections::BTreeMap<String, serde_json::Value>,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    values
        .iter()
        .map(|(k, v)| {
            let v = match v {
                v if is_secret_dest(k) && !v.is_null() => serde_json::Value::from(MASK),
                serde_json::Value::String(s) => out::mask_userinfo(s).into(),
                v => v.clone(),
            };
            (k.clone(), v)
        })
        .collect()
}

/// Whether `token` (without `=value`) is a secret option of this flag set, or a prefix argparse
/// could expand to one, or (not SGLang's at all) has a secret name or is spelled close to a
/// secret option (`-api-key`, `--api-kye`: argparse names it, and what follows, as
/// unrecognized).
fn names_secret(flags: &FlagSet, token: &str) -> bool {
    if token.len() <= 2 || !token.starts_with('-') {
        return false;
    }
    let strings = || {
        flags
            .actions
            .iter()
            .flat_map(|a| a.option_strings.iter().map(move |o| (a, o)))
    };
    // An exact spelling is that option, even when it prefixes another (`--ssl-keyfile`).
    if let Some(a) = flags.action(token) {
        return is_secret_dest(&a.dest);
    }
    let mut known = strings().filter(|(_, o)| o.starts_with(token)).peekable();
    if known.peek().is_none() {
        // `--hf-token x`, a `--config` key as `--api_key`, another tool's flag: its value goes
        // into an error message, so a secret name hides it.
        return is_secret_name(token) || close_to_secret(flags, token);
    }
    known.any(|(a, _)| is_secret_dest(&a.dest))
}

/// An unknown option spelled close to a secret one, as "did you mean" would suggest it: dashes
/// and underscores aside (`-api-key`, `--api_key`), or by [`CLOSE_OPTION`] similarity.
fn close_to_secret(flags: &FlagSet, token: &str) -> bool {
    let key = format!("--{}", token.trim_start_matches('-').replace('_', "-"));
    flags
        .actions
        .iter()
        .filter(|a| is_secret_dest(&a.dest))
        .flat_map(|a| &a.option_strings)
        // A key ten times longer cannot reach the cut-off; Jaro on it would cost the most.
        .any(|o| {
            o.starts_with(&key)
                || (key.len() <= 10 * o.len() && strsim::jaro_winkler(&key, o) >= CLOSE_OPTION)
        })
}

/// Every secret value present in the arguments (the user's, the `--config` file's) and the
/// environment, for scrubbing free text.
pub(crate) fn secret_values(args: &SglangArgs, env: &Env) -> Vec<String> {
    let user = args
        .tokens
        .iter()
        .zip(mask_tokens(args, &args.tokens))
        .map(|(t, m)| (t.to_string_lossy().into_owned(), m));
    let hidden = user.chain(mask_config(args)).flat_map(|(t, m)| {
        let m = m.to_string_lossy();
        if m == t {
            return Vec::new();
        }
        match (t.split_once('='), m.split_once('=')) {
            (Some((_, v)), Some((_, mv))) if mv == MASK => vec![v.to_owned()],
            // A URL token: only its userinfo is secret.
            _ if m != MASK => userinfo_values(&t),
            _ => vec![t],
        }
    });
    let parsed = args
        .values
        .iter()
        .filter(|(d, _)| is_secret_dest(d))
        .flat_map(|(_, v)| match v {
            serde_json::Value::Array(items) => items.clone(),
            v => vec![v.clone()],
        })
        .filter_map(|v| v.as_str().map(str::to_owned));
    let from_env = env.vars.iter().flat_map(|(k, v)| {
        if is_secret_env(k) {
            vec![v.clone()]
        } else {
            // `HF_ENDPOINT=https://user:pass@mirror`: the password may recur in other forms.
            userinfo_values(v)
        }
    });
    hidden.chain(parsed).chain(from_env).collect()
}

/// Each userinfo `text` holds (as [`out::userinfo_spans`] finds them) and its password alone,
/// which may recur by itself.
fn userinfo_values(text: &str) -> Vec<String> {
    out::userinfo_spans(text)
        .into_iter()
        .flat_map(|s| {
            let info = &text[s];
            let password = info.split_once(':').map(|(_, p)| p.to_owned());
            std::iter::once(info.to_owned()).chain(password)
        })
        .collect()
}

/// A profile as `profiles show` prints it, and its secrets for scrubbing everything else
/// printed: the value of each `[args]` option a token of that name would have hidden
/// ([`mask_tokens`]'s rule) and of each secret-named `[env]` variable is `***`; the secrets are
/// those the line and environment it makes hold ([`secret_values`]), and the masked values.
pub(crate) fn in_profile(p: &Profile, flags: &'static FlagSet) -> (Profile, Redactor) {
    let mut shown = p.clone();
    let mut hidden = Vec::new();
    let secret_args = shown
        .args
        .iter_mut()
        .filter(|s| names_secret(flags, &format!("--{}", s.key.trim_start_matches('-'))));
    let secret_env = shown.env.iter_mut().filter(|s| is_secret_env(&s.key));
    for s in secret_args.chain(secret_env) {
        match &s.value {
            toml::Value::Array(items) => hidden.extend(items.iter().map(toml_text)),
            v => hidden.push(toml_text(v)),
        }
        s.value = MASK.into();
    }
    let mut env = Env::default();
    for s in &p.env {
        env.set(&s.key, &s.text());
    }
    // A profile whose `[args]` SGLang refuses still has its masked values hidden.
    let line = crate::profile::tokens(&p.args, flags).unwrap_or_default();
    hidden.extend(secret_values(&crate::sglang::parse(flags, line), &env));
    (shown, Redactor::new(hidden))
}

/// A TOML value as a command line or an environment has it (a string as is).
fn toml_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The invocation's redactor: every secret of these arguments and this environment.
pub(crate) fn redactor(args: &SglangArgs, env: &Env) -> Redactor {
    Redactor::new(secret_values(args, env))
}

/// Before anything is planned (errors may come first): the tokens read with the newest flag
/// set, so the secrets are hidden from the first message on.
pub(crate) fn install_early(tokens: &[OsString], env: &Env) {
    let newest = crate::sglang::flagset::KNOWN_VERSIONS.last();
    if let Some(flags) = newest.and_then(|v| crate::sglang::flagset::get(v)) {
        redactor(&crate::sglang::parse(flags, tokens.to_vec()), env).install();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn secret_names_by_whole_words() {
        for yes in [
            "HF_TOKEN",
            "HUGGING_FACE_HUB_TOKEN",
            "OPENAI_API_KEY",
            "db_password",
            "--hf-token",
            "api_key",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(is_secret_name(yes), "{yes}");
        }
        for no in [
            "NCCL_P2P_LEVEL",
            "SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE",
            "--tokenizer-mode",
            "tokenizer_mode",
            "max_tokens",
            "--ssl-keyfile",
            "HF_TOKEN_PATH",
            "SGLANG_USE_AITER_FP8_PER_TOKEN",
            "SGLANG_LOG_DECODE_GRAPH_KEY",
        ] {
            assert!(!is_secret_name(no), "{no}");
        }
    }

    #[test]
    fn secrets_are_masked_even_when_the_line_does_not_parse() {
        let flags = crate::sglang::flagset::get("0.5.23").unwrap();
        for line in [
            &["--model-path", "m", "--tp", "--api-key", "SECRET1"][..],
            &["--bogus", "--api", "SECRET1"][..],
            &["--admin-api-key=SECRET1", "--tp"][..],
            &["--ssl-keyfile-password", "SECRET1", "--pp", "2"][..],
            &["--model-path", "m", "--hf-token", "SECRET1", "--zz"][..],
            &["--api-key", "--api-key", "SECRET1"][..],
            // What argparse refuses in the value's place, and spellings close to a secret one.
            &["--api-key", "-skSECRET1", "--tp", "1"][..],
            &["--admin-api-key", "--XSECRET1"][..],
            &["--model-path", "m", "-api-key", "SECRET1"][..],
            &["-api-key=SECRET1"][..],
            &["--api_key", "SECRET1"][..],
            &["--api-kye", "SECRET1"][..],
            &["--admin-apikey", "SECRET1", "x"][..],
        ] {
            let args = crate::sglang::parse(flags, toks(line));
            let masked = mask_tokens_lossy(&args, &args.tokens);
            assert!(!masked.iter().any(|t| t.contains("SECRET1")), "{masked:?}");
            assert_eq!(masked.len(), line.len());
        }
        // Values of other options, and option names after a secret one, are left alone.
        let line = ["--ssl-keyfile", "k.pem", "--api-key", "--port", "30000"];
        let args = crate::sglang::parse(flags, toks(&line));
        assert_eq!(mask_tokens_lossy(&args, &args.tokens), line);
        // Unknown options far from a secret one keep their values.
        let line = ["--model-path", "m", "--bogus-flag", "x1", "-v", "x2"];
        let args = crate::sglang::parse(flags, toks(&line));
        assert_eq!(mask_tokens_lossy(&args, &args.tokens), line);
    }

    #[test]
    fn url_passwords_are_secret_values() {
        let flags = crate::sglang::flagset::get("0.5.23").unwrap();
        let args = crate::sglang::parse(
            flags,
            toks(&["--dist-init-addr", "user:PASSW0RD@host:5000"]),
        );
        assert_eq!(
            mask_tokens_lossy(&args, &args.tokens),
            ["--dist-init-addr", "user:***@host:5000"]
        );
        assert!(secret_values(&args, &Env::default()).contains(&"PASSW0RD".to_owned()));
    }
}
