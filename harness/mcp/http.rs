//! The Streamable HTTP transport: each message is a POST; answers come back as one JSON body or
//! as a server-sent-events stream, and are queued with their text as received. Every request
//! (the session's DELETE included) has a timeout; an answer body or one event longer than the
//! line bound is an error. http and https (rustls; `--ca-cert` and `SSL_CERT_FILE` for private
//! roots) through [`crate::net`].

use super::{Channel, Incoming};
use crate::error::{Error, Result};
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::VecDeque;
use std::time::Duration;

pub struct Http {
    client: reqwest::Client,
    url: String,
    headers: Vec<(String, String)>,
    session: Option<String>,
    protocol: Option<String>,
    queue: VecDeque<Incoming>,
    last_status: Option<u16>,
    /// What the last answer held where it held no JSON-RPC message, for [`Channel::gone`].
    last_problem: Option<String>,
    /// Ids of the answers the last request got, to name an answer to the wrong request.
    answered: Vec<Value>,
    /// The id of the last request sent.
    asked: Option<Value>,
    /// The last answer's content type and encoding.
    last_type: String,
    last_encoding: Option<String>,
    timeout: Duration,
    max_body: usize,
}

impl Http {
    /// `headers` are `Name: value` pairs sent with every request.
    pub fn new(url: &str, headers: &[String]) -> Result<Http> {
        Http::with_options(
            url,
            headers,
            Duration::from_secs(30),
            &super::Options::default(),
        )
    }

    /// Every request bounded by `timeout`; answers bounded by `opts.max_line`.
    pub fn with_options(
        url: &str,
        headers: &[String],
        timeout: Duration,
        opts: &super::Options,
    ) -> Result<Http> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| Error::input(format!("--url {url}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::input(format!(
                "--url {url}: expected an http:// or https:// URL"
            )));
        }
        let headers = headers
            .iter()
            .map(|h| {
                h.split_once(':')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .ok_or_else(|| Error::input(format!("--header {h}: expected `Name: value`")))
            })
            .collect::<Result<Vec<_>>>()?;
        let net = crate::net::Options {
            total_timeout: Some(timeout),
            ..crate::net::Options::idle(timeout).with_ca_cert(opts.ca_cert.as_deref())
        };
        Ok(Http {
            client: crate::net::client(&net)?,
            url: url.to_string(),
            headers,
            session: None,
            protocol: None,
            queue: VecDeque::new(),
            last_status: None,
            last_problem: None,
            answered: Vec::new(),
            asked: None,
            last_type: String::new(),
            last_encoding: None,
            timeout,
            max_body: opts.max_line,
        })
    }

    fn push(&mut self, text: &str) {
        // An answer too large to build as a tree is not parsed at all.
        if let Err(why) = crate::json::check_nodes(text.as_bytes(), "the answer") {
            self.last_problem = Some(why);
            return;
        }
        // Parsed once: a message, or a batch whose items are messages (one level: an item of a
        // batch is taken as it is, never parsed again or read as a batch itself).
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(batch)) => {
                for item in batch {
                    let item_text = crate::json::compact(&item);
                    match Incoming::of(item_text.clone(), item) {
                        Some(m) => self.take(m),
                        None => self.unreadable(&item_text),
                    }
                }
            }
            Ok(value) => match Incoming::of(text.to_string(), value) {
                Some(m) => self.take(m),
                None => self.unreadable(text),
            },
            Err(_) => self.unreadable(text),
        }
    }

    /// Note what an answer that is not a message held.
    fn unreadable(&mut self, text: &str) {
        self.last_problem = Some(unreadable(
            text,
            &self.last_type,
            self.last_encoding.as_deref(),
        ));
    }

    /// Queue a message, noting the id it answers and the version it negotiates.
    fn take(&mut self, m: Incoming) {
        if m.value.get("method").is_none() {
            if let Some(id) = m.value.get("id") {
                self.answered.push(id.clone());
            }
        }
        if let Some(v) = m.value.pointer("/result/protocolVersion") {
            self.protocol = v.as_str().map(String::from);
        }
        self.queue.push_back(m);
    }
}

/// What an answer that holds no JSON-RPC message holds instead, in words.
fn unreadable(text: &str, content_type: &str, encoding: Option<&str>) -> String {
    let t = text.trim_start();
    if let Some(enc) = encoding.filter(|e| !e.eq_ignore_ascii_case("identity")) {
        return format!(
            "encoded as `{enc}`, which toolcost does not decode; serve tools/list uncompressed"
        );
    }
    if content_type.contains("html") || t.starts_with('<') {
        return "an HTML page, not JSON-RPC (is --url the MCP endpoint itself?)".into();
    }
    let begins: String = t.chars().take(60).flat_map(char::escape_default).collect();
    match serde_json::from_str::<Value>(t) {
        Err(e) if e.to_string().contains("recursion limit") => {
            "JSON nested more than 128 levels deep, which toolcost does not read".into()
        }
        Err(e) => format!("not JSON ({e}); it begins `{begins}`"),
        Ok(v) if !v.is_object() => {
            format!("JSON, but not a JSON-RPC message; it begins `{begins}`")
        }
        Ok(_) => format!(
            "a JSON object without `jsonrpc`, so not a JSON-RPC message; it begins `{begins}`"
        ),
    }
}

