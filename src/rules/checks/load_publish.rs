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
    range_refused(mode, &kv, replay.as_deref(), ctx.dp_ranks())
}

/// The port range SGLang derives (`auto`: after the KV-events range) or is given, checked as it
/// checks it. Addresses this parser cannot read for certain are not judged.
fn range_refused(mode: &str, kv: &str, replay: Option<&str>, ranks: i64) -> Option<String> {
    let base = if mode.eq_ignore_ascii_case("auto") {
        auto_base(kv, replay, ranks)
    } else {
        given_base(mode, kv, replay, ranks)
    };
    let base = match base {
        Ok(base) => base,
        Err(why) => return why,
    };
    (base + ranks - 1 > 65535).then(|| {
        format!(
            "{}: its {ranks}-port range from {base} runs past port 65535",
            opt::LOAD_PUBLISH_ENDPOINT
        )
    })
}

/// A range's first port, or why it is refused (`Err(None)`: not judged).
type Base = Result<i64, Option<String>>;

/// `auto`: the range after the KV-events range, past the replay range where they overlap. The
/// KV-events endpoint must bind a wildcard host.
fn auto_base(kv: &str, replay: Option<&str>, ranks: i64) -> Base {
    let name = opt::LOAD_PUBLISH_ENDPOINT;
    let Some((host, kv_port)) = tcp(kv) else {
        return Err((!kv.starts_with("tcp://")).then(|| {
            format!("{name} auto with the KV-events endpoint '{kv}', which is not tcp://")
        }));
    };
    if !WILDCARDS.contains(&host.as_str()) {
        return Err(Some(format!(
            "{name} auto with the KV-events endpoint '{kv}', which does not bind a wildcard host"
        )));
    }
    let base = kv_port + ranks;
    Ok(match replay.and_then(tcp).map(|a| a.1) {
        Some(r) if overlap(base, r, ranks) => r + ranks,
        _ => base,
    })
}

/// A given address: a wildcard `tcp://` host, beside a `tcp://` KV-events endpoint, clear of the
/// KV-events and replay ranges.
fn given_base(mode: &str, kv: &str, replay: Option<&str>, ranks: i64) -> Base {
    let name = opt::LOAD_PUBLISH_ENDPOINT;
    if !kv.starts_with("tcp://") {
        return Err(Some(format!(
            "{name} {mode} with the KV-events endpoint '{kv}', which is not tcp://: routers could not find the range"
        )));
    }
    let Some((host, base)) = tcp(mode) else {
        return Err((!mode.starts_with("tcp://"))
            .then(|| format!("{name} {mode}, which is not a tcp:// address")));
    };
    if !WILDCARDS.contains(&host.as_str()) {
        return Err(Some(format!(
            "{name} {mode}, whose host is not a wildcard the socket can bind"
        )));
    }
    let taken = [Some(kv), replay].into_iter().flatten().filter_map(tcp);
    match taken.map(|a| a.1).find(|&p| overlap(base, p, ranks)) {
        Some(p) => Err(Some(format!(
            "{name} range [{base}, {}) overlapping the KV-events range [{p}, {})",
            base + ranks,
            p + ranks
        ))),
        None => Ok(base),
    }
}

/// Two ranges of `ranks` ports, from `a` and from `b`, share a port.
fn overlap(a: i64, b: i64, ranks: i64) -> bool {
    a < b + ranks && b < a + ranks
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
