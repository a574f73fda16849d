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
    token.len() > 2
        && token.starts_with("--")
        && args.flags.actions.iter().any(|a| {
            is_secret_dest(&a.dest) && a.option_strings.iter().any(|o| o.starts_with(token))
        })
}

/// Every secret value present in the arguments and the environment, for scrubbing free text.
pub fn secret_values(args: &SglangArgs, env: &crate::facts::Env) -> Vec<String> {
    let mut vals: Vec<String> = args
        .values
        .iter()
        .filter(|(d, _)| is_secret_dest(d))
        .filter_map(|(_, v)| v.as_str().map(str::to_owned))
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
