//! Thinking sent back, billed again as input where the provider bills it, from what the
//! gateway saw of the answer that thought:
//!
//! - a Gemini 3 request on the Developer API that returns an earlier answer's
//!   `thoughtSignature` is billed that answer's thoughts again (the rule and its evidence are in
//!   [`crate::billing::render::gemini`]); the answer said how many in its `thoughtsTokenCount`.
//!   Vertex AI and the 2.x models bill no thoughts again.
//! - a Responses request that sends back reasoning items after its last user message (the
//!   current tool chain) is billed their reasoning; OpenAI drops earlier ones (OpenAI's
//!   reasoning guide, "keeping reasoning items in context", read 2026-12-07). The answer said
//!   how many in `output_tokens_details.reasoning_tokens`; an answer with several reasoning
//!   items has its count shared evenly among them (assumed: the total is exact when all are
//!   sent back).
//!
//! The request does not say how many tokens that is. The gateway keeps, for every answer it
//! served or forwarded, its signatures' or items' digests and their thinking, and adds them to
//! the estimate of a request that sends one back. One from an answer the gateway never saw is
//! flagged, never counted as nothing.

use crate::billing::RenderModel;
use crate::wire::{Format, Request};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::hash::Hasher;
use std::sync::Mutex;

/// Answers' signatures kept at most (an assumed bound: 24 bytes of digest and count each, a
/// few MB in all; past it the oldest go first, and a request returning one is flagged).
const MAX_SIGNATURES: usize = 1 << 16;

/// Signatures read from one answer at most (one per model turn is billed; an answer has a turn).
const MAX_PER_ANSWER: usize = 64;

/// The thoughts of the Gemini answers this gateway has seen, by signature digest.
#[derive(Default)]
pub struct Thoughts {
    store: Mutex<Store>,
}

#[derive(Default)]
struct Store {
    tokens: HashMap<u128, u64>,
    order: VecDeque<u128>,
}

/// What a request sends back of earlier thinking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resent {
    /// Nothing billed again (no signature, or a model and API that bill none).
    Nothing,
    /// The thoughts of earlier answers the gateway saw: tokens, and how many answers.
    Known(u64, usize),
    /// Signatures of answers the gateway did not see: why, for the row.
    Unseen(String),
}

impl Resent {
    /// The tokens added to a request's estimate.
    pub fn tokens(&self) -> u64 {
        match self {
            Resent::Known(t, _) => *t,
            Resent::Nothing | Resent::Unseen(_) => 0,
        }
    }

    /// The estimate's label with what was added said: the tokens come from the answers' own
    /// usage as the gateway logged it, not from a tokenizer.
    pub fn label(&self, label: String) -> String {
        match self {
            Resent::Known(t, n) if *t > 0 => format!(
                "{label}; +{t} thought tokens of {n} earlier answer(s) billed again (observed in those answers)"
            ),
            _ => label,
        }
    }
}

impl Thoughts {
    /// What `req`, billed under `render`, sends back of earlier answers' thinking.
    pub fn read(&self, req: &Request, render: RenderModel) -> Resent {
        let (keys, provider): (Vec<&str>, &str) = match (req.format, render) {
            (Format::Gemini, RenderModel::Gemini(g)) if g.resends_thoughts() => (
                crate::billing::render::gemini::resent_thoughts(req.messages()),
                "the Developer API bills their thoughts again",
            ),
            (Format::OpenaiResponses, RenderModel::Openai { .. }) => (
                chain_reasoning(req.messages()),
                "OpenAI bills their reasoning in the current tool chain",
            ),
            _ => return Resent::Nothing,
        };
        if keys.is_empty() {
            return Resent::Nothing;
        }
        let s = crate::sync::lock(&self.store);
        let (mut tokens, mut unseen) = (0u64, 0usize);
        for key in &keys {
            match s.tokens.get(&digest(key)) {
                Some(t) => tokens = tokens.saturating_add(*t),
                None => unseen += 1,
            }
        }
        match unseen {
            0 => Resent::Known(tokens, keys.len()),
            n => Resent::Unseen(format!(
                "returns the thinking (thought signatures or reasoning items) of {n} earlier answer(s) \
                 this gateway did not see: {provider}, which the estimate does not hold"
            )),
        }
    }

