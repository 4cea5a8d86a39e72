//! A request as the prompt cache sees it: its blocks in cache order (tools, system, messages),
//! each with the hash of the prefix that ends with it; the digests of its tools, kept with its
//! billing; and the request cut after a block.

use super::cache::{TTL_1H, TTL_5M};
use crate::wire::Request;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// One block of the prompt in cache order: where it is and what it says.
pub(super) struct Block {
    pub at: Pos,
    pub hash: [u8; 32],
    /// The mark on it: its TTL in seconds.
    pub mark: Option<f64>,
}

/// A prefix end: after tool `i`, after system block `i`, after block `b` of message `m`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Pos {
    Tool(usize),
    System(usize),
    Message(usize, usize),
}

/// The TTL a block's `cache_control` mark asks for, in seconds, if it has one.
pub(super) fn ttl_of(mark: &Value) -> Option<f64> {
    let cc = mark.get("cache_control")?;
    Some(match cc.get("ttl").and_then(Value::as_str) {
        Some("1h") => TTL_1H,
        _ => TTL_5M,
    })
}

/// The prompt's blocks in cache order (tools, system, messages), each with the hash of the
/// prefix that ends with it: the hash of the prefix before it and of the block's own digest.
/// The blocks' digests do not depend on each other, so the tools' are taken on all cores.
pub(super) fn blocks(req: &Request, tools_seen: &ToolDigests) -> Vec<Block> {
    let body = &req.body;
    let mut out = Vec::new();
    let mut h: [u8; 32] = Sha256::digest(
        crate::json::compact(&json!([body.get("model"), body.get("tool_choice")])).as_bytes(),
    )
    .into();
    let mut push = |at: Pos, digest: [u8; 32], mark: Option<f64>| {
        let mut d = Sha256::new();
        d.update(h);
        d.update(digest);
        h = d.finalize().into();
        out.push(Block { at, hash: h, mark });
    };
    let tools = req.tools();
    let digests = tools_seen.of(tools);
    for (i, (t, digest)) in tools.iter().zip(digests.iter()).enumerate() {
        push(Pos::Tool(i), *digest, ttl_of(t));
    }
    // Anthropic's `system`, or the Responses `instructions`.
    match body.get("system").or_else(|| body.get("instructions")) {
        Some(Value::Array(blocks)) => {
            for (i, b) in blocks.iter().enumerate() {
                push(Pos::System(i), digest(b), ttl_of(b));
            }
        }
        Some(s @ Value::String(_)) => push(Pos::System(0), digest(s), None),
        _ => {}
    }
    for (m, msg) in req.messages().iter().enumerate() {
        match msg.get("content") {
            Some(Value::Array(blocks)) => {
                for (b, block) in blocks.iter().enumerate() {
                    let plain = match block.get("cache_control").is_some() {
                        true => unmarked(block),
                        false => block.clone(),
                    };
                    push(
                        Pos::Message(m, b),
                        digest(&json!([msg["role"], plain])),
                        ttl_of(block),
                    );
                }
            }
            _ => push(Pos::Message(m, 0), digest(msg), None),
        }
    }
    out
}

/// The digests of a request's tools ([`digest`]), made the first time the cache asks and kept
/// with the billing of the request, so the turn before and the warm turn, which carry the same
/// tools, do not hash them again. A memo, not a figure: it takes no part in comparisons.
#[derive(Clone, Default)]
pub struct ToolDigests(std::sync::Arc<std::sync::OnceLock<Vec<[u8; 32]>>>);

impl ToolDigests {
    /// The digests of `tools`, in order, hashed on all cores the first time. Tools that are
    /// not those first hashed (another count, another first or last tool) are hashed anew,
    /// not looked up.
    fn of(&self, tools: &[Value]) -> std::borrow::Cow<'_, [[u8; 32]]> {
        let mut fresh = false;
        let made = self.0.get_or_init(|| {
            fresh = true;
            crate::sync::map_on_cores(tools, digest)
        });
        // Digests made just now are these tools'; kept ones are checked first.
        let same = fresh
            || made.len() == tools.len()
                && [
                    made.first().zip(tools.first()),
                    made.last().zip(tools.last()),
                ]
                .into_iter()
                .flatten()
                .all(|(d, t)| *d == digest(t));
        match same {
            true => made.as_slice().into(),
            false => crate::sync::map_on_cores(tools, digest).into(),
        }
    }
}

