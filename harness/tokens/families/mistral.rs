//! Mistral's vocabularies.
//!
//! - tekken (131,072 ids, the first 1,000 special): NeMo, Pixtral 12B, Small 3, Medium 3,
//!   Devstral, Magistral, Ministral and Large 3.
//! - The SentencePiece vocabularies of the earlier models (Mistral 7B, Mixtral, Small and Large
//!   up to 2411, Codestral 22B): one BPE of 32,000 pieces with a dummy prefix, which
//!   `mistral-common` 1.13.1 ships in five files (`tokenizer.model.v1`, then `.v2`, `.v3`,
//!   `.v7` and `.v7m1`, Apache-2.0). The five hold the same normal, byte and unknown pieces
//!   with the same scores; they differ in control tokens (which text never forms: a chat
//!   template's markers are counted by the render model) and in user-defined pieces, which
//!   text does form: none in v1 and v2, `[REFERENCE_DOC_0]` to `[REFERENCE_DOC_19]` from v3,
//!   and `[REF]`, `[/REF]` from v7 (read from those files on 2026-12-06). So three tokenizers
//!   count every version exactly: the v1 vocabulary as splintr's `splintr-vocab-mistral` crate
//!   ships it, with the user-defined pieces of each version added. tests/count.rs holds them
//!   to Google's sentencepiece over mistral-common's own files.

use super::{Counter, Label, Spec, Splintr};
use crate::tokens::sentencepiece::{SentencePiece, TextSettings};
use std::sync::OnceLock;

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

const SPM_SOURCE: &str = "mistral-common's tokenizer.model.v1, as the splintr-vocab-mistral crate 1.0.0 ships it, with the user-defined pieces of mistral-common 1.13.1's files";

pub static SPM_V1: Spec = Spec {
    name: "mistral-spm-v1",
    aliases: &["mistral-spm-v2"],
    source: SPM_SOURCE,
    licence: "Apache-2.0",
    label: Label::Estimated,
    counter: Counter::Whole(count_v1),
    ready: super::always_ready,
};

pub static SPM_V3: Spec = Spec {
    name: "mistral-spm-v3",
    aliases: &[],
    source: SPM_SOURCE,
    licence: "Apache-2.0",
    label: Label::Estimated,
    counter: Counter::Whole(count_v3),
    ready: super::always_ready,
};

pub static SPM_V7: Spec = Spec {
    name: "mistral-spm-v7",
    aliases: &[],
    source: SPM_SOURCE,
    licence: "Apache-2.0",
    label: Label::Estimated,
    counter: Counter::Whole(count_v7),
    ready: super::always_ready,
};

/// The user-defined pieces of `mistral_instruct_tokenizer_240323.model.v3`.
const REFERENCE_DOCS: [&str; 20] = [
    "[REFERENCE_DOC_0]",
    "[REFERENCE_DOC_1]",
    "[REFERENCE_DOC_2]",
    "[REFERENCE_DOC_3]",
    "[REFERENCE_DOC_4]",
    "[REFERENCE_DOC_5]",
    "[REFERENCE_DOC_6]",
    "[REFERENCE_DOC_7]",
    "[REFERENCE_DOC_8]",
    "[REFERENCE_DOC_9]",
    "[REFERENCE_DOC_10]",
    "[REFERENCE_DOC_11]",
    "[REFERENCE_DOC_12]",
    "[REFERENCE_DOC_13]",
    "[REFERENCE_DOC_14]",
    "[REFERENCE_DOC_15]",
    "[REFERENCE_DOC_16]",
    "[REFERENCE_DOC_17]",
    "[REFERENCE_DOC_18]",
    "[REFERENCE_DOC_19]",
];

/// Those of `mistral_instruct_tokenizer_241114.model.v7` (and `.v7m1`).
const REFERENCE_DOCS_AND_REFS: [&str; 22] = {
    let mut all = ["[REF]"; 22];
    all[1] = "[/REF]";
    let mut i = 0;
    while i < REFERENCE_DOCS.len() {
        all[i + 2] = REFERENCE_DOCS[i];
        i += 1;
    }
    all
};

/// One SentencePiece version, loaded the first time it is asked for. The vocabulary is in the
/// binary, so one that does not load is a broken build: it panics.
fn load(
    cell: &'static OnceLock<SentencePiece>,
    user_defined: &'static [&'static str],
) -> &'static SentencePiece {
    cell.get_or_init(|| {
        let settings = TextSettings {
            add_dummy_prefix: true,
            user_defined,
        };
        SentencePiece::from_text(splintr::pretrained::MISTRAL_SPM_VOCAB, &settings)
            .unwrap_or_else(|e| panic!("the bundled Mistral SentencePiece vocabulary loads: {e}"))
    })
}

fn count_v1(text: &str) -> usize {
    static SP: OnceLock<SentencePiece> = OnceLock::new();
    load(&SP, &[]).count(text)
}

fn count_v3(text: &str) -> usize {
    static SP: OnceLock<SentencePiece> = OnceLock::new();
    load(&SP, &REFERENCE_DOCS).count(text)
}

fn count_v7(text: &str) -> usize {
    static SP: OnceLock<SentencePiece> = OnceLock::new();
    load(&SP, &REFERENCE_DOCS_AND_REFS).count(text)
}
