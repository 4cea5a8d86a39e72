//! Kimi (Moonshot AI): K2, K2.5, K2.6, K2.7 Code and K3 share one vocabulary, Moonshot's
//! `tiktoken.model` (163,584 ranks), with the pretokenizer of its `tokenization_kimi.py`.

use super::{Counter, Label, Spec, Splintr};

static VOCAB: Splintr = Splintr::new("kimi_k2");

pub static SPEC: Spec = Spec {
    name: "kimi",
    source: "Moonshot AI's tiktoken.model (moonshotai/Kimi-K2-Instruct), as the splintr-vocab-kimi crate 1.0.0 ships it",
    licence: "Modified MIT (Moonshot AI)",
    aliases: &[],
    label: Label::Estimated,
    counter: Counter::Splintr(&VOCAB),
    ready: super::always_ready,
};
