//! Qwen: Qwen 2, 2.5 and 3 (and Qwen3-Coder) share one vocabulary (151,643 ranks), digits split
//! one at a time. Qwen 3.5 has a vocabulary of its own that no crate ships: it is counted with
//! this one (assumed, and said in its label).

use super::{Counter, Label, Spec, Splintr};

static VOCAB: Splintr = Splintr::new("qwen3");

pub static SPEC: Spec = Spec {
    name: "qwen",
    source: "Qwen/Qwen3 tokenizer.json, as the splintr-vocab-qwen crate 1.0.0 ships it",
    licence: "Apache-2.0",
    aliases: &[],
    label: Label::Estimated,
    counter: Counter::Splintr(&VOCAB),
    ready: super::always_ready,
};
