//! Llama 3 (3.1, 3.2, 3.3): Meta's tiktoken vocabulary (128,000 ranks). Llama 4 has a
//! vocabulary of its own that no crate ships: it is counted with this one (assumed, and said in
//! its label).

use super::FamilySpec;

pub const SPEC: FamilySpec = FamilySpec {
    name: "llama3",
    splintr: "llama3",
    source:
        "meta-llama/Llama-3.1 tokenizer.model, as the splintr-vocab-llama3 crate 1.0.0 ships it",
    licence: "Llama 3 community licence",
};
