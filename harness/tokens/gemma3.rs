//! The Gemma 3 vocabulary, the offline stand-in for Gemini's tokenizer (Google states that
//! Gemini and Gemma share a tokenizer family; the providers' documentation), counted with
//! [`super::sentencepiece`]. It is embedded: the `splintr-vocab-gemma3` crate (reached through
//! `splintr`'s `vocab-gemma3` feature) ships Google's Gemma 3 `tokenizer.model` converted id for
//! id into text (262,144 pieces, their scores and types; MD5 of the source file
//! 00d2276cbec4474f6cf3df98fbc18cbb). The vocabulary keeps Google's licence, the Gemma Terms of
//! Use, whose use restrictions (section 3.2) pass on to whoever receives toolcost's binary;
//! docs/output.md says so. `$TOOLCOST_GEMMA3` points at a SentencePiece model file instead
//! (PyPI's `maxtext` 0.2.5, Apache-2.0, ships the same vocabulary as `tokenizer.gemma3`,
//! checked by its SHA-256); a test holds the two to the same ids.
//!
//! Every figure counted with it is `estimated:gemma3`: docs/notes/gemini.md and the
//! `claude-counts`-style report say how far it is from Gemini's recorded `countTokens`.

use super::sentencepiece::{SentencePiece, TextSettings};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The SHA-256 of `tokenizer.gemma3` in maxtext 0.2.5.
pub const SHA256: &str = "a96dfa1c296977bd225176202b305aeb29f3f49cc7d54b15bd31e998f91b9736";

/// Where toolcost looks for the vocabulary, from the repository root (the README's optional
/// step installs it there).
pub const DEFAULT_DIR: &str = "models/gemma3";

/// The one-line install, from the repository root.
pub const INSTALL: &str = "python3 -m pip install --no-deps --only-binary=:all: --ignore-requires-python --target models/gemma3 maxtext==0.2.5";

/// The file's place inside the installed package.
const IN_PACKAGE: [&str; 4] = ["maxtext", "assets", "tokenizers", "tokenizer.gemma3"];

/// The loaded vocabulary, or why it could not be loaded (said once, kept).
fn loaded() -> &'static std::result::Result<SentencePiece, String> {
    static SP: OnceLock<std::result::Result<SentencePiece, String>> = OnceLock::new();
    SP.get_or_init(|| load().map_err(|e| e.to_string()))
}

/// Whether the vocabulary is installed and sound; the error says how to install it.
pub fn ready() -> Result<()> {
    loaded()
        .as_ref()
        .map(|_| ())
        .map_err(|e| Error::input(e.clone()))
}

/// Tokens of a text. The vocabulary must be [`ready`]: commands that count with it check
/// first, so reaching this without it is a bug.
pub fn count(text: &str) -> usize {
    match loaded() {
        Ok(sp) => sp.count(text),
        Err(e) => panic!("the Gemma 3 vocabulary is not loaded: {e}"),
    }
}

fn load() -> Result<SentencePiece> {
    if std::env::var_os("TOOLCOST_GEMMA3").is_none_or(|v| v.is_empty()) {
        return embedded();
    }
    let path = locate()?;
    let bytes = crate::installed::read_checked(
        &path,
        64 << 20,
        SHA256,
        "maxtext 0.2.5's tokenizer.gemma3",
        INSTALL,
    )?;
    SentencePiece::from_model_proto(&bytes)
        .map_err(|e| Error::input(format!("{}: {e}", path.display())))
}

/// The embedded vocabulary.
pub fn embedded() -> Result<SentencePiece> {
    // Gemma 3's model file adds no dummy prefix, and the text form holds its user-defined
    // pieces.
    let settings = TextSettings {
        add_dummy_prefix: false,
        user_defined: &[],
    };
    SentencePiece::from_text(splintr::pretrained::GEMMA3_SPM_VOCAB, &settings)
        .map_err(|e| Error::input(format!("the embedded Gemma 3 vocabulary: {e}")))
}

/// A model file's vocabulary: `$TOOLCOST_GEMMA3` (the file, or a folder holding it or the
/// package), else [`DEFAULT_DIR`] under the working folder or the executable's.
pub fn locate() -> Result<PathBuf> {
    crate::installed::locate("TOOLCOST_GEMMA3", DEFAULT_DIR, in_place, missing)
}

fn in_place(p: &Path) -> Option<PathBuf> {
    let package: PathBuf = IN_PACKAGE.iter().collect();
    [p.to_path_buf(), p.join(IN_PACKAGE[3]), p.join(&package)]
        .into_iter()
        .find(|f| f.is_file())
}

fn missing(place: &str) -> Error {
    Error::input(format!(
        "Gemini counts need the Gemma 3 vocabulary (PyPI maxtext 0.2.5, Apache-2.0, a 14 MB download), \
         which is not installed at {place}; install it from the repository root with\n  {INSTALL}\n\
         or point TOOLCOST_GEMMA3 at its tokenizer.gemma3"
    ))
}
