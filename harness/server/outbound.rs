//! The http runner's outbound client: it sends only to allowlisted host:port pairs, follows a
//! redirect only when the next hop is allowlisted too, and bounds every exchange (connect,
//! each read, the whole exchange, the response's size).

use super::Limits;
use crate::error::{Error, Result};
use reqwest::Url;

/// One `--allow-host` entry: a host, and the port it allows (`None`: the scheme's default).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Allowed {
    host: String,
    port: Option<u16>,
}

/// Parse `host`, `host:port`, `[v6]` or `[v6]:port`.
fn parse_entry(entry: &str) -> Result<Allowed> {
    let bad = || {
        Error::input(format!(
            "--allow-host {entry}: write a host (`api.example.com`, default port of the URL's scheme) or host:port (`127.0.0.1:8080`, `[::1]:8080`)"
        ))
    };
    let e = entry.trim().to_ascii_lowercase();
    let (host, port) = if let Some(rest) = e.strip_prefix('[') {
        let (h, after) = rest.split_once(']').ok_or_else(bad)?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(bad)?),
        };
        (format!("[{h}]"), port)
    } else {
        match e.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (e.clone(), None),
        }
    };
    if host.is_empty() || host.contains(['/', '@', '?', '#', ' ']) {
        return Err(bad());
    }
    let port = match port {
        Some(p) => Some(p.parse::<u16>().map_err(|_| bad())?),
        None => None,
    };
    Ok(Allowed { host, port })
}

/// The allowlist and the client that obeys it.
pub struct Outbound {
    allowed: Vec<Allowed>,
    client: reqwest::Client,
    response_bytes: usize,
}

/// Whether `url`'s host and port are on the list; the port must match the entry's, or be the
/// scheme's default when the entry names none.
fn allows(allowed: &[Allowed], url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.to_ascii_lowercase();
    let port = url.port_or_known_default();
    allowed.iter().any(|a| {
        a.host == host
            && match a.port {
                Some(p) => port == Some(p),
                None => url.port().is_none(),
            }
    })
}

/// `host:port` as a person writes it for `--allow-host`.
pub fn host_port(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port_or_known_default() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    }
}

impl Outbound {
    pub fn new(entries: &[String], limits: &Limits) -> Result<Outbound> {
        let allowed: Vec<Allowed> = entries
            .iter()
            .map(|e| parse_entry(e))
            .collect::<Result<_>>()?;
        let hops = allowed.clone();
        let max = limits.max_redirects;
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > max {
                let msg = format!("more than {max} redirects");
                attempt.error(msg)
            } else if allows(&hops, attempt.url()) {
                attempt.follow()
            } else {
                let msg = format!(
                    "the answer redirected to `{}`, which is not on this server's allowlist, so it was not followed",
                    host_port(attempt.url())
                );
                attempt.error(msg)
            }
        });
        let client = crate::net::builder(&crate::net::Options {
            connect_timeout: limits.connect_timeout,
            read_timeout: limits.read_timeout,
            total_timeout: Some(limits.total_timeout),
            redirects: crate::net::Redirects::Refuse,
            ca_cert: None,
        })?
        .redirect(policy)
        .build()
        .map_err(|e| Error::input(format!("the outbound client: {e}")))?;
        Ok(Outbound {
            allowed,
            client,
            response_bytes: limits.response_bytes,
        })
    }

    pub fn allows(&self, url: &Url) -> bool {
        allows(&self.allowed, url)
    }

    /// Send a request to an allowlisted URL; the status and body text, or why it failed.
    pub async fn send(
        &self,
        method: reqwest::Method,
        url: Url,
        json_body: Option<String>,
    ) -> std::result::Result<(u16, String), String> {
        let mut rb = self.client.request(method, url);
        if let Some(b) = json_body {
            rb = rb.header("content-type", "application/json").body(b);
        }
        let failed = |e: reqwest::Error| {
            let why = if e.is_timeout() {
                "it timed out".to_string()
            } else {
                super::error_chain(&e)
            };
            format!("request failed: {why}")
        };
        let mut resp = rb.send().await.map_err(failed)?;
        let status = resp.status().as_u16();
        let cap = self.response_bytes;
        let too_big = || format!("the response is larger than {cap} bytes, so it was not kept");
        if resp.content_length().is_some_and(|n| n > cap as u64) {
            return Err(too_big());
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > cap {
                return Err(too_big());
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_name_a_host_and_a_port() {
        let list: Vec<Allowed> = [
            "localhost",
            "127.0.0.1:8080",
            "[::1]:9000",
            "API.example.com",
        ]
        .iter()
        .map(|e| parse_entry(e).unwrap())
        .collect();
        let ok = |u: &str| allows(&list, &Url::parse(u).unwrap());
        assert!(ok("http://localhost/x"));
        assert!(ok("https://localhost/x"));
        assert!(!ok("http://localhost:8080/x"));
        assert!(ok("http://127.0.0.1:8080/x"));
        assert!(!ok("http://127.0.0.1:8081/x"));
        assert!(!ok("http://127.0.0.1/x"));
        assert!(ok("http://[::1]:9000/"));
        assert!(ok("https://api.example.com/"));
        for bad in ["", "a/b", "host:port", "[::1", "u@h"] {
            assert!(parse_entry(bad).is_err(), "{bad}");
        }
    }
}
