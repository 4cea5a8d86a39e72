//! A minimal MCP client that keeps the bytes: initialize, initialized, `tools/list` with
//! pagination, answering `ping` and `roots/list`, over stdio or Streamable HTTP.
//!
//! Written here rather than on rmcp's client because rmcp's typed transports re-serialise
//! every message (dropping fields such as `execution`), and weighing needs each tool exactly as
//! the server sent it; recovering the raw bytes from rmcp's HTTP transport would mean
//! re-implementing its SSE handling anyway.

#[cfg(target_os = "linux")]
mod descendants;
mod http;
mod stdio;
mod target;

pub use http::Http;
pub use stdio::{Launch, Stdio};
pub use target::Target;

use crate::catalogue::{capture, Tool};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::time::Duration;

/// The newest protocol version toolcost offers at `initialize` (versions with sessions).
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// The stateless revision: no `initialize`; `server/discover`, then every request names its
/// version in `_meta`.
pub const MODERN: &str = "2026-07-28";
/// Every version the client speaks, newest first.
pub const VERSIONS: [&str; 5] = [
    MODERN,
    PROTOCOL_VERSION,
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];
/// The longest an HTTP server has to answer the `server/discover` probe before the client
/// falls back to `initialize`.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest message line (stdio) or answer body (HTTP) read by default: a one-page
/// `tools/list` of 85,600 per-row tools is about 55 MB.
pub const DEFAULT_MAX_LINE: usize = 128 << 20;
/// The most tools one session lists by default.
pub const DEFAULT_MAX_TOOLS: usize = 100_000;
/// The most `tools/list` pages one session reads.
pub const MAX_PAGES: usize = 10_000;

/// Bounds and trust for one session with a server.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The longest line (stdio) or answer body (HTTP), in bytes.
    pub max_line: usize,
    /// The most tools the listing may hold; more is an error, never a silent cut.
    pub max_tools: usize,
    /// Extra root certificates (PEM) for an https server.
    pub ca_cert: Option<std::path::PathBuf>,
    /// The protocol version to speak; `None`: over HTTP the stateless revision when the
    /// server answers `server/discover`, else the newest `initialize` settles on; over stdio
    /// `initialize` (a probe could hang a server that ignores unknown methods).
    pub protocol: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_line: DEFAULT_MAX_LINE,
            max_tools: DEFAULT_MAX_TOOLS,
            ca_cert: None,
            protocol: None,
        }
    }
}

impl Options {
    /// Check `protocol` against the versions the client speaks.
    pub fn with_protocol(mut self, protocol: Option<&str>) -> Result<Options> {
        if let Some(p) = protocol {
            if !VERSIONS.contains(&p) {
                return Err(Error::input(format!(
                    "--protocol {p}: toolcost speaks {}",
                    VERSIONS.join(", ")
                )));
            }
        }
        self.protocol = protocol.map(String::from);
        Ok(self)
    }
}

/// One line from a peer, classified: a JSON-RPC message, or noise (a banner, a log line, a
/// line that is not UTF-8 or not JSON), which is counted and skipped.
#[derive(Debug, Clone)]
pub enum Line {
    Message(Incoming),
    Noise(String),
    /// A line that names `jsonrpc` and opens as an object but is not valid JSON: a message the
    /// server meant and broke, which an SDK host refuses at once (why, and how it begins).
    Broken(String),
    Blank,
}

impl Line {
    /// Classify the bytes of one line (without its newline). Never fails.
    pub fn parse(bytes: &[u8]) -> Line {
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                return Line::Noise(format!(
                    "(not UTF-8) {}",
                    String::from_utf8_lossy(bytes)
                        .chars()
                        .take(120)
                        .collect::<String>()
                ))
            }
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Line::Blank;
        }
        // A line too large to build as a tree is noise, and says why.
        if let Err(why) = crate::json::check_nodes(trimmed.as_bytes(), "the line") {
            return Line::Noise(why);
        }
        match serde_json::from_str::<Value>(trimmed) {
            Ok(value) => match Incoming::of(trimmed.to_string(), value) {
                Some(m) => Line::Message(m),
                None => Line::Noise(trimmed.chars().take(120).collect()),
            },
            Err(e) if trimmed.starts_with('{') && trimmed.contains("\"jsonrpc\"") => {
                Line::Broken(format!(
                    "{e}; it begins {:?}",
                    trimmed.chars().take(120).collect::<String>()
                ))
            }
            Err(_) => Line::Noise(trimmed.chars().take(120).collect()),
        }
    }
}

