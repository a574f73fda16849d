//! Model files from the Hugging Face Hub, for a `--model-path` that is an `org/name` id found
//! neither on disk nor in an HF cache: config.json, generation_config.json, hf_quant_config.json
//! and the weight bytes (the safetensors index, else the model-info API's parameter counts).
//!
//! The files land in our own cache as a directory the model loader reads like a local
//! snapshot, so a model planned from the Hub plans exactly as with its files on disk, and a
//! second check needs no network. All requests of one check share one deadline.

mod api;
mod cache;
mod http;
pub(crate) mod origin;
mod problem;
mod settings;

use std::path::PathBuf;
use std::time::Duration;

pub(crate) use problem::{HubProblem, Missing};
pub(crate) use settings::Settings;

use http::{Client, Failure, Reply};

/// Every request of one check together, redirects included.
pub(crate) const DEADLINE: Duration = Duration::from_secs(3);

/// Our file in a fetched snapshot holding the weight bytes the model-info API gives, for repos
/// without an index; the loader reads it after the safetensors headers and the index.
pub(crate) const WEIGHTS_FILE: &str = "sglang-launch-weights.json";

const MIB: u64 = 1024 * 1024;
/// A config far beyond any real one is a wrong answer, not something to hold in memory.
const CONFIG_LIMIT: u64 = 2 * MIB;
/// Indexes of the largest checkpoints (DeepSeek-V3: ~9 MB) stay below this.
const INDEX_LIMIT: u64 = 16 * MIB;
const INFO_LIMIT: u64 = 8 * MIB;

/// What is fetched besides the model-info answer: config.json (required), then the others the
/// repo has.
const FILES: &[(&str, u64)] = &[
    ("config.json", CONFIG_LIMIT),
    ("generation_config.json", CONFIG_LIMIT),
    ("hf_quant_config.json", CONFIG_LIMIT),
    ("model.safetensors.index.json", INDEX_LIMIT),
];

/// One check's use of the Hub: the settings and, once a request is made, the client whose
/// deadline every later request shares.
pub(crate) struct Session {
    settings: Settings,
    client: Option<Client>,
    /// Where fetched files go without a cache directory: this check's own private directory,
    /// removed with the session.
    scratch: Option<tempfile::TempDir>,
}

impl Session {
    pub(crate) fn new(settings: Settings) -> Session {
        Session {
            settings,
            client: None,
            scratch: None,
        }
    }

    /// The snapshot directory of `repo` at `revision` (default `main`): from our cache, else
    /// fetched when the network may be used. `Ok(None)`: not a Hub id, or not cached and offline.
    pub(crate) fn snapshot(
        &mut self,
        repo: &str,
        revision: Option<&str>,
    ) -> Result<Option<PathBuf>, HubProblem> {
        if !is_repo_id(repo) {
            return Ok(None);
        }
        let revision = revision.filter(|r| !r.is_empty()).unwrap_or("main");
        let s = &self.settings;
        let dir = s
            .cache_root
            .as_ref()
            .map(|root| cache::snapshot_dir(root, &s.endpoint, repo, revision));
        // A snapshot someone else could have written is not ours to believe: it is fetched
        // again, into a private directory (the cache's place is taken).
        let dir = match dir.as_deref().map(cache::trusted) {
            Some(Err(e)) => {
                crate::out::warn(&format!("{e}; fetching the model's files again"));
                None
            }
            _ => dir,
        };
        if let Some(found) = dir.as_deref().and_then(cache::cached) {
            return Ok(Some(found));
        }
        if !s.network {
            return Ok(None);
        }
        let client = self
            .client
            .get_or_insert_with(|| Client::new(DEADLINE, &s.endpoint, s.token.as_ref()));
        let target = Target {
            endpoint: &s.endpoint,
            repo,
            revision,
        };
        let files = target.fetch(client)?;
        let dir = match dir {
            Some(d) => d,
            None => {
                let endpoint = self.settings.endpoint.clone();
                let scratch = self.scratch().map_err(|e| HubProblem::Unusable {
                    repo: repo.to_owned(),
                    what: "creating a private temporary directory".into(),
                    reason: e.to_string(),
                })?;
                cache::snapshot_dir(scratch, &endpoint, repo, revision)
            }
        };
        cache::commit(&dir, &files)
            .map(Some)
            .map_err(|e| HubProblem::Unusable {
                repo: repo.to_owned(),
                what: format!("writing {}", dir.display()),
                reason: e.to_string(),
            })
    }
}

impl Session {
    /// A new directory only this user can enter (mode 0700, a random name), made once: a
    /// shared or guessable path could be made in advance by someone else and filled with
    /// their files.
    fn scratch(&mut self) -> std::io::Result<&std::path::Path> {
        use std::os::unix::fs::PermissionsExt;
        let dir = match self.scratch.take() {
            Some(d) => d,
            None => tempfile::Builder::new()
                .prefix("sglang-launch-hub-")
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir()?,
        };
        Ok(self.scratch.insert(dir).path())
    }
}

/// One repo at one revision on one Hub.
struct Target<'a> {
    endpoint: &'a str,
    repo: &'a str,
    revision: &'a str,
}

