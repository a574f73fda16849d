//! Secret-bearing arguments and variables, masked as `***` in every output.
//!
//! The exec'd process always gets the real values; only what we print is masked.

use std::ffi::OsString;

use crate::sglang::SglangArgs;

pub const MASK: &str = "***";

/// argparse dests whose values are secrets (every SGLang version).
const SECRET_DESTS: &[&str] = &["api_key", "admin_api_key", "ssl_keyfile_password"];

pub fn is_secret_dest(dest: &str) -> bool {
    SECRET_DESTS.contains(&dest)
}

/// Environment variables whose values are secrets: tokens, keys, passwords.
pub fn is_secret_env(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n == "HF_TOKEN"
        || n == "HUGGING_FACE_HUB_TOKEN"
        || [
            "_TOKEN",
            "_API_KEY",
            "_SECRET",
            "_PASSWORD",
            "_SECRET_KEY",
            "_ACCESS_KEY",
        ]
        .iter()
        .any(|s| n.ends_with(s))
}

/// The tokens with every secret value replaced by `***` (`--api-key=x` → `--api-key=***`).
/// Uses the parser's occurrences, so abbreviations (`--api x`) are masked too.
pub fn mask_tokens(args: &SglangArgs, tokens: &[OsString]) -> Vec<String> {
    let mut out: Vec<String> = tokens
        .iter()
        .map(|t| t.to_string_lossy().into_owned())
        .collect();
    // Whatever the parser made of the line (it may have stopped early), a token that spells a
    // secret option, or a prefix argparse could expand to one, hides the value that follows it.
    let mut i = 0;
    while i < out.len() {
        let (opt, inline) = match out[i].split_once('=') {
            Some((o, _)) => (o.to_owned(), true),
            None => (out[i].clone(), false),
        };
        if names_secret(args, &opt) {
            if inline {
                out[i] = format!("{opt}={MASK}");
            } else if let Some(next) = out.get_mut(i + 1) {
                *next = MASK.to_owned();
                i += 1;
            }
        }
        i += 1;
    }
    for occ in &args.occurrences {
        // Occurrences from a --config file index the file's tokens, not these.
        if !is_secret_dest(&occ.dest) || occ.from_config || occ.start >= out.len() {
            continue;
        }
        let first = &mut out[occ.start];
        if let Some((opt, _)) = first.split_once('=') {
            *first = format!("{opt}={MASK}");
        }
        let end = (occ.start + occ.len).min(out.len());
        for t in &mut out[occ.start + 1..end] {
            *t = MASK.to_owned();
        }
    }
    out
}

/// Parsed values with secret dests replaced by `***`.
pub fn mask_values(
    values: &std::collections::BTreeMap<String, serde_json::Value>,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    values
        .iter()
        .map(|(k, v)| {
            let v = if is_secret_dest(k) && !v.is_null() {
                serde_json::Value::from(MASK)
            } else {
                v.clone()
            };
            (k.clone(), v)
        })
        .collect()
}

/// Whether `token` (without `=value`) is a secret option string of this flag set or a prefix
/// of one (argparse's abbreviations).
fn names_secret(args: &SglangArgs, token: &str) -> bool {
    if token.len() <= 2 || !token.starts_with("--") {
        return false;
    }
    let mut known = args
        .flags
        .actions
        .iter()
        .flat_map(|a| a.option_strings.iter().map(move |o| (a, o)))
        .filter(|(_, o)| o.starts_with(token))
        .peekable();
    if known.peek().is_none() {
        // Not SGLang's at all (`--hf-token x`, a typo, another tool's flag): its value goes into
        // an error message, so a secret-sounding name hides it.
        let t = token.to_ascii_lowercase();
        return ["token", "key", "password", "secret"]
            .iter()
            .any(|w| t.contains(w));
    }
    known.any(|(a, _)| is_secret_dest(&a.dest))
}

/// Every secret value present in the arguments and the environment, for scrubbing free text.
pub fn secret_values(args: &SglangArgs, env: &crate::facts::Env) -> Vec<String> {
    // Whatever the token masking hides is a secret too (also on lines that don't parse).
    let masked = mask_tokens(args, &args.tokens);
    let from_tokens = args.tokens.iter().zip(&masked).filter_map(|(t, m)| {
        let t = t.to_string_lossy();
        match (t.split_once('='), m.split_once('=')) {
            _ if *m == t => None,
            (Some((_, v)), Some((_, mv))) if mv == MASK => Some(v.to_owned()),
            _ => Some(t.into_owned()),
        }
    });
    let mut vals: Vec<String> = args
        .values
        .iter()
        .filter(|(d, _)| is_secret_dest(d))
        .filter_map(|(_, v)| v.as_str().map(str::to_owned))
        .chain(from_tokens)
        .chain(
            env.vars
                .iter()
                .filter(|(k, _)| is_secret_env(k))
                .map(|(_, v)| v.clone()),
        )
        .filter(|v| v.len() >= 3)
        .collect();
    // Longest first so a secret that contains another is masked whole.
    vals.sort_by_key(|v| std::cmp::Reverse(v.len()));
    vals
}

/// `text` with every secret value replaced by `***`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .fold(text.to_owned(), |t, s| t.replace(s.as_str(), MASK))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_env_names() {
        assert!(is_secret_env("HF_TOKEN"));
        assert!(is_secret_env("OPENAI_API_KEY"));
        assert!(is_secret_env("db_password"));
        assert!(!is_secret_env("NCCL_P2P_LEVEL"));
        assert!(!is_secret_env("SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE"));
    }

    #[test]
    fn secrets_are_masked_even_when_the_line_does_not_parse() {
        let flags = crate::sglang::flagset::get("0.5.23").unwrap();
        let toks = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        for line in [
            &["--model-path", "m", "--tp", "--api-key", "SECRET1"][..],
            &["--bogus", "--api", "SECRET1"][..],
            &["--admin-api-key=SECRET1", "--tp"][..],
            &["--ssl-keyfile-password", "SECRET1", "--pp", "2"][..],
            &["--model-path", "m", "--hf-token", "SECRET1", "--zz"][..],
        ] {
            let args = crate::sglang::parse(flags, toks(line));
            let masked = mask_tokens(&args, &args.tokens);
            assert!(!masked.iter().any(|t| t.contains("SECRET1")), "{masked:?}");
            assert_eq!(masked.len(), line.len());
        }
        // Values of other options are left alone.
        let args = crate::sglang::parse(flags, toks(&["--model-path", "m", "--port", "30000"]));
        assert_eq!(
            mask_tokens(&args, &args.tokens),
            ["--model-path", "m", "--port", "30000"]
        );
    }

    #[test]
    fn scrub_replaces_every_secret() {
        let s = vec!["hunter22".to_owned()];
        assert_eq!(scrub("key hunter22 and hunter22", &s), "key *** and ***");
    }
}
