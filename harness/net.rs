//! Outbound HTTP: the one place toolcost builds a client for a connection it makes (the
//! gateway's forward, `weigh`/`check` over Streamable HTTP, the driver's endpoints, and the
//! server's http runner, which adds its allowlist's redirect rule through [`builder`]).
//!
//! TLS is rustls with the bundled Mozilla roots (webpki-roots), so an https URL works on a bare
//! container with no system certificate store; `SSL_CERT_FILE` and `--ca-cert FILE` add roots
//! for private gateways and tests. Timeouts: connect, idle read (between chunks, so a healthy
//! long stream is never cut) and an optional total; redirects are off unless asked for.
//! [`describe`] words a failed request for the person at the terminal: a TLS failure says what
//! failed (unknown issuer, name mismatch, a handshake with a server that does not speak TLS)
//! and names the host.

use crate::error::{Error, Result};
use futures_util::StreamExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What an outbound client does about redirects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirects {
    /// Answer a 3xx as it is (the default: a hop could leave the host that was allowed).
    Refuse,
    /// Follow up to this many hops.
    Follow(usize),
}

/// How an outbound client behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub connect_timeout: Duration,
    /// Longest silence while reading (headers or any body chunk).
    pub read_timeout: Duration,
    /// Longest whole exchange, when there is one (never for streams that may be long).
    pub total_timeout: Option<Duration>,
    pub redirects: Redirects,
    /// A PEM file of extra root certificates (`--ca-cert`); `SSL_CERT_FILE` is read as well.
    pub ca_cert: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            connect_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(120),
            total_timeout: None,
            redirects: Redirects::Refuse,
            ca_cert: None,
        }
    }
}

impl Options {
    /// Connect within `t` (at most 30 s) and never be silent longer than `t`.
    pub fn idle(t: Duration) -> Options {
        Options {
            connect_timeout: t.min(Duration::from_secs(30)),
            read_timeout: t,
            ..Options::default()
        }
    }

    pub fn with_ca_cert(mut self, ca: Option<&Path>) -> Options {
        self.ca_cert = ca.map(Path::to_path_buf);
        self
    }
}

/// Build a client with these options.
pub fn client(opts: &Options) -> Result<reqwest::Client> {
    builder(opts)?
        .build()
        .map_err(|e| Error::input(format!("could not build the http client: {e}")))
}

/// The builder behind [`client`]: TLS roots, timeouts and the redirect rule set, for a caller
/// that adds a rule of its own (the server's http runner replaces the redirect policy with one
/// that checks every hop against its allowlist).
pub fn builder(opts: &Options) -> Result<reqwest::ClientBuilder> {
    let mut b = reqwest::Client::builder()
        .use_rustls_tls()
        .connect_timeout(opts.connect_timeout)
        .read_timeout(opts.read_timeout)
        .redirect(match opts.redirects {
            Redirects::Refuse => reqwest::redirect::Policy::none(),
            Redirects::Follow(n) => reqwest::redirect::Policy::limited(n),
        });
    if let Some(t) = opts.total_timeout {
        b = b.timeout(t);
    }
    for cert in roots(opts.ca_cert.as_deref())? {
        b = b.add_root_certificate(cert);
    }
    Ok(b)
}

/// The extra roots: `--ca-cert FILE`, then `SSL_CERT_FILE` when it is set.
fn roots(ca_cert: Option<&Path>) -> Result<Vec<reqwest::Certificate>> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    if let Some(p) = ca_cert {
        files.push(("--ca-cert".into(), p.to_path_buf()));
    }
    if let Some(p) = std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) {
        files.push(("SSL_CERT_FILE".into(), PathBuf::from(p)));
    }
    let mut out = Vec::new();
    for (what, path) in files {
        let pem = std::fs::read(&path)
            .map_err(|e| Error::input(format!("{what} {}: {e}", path.display())))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                Error::input(format!(
                    "{what} {}: no PEM certificate in it (expected -----BEGIN CERTIFICATE-----)",
                    path.display()
                ))
            })?;
        out.extend(certs);
    }
    Ok(out)
}

