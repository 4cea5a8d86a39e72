//! Every tokenizer family toolcost counts with, one file each. A family's file holds the
//! [`Spec`] of each tokenizer it has: its names, where its vocabulary comes from and under what
//! licence, its evidence label and how it counts a text. [`super::Tokenizer::spec`] is the
//! registry that finds them, and everything a [`super::Tokenizer`] is asked is read from its
//! spec: a new family is a file here, a variant of [`super::Tokenizer`] and a line in `spec`.
//!
//! The open-weight families' vocabularies are the `splintr` crate's (each under its maker's
//! licence); they count a text as the family's reference tokenizer encodes it, with special
//! tokens written in the text counted as ordinary text (a chat template's markers are counted
//! by the render model, one each).

pub mod anthropic;
pub mod deepseek;
pub mod gemma;
pub mod glm;
pub mod kimi;
pub mod llama;
pub mod mistral;
pub mod openai;
pub mod qwen;

use super::claude_exact::Family;
use crate::error::Result;
use std::sync::OnceLock;

/// One tokenizer: what it is called, where its vocabulary comes from, how its figures are
/// labelled and how it counts.
#[derive(Debug)]
pub struct Spec {
    /// Its name on the command line, in reports and in JSON.
    pub name: &'static str,
    /// Other names `--tokenizer` accepts for it.
    pub aliases: &'static [&'static str],
    pub source: &'static str,
    pub licence: &'static str,
    pub label: Label,
    pub counter: Counter,
    /// Whether it can count here; the error says what to do (a vocabulary read from a file the
    /// user named may be missing).
    pub ready: fn() -> Result<()>,
}

/// How a figure counted with a tokenizer is labelled.
#[derive(Debug, Clone, Copy)]
pub enum Label {
    /// `estimated:<name>`: the tokenizer's own count.
    Estimated,
    /// `calibrated:...`: a count that depends on constants fitted to recorded figures (the
    /// label says which).
    Calibrated(fn() -> String),
}

/// How a tokenizer counts a text.
#[derive(Debug, Clone, Copy)]
pub enum Counter {
    /// One of OpenAI's byte-pair encodings over regex pretokens ([`super::bpe`]): a text's
    /// count is the sum of its pretokens', so a long text is assembled from remembered pieces
    /// ([`super::Part`]). `scale` multiplies the count (1 for the vocabulary itself; another
    /// tokenizer's estimate otherwise).
    Bpe { vocab: Bpe, scale: f64 },
    /// The current-Claude estimate: o200k pretokens weighed by kind ([`super::claude`]).
    ClaudeEstimate,
    /// A Claude family counted exactly ([`super::claude_exact`]), as a message's content or
    /// inside a longer text.
    Claude(Family),
    /// One of the vocabularies the `splintr` crate ships: each text counted whole (and
    /// remembered), special-token spellings read as text.
    Splintr(&'static Splintr),
    /// Another encoder whose counts do not add across a join: each text counted whole (and
    /// remembered).
    Whole(fn(&str) -> usize),
}

/// The byte-pair vocabularies counted one pretoken at a time ([`super::bpe::Bpe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bpe {
    O200k,
    Cl100k,
    /// Llama 4's ranks, installed apart ([`super::llama4`]), with o200k's pretokenizer.
    Llama4,
}

/// For a spec whose tokenizer is always here (embedded in the binary).
pub fn always_ready() -> Result<()> {
    Ok(())
}

/// One of the vocabularies the `splintr` crate ships, by the name its `from_pretrained` takes,
/// loaded the first time it is asked for and kept.
pub struct Splintr {
    name: &'static str,
    loaded: OnceLock<splintr::AnyTokenizer>,
    specials: OnceLock<Option<regex::Regex>>,
}

impl Splintr {
    pub const fn new(name: &'static str) -> Splintr {
        Splintr {
            name,
            loaded: OnceLock::new(),
            specials: OnceLock::new(),
        }
    }

    fn tokenizer(&self) -> &splintr::AnyTokenizer {
        self.loaded.get_or_init(|| {
            splintr::pretrained::from_pretrained(self.name)
                .unwrap_or_else(|e| panic!("the bundled {} vocabulary loads: {e}", self.name))
        })
    }

    /// The vocabulary's added tokens' spellings, longest first (so that where two start at the
    /// same place the longer is found), as one pattern; none for a vocabulary without them.
    pub fn specials(&self) -> Option<&regex::Regex> {
        self.specials
            .get_or_init(|| {
                let mut names: Vec<&String> = self.tokenizer().special_tokens().keys().collect();
                if names.is_empty() {
                    return None;
                }
                names.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
                let pattern = names
                    .iter()
                    .map(|n| regex::escape(n))
                    .collect::<Vec<_>>()
                    .join("|");
                Some(regex::Regex::new(&pattern).expect("escaped spellings make a pattern"))
            })
            .as_ref()
    }

    /// Tokens of a text, special-token spellings in it read as text. A bundled vocabulary that
    /// does not load is a broken build: it panics with its name.
    pub fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let tok = self.tokenizer();
        tok.encode_with(text, &splintr::SpecialMode::Ordinary)
            .map(|ids| ids.len())
            .unwrap_or_else(|_| tok.encode(text).len())
    }
}

impl std::fmt::Debug for Splintr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "splintr:{}", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Tokenizer;

    /// Each open family loads and counts; a special token's spelling in a text is text.
    #[test]
    fn every_open_family_counts() {
        let open = Tokenizer::ALL
            .into_iter()
            .filter(|t| matches!(t.spec().counter, super::Counter::Splintr(_)));
        assert_eq!(open.clone().count(), 6);
        for t in open {
            assert_eq!(t.count(""), 0.0);
            let n = t.count("Hello, world! The quick brown fox jumps over the lazy dog.");
            assert!((10.0..=20.0).contains(&n), "{}: {n}", t.name());
            assert!(t.count("<|im_end|>") > 1.0, "{}", t.name());
        }
    }

    /// Every tokenizer's names are its own: no name or alias is two tokenizers'.
    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for t in Tokenizer::ALL {
            let s = t.spec();
            for n in std::iter::once(&s.name).chain(s.aliases) {
                assert!(seen.insert(*n), "{n} names two tokenizers");
                assert_eq!(Tokenizer::parse(n).unwrap(), t, "{n}");
            }
        }
    }

    /// A server counts an added token spelled in a prompt's text as one token: `<think>`
    /// typed by a user is one on Qwen, Kimi and DeepSeek, and the text around it is counted as
    /// it is alone. A tokenizer without added tokens counts as `count` does.
    #[test]
    fn a_served_count_reads_added_tokens_as_one() {
        for t in [Tokenizer::Qwen, Tokenizer::Kimi, Tokenizer::Deepseek] {
            assert_eq!(t.count_served("<think>"), 1.0, "{}", t.name());
            let (a, b) = ("Explain what ", " does.");
            assert_eq!(
                t.count_served(&format!("{a}<think>{b}")),
                t.count(a) + 1.0 + t.count(b),
                "{}",
                t.name()
            );
            assert!(t.count("<think>") > 1.0, "{}", t.name());
            let plain = "no added token here, [just] <text>";
            assert_eq!(t.count_served(plain), t.count(plain), "{}", t.name());
        }
        assert_eq!(
            Tokenizer::O200k.count_served("<think>"),
            Tokenizer::O200k.count("<think>")
        );
    }
}
