//! Origins (scheme, host, port) of http(s) URLs, and where a redirect leads: a credential
//! goes only to the origin it was meant for, and a health check counts only its own origin's
//! answer. Hosts alone are not enough: another port on the same host is another server, run
//! by whoever can bind it.

use ureq::http::Uri;

/// `(scheme, host, port)`, the scheme's default port filled in; `None` when the URL is not
/// http(s) with a host.
pub(crate) fn of(url: &str) -> Option<(String, String, u16)> {
    let uri: Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let host = uri.host().filter(|h| !h.is_empty())?.to_ascii_lowercase();
    Some((scheme, host, uri.port_u16().unwrap_or(default)))
}

/// Both URLs are http(s) at the same scheme, host and port.
pub(crate) fn same(a: &str, b: &str) -> bool {
    matches!((of(a), of(b)), (Some(x), Some(y)) if x == y)
}

/// The URL a redirect's `Location` names, read against the URL that answered: absolute,
/// scheme-relative (`//host/x`), an absolute path or a relative one. `None` when it is not
/// an http(s) URL.
pub(crate) fn join(base: &str, location: &str) -> Option<String> {
    let location = location.trim();
    if of(location).is_some() {
        return Some(location.to_owned());
    }
    let uri: Uri = base.parse().ok()?;
    let scheme = uri.scheme_str()?;
    let authority = uri.authority()?.as_str();
    let joined = if let Some(rest) = location.strip_prefix("//") {
        format!("{scheme}://{rest}")
    } else if location.starts_with('/') {
        format!("{scheme}://{authority}{location}")
    } else if location.contains("://") {
        return None;
    } else {
        let path = uri.path();
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        format!("{scheme}://{authority}{dir}{location}")
    };
    of(&joined).map(|_| joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_host_and_port() {
        assert!(same("http://h/a", "http://H:80/b"));
        assert!(same("https://h/a", "https://h:443/"));
        assert!(!same("http://h:8000/a", "http://h:8001/a"));
        assert!(!same("http://h/a", "https://h/a"));
        assert!(!same("http://h/a", "http://g/a"));
        assert!(!same("ftp://h/a", "ftp://h/a"));
    }

    #[test]
    fn redirects_are_read_against_the_answering_url() {
        let base = "http://h:8000/org/m/resolve/abc/config.json";
        assert_eq!(join(base, "/api/x").as_deref(), Some("http://h:8000/api/x"));
        assert_eq!(
            join(base, "other.json").as_deref(),
            Some("http://h:8000/org/m/resolve/abc/other.json")
        );
        assert_eq!(join(base, "//cdn:9/x").as_deref(), Some("http://cdn:9/x"));
        assert_eq!(
            join(base, "https://cdn/x").as_deref(),
            Some("https://cdn/x")
        );
        assert_eq!(join(base, "file:///etc/passwd"), None);
    }
}
