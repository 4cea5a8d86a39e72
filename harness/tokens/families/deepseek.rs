//! DeepSeek: V3, R1, V3.1, V3.2 and V4 share one byte-level BPE vocabulary (128,815 ids) and
//! its three-pass pretokenizer.

use super::FamilySpec;

pub const SPEC: FamilySpec = FamilySpec {
    name: "deepseek",
    splintr: "deepseek_v3",
    source:
        "deepseek-ai/DeepSeek-V3 tokenizer.json, as the splintr-vocab-deepseek crate 1.0.0 ships it",
    licence: "DeepSeek model licence (the vocabulary's, in its crate)",
};