/// Read the next line, at most `max` bytes before its newline, into `buf` (cleared first).
/// `Ok(false)` at the end of the stream with nothing read; an error for a longer line, without
/// holding more than `max + 1` bytes of it.
pub async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> Result<bool> {
    use tokio::io::AsyncBufReadExt;
    buf.clear();
    loop {
        let available = reader
            .fill_buf()
            .await
            .map_err(|e| Error::input(format!("reading the server's stdout: {e}")))?;
        if available.is_empty() {
            return Ok(!buf.is_empty());
        }
        let (take, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = (max + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&available[..take.min(room)]);
        reader.consume(take);
        if done {
            if buf.last() == Some(&b'\n') {
                buf.pop();
            }
            if buf.len() > max {
                return Err(line_too_long(max));
            }
            return Ok(true);
        }
        if buf.len() > max {
            return Err(line_too_long(max));
        }
    }
}

fn line_too_long(max: usize) -> Error {
    Error::input(format!(
        "the server sent a line longer than {max} bytes without a newline; raise --max-line if its tools/list is really that large"
    ))
}

/// One message from the server, with its text as received.
#[derive(Debug, Clone)]
pub struct Incoming {
    pub text: String,
    pub value: Value,
}

impl Incoming {
    pub fn parse(text: &str) -> Option<Incoming> {
        let value: Value = serde_json::from_str(text).ok()?;
        Incoming::of(text.to_string(), value)
    }

    /// A message already parsed, with its text: a JSON-RPC message is an object that names
    /// `jsonrpc`.
    pub fn of(text: String, value: Value) -> Option<Incoming> {
        (value.is_object() && value.get("jsonrpc").is_some()).then_some(Incoming { text, value })
    }
}

/// Refuse an answer an MCP SDK host would refuse: `jsonrpc` other than `"2.0"`, both or neither
/// of `result` and `error`, a `result` that is not an object, or an `initialize` result without
/// its `protocolVersion` string.
fn answer_shape(method: &str, v: &Value) -> Result<()> {
    let refuse = |why: String| {
        Err(Error::input(format!(
            "the server's answer to {method} is not a JSON-RPC 2.0 response an MCP host accepts: {why}"
        )))
    };
    if v.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return refuse(format!(
            "`jsonrpc` is {}, not \"2.0\"",
            crate::json::compact(&v["jsonrpc"])
        ));
    }
    match (v.get("result"), v.get("error")) {
        (Some(_), Some(_)) => refuse("it holds both `result` and `error`".into()),
        (None, None) => refuse("it holds neither `result` nor `error`".into()),
        (Some(r), None) if !r.is_object() => refuse(format!(
            "its `result` is {}, not an object",
            crate::json::compact(r).chars().take(40).collect::<String>()
        )),
        (Some(r), None) if method == "initialize" && !r["protocolVersion"].is_string() => {
            refuse("its `result` has no `protocolVersion` string".into())
        }
        _ => Ok(()),
    }
}

/// A message transport.
#[allow(async_fn_in_trait)]
pub trait Channel {
    /// Send one message. HTTP answers arrive with the POST and are queued for `recv`.
    async fn send(&mut self, msg: &Value) -> Result<()>;
    /// The next message, or `None` when the server has nothing more to say.
    async fn recv(&mut self) -> Result<Option<Incoming>>;
    /// Stop the server process or end the session.
    async fn close(&mut self);
    /// What the transport noticed along the way (noise on stdout, stderr tail).
    fn notes(&self) -> Vec<String>;
    /// Why the server stopped answering, if the transport knows.
    async fn gone(&mut self) -> String;
    /// Whether, asked for no version in particular, the session should try the stateless
    /// revision first (a transport on which an unanswered probe cannot hang the session).
    fn probes(&self) -> bool {
        false
    }
    /// Drop any session state a refused probe left behind.
    fn forget_session(&mut self) {}
}

/// What one session learned.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub server_name: Option<String>,
    pub protocol_version: Option<String>,
    /// The server's `instructions` (from `initialize`, or `server/discover`): text a host may
    /// add to the model's system prompt. At most [`MAX_INSTRUCTIONS`] bytes are kept.
    pub instructions: Option<String>,
    pub tools: Vec<Tool>,
    pub pages: usize,
    /// Bytes of the `tools/list` answers as received, every page together.
    pub list_bytes: usize,
    pub list_changed: usize,
    pub notes: Vec<String>,
}

/// The most bytes of a server's `instructions` kept (an assumed bound, far past any host's
/// cap: Claude Code keeps 2,048 characters).
pub const MAX_INSTRUCTIONS: usize = 64 * 1024;

