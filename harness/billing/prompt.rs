//! A request as the prompt cache sees it: its blocks in cache order (tools, system, messages),
//! each with the hash of the prefix that ends with it; the digests of its tools, kept with its
//! billing; and the request cut after a block.

use super::cache::{TTL_1H, TTL_5M};
use crate::wire::{Request, ToolEntry};
use serde_json::{json, Value};
use std::sync::OnceLock;
use xxhash_rust::xxh3::Xxh3;

/// One block of the prompt in cache order: where it is and what it says.
pub(super) struct Block {
    pub at: Pos,
    pub hash: Digest,
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
pub(super) fn ttl_of(block: &Value) -> Option<f64> {
    ttl_of_mark(block.get("cache_control"))
}

/// The TTL a `cache_control` mark asks for, in seconds.
fn ttl_of_mark(cc: Option<&Value>) -> Option<f64> {
    Some(match cc?.get("ttl").and_then(Value::as_str) {
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
    // An OpenAI `allowed_tools` choice narrows what is callable without changing `tools`; it is
    // taken as outside the cached prefix (assumed: OpenAI says a hit needs identical tools and
    // does not say where the choice is rendered). Any other choice heads the prefix.
    let choice = body
        .get("tool_choice")
        .filter(|c| c["type"] != "allowed_tools");
    let mut h = digest(&json!([body.get("model"), choice]));
    let mut push = |at: Pos, digest: Digest, mark: Option<f64>| {
        let mut pair = [0u8; 32];
        pair[..16].copy_from_slice(&h.to_le_bytes());
        pair[16..].copy_from_slice(&digest.to_le_bytes());
        h = xxhash_rust::xxh3::xxh3_128_with_seed(&pair, super::process_seed());
        out.push(Block { at, hash: h, mark });
    };
    let tools = req.tools();
    let digests = tools_seen.of(tools);
    for (i, (t, digest)) in tools.iter().zip(digests.iter()).enumerate() {
        push(Pos::Tool(i), *digest, ttl_of_mark(t.as_ref().mark()));
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
                    // As the pair [role, block], the block without its mark.
                    let mut d = hasher();
                    open(&mut d, b"a", 2);
                    feed(&mut d, &msg["role"], false);
                    feed(&mut d, block, true);
                    push(Pos::Message(m, b), d.digest128(), ttl_of(block));
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
pub struct ToolDigests(std::sync::Arc<OnceLock<Vec<Digest>>>);

impl ToolDigests {
    /// The digests of `tools`, in order, hashed on all cores the first time. Tools that are
    /// not those first hashed (another count, another first or last tool) are hashed anew,
    /// not looked up.
    fn of(&self, tools: &[ToolEntry]) -> std::borrow::Cow<'_, [Digest]> {
        let mut fresh = false;
        let made = self.0.get_or_init(|| {
            fresh = true;
            crate::sync::map_on_cores(tools, tool_digest)
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
                .all(|(d, t)| *d == tool_digest(t));
        match same {
            true => made.as_slice().into(),
            false => crate::sync::map_on_cores(tools, tool_digest).into(),
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

/// A block's digest, and a prefix's: XXH3-128 under a seed drawn for each process. Digests are
/// compared inside the process and never shown. XXH3 is not built to resist chosen collisions;
/// aiming for one would need the seed, and the worst a collision does is bill one prefix as
/// cached. Hashing each block's serialised JSON with SHA-256 took an
/// eighth of the default sweep (a perf profile: the serialising and escaping, then SHA-256).
pub(super) type Digest = u128;

fn hasher() -> Xxh3 {
    Xxh3::with_seed(super::process_seed())
}

/// The digest of a block, without its mark: a mark is not part of the prompt, so moving it
/// does not change the prefix it marks.
fn digest(v: &Value) -> Digest {
    let mut h = hasher();
    feed(&mut h, v, true);
    h.digest128()
}

/// The digest of a tool: of its compact JSON text without its mark, however the entry holds it
/// (a tree, or a shared definition's pieces), so entries whose text is the same have the same
/// digest. The text is streamed into the hash, never built.
fn tool_digest(t: &ToolEntry) -> Digest {
    struct Hashing(Xxh3);
    impl std::io::Write for Hashing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = Hashing(hasher());
    h.0.update(b"T");
    t.as_ref()
        .write(&mut h, false)
        .expect("hashing cannot fail");
    h.0.digest128()
}

/// Open an array (`a`) or object (`o`) of `n` items in what is fed to `h`.
fn open(h: &mut Xxh3, kind: &[u8; 1], n: usize) {
    h.update(kind);
    h.update(&(n as u64).to_le_bytes());
}

/// Feed a value's structure to `h`: a tag for each kind, each length before what it counts,
/// numbers by their kind and bits, object fields in order. Two values feed the same bytes
/// exactly when their JSON text is the same. `top`: leave out this object's `cache_control`
/// and keep its other fields in their order (the SHA-256 digests before took the mark off with
/// serde_json's `remove`, which moves the last field into its place, so a mark anywhere but
/// last changed the order of what it marked).
fn feed(h: &mut Xxh3, v: &Value, top: bool) {
    let len = |h: &mut Xxh3, n: usize| h.update(&(n as u64).to_le_bytes());
    let text = |h: &mut Xxh3, s: &str| {
        len(h, s.len());
        h.update(s.as_bytes());
    };
    match v {
        Value::Null => h.update(b"n"),
        Value::Bool(true) => h.update(b"t"),
        Value::Bool(false) => h.update(b"f"),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => {
                h.update(b"u");
                h.update(&u.to_le_bytes());
            }
            (None, Some(i), _) => {
                h.update(b"i");
                h.update(&i.to_le_bytes());
            }
            (None, None, f) => {
                h.update(b"d");
                h.update(&f.unwrap_or(f64::NAN).to_bits().to_le_bytes());
            }
        },
        Value::String(s) => {
            h.update(b"s");
            text(h, s);
        }
        Value::Array(a) => {
            open(h, b"a", a.len());
            for x in a {
                feed(h, x, false);
            }
        }
        Value::Object(o) => {
            let kept = |k: &String| !(top && k == "cache_control");
            open(h, b"o", o.keys().filter(|k| kept(k)).count());
            for (k, x) in o.iter().filter(|(k, _)| kept(k)) {
                text(h, k);
                feed(h, x, false);
            }
        }
    }
}

/// The request cut after `at`. A cut after the tools (in the system prompt or the
/// conversation) leaves the tools out: its definitions are billed from the whole request's
/// count ([`Pricing::tokens_at`]).
pub(super) fn truncated(req: &Request, at: Pos) -> Request {
    let mut cut = req.clone();
    let key = req.format.spec().conversation_key();
    let cut_messages = |body: &mut Value, n: usize| {
        if let Some(m) = body.get_mut(key).and_then(Value::as_array_mut) {
            m.truncate(n);
        }
    };
    match at {
        Pos::Tool(i) => {
            cut.truncate_tools(i + 1);
            if let Some(o) = cut.body.as_object_mut() {
                o.remove("system");
                o.remove("instructions");
            }
            cut_messages(&mut cut.body, 0);
        }
        Pos::System(i) => {
            cut.remove_tools();
            if let Some(s) = cut.body.get_mut("system").and_then(Value::as_array_mut) {
                s.truncate(i + 1);
            }
            cut_messages(&mut cut.body, 0);
        }
        Pos::Message(m, b) => {
            cut.remove_tools();
            cut_messages(&mut cut.body, m + 1);
            if let Some(c) = cut
                .body
                .pointer_mut(&format!("/{key}/{m}/content"))
                .and_then(Value::as_array_mut)
            {
                c.truncate(b + 1);
            }
        }
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_digests_are_those_of_the_tools_asked_about() {
        let entries =
            |v: &[Value]| -> Vec<ToolEntry> { v.iter().cloned().map(ToolEntry::Json).collect() };
        let d = |v: &Value| tool_digest(&ToolEntry::Json(v.clone()));
        let a = [json!({"name": "a"}), json!({"name": "b"})];
        let kept = ToolDigests::default();
        let first = kept.of(&entries(&a)).to_vec();
        assert_eq!(first, vec![d(&a[0]), d(&a[1])]);
        assert_ne!(first[0], first[1]);
        // Other tools, of another count or the same, are hashed, not looked up.
        let b = [json!({"name": "c"})];
        assert_eq!(kept.of(&entries(&b)).to_vec(), vec![d(&b[0])]);
        let c = [json!({"name": "a"}), json!({"name": "d"})];
        assert_eq!(kept.of(&entries(&c)).to_vec(), vec![d(&c[0]), d(&c[1])]);
        // A mark is not part of the prompt, wherever it is in the tool.
        assert_eq!(
            d(&json!({"name": "a", "cache_control": {"type": "ephemeral"}})),
            first[0]
        );
        assert_eq!(
            d(&json!({"cache_control": {"type": "ephemeral"}, "name": "a"})),
            first[0]
        );
        assert_ne!(
            d(&json!({"name": "a", "x": 1})),
            d(&json!({"x": 1, "name": "a"}))
        );
    }

    /// A shared definition and the same definition as a tree have one digest, marked or not,
    /// in every format; a different name, description, schema or deferral gives another.
    #[test]
    fn shared_definitions_digest_as_their_trees_do() {
        use crate::wire::{DefText, Definition, Format};
        let schema = json!({"type": "object", "properties": {"q": {"type": "string", "description": "a \"query\""}}});
        let text = std::sync::Arc::new(DefText::new("Finds\nthings \u{e9}", &schema));
        for format in Format::ALL {
            let mut digests = Vec::new();
            for (name, defer) in [("a", false), ("a", true), ("b", false)] {
                let shared = ToolEntry::Shared(Definition::new(format, name, text.clone(), defer));
                let tree = ToolEntry::Json(shared.as_ref().value().into_owned());
                assert_eq!(tool_digest(&shared), tool_digest(&tree), "{format:?}");
                let mut marked = shared.clone();
                marked.set("cache_control", json!({"type": "ephemeral"}));
                assert_eq!(tool_digest(&marked), tool_digest(&shared));
                assert_ne!(marked, shared);
                digests.push(tool_digest(&shared));
            }
            let other = std::sync::Arc::new(DefText::new("Finds things", &schema));
            digests.push(tool_digest(&ToolEntry::Shared(Definition::new(
                format, "a", other, false,
            ))));
            let other = std::sync::Arc::new(DefText::new(
                "Finds\nthings \u{e9}",
                &json!({"type": "object"}),
            ));
            digests.push(tool_digest(&ToolEntry::Shared(Definition::new(
                format, "a", other, false,
            ))));
            let unique: std::collections::HashSet<_> = digests.iter().collect();
            assert_eq!(unique.len(), digests.len(), "{format:?}");
        }
    }

    #[test]
    fn message_digests_leave_out_the_mark() {
        let marked = json!({"cache_control": {"type": "ephemeral"}, "type": "text", "text": "hi"});
        assert_eq!(
            digest(&marked),
            digest(&json!({"type": "text", "text": "hi"}))
        );
        assert_ne!(
            digest(&marked),
            digest(&json!({"text": "hi", "type": "text"}))
        );
    }

    /// Values whose JSON text differs have different digests; equal values, equal ones.
    #[test]
    fn digests_tell_apart_what_the_json_text_does() {
        let values = [
            json!(null),
            json!(false),
            json!(true),
            json!(0),
            json!(1),
            json!(-1),
            json!(1.0),
            json!(-0.0),
            json!(0.0),
            json!(u64::MAX),
            json!("1"),
            json!(""),
            json!([]),
            json!({}),
            json!(["ab", "c"]),
            json!(["a", "bc"]),
            json!([["a"], "b"]),
            json!([["a", "b"]]),
            json!({"a": 1, "b": 2}),
            json!({"b": 2, "a": 1}),
            json!({"a": {"cache_control": {"type": "ephemeral"}}}),
            json!({"a": {}}),
            json!({"ab": "c"}),
            json!({"a": "bc"}),
            json!({"as": "x"}),
            json!({"a": "sx"}),
        ];
        for (i, a) in values.iter().enumerate() {
            for (j, b) in values.iter().enumerate() {
                assert_eq!(digest(a) == digest(b), i == j, "{a} against {b}");
            }
            assert_eq!(digest(a), digest(&a.clone()));
        }
    }
}
