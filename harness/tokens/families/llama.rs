//! Llama: Llama 3 (3.1, 3.2, 3.3), Meta's tiktoken vocabulary of 128,000 ranks, as splintr ships
//! it; and Llama 4 (Scout, Maverick), 200,000 ranks with o200k's pretokenizer, read from Meta's
//! `llama-models` package where the user installed it ([`super::super::llama4`]).

use super::{Bpe, Counter, Label, Spec, Splintr};

static VOCAB: Splintr = Splintr::new("llama3");

pub static SPEC: Spec = Spec {
    name: "llama3",
    source:
        "meta-llama/Llama-3.1 tokenizer.model, as the splintr-vocab-llama3 crate 1.0.0 ships it",
    licence: "Llama 3 community licence",
    aliases: &["llama"],
    label: Label::Estimated,
    counter: Counter::Splintr(&VOCAB),
    ready: super::always_ready,
};

pub static LLAMA4: Spec = Spec {
    name: "llama4",
    aliases: &[],
    source:
        "llama_models/llama4/tokenizer.model of PyPI llama-models 0.3.0 (Meta), installed apart",
    licence: "Llama 4 Community License",
    label: Label::Estimated,
    counter: Counter::Bpe {
        vocab: Bpe::Llama4,
        scale: 1.0,
    },
    ready: super::super::llama4::ready,
};
