//! GET with one deadline for every request of a check, bounded bodies and redirects followed.

use std::time::{Duration, Instant};

use ureq::Agent;
use ureq::config::RedirectAuthHeaders;

use super::settings::Token;

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
    auth: Option<String>,
    started: Instant,
    total: Duration,
}

impl Client {
    pub(super) fn new(total: Duration, token: Option<&Token>) -> Client {
        let agent = Agent::config_builder()
            .http_status_as_error(false)
            // The Hub redirects to its own host (resolve-cache) and to a CDN: a gated file's
            // redirect on the same host still needs the token, the CDN must never see it.
            .redirect_auth_headers(RedirectAuthHeaders::SameHost)
            .user_agent(concat!("sglang-launch/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Client {
            agent,
            auth: token.map(Token::bearer),
            started: Instant::now(),
            total,
        }
    }

    pub(super) fn sends_token(&self) -> bool {
        self.auth.is_some()
    }

    /// GET `url`; a body over `limit` bytes is refused before it is all read.
    pub(super) fn get(&self, url: &str, limit: u64) -> Result<Reply, Failure> {
        let left = self.total.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            return Err(Failure::Timeout(self.total));
        }
        let mut req = self.agent.get(url);
        if let Some(a) = &self.auth {
            req = req.header("Authorization", a);
        }
        let mut resp = req
            .config()
            .timeout_global(Some(left))
            .build()
            .call()
            .map_err(|e| self.failure(e))?;
        let status = resp.status().as_u16();
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
        resp.body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .map(Reply::Body)
            .map_err(|e| self.failure(e))
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
