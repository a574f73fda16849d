//! What a started server reports about itself: `/server_info` (0.5.x; `/get_server_info`
//! before, and still answered as deprecated) returns its resolved arguments and, per DP rank,
//! `internal_states[i].memory_usage` in GiB: `weight`, `kvcache`, `token_capacity`, and the
//! graphs as `graph` (0.5.x) or `cuda_graph` (0.4.x).

use std::time::Duration;

use serde_json::Value;

use super::Real;

/// The paths to ask, newest first.
pub(crate) const PATHS: &[&str] = &["/server_info", "/get_server_info"];

/// The first rank's figures from one answer; `None` when it has none.
pub(crate) fn parse(v: &Value) -> Option<Real> {
    let state = v.get("internal_states")?.as_array()?.first()?;
    let mem = state.get("memory_usage")?;
    let num = |k: &str| mem.get(k).and_then(Value::as_f64);
    let text = |k: &str| {
        state
            .get(k)
            .or_else(|| v.get(k))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    Some(Real {
        weights_gib: num("weight")?,
        kv_cache_gib: num("kvcache")?,
        kv_cache_tokens: mem.get("token_capacity")?.as_u64()?,
        cuda_graphs_gib: num("graph").or_else(|| num("cuda_graph")),
        attention_backend: text("attention_backend"),
        sglang_version: text("version"),
    })
}

/// Asks the server at `base` (`http://host:port`) for its figures.
pub(crate) fn fetch(base: &str, timeout: Duration) -> Result<Real, String> {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .user_agent(concat!("sglang-launch/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent();
    let mut last = String::new();
    for path in PATHS {
        let url = format!("{base}{path}");
        let mut resp = match agent.get(&url).call() {
            Ok(r) => r,
            Err(e) => {
                last = format!("{url}: {e}");
                continue;
            }
        };
        if resp.status() != 200 {
            last = format!("{url}: HTTP {}", resp.status());
            continue;
        }
        let body = resp
            .body_mut()
            .with_config()
            .limit(16 * 1024 * 1024)
            .read_to_string()
            .map_err(|e| format!("{url}: {e}"))?;
        let v: Value = serde_json::from_str(&body).map_err(|e| format!("{url}: not JSON: {e}"))?;
        return parse(&v).ok_or_else(|| format!("{url}: no internal_states[0].memory_usage"));
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_both_generations() {
        let new = json!({"attention_backend": "fa3", "version": "0.5.23",
            "internal_states": [{"attention_backend": "fa3", "memory_usage":
                {"weight": 14.99, "kvcache": 52.1, "token_capacity": 455000, "graph": 1.2}}]});
        let r = parse(&new).unwrap();
        assert_eq!((r.kv_cache_tokens, r.cuda_graphs_gib), (455000, Some(1.2)));
        assert_eq!(r.attention_backend.as_deref(), Some("fa3"));
        let old = json!({"internal_states": [{"memory_usage":
            {"weight": 14.99, "kvcache": 52.1, "token_capacity": 455000, "cuda_graph": 0.9}}]});
        assert_eq!(parse(&old).unwrap().cuda_graphs_gib, Some(0.9));
        assert!(parse(&json!({"internal_states": []})).is_none());
    }
}
