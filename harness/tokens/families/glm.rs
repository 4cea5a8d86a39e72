//! GLM (Z.ai): GLM-4 to 4.7 and the 5.x models, Llama 3's pretokenizer over GLM's own
//! vocabulary (151,329 ranks).

use super::{Counter, Label, Spec, Splintr};

static VOCAB: Splintr = Splintr::new("glm4");

pub static SPEC: Spec = Spec {
    name: "glm",
    source: "zai-org/GLM-4.5 tokenizer.json, as the splintr-vocab-glm crate 1.0.0 ships it",
    licence: "MIT (the GLM-4.5 release)",
    aliases: &[],
    label: Label::Estimated,
    counter: Counter::Splintr(&VOCAB),
    ready: super::always_ready,
};
