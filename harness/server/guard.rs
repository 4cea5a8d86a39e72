//! Who may reach the MCP endpoints over HTTP: the `Host` and `Origin` checks that keep a web
//! page from driving a local server through DNS rebinding, and which MCP requests need the
//! bearer token.
//!
//! The transports section of every MCP revision since 2025-03-26 says a server MUST validate
//! `Origin` and answer 403 when it is present and not allowed; the official conformance
//! suite's `dns-rebinding-protection` scenario also sends a foreign `Host` to a loopback server
//! and expects 403. A rebinding page's requests carry the attacker's host name in `Host`, so a
//! `Host` that is an IP address cannot come from one; a name must be `localhost` or one the
//! operator allowed.
//!
//! The token is compared as a SHA-256 digest, and the need for it is decided from the headers
//! wherever the headers suffice, so that a caller without it is refused before its body is read.

use axum::http::Method;
use sha2::{Digest, Sha256};
use std::net::{IpAddr, SocketAddr};

/// Which MCP requests need the bearer token. Each level includes the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenScope {
    /// `tools/call` only: anyone who can reach the server may list and discover.
    #[default]
    Calls,
    /// Also what reveals the catalogue or holds server state: `initialize` (its instructions
    /// describe the catalogue, and an open `initialize` would let anyone push authorised
    /// sessions out of the capped table), `tools/list`, `server/discover`,
    /// `subscriptions/listen` and the GET event stream. `ping` stays open.
    List,
    /// Every request, notification, GET and DELETE on the MCP endpoints.
    All,
}

