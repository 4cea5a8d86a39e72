//! Gemma 3's SentencePiece vocabulary, standing in for Gemini's ([`super::super::gemma3`]):
//! embedded, or the model file `TOOLCOST_GEMMA3` names.

use super::{Counter, Label, Spec};

pub static GEMMA3: Spec = Spec {
    name: "gemma3",
    aliases: &["gemini"],
    source: "Google's Gemma 3 tokenizer.model, as the splintr-vocab-gemma3 crate ships it as text",
    licence: "Gemma Terms of Use",
    label: Label::Estimated,
    counter: Counter::Whole(super::super::gemma3::count),
    ready: super::super::gemma3::ready,
};
