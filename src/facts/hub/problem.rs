//! Why the Hub gave no model files, in words that say what to do. No message quotes a token.

/// Why the model's files could not be fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HubProblem {
    /// 401/403: gated, private, or the token is not valid for it.
    Denied {
        repo: String,
        status: u16,
        gated: bool,
        token_sent: bool,
    },
    /// 404 (or the Hub's `RepoNotFound` on a 401): the repo, revision or file does not exist.
    NotFound { repo: String, missing: Missing },
    /// No answer in time, no connection, or a server error.
    Unreachable {
        endpoint: String,
        repo: String,
        reason: String,
    },
    /// A file beyond what any real one is; `file` names it.
    TooLarge {
        repo: String,
        file: String,
        limit: u64,
    },
    /// An answer that is not what the Hub sends, or our cache could not be written.
    Unusable {
        repo: String,
        what: String,
        reason: String,
    },
}

/// What a 404 says is not there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Missing {
    Repo,
    Revision(String),
    File { file: String, revision: String },
}

const NO_FACTS: &str = "the memory plan goes on without the model's facts";

impl std::fmt::Display for HubProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HubProblem::Denied {
                repo,
                status,
                gated: true,
                token_sent: false,
            } => write!(
                f,
                "{repo} is a gated model on the Hugging Face Hub and no token was given \
                 (HTTP {status}): accept its terms on the model page and set HF_TOKEN to a token \
                 of that account"
            ),
            HubProblem::Denied {
                repo,
                status,
                gated: true,
                token_sent: true,
            } => write!(
                f,
                "{repo} is a gated model on the Hugging Face Hub and the token in use has no \
                 access to it (HTTP {status}): request access on the model page, or set HF_TOKEN \
                 to a token of an account that has it"
            ),
            HubProblem::Denied {
                repo,
                status,
                token_sent,
                ..
            } => {
                let which = if *token_sent {
                    "refuses the token in use"
                } else {
                    "needs a token"
                };
                write!(
                    f,
                    "{repo}: the Hugging Face Hub {which} (HTTP {status}): set HF_TOKEN to a \
                     valid token that can read this repository"
                )
            }
            HubProblem::NotFound { repo, missing } => match missing {
                Missing::Repo => write!(
                    f,
                    "{repo}: no such model repository on the Hugging Face Hub (a private one \
                     needs HF_TOKEN set to a token that can read it): check --model-path"
                ),
                Missing::Revision(rev) => write!(
                    f,
                    "{repo} has no revision {rev} on the Hugging Face Hub: check --revision \
                     (a branch, tag or commit)"
                ),
                Missing::File { file, revision } => write!(
                    f,
                    "{repo} has no {file} at revision {revision}, so SGLang cannot load it \
                     either: check --model-path and --revision"
                ),
            },
            HubProblem::Unreachable {
                endpoint,
                repo,
                reason,
            } => write!(
                f,
                "could not reach the Hugging Face Hub at {} for {repo} ({}); \
                 {NO_FACTS} (--offline or HF_HUB_OFFLINE=1 skips the Hub)",
                crate::out::mask_userinfo(endpoint),
                crate::out::mask_userinfo(reason),
            ),
            HubProblem::TooLarge { repo, file, limit } => write!(
                f,
                "{repo}: {file} from the Hugging Face Hub is larger than {} MiB, far beyond a \
                 real one, and is not read; {NO_FACTS}",
                limit / (1024 * 1024)
            ),
            HubProblem::Unusable { repo, what, reason } => {
                write!(f, "{repo}: {what} failed ({reason}); {NO_FACTS}")
            }
        }
    }
}

impl std::error::Error for HubProblem {}

/// The problem a 4xx answer means, from the Hub's `X-Error-Code` first, else the status.
/// `file`: the file asked for (`None` for the model-info request).
pub(super) fn refusal(
    endpoint: &str,
    repo: &str,
    revision: &str,
    file: Option<&str>,
    status: u16,
    error_code: Option<&str>,
    token_sent: bool,
) -> HubProblem {
    let repo_s = repo.to_owned();
    let not_found = |missing| HubProblem::NotFound {
        repo: repo_s.clone(),
        missing,
    };
    let denied = |gated| HubProblem::Denied {
        repo: repo_s.clone(),
        status,
        gated,
        token_sent,
    };
    match (error_code, status) {
        (Some("GatedRepo"), _) => denied(true),
        (Some("RepoNotFound"), _) => not_found(Missing::Repo),
        (Some("RevisionNotFound"), _) => not_found(Missing::Revision(revision.to_owned())),
        (Some("EntryNotFound"), _) | (_, 404) if file.is_some() => not_found(Missing::File {
            file: file.unwrap_or_default().to_owned(),
            revision: revision.to_owned(),
        }),
        (_, 401 | 403) => denied(false),
        (_, 404) => not_found(Missing::Repo),
        _ => HubProblem::Unreachable {
            endpoint: endpoint.to_owned(),
            repo: repo_s.clone(),
            reason: format!("HTTP {status}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoints_credentials_are_never_shown() {
        let p = HubProblem::Unreachable {
            endpoint: "https://me:s3cret@mirror.example:8443".into(),
            repo: "org/name".into(),
            reason:
                "io: Connection refused: https://me:s3cret@mirror.example:8443/api/models/org/name"
                    .into(),
        };
        let text = p.to_string();
        assert!(!text.contains("s3cret") && !text.contains("me:"), "{text}");
        assert!(text.contains("https://***@mirror.example:8443"), "{text}");
        assert_eq!(
            crate::out::mask_userinfo("http://host/a@b"),
            "http://host/a@b"
        );
        assert_eq!(crate::out::mask_userinfo("no url"), "no url");
    }

    fn r(file: Option<&str>, status: u16, code: Option<&str>) -> HubProblem {
        refusal("http://hub", "o/m", "v2", file, status, code, false)
    }

    #[test]
    fn the_hubs_error_code_decides_before_the_status() {
        assert!(matches!(
            r(None, 401, Some("GatedRepo")),
            HubProblem::Denied { gated: true, .. }
        ));
        assert!(matches!(
            r(None, 401, Some("RepoNotFound")),
            HubProblem::NotFound {
                missing: Missing::Repo,
                ..
            }
        ));
        assert_eq!(
            r(None, 404, Some("RevisionNotFound")),
            HubProblem::NotFound {
                repo: "o/m".into(),
                missing: Missing::Revision("v2".into())
            }
        );
        assert!(matches!(
            r(Some("config.json"), 404, Some("EntryNotFound")),
            HubProblem::NotFound {
                missing: Missing::File { .. },
                ..
            }
        ));
    }

    #[test]
    fn without_an_error_code_the_status_decides() {
        assert!(matches!(
            r(None, 403, None),
            HubProblem::Denied { gated: false, .. }
        ));
        assert!(matches!(
            r(None, 404, None),
            HubProblem::NotFound {
                missing: Missing::Repo,
                ..
            }
        ));
        assert!(matches!(r(None, 429, None), HubProblem::Unreachable { .. }));
    }

    #[test]
    fn messages_say_what_to_do() {
        let gated = r(None, 401, Some("GatedRepo")).to_string();
        assert!(
            gated.contains("o/m") && gated.contains("HF_TOKEN"),
            "{gated}"
        );
        let rev = r(None, 404, Some("RevisionNotFound")).to_string();
        assert!(rev.contains("--revision") && rev.contains("v2"), "{rev}");
    }
}
