//! MCP over stdin and stdout: one JSON-RPC message per line, answers and change
//! notifications written back as lines. A line may be a JSON-RPC batch while the process
//! speaks 2025-03-26 (or has not initialized yet), as that revision's stdio transport allows.

use super::batch::{self, Batch};
use super::mcp::{self, Outcome};
use super::sessions::Sessions;
use super::state::State;
use super::DEFAULT_MAX_BODY;
use crate::error::{Error, Result};
use crate::surface::Endpoint;
use serde_json::Value;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

/// MCP over stdio: one message per line on stdin, answers and notifications on stdout.
/// Calls are allowed when the server has a token configured (whoever can start the process
/// holds the environment).
pub async fn run_stdio(state: Arc<State>, endpoint: Endpoint) -> Result<()> {
    let sessions = Sessions::default();
    // Lines are read on their own task and handed over a channel, so waiting for one never
    // loses half a line when a notification goes out first.
    let (tx, mut lines) = tokio::sync::mpsc::channel::<StdinLine>(16);
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(tokio::io::stdin());
        loop {
            let line = read_line(&mut reader, DEFAULT_MAX_BODY).await;
            let end = !matches!(line, StdinLine::Line(_) | StdinLine::TooLong(_));
            if tx.send(line).await.is_err() || end {
                return;
            }
        }
    });
    let mut out = tokio::io::stdout();
    let mut changes = state.changes.subscribe();
    let authorised = state.token.is_some();
    // The version `initialize` negotiated for this process, and a modern client's
    // `subscriptions/listen` id, whose changes are tagged with it.
    let mut negotiated: Option<&'static str> = None;
    let mut subscription: Option<Value> = None;
    loop {
        tokio::select! {
            line = lines.recv() => {
                let bytes = match line {
                    None | Some(StdinLine::End) => return Ok(()),
                    Some(StdinLine::Failed(e)) => return Err(Error::input(format!("reading stdin: {e}"))),
                    Some(StdinLine::TooLong(n)) => {
                        let msg = mcp::rpc_error(Value::Null, mcp::PARSE_ERROR, format!("a message of {n} bytes is over the {DEFAULT_MAX_BODY}-byte limit"));
                        write_line(&mut out, &crate::json::compact(&msg)).await?;
                        continue;
                    }
                    Some(StdinLine::Line(b)) => b,
                };
                let text = match std::str::from_utf8(&bytes) {
                    Err(_) => Some(crate::json::compact(&mcp::rpc_error(Value::Null, mcp::PARSE_ERROR, "parse error: the message is not UTF-8"))),
                    Ok(line) if line.trim().is_empty() => None,
                    Ok(line) => match serde_json::from_str::<Value>(line) {
                        Err(e) => Some(crate::json::compact(&mcp::rpc_error(Value::Null, mcp::PARSE_ERROR, format!("parse error: {e}")))),
                        Ok(Value::Array(items)) => batch_line(&state, &sessions, endpoint, &items, negotiated, authorised).await,
                        Ok(msg) => {
                            let ctx = mcp::Context { authorised, presented: authorised, version: negotiated, header: None, batch: false };
                            match mcp::handle(&state, &sessions, endpoint, &msg, &ctx).await {
                                Outcome::Reply { text, session } => {
                                    if let Some(v) = session.as_deref().and_then(|s| sessions.version(s)) {
                                        negotiated = Some(v);
                                    }
                                    Some(text.into_string())
                                }
                                Outcome::Accepted => None,
                                Outcome::Invalid(v) | Outcome::NoMethod(v) | Outcome::Unauthorised { body: v, .. } => Some(crate::json::compact(&v)),
                                Outcome::Listen { id, ack } => {
                                    subscription = (!id.is_null()).then_some(id);
                                    Some(ack)
                                }
                            }
                        }
                    },
                };
                if let Some(t) = text {
                    write_line(&mut out, &t).await?;
                }
            }
            Ok(()) = changes.recv(), if mcp::list_changes(endpoint) => {
                match &subscription {
                    Some(id) => write_line(&mut out, &mcp::list_changed_for(id)).await?,
                    None => write_line(&mut out, mcp::LIST_CHANGED).await?,
                }
            }
        }
    }
}

/// The line that answers a batch, if any.
async fn batch_line(
    state: &Arc<State>,
    sessions: &Sessions,
    endpoint: Endpoint,
    items: &[Value],
    negotiated: Option<&'static str>,
    authorised: bool,
) -> Option<String> {
    let served = negotiated.unwrap_or(mcp::ASSUMED);
    if served != mcp::ASSUMED {
        let e = mcp::rpc_error(
            Value::Null,
            mcp::INVALID_REQUEST,
            format!("JSON-RPC batches belong to protocol {} (2025-06-18 removed them) and this process speaks {served}: send one message per line", mcp::ASSUMED),
        );
        return Some(crate::json::compact(&e));
    }
    let ctx = mcp::Context {
        authorised,
        presented: authorised,
        version: negotiated,
        header: None,
        batch: true,
    };
    match batch::handle(state, sessions, endpoint, items, &ctx).await {
        Batch::Answers(text) => Some(text),
        Batch::Accepted => None,
        Batch::Refused(v) | Batch::Unauthorised { body: v, .. } => Some(crate::json::compact(&v)),
    }
}

/// One line of stdin as the reader saw it.
enum StdinLine {
    Line(Vec<u8>),
    /// A line over the limit, read to its end and dropped: its length.
    TooLong(usize),
    End,
    Failed(std::io::Error),
}

/// Read one line of at most `max` bytes (without holding more than that).
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(r: &mut R, max: usize) -> StdinLine {
    use tokio::io::AsyncBufReadExt;
    let mut buf = Vec::new();
    let mut seen = 0usize;
    loop {
        let chunk = match r.fill_buf().await {
            Ok(c) => c,
            Err(e) => return StdinLine::Failed(e),
        };
        if chunk.is_empty() {
            return match (seen, seen > max) {
                (0, _) => StdinLine::End,
                (n, true) => StdinLine::TooLong(n),
                (_, false) => StdinLine::Line(buf),
            };
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        seen += take;
        if seen <= max {
            buf.extend_from_slice(&chunk[..take]);
        } else {
            buf = Vec::new();
        }
        r.consume(take);
        if done {
            return if seen > max {
                StdinLine::TooLong(seen)
            } else {
                StdinLine::Line(buf)
            };
        }
    }
}

async fn write_line(out: &mut tokio::io::Stdout, text: &str) -> Result<()> {
    out.write_all(format!("{text}\n").as_bytes())
        .await
        .map_err(|e| Error::input(format!("writing stdout: {e}")))?;
    out.flush()
        .await
        .map_err(|e| Error::input(format!("writing stdout: {e}")))
}