/// A server's `instructions` from its opening answer, cut at [`MAX_INSTRUCTIONS`] bytes (on a
/// character boundary); none when absent or not text.
fn instructions_of(answer: &Value) -> Option<String> {
    let text = answer.pointer("/result/instructions")?.as_str()?;
    let mut end = text.len().min(MAX_INSTRUCTIONS);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(text[..end].to_string())
}

/// Run a session: initialize, list every page of tools, close. The whole session must finish
/// within `timeout`.
pub async fn list_tools<C: Channel>(ch: &mut C, timeout: Duration) -> Result<Listing> {
    list_tools_with(ch, timeout, &Options::default()).await
}

/// The same, within `opts`' bounds. The session's end (stopping the process, the HTTP DELETE)
/// is bounded by `timeout` too.
pub async fn list_tools_with<C: Channel>(
    ch: &mut C,
    timeout: Duration,
    opts: &Options,
) -> Result<Listing> {
    let mut session = Session {
        ch,
        next_id: 1,
        list_changed: 0,
        max_tools: opts.max_tools,
        protocol: opts.protocol.clone(),
        modern: false,
        probe: PROBE_TIMEOUT.min(timeout / 4),
        pages: 0,
        tools: 0,
    };
    let out = tokio::time::timeout(timeout, session.run()).await;
    let list_changed = session.list_changed;
    let mut listing = match out {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => {
            close(session.ch, timeout).await;
            return Err(e);
        }
        Err(_) => {
            let (pages, tools) = (session.pages, session.tools);
            close(session.ch, timeout).await;
            return Err(Error::input(match pages {
                0 => format!(
                    "the server did not finish initialize and tools/list within {} s; raise --timeout if it is slow to start",
                    timeout.as_secs()
                ),
                _ => format!(
                    "the server was still paging tools/list when --timeout ({} s) ran out: {pages} page(s) and {tools} tool(s) read, each page naming a further cursor; its pagination may never end",
                    timeout.as_secs()
                ),
            }));
        }
    };
    close(session.ch, timeout).await;
    listing.list_changed = list_changed;
    listing.notes.extend(session.ch.notes());
    if list_changed > 0 {
        listing.notes.push(format!("the server sent notifications/tools/list_changed {list_changed} time(s) during the session"));
    }
    Ok(listing)
}

/// End the session, waiting at most `timeout` for it (a server that never answers the HTTP
/// DELETE does not hold weigh).
async fn close<C: Channel>(ch: &mut C, timeout: Duration) {
    let _ = tokio::time::timeout(timeout, ch.close()).await;
}

struct Session<'a, C: Channel> {
    ch: &'a mut C,
    next_id: i64,
    list_changed: usize,
    max_tools: usize,
    protocol: Option<String>,
    /// Whether the session speaks the stateless revision (every request carries `_meta`).
    modern: bool,
    /// How long the `server/discover` probe may take: a quarter of the session's time at most,
    /// so a server that never answers it still leaves time to initialize.
    probe: Duration,
    /// `tools/list` pages and tools read so far: what a timeout reports, so that a server
    /// whose paging never ends is not blamed for a slow start.
    pages: usize,
    tools: usize,
}

/// The `_meta` a stateless request carries (2026-07-28: version and capabilities required,
/// client info recommended).
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "toolcost", "version": env!("CARGO_PKG_VERSION")},
    })
}