impl Channel for Http {
    async fn send(&mut self, msg: &Value) -> Result<()> {
        let mut req = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(serde_json::to_vec(msg).expect("serialises"));
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        // A stateless request names its version in `_meta` and, on HTTP, in the headers too,
        // with its method (2026-07-28, "Request Metadata").
        let modern = msg
            .pointer("/params/_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
            .and_then(Value::as_str);
        if let Some(v) = modern {
            req = req.header("mcp-protocol-version", v);
            if let Some(m) = msg.get("method").and_then(Value::as_str) {
                req = req.header("mcp-method", m);
            }
        } else if let Some(p) = &self.protocol {
            req = req.header("mcp-protocol-version", p);
        }
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let resp = req.send().await.map_err(|e| {
            Error::input(format!(
                "POST {}: {}",
                self.url,
                crate::net::describe(&e, &self.url)
            ))
        })?;
        let status = resp.status();
        self.last_status = Some(status.as_u16());
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_ascii_lowercase)
        };
        self.last_type = header("content-type").unwrap_or_default();
        self.last_encoding = header("content-encoding");
        self.last_problem = None;
        if msg.get("method").is_some() && msg.get("id").is_some() {
            self.asked = msg.get("id").cloned();
            self.answered.clear();
        }
        if let Some(s) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(s.to_string());
        }
        if !status.is_success() {
            let body = resp.text().await.unwrap_or_default();
            return Err(Error::input(format!(
                "POST {} answered HTTP {status}: {}",
                self.url,
                body.chars().take(200).collect::<String>()
            )));
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let want = msg
            .get("id")
            .filter(|_| msg.get("method").is_some())
            .cloned();
        if !sse {
            let body = crate::net::read_capped(resp, self.max_body)
                .await
                .map_err(|e| match e {
                    crate::net::ReadError::TooLarge(max) => Error::input(format!(
                        "the answer from {} is larger than {max} bytes; raise --max-line if its tools/list is really that large",
                        self.url
                    )),
                    crate::net::ReadError::Http(e) => {
                        Error::input(format!("reading the answer: {}", crate::net::describe(&e, &self.url)))
                    }
                })?;
            let body = String::from_utf8_lossy(&body);
            if !body.trim().is_empty() {
                self.push(body.trim());
            } else if want.is_some() {
                self.last_problem = Some("an empty body".into());
            }
            return Ok(());
        }
        // Read events until the answer to this request arrives (the stream may stay open).
        let mut stream = resp.bytes_stream();
        let mut splitter = crate::sse::Splitter::new(self.max_body);
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| {
                Error::input(format!(
                    "reading the event stream: {}",
                    crate::net::describe(&e, &self.url)
                ))
            })?;
            let events = splitter.push(&chunk).map_err(|e| {
                Error::input(format!(
                    "the event stream from {}: {e}; raise --max-line if its tools/list is really that large",
                    self.url
                ))
            })?;
            for event in events {
                let Some(text) = crate::sse::data(&event) else {
                    continue;
                };
                self.push(&text);
                if want.is_some()
                    && self.queue.back().is_some_and(|m| {
                        m.value.get("id") == want.as_ref() && m.value.get("method").is_none()
                    })
                {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    async fn recv(&mut self) -> Result<Option<Incoming>> {
        Ok(self.queue.pop_front())
    }

    async fn close(&mut self) {
        if let Some(s) = self.session.take() {
            let _ = tokio::time::timeout(
                self.timeout,
                self.client
                    .delete(&self.url)
                    .header("mcp-session-id", s)
                    .timeout(self.timeout)
                    .send(),
            )
            .await;
        }
    }

    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    fn probes(&self) -> bool {
        true
    }

    fn forget_session(&mut self) {
        self.session = None;
        self.protocol = None;
        self.queue.clear();
    }

    async fn gone(&mut self) -> String {
        match self.last_status {
            Some(s) => {
                if let Some(problem) = &self.last_problem {
                    return format!("its answer (HTTP {s}) was {problem}");
                }
                match (&self.asked, self.answered.last()) {
                    (Some(asked), Some(other)) if other != asked => format!(
                        "its answer (HTTP {s}) answered request id {other}, not this request's id {asked}"
                    ),
                    _ => format!("its answer (HTTP {s}) carried no response to the request"),
                }
            }
            None => "no answer".into(),
        }
    }
}