impl Target<'_> {
    /// The snapshot's files, named as in the repo (plus [`WEIGHTS_FILE`]).
    fn fetch(&self, client: &Client) -> Result<Vec<(String, Vec<u8>)>, HubProblem> {
        let info_url = format!(
            "{}/api/models/{}/revision/{}?expand=sha&expand=siblings&expand=safetensors",
            self.endpoint,
            self.repo,
            encode(self.revision)
        );
        let body = self.get(client, &info_url, INFO_LIMIT, "model info")?;
        let info = api::parse_info(&body).map_err(|reason| HubProblem::Unusable {
            repo: self.repo.to_owned(),
            what: "the model-info answer".into(),
            reason,
        })?;
        if !info.has("config.json") {
            return Err(self.missing_file("config.json"));
        }
        // At the commit the revision names, so a branch moving meanwhile cannot mix files.
        let at = info
            .sha
            .as_deref()
            .map_or_else(|| encode(self.revision), encode);
        let mut files = Vec::new();
        for &(name, limit) in FILES.iter().filter(|(n, _)| info.has(n)) {
            let url = format!("{}/{}/resolve/{at}/{name}", self.endpoint, self.repo);
            match self.get(client, &url, limit, name) {
                Ok(body) => files.push((name.to_owned(), body)),
                // Only a missing config.json stops SGLang; the others are optional.
                Err(HubProblem::NotFound { .. }) if name != "config.json" => {}
                Err(p) => return Err(p),
            }
        }
        if let (false, Some(bytes)) = (info.has("model.safetensors.index.json"), info.weight_bytes)
        {
            let record = serde_json::json!({ "total_size": bytes, "from": "model-info API" });
            files.push((WEIGHTS_FILE.to_owned(), record.to_string().into_bytes()));
        }
        Ok(files)
    }

    /// A body, or the problem that stops the fetch. `what` names the file in messages.
    fn get(
        &self,
        client: &Client,
        url: &str,
        limit: u64,
        what: &str,
    ) -> Result<Vec<u8>, HubProblem> {
        match client.get(url, limit) {
            Ok(Reply::Body(b)) => Ok(b),
            Ok(Reply::Refused { status, error_code }) => Err(problem::refusal(
                self.endpoint,
                self.repo,
                self.revision,
                (what != "model info").then_some(what),
                status,
                error_code.as_deref(),
                client.sends_token(),
            )),
            Err(Failure::TooLarge(limit)) => Err(HubProblem::TooLarge {
                repo: self.repo.to_owned(),
                file: what.to_owned(),
                limit,
            }),
            Err(f) => Err(HubProblem::Unreachable {
                endpoint: self.endpoint.to_owned(),
                repo: self.repo.to_owned(),
                reason: f.to_string(),
            }),
        }
    }

    fn missing_file(&self, file: &str) -> HubProblem {
        HubProblem::NotFound {
            repo: self.repo.to_owned(),
            missing: Missing::File {
                file: file.to_owned(),
                revision: self.revision.to_owned(),
            },
        }
    }
}

/// `org/name` as the Hub spells repo ids: one slash, letters, digits, `-`, `_`, `.`, no `--`
/// or `..`, no part starting or ending with `-` or `.`, at most 96 characters.
pub(crate) fn is_repo_id(s: &str) -> bool {
    let Some((org, name)) = s.split_once('/') else {
        return false;
    };
    let part = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && !p.starts_with(['-', '.'])
            && !p.ends_with(['-', '.'])
            && !p.contains("--")
            && !p.contains("..")
    };
    s.len() <= 96 && part(org) && part(name)
}

/// One URL path segment: unreserved characters stay, every other byte is `%XX`.
fn encode(s: &str) -> String {
    percent_encode(s, |_, b| {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~')
    })
}

/// `s` with every byte `keep(index, byte)` refuses written as `%XX`.
fn percent_encode(s: &str, keep: impl Fn(usize, u8) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, b) in s.bytes().enumerate() {
        if keep(i, b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_ids_are_told_from_paths() {
        assert!(is_repo_id("meta-llama/Llama-3.1-8B-Instruct"));
        assert!(is_repo_id("Qwen/Qwen3-32B-FP8"));
        for p in [
            "/models/x",
            "./x/y",
            "a/b/c",
            "x",
            "org/",
            "../x",
            "a--b/c",
            "a/b.",
            "a/b c",
        ] {
            assert!(!is_repo_id(p), "{p}");
        }
    }

    #[test]
    fn revisions_are_one_path_segment() {
        assert_eq!(encode("refs/pr/1"), "refs%2Fpr%2F1");
        assert_eq!(encode("v1.0"), "v1.0");
    }

    #[test]
    fn offline_and_not_cached_is_no_snapshot_and_no_request() {
        let root = tempfile::tempdir().unwrap();
        let settings = Settings {
            endpoint: "http://127.0.0.1:9".into(),
            token: None,
            cache_root: Some(root.path().to_path_buf()),
            network: false,
        };
        let mut s = Session::new(settings);
        assert_eq!(s.snapshot("org/m", None), Ok(None));
        assert!(s.client.is_none());
    }

    #[test]
    fn without_a_cache_files_go_to_a_new_private_directory() {
        use std::os::unix::fs::PermissionsExt;
        let mut s = Session::new(Settings {
            endpoint: "http://127.0.0.1:9".into(),
            token: None,
            cache_root: None,
            network: true,
        });
        let a = s.scratch().unwrap().to_path_buf();
        assert_eq!(s.scratch().unwrap(), a, "one per session");
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("sglang-launch-hub-"), "{name}");
        assert_ne!(name, format!("sglang-launch-hub-{}", std::process::id()));
        let mode = std::fs::metadata(&a).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        drop(s);
        assert!(!a.exists(), "removed with the session");
    }
}
