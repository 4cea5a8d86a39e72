//! Mistral's tekken vocabulary (131,072 ids, the first 1,000 special): NeMo, Pixtral, Small 3,
//! Large 2, Medium, Devstral and Ministral. The SentencePiece vocabularies of Mistral 7B and
//! Mixtral are counted with it too (assumed, and said in the label).

use super::{Counter, Label, Spec, Splintr};

static VOCAB: Splintr = Splintr::new("mistral_v3");

pub static SPEC: Spec = Spec {
    name: "mistral",
    source: "mistral-common's tekken file, as the splintr-vocab-mistral crate 1.0.0 ships it",
    licence: "Apache-2.0",
    aliases: &["tekken"],
    label: Label::Estimated,
    counter: Counter::Splintr(&VOCAB),
    ready: super::always_ready,
};