impl PartialEq for ToolDigests {
    fn eq(&self, _: &ToolDigests) -> bool {
        true
    }
}

impl std::fmt::Debug for ToolDigests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolDigests")
    }
}

/// The SHA-256 of a block as it is written, without its mark: a mark is not part of the
/// prompt, so moving it does not change the prefix it marks. Hashed without a copy unless the
/// mark has to come off first.
fn digest(v: &Value) -> [u8; 32] {
    let mut d = Sha256::new();
    let mut w = DigestWriter(&mut d);
    match v.get("cache_control").is_some() {
        true => serde_json::to_writer(&mut w, &unmarked(v)),
        false => serde_json::to_writer(&mut w, v),
    }
    .expect("hashing a JSON value cannot fail");
    d.finalize().into()
}

/// An object without its `cache_control`.
fn unmarked(v: &Value) -> Value {
    let mut o = v.as_object().cloned().unwrap_or_default();
    o.remove("cache_control");
    Value::Object(o)
}

/// Feeds serialised JSON straight into a digest.
struct DigestWriter<'a>(&'a mut Sha256);

impl std::io::Write for DigestWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The request cut after `at`. A cut after the tools (in the system prompt or the
/// conversation) leaves the tools out: its definitions are billed from the whole request's
/// count ([`Pricing::tokens_at`]).
pub(super) fn truncated(req: &Request, at: Pos) -> Request {
    let mut body = match at {
        Pos::Tool(_) => req.body.clone(),
        Pos::System(_) | Pos::Message(..) => Value::Object(
            req.body
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| *k != "tools")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
    };
    let key = req.format.spec().conversation_key();
    let cut_messages = |body: &mut Value, n: usize| {
        if let Some(m) = body.get_mut(key).and_then(Value::as_array_mut) {
            m.truncate(n);
        }
    };
    match at {
        Pos::Tool(i) => {
            if let Some(t) = body.get_mut("tools").and_then(Value::as_array_mut) {
                t.truncate(i + 1);
            }
            if let Some(o) = body.as_object_mut() {
                o.remove("system");
                o.remove("instructions");
            }
            cut_messages(&mut body, 0);
        }
        Pos::System(i) => {
            if let Some(s) = body.get_mut("system").and_then(Value::as_array_mut) {
                s.truncate(i + 1);
            }
            cut_messages(&mut body, 0);
        }
        Pos::Message(m, b) => {
            cut_messages(&mut body, m + 1);
            if let Some(c) = body
                .pointer_mut(&format!("/{key}/{m}/content"))
                .and_then(Value::as_array_mut)
            {
                c.truncate(b + 1);
            }
        }
    }
    Request {
        format: req.format,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_digests_are_those_of_the_tools_asked_about() {
        let a = [json!({"name": "a"}), json!({"name": "b"})];
        let kept = ToolDigests::default();
        let first = kept.of(&a).to_vec();
        assert_eq!(first, vec![digest(&a[0]), digest(&a[1])]);
        assert_ne!(first[0], first[1]);
        // Other tools, of another count or the same, are hashed, not looked up.
        let b = [json!({"name": "c"})];
        assert_eq!(kept.of(&b).to_vec(), vec![digest(&b[0])]);
        let c = [json!({"name": "a"}), json!({"name": "d"})];
        assert_eq!(kept.of(&c).to_vec(), vec![digest(&c[0]), digest(&c[1])]);
        // A mark is not part of the prompt.
        assert_eq!(
            digest(&json!({"name": "a", "cache_control": {"type": "ephemeral"}})),
            first[0]
        );
    }
}
