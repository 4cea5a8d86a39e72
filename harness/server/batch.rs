//! JSON-RPC batches: protocol 2025-03-26 let a client send an array of requests and
//! notifications as one message, which the server answers with one array of responses
//! (notifications get none); 2025-06-18 removed batching. The transport decides whether a
//! batch is served at all (only at 2025-03-26, or a sessionless request served as it); this
//! module answers one.
//!
//! A batch is refused whole, before anything runs, when it is empty or longer than
//! [`MAX_BATCH`], holds an `initialize` (the 2025-03-26 lifecycle forbids batching it), or
//! holds a request the token protects without the token (one `Authorization` header covers
//! every message, so the 401 and its challenge go to the whole batch). Otherwise each message
//! is handled in order exactly as it would be alone. A batch's work is bounded besides its
//! length: once it has run for [`crate::server::Limits::batch_time`] or its answer holds
//! [`crate::server::Limits::batch_bytes`], the requests left are answered with an error that
//! says they did not run (the one running when a bound is reached finishes, so a batch holds
//! its connection for at most the bound plus one message).

use super::mcp::{self, Context, Outcome};
use super::sessions::Sessions;
use super::state::State;
use crate::surface::Endpoint;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// Messages one batch may hold.
pub const MAX_BATCH: usize = 100;

/// JSON-RPC's implementation-defined server error: a batched request that was not run because
/// the batch spent its budget.
pub const NOT_RUN: i64 = -32000;

/// What a batch comes to.
pub enum Batch {
    /// The answers in the order of the requests, as the text of one JSON array.
    Answers(String),
    /// Only notifications and responses: nothing to answer (HTTP 202).
    Accepted,
    /// Refused whole before anything ran (HTTP 400 with this body).
    Refused(Value),
    /// A request in it needs the token, which is missing or wrong (HTTP 401).
    Unauthorised { body: Value, presented: bool },
}

fn refused(message: impl Into<String>) -> Batch {
    Batch::Refused(mcp::rpc_error(Value::Null, mcp::INVALID_REQUEST, message))
}

fn method(item: &Value) -> Option<&str> {
    item.get("method").and_then(Value::as_str)
}

/// Answer a batch. `ctx` is the transport's context; each message is handled as
/// [`mcp::handle`] handles it alone, with `ctx.batch` set.
pub async fn handle(
    st: &Arc<State>,
    sessions: &Sessions,
    endpoint: Endpoint,
    items: &[Value],
    ctx: &Context<'_>,
) -> Batch {
    if items.is_empty() {
        return refused("an empty batch: send at least one message");
    }
    if items.len() > MAX_BATCH {
        return refused(format!(
            "a batch of {} messages is over this server's limit of {MAX_BATCH}; split it",
            items.len()
        ));
    }
    if items.iter().any(|i| method(i) == Some("initialize")) {
        return refused("initialize must not be part of a JSON-RPC batch; send it alone");
    }
    let scope = st.access().token_for;
    if st.token.is_some() && !ctx.authorised {
        if let Some(m) = items
            .iter()
            .filter_map(method)
            .find(|m| scope.covers(Some(m)))
        {
            let body = mcp::rpc_error(
                Value::Null,
                mcp::UNAUTHORIZED,
                format!(
                    "missing or wrong token: this batch holds `{m}`, which needs `Authorization: Bearer <token>` (this server requires it for {}); nothing in it ran",
                    scope.name()
                ),
            );
            return Batch::Unauthorised {
                body,
                presented: ctx.presented,
            };
        }
    }
    let ctx = Context {
        batch: true,
        ..*ctx
    };
    let started = Instant::now();
    // A caller without the token gets the smaller of the two budgets.
    let budget = match ctx.authorised {
        true => st.limits.batch_bytes,
        false => st.limits.batch_bytes.min(st.limits.open_batch_bytes),
    };
    // The answer array, written as answers come; "[" alone while there is none.
    let mut out = String::from("[");
    for item in items {
        let spent = if started.elapsed() >= st.limits.batch_time {
            Some(format!(
                "not run: the batch ran for its {} s budget before reaching this request; send it again",
                st.limits.batch_time.as_secs_f64()
            ))
        } else if out.len() >= budget {
            Some(format!(
                "not run: the batch's answer reached its {budget}-byte budget before this request; send it again{}",
                if ctx.authorised { "" } else { " (callers with the token get a larger budget)" }
            ))
        } else {
            None
        };
        let text = match spent {
            // Requests left get an answer; notifications and responses none.
            Some(why) => match (item.get("method"), item.get("id")) {
                (Some(_), Some(id)) => Some(crate::json::compact(&mcp::rpc_error(
                    id.clone(),
                    NOT_RUN,
                    why,
                ))),
                _ => None,
            },
            None => match mcp::handle(st, sessions, endpoint, item, &ctx).await {
                Outcome::Reply { text, session: _ } => Some(text.into_string()),
                Outcome::Accepted => None,
                Outcome::Invalid(v)
                | Outcome::NoMethod(v)
                | Outcome::Unauthorised { body: v, .. } => Some(crate::json::compact(&v)),
                // Only a 2026-07-28 request listens, and a batch refuses those; kept whole.
                Outcome::Listen { id, .. } => Some(crate::json::compact(&mcp::rpc_error(
                    id,
                    mcp::INVALID_REQUEST,
                    "subscriptions/listen cannot be batched",
                ))),
            },
        };
        if let Some(t) = text {
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&t);
        }
    }
    if out.len() == 1 {
        return Batch::Accepted;
    }
    out.push(']');
    Batch::Answers(out)
}
