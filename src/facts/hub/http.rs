//! GET with one deadline for every request of a check, bounded bodies and redirects followed.

use std::time::{Duration, Instant};

use ureq::Agent;

use super::origin;
use super::settings::Token;

/// Redirects followed for one file (the Hub's own, then a CDN's).
const MAX_REDIRECTS: u32 = 10;

/// What the server said.
#[derive(Debug)]
pub(super) enum Reply {
    Body(Vec<u8>),
    /// A 4xx: the status and the Hub's `X-Error-Code` (`RepoNotFound`, `GatedRepo`, …).
    Refused {
        status: u16,
        error_code: Option<String>,
    },
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Failure {
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("larger than {0} bytes")]
    TooLarge(u64),
    #[error("{0}")]
    Transport(String),
}

/// One check's connection to the Hub. Holds the Authorization value: no Debug on purpose.
pub(super) struct Client {
    agent: Agent,
    /// The Hub's URL: the token goes to its origin only.
    endpoint: String,
    auth: Option<String>,
    started: Instant,
    total: Duration,
}

impl Client {
    pub(super) fn new(total: Duration, endpoint: &str, token: Option<&Token>) -> Client {
        let agent = Agent::config_builder()
            .http_status_as_error(false)
            // Redirects are followed here, one by one, to choose where the token goes.
            .max_redirects(0)
            .user_agent(concat!("sglang-launch/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Client {
            agent,
            endpoint: endpoint.to_owned(),
            auth: token.map(Token::bearer),
            started: Instant::now(),
            total,
        }
    }

    pub(super) fn sends_token(&self) -> bool {
        self.auth.is_some()
    }

    /// GET `url`, following redirects; a body over `limit` bytes is refused before it is all
    /// read. The Hub redirects to itself (resolve-cache: a gated file still needs the token
    /// there) and to a CDN, which must never see it: the token goes to the endpoint's exact
    /// origin only (scheme, host and port).
    pub(super) fn get(&self, url: &str, limit: u64) -> Result<Reply, Failure> {
        let mut url = url.to_owned();
        for _ in 0..=MAX_REDIRECTS {
            let left = self.total.saturating_sub(self.started.elapsed());
            if left.is_zero() {
                return Err(Failure::Timeout(self.total));
            }
            let mut req = self.agent.get(&url);
            if let Some(a) = self
                .auth
                .as_ref()
                .filter(|_| origin::same(&url, &self.endpoint))
            {
                req = req.header("Authorization", a);
            }
            let mut resp = req
                .config()
                .timeout_global(Some(left))
                .build()
                .call()
                .map_err(|e| self.failure(e))?;
            let status = resp.status().as_u16();
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let location = resp.headers().get("location").and_then(|v| v.to_str().ok());
                url = location
                    .and_then(|l| origin::join(&url, l))
                    .ok_or_else(|| {
                        Failure::Transport(format!("HTTP {status} without an http(s) Location"))
                    })?;
                continue;
            }
            if (400..500).contains(&status) {
                let error_code = resp
                    .headers()
                    .get("x-error-code")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                return Ok(Reply::Refused { status, error_code });
            }
            if status != 200 {
                return Err(Failure::Transport(format!("HTTP {status}")));
            }
            return resp
                .body_mut()
                .with_config()
                .limit(limit)
                .read_to_vec()
                .map(Reply::Body)
                .map_err(|e| self.failure(e));
        }
        Err(Failure::Transport(format!(
            "more than {MAX_REDIRECTS} redirects"
        )))
    }

    fn failure(&self, e: ureq::Error) -> Failure {
        match e {
            ureq::Error::Timeout(_) => Failure::Timeout(self.total),
            ureq::Error::BodyExceedsLimit(n) => Failure::TooLarge(n),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                Failure::Timeout(self.total)
            }
            other => Failure::Transport(other.to_string()),
        }
    }
}
