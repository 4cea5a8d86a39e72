//! Thinking sent back: a Gemini 3 request on the Developer API that returns an earlier answer's
//! `thoughtSignature` is billed that answer's thoughts again as input (the rule and its
//! evidence are in [`crate::billing::render::gemini`]). The request does not say how many
//! tokens that is; the answer did, in its `thoughtsTokenCount`. The gateway keeps, for every
//! Gemini answer it served or forwarded, its signatures' digests and its thoughts, and adds
//! them to the estimate of a request that sends one back. A signature from an answer the
//! gateway never saw is flagged, never counted as nothing. Vertex AI and the 2.x models bill
//! no thoughts again: there a signature is nothing to add.

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
        let RenderModel::Gemini(g) = render else {
            return Resent::Nothing;
        };
        if req.format != Format::Gemini || !g.resends_thoughts() {
            return Resent::Nothing;
        }
        let signatures = crate::billing::render::gemini::resent_thoughts(req.messages());
        if signatures.is_empty() {
            return Resent::Nothing;
        }
        let s = crate::sync::lock(&self.store);
        let (mut tokens, mut unseen) = (0u64, 0usize);
        for sig in &signatures {
            match s.tokens.get(&digest(sig)) {
                Some(t) => tokens = tokens.saturating_add(*t),
                None => unseen += 1,
            }
        }
        match unseen {
            0 => Resent::Known(tokens, signatures.len()),
            n => Resent::Unseen(format!(
                "returns the thought signatures of {n} earlier answer(s) this gateway did not see: \
                 the Developer API bills their thoughts again, which the estimate does not hold"
            )),
        }
    }

    /// Keep the signatures and thoughts of a Gemini answer (a whole body, or a stream's events).
    pub fn remember(&self, answers: &[Value]) {
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
        let (Some(tokens), false) = (thoughts, signatures.is_empty()) else {
            return;
        };
        let mut s = crate::sync::lock(&self.store);
        for d in signatures {
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
        t.remember(&[
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
        t.remember(&[json!({"candidates": [{"content": {"parts": [{"text": "a", "thoughtSignature": "x"}]}}]})]);
        assert!(crate::sync::lock(&t.store).tokens.is_empty());
        for i in 0..(MAX_SIGNATURES + 100) {
            t.remember(&[json!({"candidates": [{"content": {"parts": [{"text": "a", "thoughtSignature": format!("s{i}")}]}}],
                "usageMetadata": {"thoughtsTokenCount": 1}})]);
        }
        let s = crate::sync::lock(&t.store);
        assert!(s.tokens.len() <= MAX_SIGNATURES);
        assert_eq!(s.tokens.len(), s.order.len());
    }
}
