//! Tokenizers. o200k_base and cl100k_base come from bpe-openai (the same ids as tiktoken,
//! counted without allocating); `kimi-est` is o200k scaled by one constant fitted from the
//! recorded figures, because the recorded model's tokenizer is not distributable here.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Kimi tokens per o200k token, fitted so that the per-row projection of the `seed-2026-07`
/// catalogue at N=856, rendered as Kimi function declarations with `mcp__toolcost__` names,
/// costs the recorded slope of 157.846 input tokens per definition (FACTS.md section 1:
/// (149,187 - 14,071) / 856 = 157.8458), divided by that projection's 122.65 o200k tokens per
/// definition. It is fitted on definition text and applied to all text, so every figure it
/// produces is labelled `calibrated`; its error on other text is not known (the recorded
/// model's tokenizer is not available to measure it). `toolcost reproduce` re-fits it and prints
/// both; a test fails when the generator drifts from it by more than 0.5%.
pub const KIMI_PER_O200K: f64 = 1.2870;

/// A tokenizer toolcost can count with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Tokenizer {
    #[serde(rename = "o200k")]
    O200k,
    #[serde(rename = "cl100k")]
    Cl100k,
    /// o200k x [`KIMI_PER_O200K`]
    #[serde(rename = "kimi-est")]
    KimiEst,
}

impl Tokenizer {
    pub const NAMES: [&'static str; 3] = ["o200k", "cl100k", "kimi-est"];

    pub fn parse(name: &str) -> Result<Tokenizer> {
        match name.trim() {
            "o200k" | "o200k_base" => Ok(Tokenizer::O200k),
            "cl100k" | "cl100k_base" => Ok(Tokenizer::Cl100k),
            "kimi-est" | "kimi" => Ok(Tokenizer::KimiEst),
            other => Err(Error::unknown("tokenizer", other, &Self::NAMES)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::O200k => "o200k",
            Tokenizer::Cl100k => "cl100k",
            Tokenizer::KimiEst => "kimi-est",
        }
    }

    /// The evidence label of a figure counted with this tokenizer.
    pub fn label(self) -> String {
        match self {
            Tokenizer::KimiEst => format!("calibrated:kimi-est(o200k x {KIMI_PER_O200K})"),
            t => format!("estimated:{}", t.name()),
        }
    }

    /// Tokens in a text. Kimi estimates stay fractional until a total is rounded.
    pub fn count(self, text: &str) -> f64 {
        match self {
            Tokenizer::O200k | Tokenizer::KimiEst => {
                let n = memo::count(memo::O200K, text, |t| bpe_openai::o200k_base().count(t));
                if self == Tokenizer::KimiEst {
                    n as f64 * KIMI_PER_O200K
                } else {
                    n as f64
                }
            }
            Tokenizer::Cl100k => {
                memo::count(memo::CL100K, text, |t| bpe_openai::cl100k_base().count(t)) as f64
            }
        }
    }
}

/// Counts of long texts, remembered. A whole task resends the same definitions and history
/// every round (150 rounds of 5 MB on the per-row surface at N=8,560), and a count is a pure
/// function of the text, so each distinct long text is tokenized once. Keys are the text's
/// length and two independent 64-bit hashes of it; the table is emptied when it grows past a
/// bound, so memory stays small.
mod memo {
    use std::collections::HashMap;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::{Mutex, OnceLock};

    pub const O200K: u8 = 0;
    pub const CL100K: u8 = 1;
    /// Shorter texts are cheaper to count than to hash and look up.
    const MIN_LEN: usize = 4096;
    const MAX_ENTRIES: usize = 50_000;

    type Key = (u8, usize, u64, u64);

    fn table() -> &'static Mutex<HashMap<Key, usize>> {
        static T: OnceLock<Mutex<HashMap<Key, usize>>> = OnceLock::new();
        T.get_or_init(|| Mutex::new(HashMap::new()))
    }

    fn hash(seed: u64, text: &str) -> u64 {
        // SipHash with fixed keys: the same text gives the same key in every process.
        let mut h =
            std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
                .build_hasher();
        h.write_u64(seed);
        h.write(text.as_bytes());
        h.finish()
    }

    pub fn count(which: u8, text: &str, f: impl Fn(&str) -> usize) -> usize {
        if text.len() < MIN_LEN {
            return f(text);
        }
        let key = (which, text.len(), hash(1, text), hash(2, text));
        if let Some(n) = table().lock().unwrap().get(&key) {
            return *n;
        }
        let n = f(text);
        let mut t = table().lock().unwrap();
        if t.len() >= MAX_ENTRIES {
            t.clear();
        }
        t.insert(key, n);
        n
    }
}
