//! The scheduler's load publisher (`--load-publish-endpoint`, 0.5.19+): a ZMQ port range, one
//! port per DP rank, that routers find through the KV-events publisher's description.

use serde_json::Value;

use super::*;
use crate::sglang::opt;

/// The hosts a ZMQ PUB socket binds on every interface (SGLang's list).
const WILDCARDS: &[&str] = &["*", "0.0.0.0", "::"];

/// The KV-events publisher's default endpoint.
const KV_DEFAULT: &str = "tcp://*:5557";

/// SRV021: the load publisher as SGLang checks it at start-up: it needs an active KV-events
/// publisher, and its port range must bind, fit in 16 bits and miss the KV-events ranges.
pub(crate) fn load_publish(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let mode = u.str(opt::LOAD_PUBLISH_ENDPOINT).map_or("", str::trim);
    if mode.is_empty() || mode.eq_ignore_ascii_case("off") {
        return vec![];
    }
    let config = u.str(opt::KV_EVENTS_CONFIG).filter(|c| !c.is_empty());
    let name = opt::LOAD_PUBLISH_ENDPOINT;
    let why = match config {
        None => Some(format!("{name} without {}", opt::KV_EVENTS_CONFIG)),
        Some(c) => match serde_json::from_str::<Value>(c) {
            Ok(Value::Object(cfg)) => publisher_refused(ctx, mode, &cfg),
            // What SGLang's own model makes of other text is not judged here.
            _ => None,
        },
    };
    refused_at_start(ctx, why.into_iter().collect())
}

/// What SGLang refuses about the publisher this configuration describes, if anything.
fn publisher_refused(
    ctx: &Context,
    mode: &str,
    cfg: &serde_json::Map<String, Value>,
) -> Option<String> {
    let text = |k: &str, default: Option<&'static str>| match cfg.get(k) {
        None => default.map(str::to_owned),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => None,
    };
    let publisher = text("publisher", Some("null"))?;
    let kv = text("endpoint", Some(KV_DEFAULT))?;
    if publisher == "null" || kv.is_empty() {
        return Some(format!(
            "{} with no active {} publisher (publisher 'null' or an empty endpoint)",
            opt::LOAD_PUBLISH_ENDPOINT,
            opt::KV_EVENTS_CONFIG
        ));
    }
    let replay = match cfg.get("replay_endpoint") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return None,
    };
    let ranks = ctx.dp().max(1) * ctx.attn_dp().max(1);
    range_refused(mode, &kv, replay.as_deref(), ranks)
}

/// The port range SGLang derives (`auto`: after the KV-events range) or is given, checked as it
/// checks it. Addresses this parser cannot read for certain are not judged.
fn range_refused(mode: &str, kv: &str, replay: Option<&str>, ranks: i64) -> Option<String> {
    let name = opt::LOAD_PUBLISH_ENDPOINT;
    let port_of = |e: Option<&str>| e.and_then(tcp).map(|a| a.1);
    let base = if mode.eq_ignore_ascii_case("auto") {
        let Some((host, kv_port)) = tcp(kv) else {
            return (!kv.starts_with("tcp://")).then(|| {
                format!("{name} auto with the KV-events endpoint '{kv}', which is not tcp://")
            });
        };
        if !WILDCARDS.contains(&host.as_str()) {
            return Some(format!(
                "{name} auto with the KV-events endpoint '{kv}', which does not bind a wildcard host"
            ));
        }
        let base = kv_port + ranks;
        match port_of(replay) {
            Some(r) if base < r + ranks && r < base + ranks => r + ranks,
            _ => base,
        }
    } else {
        if !kv.starts_with("tcp://") {
            return Some(format!(
                "{name} {mode} with the KV-events endpoint '{kv}', which is not tcp://: routers could not find the range"
            ));
        }
        let Some((host, base)) = tcp(mode) else {
            return (!mode.starts_with("tcp://"))
                .then(|| format!("{name} {mode}, which is not a tcp:// address"));
        };
        if !WILDCARDS.contains(&host.as_str()) {
            return Some(format!(
                "{name} {mode}, whose host is not a wildcard the socket can bind"
            ));
        }
        if let Some(p) = [port_of(Some(kv)), port_of(replay)]
            .into_iter()
            .flatten()
            .find(|&p| base < p + ranks && p < base + ranks)
        {
            return Some(format!(
                "{name} range [{base}, {}) overlapping the KV-events range [{p}, {})",
                base + ranks,
                p + ranks
            ));
        }
        base
    };
    (base + ranks - 1 > 65535)
        .then(|| format!("{name}: its {ranks}-port range from {base} runs past port 65535"))
}

/// `tcp://host:port` with a plain or bracketed host and a port in 1..=65535; `None` for
/// anything else, including forms this reading is not sure of.
fn tcp(endpoint: &str) -> Option<(String, i64)> {
    let addr = endpoint.strip_prefix("tcp://")?;
    let (host, port) = match addr.strip_prefix('[') {
        Some(rest) => {
            let (h, p) = rest.split_once("]:")?;
            (h, p)
        }
        None => addr.rsplit_once(':').filter(|(h, _)| !h.contains(':'))?,
    };
    let port: i64 = port.parse().ok()?;
    (!host.is_empty() && (1..=65535).contains(&port)).then(|| (host.to_owned(), port))
}
