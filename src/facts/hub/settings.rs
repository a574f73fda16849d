//! Where the Hub is, who the user is, where fetched files go, and whether the network may be
//! used: all from the environment the server would inherit, as huggingface_hub reads it.

use std::path::{Path, PathBuf};

use crate::facts::Env;

/// The Hub everyone uses unless `HF_ENDPOINT` names a mirror.
pub(crate) const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// An access token. Never printed: its Debug is a mask, and no message quotes it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Token(String);

impl Token {
    pub(super) fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(***)")
    }
}

/// How to reach the Hub for one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `HF_ENDPOINT` without a trailing slash.
    pub(crate) endpoint: String,
    pub(crate) token: Option<Token>,
    /// Our own cache of fetched files (never the user's HF cache); `None` without a home.
    pub(crate) cache_root: Option<PathBuf>,
    /// The network may be used: the launcher allows it, `HF_HUB_OFFLINE` is not set and SGLang
    /// downloads from the Hugging Face Hub (not ModelScope).
    pub(crate) network: bool,
}

impl Settings {
    /// `allowed`: the launcher's `--offline` / `--online` decision.
    pub(crate) fn from_env(env: &Env, allowed: bool) -> Settings {
        let endpoint = non_empty(env, "HF_ENDPOINT")
            .unwrap_or(DEFAULT_ENDPOINT)
            .trim_end_matches('/')
            .to_owned();
        Settings {
            endpoint,
            token: token(env),
            cache_root: cache_root(env),
            // With SGLANG_USE_MODELSCOPE, SGLang downloads the id from ModelScope: what the
            // Hugging Face Hub says about it (a 404, say) would judge another repository.
            network: allowed
                && !env.truthy("HF_HUB_OFFLINE")
                && !env.truthy("SGLANG_USE_MODELSCOPE"),
        }
    }
}

fn non_empty<'a>(env: &'a Env, name: &str) -> Option<&'a str> {
    env.get(name).map(str::trim).filter(|v| !v.is_empty())
}

/// `HF_TOKEN`, else `HUGGING_FACE_HUB_TOKEN`, else the token file `hf auth login` writes
/// (`HF_TOKEN_PATH`, else `HF_HOME/token`, else `~/.cache/huggingface/token`).
fn token(env: &Env) -> Option<Token> {
    let from_env = non_empty(env, "HF_TOKEN").or_else(|| non_empty(env, "HUGGING_FACE_HUB_TOKEN"));
    if let Some(t) = from_env {
        return Some(Token(t.to_owned()));
    }
    let file = if let Some(p) = non_empty(env, "HF_TOKEN_PATH") {
        PathBuf::from(p)
    } else if let Some(h) = non_empty(env, "HF_HOME") {
        Path::new(h).join("token")
    } else {
        Path::new(non_empty(env, "HOME")?).join(".cache/huggingface/token")
    };
    let text = crate::fsread::optional_string(&file, crate::fsread::HF_TOKEN)?;
    let t = text.trim();
    (!t.is_empty()).then(|| Token(t.to_owned()))
}

/// `$XDG_CACHE_HOME/sglang-launch/hub`, else `~/.cache/sglang-launch/hub`.
fn cache_root(env: &Env) -> Option<PathBuf> {
    let base = match non_empty(env, "XDG_CACHE_HOME") {
        Some(x) => PathBuf::from(x),
        None => Path::new(non_empty(env, "HOME")?).join(".cache"),
    };
    Some(base.join("sglang-launch/hub"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_pairs(pairs.iter().copied())
    }

    #[test]
    fn endpoint_token_and_cache_come_from_the_environment() {
        let s = Settings::from_env(
            &env(&[
                ("HF_ENDPOINT", "http://mirror:8080/"),
                ("HUGGING_FACE_HUB_TOKEN", "hf_old"),
                ("XDG_CACHE_HOME", "/c"),
            ]),
            true,
        );
        assert_eq!(s.endpoint, "http://mirror:8080");
        assert_eq!(s.token, Some(Token("hf_old".into())));
        assert_eq!(s.cache_root, Some(PathBuf::from("/c/sglang-launch/hub")));
        assert!(s.network);
        let d = Settings::from_env(&env(&[("HOME", "/h"), ("HF_TOKEN", "hf_new")]), true);
        assert_eq!(d.endpoint, DEFAULT_ENDPOINT);
        assert_eq!(d.token, Some(Token("hf_new".into())));
        assert_eq!(
            d.cache_root,
            Some(PathBuf::from("/h/.cache/sglang-launch/hub"))
        );
    }

    #[test]
    fn hf_hub_offline_or_the_launcher_turns_the_network_off() {
        assert!(!Settings::from_env(&env(&[("HF_HUB_OFFLINE", "1")]), true).network);
        assert!(!Settings::from_env(&env(&[]), false).network);
        let modelscope = env(&[("SGLANG_USE_MODELSCOPE", "true")]);
        assert!(!Settings::from_env(&modelscope, true).network);
    }

    #[test]
    fn the_token_file_is_read_when_no_variable_is_set() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "hf_file\n").unwrap();
        let home = dir.path().to_str().unwrap();
        let s = Settings::from_env(&env(&[("HF_HOME", home)]), true);
        assert_eq!(s.token, Some(Token("hf_file".into())));
        let path = dir.path().join("token").to_string_lossy().into_owned();
        let s = Settings::from_env(&env(&[("HF_TOKEN_PATH", &path)]), true);
        assert_eq!(s.token, Some(Token("hf_file".into())));
    }

    #[test]
    fn a_token_never_shows_in_debug_output() {
        let s = Settings::from_env(&env(&[("HF_TOKEN", "hf_secret")]), true);
        assert!(!format!("{s:?}").contains("hf_secret"));
    }
}
