//! A minimal MCP client that keeps the bytes: initialize, initialized, `tools/list` with
//! pagination, answering `ping` and `roots/list`, over stdio or Streamable HTTP.
//!
//! Written here rather than on rmcp's client because rmcp's typed transports re-serialise
//! every message (dropping fields such as `execution`), and weighing needs each tool exactly as
//! the server sent it; recovering the raw bytes from rmcp's HTTP transport would mean
//! re-implementing its SSE handling anyway.

mod http;
mod stdio;
mod target;

pub use http::Http;
pub use stdio::Stdio;
pub use target::Target;

use crate::catalogue::{capture, Tool};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::time::Duration;

/// The protocol version toolcost offers.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// One message from the server, with its text as received.
#[derive(Debug, Clone)]
pub struct Incoming {
    pub text: String,
    pub value: Value,
}

impl Incoming {
    pub fn parse(text: &str) -> Option<Incoming> {
        let value: Value = serde_json::from_str(text).ok()?;
        (value.is_object() && value.get("jsonrpc").is_some()).then(|| Incoming {
            text: text.to_string(),
            value,
        })
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
}

/// What one session learned.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub server_name: Option<String>,
    pub protocol_version: Option<String>,
    pub tools: Vec<Tool>,
    pub pages: usize,
    pub list_changed: usize,
    pub notes: Vec<String>,
}

/// Run a session: initialize, list every page of tools, close. The whole session must finish
/// within `timeout`.
pub async fn list_tools<C: Channel>(ch: &mut C, timeout: Duration) -> Result<Listing> {
    let mut session = Session {
        ch,
        next_id: 1,
        list_changed: 0,
    };
    let out = tokio::time::timeout(timeout, session.run()).await;
    let list_changed = session.list_changed;
    let mut listing = match out {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => {
            session.ch.close().await;
            return Err(e);
        }
        Err(_) => {
            session.ch.close().await;
            return Err(Error::input(format!(
                "the server did not finish initialize and tools/list within {} s; raise --timeout if it is slow to start",
                timeout.as_secs()
            )));
        }
    };
    session.ch.close().await;
    listing.list_changed = list_changed;
    listing.notes.extend(session.ch.notes());
    if list_changed > 0 {
        listing.notes.push(format!("the server sent notifications/tools/list_changed {list_changed} time(s) during the session"));
    }
    Ok(listing)
}

struct Session<'a, C: Channel> {
    ch: &'a mut C,
    next_id: i64,
    list_changed: usize,
}

impl<C: Channel> Session<'_, C> {
    async fn run(&mut self) -> Result<Listing> {
        let init = self
            .request(
                "initialize",
                json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": {"roots": {"listChanged": false}},
                       "clientInfo": {"name": "toolcost", "version": env!("CARGO_PKG_VERSION")}}),
            )
            .await?;
        let mut listing = Listing {
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
            ..Default::default()
        };
        self.ch
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self.request("tools/list", params).await?;
            let tools = capture::parse(&page.text)
                .map_err(|e| Error::input(format!("tools/list answer: {e}")))?;
            listing.tools.extend(tools);
            listing.pages += 1;
            cursor = page
                .value
                .pointer("/result/nextCursor")
                .and_then(Value::as_str)
                .map(String::from);
            if cursor.is_none() || listing.pages >= 1000 {
                break;
            }
        }
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
