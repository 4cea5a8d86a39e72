//! OpenAI's byte-pair encodings, o200k_base (GPT-4o to the 5.x models, gpt-oss) and cl100k_base
//! (GPT-4 and GPT-3.5), counted one pretoken at a time with the same counts as tiktoken
//! ([`super::super::bpe`]).

use super::{Bpe, Counter, Label, Spec};

const SOURCE: &str = "OpenAI's published .tiktoken file, as tiktoken-rs 0.7.0 ships it (fixtures/tokenizers/README.md)";

pub static O200K: Spec = Spec {
    name: "o200k",
    aliases: &["o200k_base"],
    source: SOURCE,
    licence: "MIT (tiktoken, OpenAI)",
    label: Label::Estimated,
    counter: Counter::Bpe {
        vocab: Bpe::O200k,
        scale: 1.0,
    },
    ready: super::always_ready,
};

pub static CL100K: Spec = Spec {
    name: "cl100k",
    aliases: &["cl100k_base"],
    source: SOURCE,
    licence: "MIT (tiktoken, OpenAI)",
    label: Label::Estimated,
    counter: Counter::Bpe {
        vocab: Bpe::Cl100k,
        scale: 1.0,
    },
    ready: super::always_ready,
};
