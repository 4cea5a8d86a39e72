//! DeepSeek: V3, R1, V3.1, V3.2 and V4 share one byte-level BPE vocabulary (128,815 ids) and
//! its three-pass pretokenizer.

use super::{Counter, Label, Spec, Splintr};

static VOCAB: Splintr = Splintr::new("deepseek_v3");

pub static SPEC: Spec = Spec {
    name: "deepseek",
    source:
        "deepseek-ai/DeepSeek-V3 tokenizer.json, as the splintr-vocab-deepseek crate 1.0.0 ships it",
    licence: "DeepSeek model licence (the vocabulary's, in its crate)",
    aliases: &[],
    label: Label::Estimated,
    counter: Counter::Splintr(&VOCAB),
    ready: super::always_ready,
};