    /// Keep what an answer (a whole body, or a stream's events) thought, under the keys a later
    /// request sends back.
    pub fn remember(&self, format: Format, answers: &[Value]) {
        let kept = match format {
            Format::Gemini => gemini_answer(answers),
            Format::OpenaiResponses => answers.iter().flat_map(responses_answer).collect(),
            Format::AnthropicMessages | Format::OpenaiChat => Vec::new(),
        };
        if kept.is_empty() {
            return;
        }
        let mut s = crate::sync::lock(&self.store);
        for (d, tokens) in kept {
            if s.tokens.insert(d, tokens).is_none() {
                s.order.push_back(d);
            }
        }
        while s.tokens.len() > MAX_SIGNATURES {
            let Some(oldest) = s.order.pop_front() else {
                break;
            };
            s.tokens.remove(&oldest);
        }
    }
}

/// A Gemini answer's signatures, each with the answer's thoughts (the first of a turn's is
/// the one billed; which one a client sends back is its own).
fn gemini_answer(answers: &[Value]) -> Vec<(u128, u64)> {
    let mut signatures = Vec::new();
    let mut thoughts = None;
    for a in answers {
        for part in a["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["content"]["parts"].as_array())
            .flatten()
        {
            if let Some(sig) = part["thoughtSignature"].as_str() {
                if signatures.len() < MAX_PER_ANSWER {
                    signatures.push(digest(sig));
                }
            }
        }
        // Usage is cumulative: the last that says it holds the answer's thoughts.
        if let Some(t) = a["usageMetadata"]["thoughtsTokenCount"].as_u64() {
            thoughts = Some(t);
        }
    }
    match thoughts {
        Some(t) => signatures.into_iter().map(|d| (d, t)).collect(),
        None => Vec::new(),
    }
}

/// A Responses answer's reasoning items, by id and by encrypted content, each with its share
/// of the answer's reasoning tokens.
fn responses_answer(answer: &Value) -> Vec<(u128, u64)> {
    let items: Vec<&Value> = answer["output"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "reasoning")
        .take(MAX_PER_ANSWER)
        .collect();
    let Some(total) = answer["usage"]["output_tokens_details"]["reasoning_tokens"].as_u64() else {
        return Vec::new();
    };
    if items.is_empty() {
        return Vec::new();
    }
    let n = items.len() as u64;
    let mut kept = Vec::new();
    for (k, item) in items.iter().enumerate() {
        // The remainder goes to the first, so the shares sum to the total.
        let share = total / n + if k == 0 { total % n } else { 0 };
        for key in [&item["id"], &item["encrypted_content"]] {
            if let Some(key) = key.as_str() {
                kept.push((digest(key), share));
            }
        }
    }
    kept
}

/// The keys of the reasoning items a Responses input sends back in its current tool chain
/// (after its last user message): an item's id, else its encrypted content.
fn chain_reasoning(items: &[Value]) -> Vec<&str> {
    let from = items.iter().rposition(|m| m["role"] == "user");
    items
        .iter()
        .enumerate()
        .filter(|(i, m)| m["type"] == "reasoning" && from.is_none_or(|u| *i > u))
        .filter_map(|(_, m)| m["id"].as_str().or_else(|| m["encrypted_content"].as_str()))
        .collect()
}

/// A signature's digest under the process's seed (signatures run to kilobytes; the digest is
/// what is kept).
fn digest(signature: &str) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::with_seed(crate::tokens::process_seed());
    h.write(signature.as_bytes());
    h.digest128()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gemini(model: &str, vertex: bool) -> RenderModel {
        RenderModel::Gemini(crate::billing::render::gemini::Gemini::of_model(
            model, vertex,
        ))
    }

    fn sending_back(sig: &str) -> Request {
        Request::new(
            Format::Gemini,
            json!({"model": "gemini-3-flash", "contents": [
                {"role": "user", "parts": [{"text": "q"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": sig}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"r": 1}}}]}]}),
        )
    }

    #[test]
    fn a_signature_seen_bills_its_answer_thoughts_and_one_unseen_is_flagged() {
        let t = Thoughts::default();
        t.remember(Format::Gemini, &[
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f"}, "thoughtSignature": "c2lnMQ=="}]}}]}),
            json!({"candidates": [], "usageMetadata": {"thoughtsTokenCount": 321}}),
        ]);
        let g3 = gemini("gemini-3-flash", false);
        assert_eq!(t.read(&sending_back("c2lnMQ=="), g3), Resent::Known(321, 1));
        assert!(
            matches!(t.read(&sending_back("b3RoZXI="), g3), Resent::Unseen(w) if w.contains("1 earlier"))
        );
        // Vertex and 2.5 bill no thoughts again; a non-Gemini render has none.
        let vertex = gemini("gemini-3-flash", true);
        assert_eq!(t.read(&sending_back("c2lnMQ=="), vertex), Resent::Nothing);
        let g25 = gemini("gemini-2.5-flash", false);
        assert_eq!(t.read(&sending_back("b3RoZXI="), g25), Resent::Nothing);
        // Google's skip sentinel carries no thinking.
        assert_eq!(
            t.read(&sending_back("skip_thought_signature_validator"), g3),
            Resent::Nothing
        );
    }

    #[test]
    fn an_answer_without_thoughts_is_not_kept_and_the_store_is_bounded() {
        let t = Thoughts::default();
        t.remember(
            Format::Gemini,
            &[json!({"candidates": [{"content": {"parts": [{"text": "a", "thoughtSignature": "x"}]}}]})],
        );
        assert!(crate::sync::lock(&t.store).tokens.is_empty());
        for i in 0..(MAX_SIGNATURES + 100) {
            t.remember(Format::Gemini, &[json!({"candidates": [{"content": {"parts": [{"text": "a", "thoughtSignature": format!("s{i}")}]}}],
                "usageMetadata": {"thoughtsTokenCount": 1}})]);
        }
        let s = crate::sync::lock(&t.store);
        assert!(s.tokens.len() <= MAX_SIGNATURES);
        assert_eq!(s.tokens.len(), s.order.len());
    }

    /// Responses reasoning items: those after the last user message are billed their share of
    /// the answer's reasoning, by id or by encrypted content; earlier ones are dropped.
    #[test]
    fn reasoning_in_the_current_chain_bills_its_answers_reasoning() {
        let t = Thoughts::default();
        t.remember(
            Format::OpenaiResponses,
            &[json!({"output": [
                {"type": "reasoning", "id": "rs_a", "encrypted_content": "ENC_A", "summary": []},
                {"type": "reasoning", "id": "rs_b", "summary": []},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}],
                "usage": {"output_tokens": 300, "output_tokens_details": {"reasoning_tokens": 201}}})],
        );
        let openai = RenderModel::parse("openai:gpt-5.4").unwrap();
        let req = |input: Value| {
            Request::new(
                Format::OpenaiResponses,
                json!({"model": "gpt-5.4", "input": input}),
            )
        };
        let chain = req(json!([{"role": "user", "content": "q"},
            {"type": "reasoning", "id": "rs_a", "summary": []},
            {"type": "reasoning", "encrypted_content": "ENC_A", "summary": []},
            {"type": "reasoning", "id": "rs_b", "summary": []},
            {"type": "function_call_output", "call_id": "c1", "output": "r"}]));
        assert_eq!(t.read(&chain, openai), Resent::Known(101 + 101 + 100, 3));
        let before_user = req(json!([{"type": "reasoning", "id": "rs_a", "summary": []},
            {"role": "user", "content": "next question"}]));
        assert_eq!(t.read(&before_user, openai), Resent::Nothing);
        let unseen = req(json!([{"role": "user", "content": "q"},
            {"type": "reasoning", "id": "rs_zzz", "summary": []}]));
        assert!(matches!(t.read(&unseen, openai), Resent::Unseen(_)));
    }
}