/// What went wrong with a request to `url`, in words: TLS failures say which check failed and
/// name the host; timeouts and refused connections say so.
pub fn describe(e: &reqwest::Error, url: &str) -> String {
    // The error's text names its URL, whose query may hold a client's key (Gemini's `?key=`):
    // it is said without the query.
    let shown = scrubbed(e);
    let host = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| format!("{h}:{}", u.port_or_known_default().unwrap_or(0)))
        })
        .unwrap_or_else(|| url.to_string());
    let chain = format!("{e:?}");
    if let Some(what) = tls_failure(&chain) {
        return format!("TLS with {host} failed: {what}");
    }
    if e.is_timeout() {
        return format!("{host} did not answer in time ({shown})");
    }
    if e.is_connect() {
        return format!("could not connect to {host}: {}", root_cause(e));
    }
    format!("{shown}: {}", root_cause(e))
}

/// A reqwest error to show: its text without its URL's query.
pub fn scrubbed(e: &reqwest::Error) -> ScrubbedError<'_> {
    ScrubbedError(e)
}

/// A reqwest error shown without its URL's query.
pub struct ScrubbedError<'a>(&'a reqwest::Error);

impl std::fmt::Display for ScrubbedError<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0.to_string();
        let text = match self.0.url() {
            Some(u) if u.query().is_some() => {
                let mut bare = u.clone();
                bare.set_query(None);
                text.replace(u.as_str(), bare.as_str())
            }
            _ => text,
        };
        f.write_str(&text)
    }
}

/// Which TLS check failed, from the error chain's debug text (rustls names each one).
fn tls_failure(chain: &str) -> Option<String> {
    if chain.contains("UnknownIssuer") {
        Some("unknown issuer: the server's certificate is not signed by a trusted root; pass --ca-cert FILE (or set SSL_CERT_FILE) for a private CA".into())
    } else if chain.contains("NotValidForName") {
        Some("name mismatch: the server's certificate is not valid for this host name".into())
    } else if chain.contains("InvalidContentType") || chain.contains("CorruptMessage") {
        Some("handshake failed: the server did not answer in TLS (a plain-http server on an https:// URL?)".into())
    } else if chain.contains("Expired") {
        Some("the server's certificate has expired or is not yet valid".into())
    } else if chain.contains("InvalidCertificate")
        || chain.contains("AlertReceived")
        || chain.contains("HandshakeFailure")
        || chain.contains("PeerIncompatible")
    {
        let detail = chain
            .split(['(', ')', '{', '}', ','])
            .find(|s| {
                s.contains("InvalidCertificate")
                    || s.contains("Alert")
                    || s.contains("Handshake")
                    || s.contains("PeerIncompatible")
            })
            .unwrap_or("")
            .trim()
            .to_string();
        Some(format!("handshake failed ({detail})"))
    } else {
        None
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &dyn std::error::Error = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// Why reading a body stopped.
#[derive(Debug)]
pub enum ReadError {
    /// The body passed the cap; the bytes read so far are dropped.
    TooLarge(usize),
    Http(reqwest::Error),
}

/// Read a whole body, refusing one larger than `max` bytes (without buffering past it).
pub async fn read_capped(
    resp: reqwest::Response,
    max: usize,
) -> std::result::Result<Vec<u8>, ReadError> {
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Err(ReadError::TooLarge(max));
    }
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(ReadError::Http)?;
        if out.len() + chunk.len() > max {
            return Err(ReadError::TooLarge(max));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// A URL with its `user:password@` removed, for banners and logs.
pub fn redacted(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) if !u.username().is_empty() || u.password().is_some() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string().trim_end_matches('/').to_string()
                + if url.ends_with('/') { "/" } else { "" }
        }
        Ok(_) => url.to_string(),
        Err(_) => url
            .split_once('@')
            .map(|(_, rest)| format!("<redacted>@{rest}"))
            .unwrap_or_else(|| url.to_string()),
    }
}