impl TokenScope {
    pub const NAMES: [&'static str; 3] = ["calls", "list", "all"];

    pub fn parse(s: &str) -> Result<TokenScope, String> {
        match s {
            "calls" => Ok(TokenScope::Calls),
            "list" => Ok(TokenScope::List),
            "all" => Ok(TokenScope::All),
            other => Err(format!(
                "`{other}`: expected one of {}",
                TokenScope::NAMES.join(", ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TokenScope::Calls => "calls",
            TokenScope::List => "list",
            TokenScope::All => "all",
        }
    }

    /// What the headers alone say about an MCP request's need for the token, by its HTTP
    /// method. A POST's need depends on the JSON-RPC method in its body, except under `all`;
    /// a GET opens the event stream (a listing under `list`); a DELETE closes a session.
    pub fn need_before_body(self, method: &Method) -> Need {
        match self {
            TokenScope::All => Need::Always,
            // axum answers HEAD with the GET handler.
            TokenScope::List if method == Method::GET || method == Method::HEAD => Need::Always,
            TokenScope::List | TokenScope::Calls if method == Method::POST => Need::ByBody,
            TokenScope::List | TokenScope::Calls => Need::Never,
        }
    }

    /// Whether a JSON-RPC method needs the token at this level (`None`: a message that is
    /// not a request, or a GET/DELETE, which only `all` protects besides the GET stream).
    pub fn covers(self, method: Option<&str>) -> bool {
        let listing = matches!(
            method,
            Some("initialize" | "tools/list" | "server/discover" | "subscriptions/listen")
        );
        match self {
            TokenScope::All => true,
            TokenScope::List => method == Some("tools/call") || listing,
            TokenScope::Calls => method == Some("tools/call"),
        }
    }
}

/// Whether a request needs the token, as far as its headers tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Whatever its body says: refused from the headers when the token is missing or wrong.
    Always,
    /// It depends on the JSON-RPC method in the body.
    ByBody,
    Never,
}

/// What the server keeps of its token: the SHA-256 digest it compares presented tokens with.
pub fn token_digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether a presented token is the one with this digest. Digests of a fixed size are compared
/// in time that does not depend on where they differ, so neither the first wrong byte nor the
/// token's length shows in how long the answer takes (hashing the presented token takes time by
/// its own length, which its sender knows already).
pub fn token_matches(expected: &[u8; 32], presented: &str) -> bool {
    constant_time_eq(expected, &token_digest(presented))
}

/// Equal byte strings, compared without stopping at the first difference (`false` at once when
/// the lengths differ: callers compare fixed-size digests or tags).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The HTTP access policy of the MCP endpoints.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// Origins allowed besides loopback ones, normalised (`scheme://host[:port]`, lower case,
    /// default port dropped); `null` admits `Origin: null`.
    pub origins: Vec<String>,
    /// Host names clients may reach the server by besides `localhost` and IP addresses
    /// (lower case, no port).
    pub names: Vec<String>,
    pub token_for: TokenScope,
    /// The address the listener bound, once known.
    pub bound: Option<SocketAddr>,
}

impl Access {
    /// Add `--allow-origin` values, refusing what is not an origin.
    pub fn with_origins(mut self, origins: &[String]) -> Result<Access, String> {
        for o in origins {
            self.origins.push(normalise_origin(o).ok_or_else(|| {
                format!("--allow-origin {o}: expected scheme://host[:port] (e.g. https://app.example.com) or `null`")
            })?);
        }
        Ok(self)
    }

    /// Add `--allow-name` values: host names without a scheme or path.
    pub fn with_names(mut self, names: &[String]) -> Result<Access, String> {
        for n in names {
            let host = n.trim().to_ascii_lowercase();
            let valid = !host.is_empty()
                && host.len() <= 253
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
            if !valid {
                return Err(format!(
                    "--allow-name {n}: expected a host name such as mcp.example.com (no scheme, port or path)"
                ));
            }
            self.names.push(host);
        }
        Ok(self)
    }

    /// `Err(why)` when the request must be refused with 403.
    pub fn check(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), String> {
        let Some(host) = host else {
            return Err("the request has no Host header".into());
        };
        if !self.host_allowed(host) {
            return Err(format!(
                "Host `{}` is not an address of this server nor an allowed name (--allow-name)",
                clip(host)
            ));
        }
        if let Some(origin) = origin {
            if !self.origin_allowed(origin) {
                return Err(format!(
                    "Origin `{}` is not allowed; start the server with --allow-origin {} to let pages from it in",
                    clip(origin),
                    clip(origin)
                ));
            }
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str) -> bool {
        let Some(name) = host_name(host) else {
            return false;
        };
        if name == "localhost" || self.names.contains(&name) {
            return true;
        }
        // An IP address cannot be the attacker's rebound name. Loopback is always this
        // machine; another address must be the bound one unless the server listens on all.
        match name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            Ok(ip) if ip.is_loopback() => true,
            Ok(ip) => match self.bound {
                Some(b) => b.ip().is_unspecified() || b.ip() == ip,
                None => false,
            },
            Err(_) => false,
        }
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let Some(o) = normalise_origin(origin) else {
            return false;
        };
        if self.origins.contains(&o) {
            return true;
        }
        if o == "null" {
            return false;
        }
        // Pages served from this machine's loopback addresses, any port.
        let host = o.split_once("://").map(|(_, h)| h).unwrap_or("");
        host_name(host).is_some_and(|h| {
            h == "localhost"
                || h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        })
    }

    /// What a server bound to a non-loopback address accepts, for its start-up line; `None` on
    /// loopback.
    pub fn describe(&self) -> Option<String> {
        let bound = self.bound?;
        if bound.ip().is_loopback() {
            return None;
        }
        let hosts = if bound.ip().is_unspecified() {
            "any IP address".to_string()
        } else {
            bound.ip().to_string()
        };
        let mut names = vec!["localhost".to_string()];
        names.extend(self.names.iter().cloned());
        let mut origins = vec!["http(s)://localhost, 127.0.0.1, [::1] (any port)".to_string()];
        origins.extend(self.origins.iter().cloned());
        Some(format!(
            "listening beyond loopback: MCP requests are accepted with Host {hosts}, loopback or {}; with no Origin or Origin {}; token required for {}; anything else gets 403",
            names.join(", "),
            origins.join(", "),
            self.token_for.name()
        ))
    }
}

/// The host part of a `Host` value (`name`, `name:port`, `[v6]`, `[v6]:port`), lower case.
fn host_name(host: &str) -> Option<String> {
    let host = host.trim().to_ascii_lowercase();
    if host.is_empty() || host.contains(['/', '@', ' ']) {
        return None;
    }
    if let Some(rest) = host.strip_prefix('[') {
        let (inner, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(is_port)) {
            return None;
        }
        return Some(format!("[{inner}]"));
    }
    match host.split_once(':') {
        Some((name, port)) if is_port(port) && !name.is_empty() => Some(name.to_string()),
        Some(_) => None,
        None => Some(host),
    }
}

fn is_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

/// `scheme://host[:port]` in lower case with the scheme's default port dropped, or `null`.
pub fn normalise_origin(origin: &str) -> Option<String> {
    let o = origin.trim().to_ascii_lowercase();
    if o == "null" {
        return Some(o);
    }
    let (scheme, rest) = o.split_once("://")?;
    if !matches!(scheme, "http" | "https") || rest.contains('/') {
        return None;
    }
    let name = host_name(rest)?;
    let port = rest[rest.rfind(']').map_or(0, |i| i + 1)..]
        .rsplit_once(':')
        .map(|(_, p)| p.to_string());
    let default = if scheme == "http" { "80" } else { "443" };
    Some(match port {
        Some(p) if p != default => format!("{scheme}://{name}:{p}"),
        _ => format!("{scheme}://{name}"),
    })
}

fn clip(s: &str) -> String {
    s.chars()
        .take(100)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The `WWW-Authenticate` challenge of a 401 (RFC 6750 section 3). The MCP authorization spec
/// asks OAuth-protected servers to add `resource_metadata` (RFC 9728); this server takes a
/// static bearer token handed out of band and has no authorization server to point at, so it
/// sends the plain bearer challenge (assumed the fitting form for such a server).
pub fn challenge(presented: bool) -> String {
    if presented {
        r#"Bearer realm="toolcost", error="invalid_token", error_description="the token is not this server's""#.into()
    } else {
        r#"Bearer realm="toolcost""#.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(addr: &str) -> Access {
        Access {
            bound: Some(addr.parse().unwrap()),
            ..Access::default()
        }
    }

    #[test]
    fn hosts() {
        let a = bound("127.0.0.1:4000");
        for ok in [
            "127.0.0.1:4000",
            "localhost:4000",
            "LOCALHOST",
            "[::1]:4000",
            "127.0.0.2",
        ] {
            assert!(a.check(Some(ok), None).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "evil.example.com:4000",
            "10.0.0.1:4000",
            "localhost.evil.com",
            "",
            "a@localhost",
            "[::1",
            "localhost:x",
        ] {
            assert!(a.check(Some(bad), None).is_err(), "{bad}");
        }
        assert!(a.check(None, None).is_err());
        let any = bound("0.0.0.0:80")
            .with_names(&["mcp.example.com".into()])
            .unwrap();
        assert!(any.check(Some("10.0.0.1"), None).is_ok());
        assert!(any.check(Some("MCP.example.com:80"), None).is_ok());
        assert!(any.check(Some("other.example.com"), None).is_err());
        assert!(Access::default().with_names(&["http://x".into()]).is_err());
    }

    #[test]
    fn origins() {
        let a = bound("127.0.0.1:4000")
            .with_origins(&["https://App.example.com:443".into()])
            .unwrap();
        let host = Some("127.0.0.1:4000");
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1:4000",
            "https://[::1]",
            "https://app.example.com",
        ] {
            assert!(a.check(host, Some(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "https://evil.example.com",
            "null",
            "https://app.example.com:8443",
            "http://app.example.com",
            "file://",
            "garbage",
        ] {
            assert!(a.check(host, Some(bad)).is_err(), "{bad}");
        }
        assert!(Access::default()
            .with_origins(&["app.example.com".into()])
            .is_err());
        let null = Access::default().with_origins(&["null".into()]).unwrap();
        assert!(null.check(Some("localhost"), Some("null")).is_ok());
    }

    #[test]
    fn scopes() {
        use TokenScope::*;
        assert!(Calls.covers(Some("tools/call")) && !Calls.covers(Some("tools/list")));
        assert!(List.covers(Some("tools/list")) && List.covers(Some("initialize")));
        assert!(!List.covers(Some("ping")));
        assert!(All.covers(Some("ping")) && All.covers(None));
        assert_eq!(TokenScope::parse("list"), Ok(List));
        assert!(TokenScope::parse("everything").is_err());
        assert_eq!(All.need_before_body(&Method::POST), Need::Always);
        assert_eq!(List.need_before_body(&Method::GET), Need::Always);
        assert_eq!(List.need_before_body(&Method::HEAD), Need::Always);
        assert_eq!(List.need_before_body(&Method::POST), Need::ByBody);
        assert_eq!(Calls.need_before_body(&Method::GET), Need::Never);
        assert_eq!(Calls.need_before_body(&Method::DELETE), Need::Never);
    }

    #[test]
    fn tokens_compare_as_digests() {
        let d = token_digest("s3cret-token-value");
        assert!(token_matches(&d, "s3cret-token-value"));
        for wrong in [
            "",
            "s3cret-token-valu",
            "s3cret-token-value ",
            "S3cret-token-value",
        ] {
            assert!(!token_matches(&d, wrong), "{wrong:?}");
        }
        assert!(!constant_time_eq(b"ab", b"abc") && constant_time_eq(b"", b""));
    }

    #[test]
    fn describes_non_loopback_only() {
        assert!(bound("127.0.0.1:1").describe().is_none());
        let d = bound("0.0.0.0:1").describe().unwrap();
        assert!(d.contains("any IP address") && d.contains("403"), "{d}");
    }
}
