//! The open-weight families' tokenizers, one file each behind [`FAMILIES`]: each names the
//! vocabulary it counts with (shipped by the `splintr` crate, under its maker's licence) and
//! counts a text as that family's reference tokenizer encodes it, with special tokens written in
//! the text counted as ordinary text (a chat template's markers are counted by the render
//! model, one each). A new family is a file here and a line in [`FAMILIES`].

mod deepseek;
mod glm;
mod kimi;
mod llama;
mod mistral;
mod qwen;

use std::sync::OnceLock;

/// One family's vocabulary: its name, the vocabulary splintr loads, where it comes from and
/// under what licence, and the reference it is checked against.
#[derive(Debug)]
pub struct FamilySpec {
    pub name: &'static str,
    /// The name `splintr::pretrained::from_pretrained` takes.
    pub splintr: &'static str,
    pub source: &'static str,
    pub licence: &'static str,
}

/// Every family, in the order of [`Open`]'s variants.
pub const FAMILIES: [&FamilySpec; 6] = [
    &kimi::SPEC,
    &deepseek::SPEC,
    &qwen::SPEC,
    &glm::SPEC,
    &llama::SPEC,
    &mistral::SPEC,
];

/// An open-weight family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Open {
    Kimi,
    Deepseek,
    Qwen,
    Glm,
    Llama3,
    Mistral,
}

impl Open {
    pub const ALL: [Open; 6] = [
        Open::Kimi,
        Open::Deepseek,
        Open::Qwen,
        Open::Glm,
        Open::Llama3,
        Open::Mistral,
    ];

    /// Its place in [`FAMILIES`] and [`Open::ALL`].
    pub fn index(self) -> usize {
        match self {
            Open::Kimi => 0,
            Open::Deepseek => 1,
            Open::Qwen => 2,
            Open::Glm => 3,
            Open::Llama3 => 4,
            Open::Mistral => 5,
        }
    }

    pub fn spec(self) -> &'static FamilySpec {
        FAMILIES[self.index()]
    }

    /// The family's tokenizer, loaded the first time it is asked for.
    fn tokenizer(self) -> &'static splintr::AnyTokenizer {
        static LOADED: [OnceLock<splintr::AnyTokenizer>; 6] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        LOADED[self.index()].get_or_init(|| {
            splintr::pretrained::from_pretrained(self.spec().splintr).unwrap_or_else(|e| {
                panic!("the bundled {} vocabulary loads: {e}", self.spec().name)
            })
        })
    }

    /// Tokens of a text, special-token spellings in it read as text.
    pub fn count(self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        self.tokenizer()
            .encode_with(text, &splintr::SpecialMode::Ordinary)
            .map(|ids| ids.len())
            .unwrap_or_else(|_| self.tokenizer().encode(text).len())
    }

    /// The ids of a text (for the tests against the reference).
    pub fn encode(self, text: &str) -> Vec<u32> {
        self.tokenizer()
            .encode_with(text, &splintr::SpecialMode::Ordinary)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each family loads and counts; the families differ where their vocabularies do.
    #[test]
    fn every_family_counts() {
        for f in Open::ALL {
            assert_eq!(f.count(""), 0);
            let n = f.count("Hello, world! The quick brown fox jumps over the lazy dog.");
            assert!((10..=20).contains(&n), "{}: {n}", f.spec().name);
            // A special token's spelling in text is text, several tokens.
            assert!(f.count("<|im_end|>") > 1, "{}", f.spec().name);
        }
    }
}