impl<C: Channel> Session<'_, C> {
    async fn run(&mut self) -> Result<Listing> {
        let forced = self.protocol.clone();
        let try_modern = match forced.as_deref() {
            Some(v) => v == MODERN,
            None => self.ch.probes(),
        };
        let mut listing = None;
        if try_modern {
            match self.discover().await {
                Ok(l) => listing = Some(l),
                Err(e) if forced.is_some() => return Err(e),
                // A server of the versions with sessions: initialize below, with nothing the
                // probe's answer may have set.
                Err(_) => self.ch.forget_session(),
            }
        }
        let mut listing = match listing {
            Some(l) => l,
            None => {
                self.initialize(forced.as_deref().unwrap_or(PROTOCOL_VERSION))
                    .await?
            }
        };
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        loop {
            let mut params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            if self.modern {
                params["_meta"] = modern_meta();
            }
            let page = self.request("tools/list", params).await?;
            listing.list_bytes += page.text.len();
            let tools = capture::parse(&page.text)
                .map_err(|e| Error::input(format!("tools/list answer: {e}")))?;
            listing.tools.extend(tools);
            listing.pages += 1;
            (self.pages, self.tools) = (listing.pages, listing.tools.len());
            if listing.tools.len() > self.max_tools {
                return Err(Error::input(format!(
                    "the server listed more than {} tools (page {}); raise --max-tools if that is real",
                    self.max_tools, listing.pages
                )));
            }
            cursor = page
                .value
                .pointer("/result/nextCursor")
                .and_then(Value::as_str)
                .map(String::from);
            let Some(c) = &cursor else { break };
            if !seen.insert(c.clone()) {
                return Err(Error::input(format!(
                    "the server's tools/list repeated the cursor {:?} after {} page(s): its pagination loops, so the tools cannot be counted",
                    c.chars().take(80).collect::<String>(),
                    listing.pages
                )));
            }
            if listing.pages >= MAX_PAGES {
                return Err(Error::input(format!(
                    "the server's tools/list did not end after {MAX_PAGES} pages"
                )));
            }
        }
        Ok(listing)
    }

    /// The stateless revision's opening: `server/discover`, which must list [`MODERN`].
    async fn discover(&mut self) -> Result<Listing> {
        let probe = self.probe;
        let ask = self.request("server/discover", json!({"_meta": modern_meta()}));
        let found = tokio::time::timeout(probe, ask).await.map_err(|_| {
            Error::input(format!(
                "the server did not answer server/discover within {:.1} s",
                probe.as_secs_f64()
            ))
        })??;
        let speaks = found
            .value
            .pointer("/result/supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|v| v == MODERN));
        if !speaks {
            return Err(Error::input(format!(
                "the server's server/discover does not list {MODERN}"
            )));
        }
        self.modern = true;
        Ok(Listing {
            // The server names itself in the result or (2026-07-28) in the result's `_meta`.
            server_name: found
                .value
                .pointer("/result/serverInfo/name")
                .or_else(|| {
                    found
                        .value
                        .pointer("/result/_meta/io.modelcontextprotocol~1serverInfo/name")
                })
                .and_then(Value::as_str)
                .map(String::from),
            protocol_version: Some(MODERN.into()),
            instructions: instructions_of(&found.value),
            ..Default::default()
        })
    }

    /// The opening of the versions with sessions: initialize offering `version`, then
    /// `notifications/initialized`.
    async fn initialize(&mut self, version: &str) -> Result<Listing> {
        let init = self
            .request(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {"roots": {"listChanged": false}},
                       "clientInfo": {"name": "toolcost", "version": env!("CARGO_PKG_VERSION")}}),
            )
            .await?;
        let listing = Listing {
            server_name: init
                .value
                .pointer("/result/serverInfo/name")
                .and_then(Value::as_str)
                .map(String::from),
            protocol_version: init
                .value
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
                .map(String::from),
            instructions: instructions_of(&init.value),
            ..Default::default()
        };
        self.ch
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(listing)
    }

    /// Send a request and wait for its answer, serving the server's own requests meanwhile.
    async fn request(&mut self, method: &str, params: Value) -> Result<Incoming> {
        let id = self.next_id;
        self.next_id += 1;
        self.ch
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        loop {
            let Some(msg) = self.ch.recv().await? else {
                let why = self.ch.gone().await;
                return Err(Error::input(format!(
                    "the server stopped before answering {method}: {why}"
                )));
            };
            let v = &msg.value;
            if v.get("method").is_none() {
                if v.get("id") == Some(&json!(id)) {
                    answer_shape(method, v)?;
                    if let Some(err) = v.get("error") {
                        return Err(Error::input(format!(
                            "the server answered {method} with an error: {err}"
                        )));
                    }
                    return Ok(msg);
                }
                continue; // an answer to something else
            }
            let name = v["method"].as_str().unwrap_or("");
            match v.get("id") {
                Some(rid) => {
                    let answer = match name {
                        "ping" => json!({"jsonrpc": "2.0", "id": rid, "result": {}}),
                        "roots/list" => {
                            json!({"jsonrpc": "2.0", "id": rid, "result": {"roots": []}})
                        }
                        _ => {
                            json!({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": format!("toolcost does not handle {name}")}})
                        }
                    };
                    self.ch.send(&answer).await?;
                }
                None if name == "notifications/tools/list_changed" => self.list_changed += 1,
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's instructions are kept up to the bound, cut on a character boundary; text
    /// that is not a string is none.
    #[test]
    fn instructions_are_bounded() {
        let long = "é".repeat(MAX_INSTRUCTIONS);
        let got = instructions_of(&json!({"result": {"instructions": long}})).unwrap();
        assert!(got.len() <= MAX_INSTRUCTIONS && got.len() >= MAX_INSTRUCTIONS - 1);
        assert!(got.chars().all(|c| c == 'é'));
        assert_eq!(
            instructions_of(&json!({"result": {"instructions": 7}})),
            None
        );
        assert_eq!(instructions_of(&json!({"result": {}})), None);
    }
}
