//! Llama 4's vocabulary (Scout, Maverick): 200,000 byte-pair ranks in tiktoken's format with
//! o200k's pretokenizer, as Meta's `llama-models` package (PyPI, 0.3.0) ships it in
//! `llama_models/llama4/tokenizer.model`. It is not embedded: the file is a Llama Material under
//! the Llama 4 Community License, whose terms pass on with any copy, so the user installs it
//! (one pip command, the file only; no Python code is run) and toolcost reads it there, checked
//! by its SHA-256. Without it a Llama 4 model is counted with o200k, which shares its
//! pretokenizer, and its card says so.
//!
//! A text is counted as tiktoken encodes it whole with these ranks, as the serving stacks'
//! tokenizers do; `llama-models`' own `encode` also cuts a text every 400,000 characters and
//! inside runs of over 25,000 characters without (or with only) whitespace, which moves a count
//! by a token at such a cut.

use super::bpe::Bpe;
use super::pretoken::Pattern;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The SHA-256 of `llama_models/llama4/tokenizer.model` in llama-models 0.3.0.
pub const SHA256: &str = "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed";

/// Where toolcost looks for it, from the repository root.
pub const DEFAULT_DIR: &str = "models/llama4";

/// The one-line install, from the repository root.
pub const INSTALL: &str =
    "python3 -m pip install --no-deps --target models/llama4 llama-models==0.3.0";

/// The file's place inside the installed package.
const IN_PACKAGE: [&str; 3] = ["llama_models", "llama4", "tokenizer.model"];

fn loaded() -> &'static std::result::Result<Bpe, String> {
    static BPE: OnceLock<std::result::Result<Bpe, String>> = OnceLock::new();
    BPE.get_or_init(|| load().map_err(|e| e.to_string()))
}

/// Whether the vocabulary is installed and sound; the error says how to install it.
pub fn ready() -> Result<()> {
    loaded()
        .as_ref()
        .map(|_| ())
        .map_err(|e| Error::input(e.clone()))
}

/// Whether a Llama 4 card counts with this vocabulary: wherever a file is found (the default
/// folder, or the one `TOOLCOST_LLAMA4` names). A file found but wrong is then an error that
/// says how to reinstall it, not a quiet fall back to o200k.
/// Decided once per process: a card is derived many times, and where the file lies does not
/// change while toolcost runs.
pub fn chosen() -> bool {
    static CHOSEN: OnceLock<bool> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        std::env::var_os("TOOLCOST_LLAMA4").is_some_and(|v| !v.is_empty()) || locate().is_ok()
    })
}

/// The vocabulary. It must be [`ready`]: commands that count with it check first, so reaching
/// this without it is a bug.
pub fn bpe() -> &'static Bpe {
    match loaded() {
        Ok(b) => b,
        Err(e) => panic!("the Llama 4 vocabulary is not loaded: {e}"),
    }
}

fn load() -> Result<Bpe> {
    let path = locate()?;
    let bytes = crate::installed::read_checked(
        &path,
        16 << 20,
        SHA256,
        "llama-models 0.3.0's Llama 4 tokenizer.model",
        INSTALL,
    )?;
    Bpe::from_tiktoken(&bytes, Pattern::O200k)
        .map_err(|e| Error::input(format!("{}: {e}", path.display())))
}

/// The model file: `$TOOLCOST_LLAMA4` (the file, or a folder holding it or the package), else
/// [`DEFAULT_DIR`] under the working folder or the executable's.
pub fn locate() -> Result<PathBuf> {
    crate::installed::locate("TOOLCOST_LLAMA4", DEFAULT_DIR, in_place, missing)
}

fn in_place(p: &Path) -> Option<PathBuf> {
    let package: PathBuf = IN_PACKAGE.iter().collect();
    [p.to_path_buf(), p.join(IN_PACKAGE[2]), p.join(&package)]
        .into_iter()
        .find(|f| f.is_file())
}

fn missing(place: &str) -> Error {
    Error::input(format!(
        "Llama 4 counts need its vocabulary (PyPI llama-models 0.3.0, under the Llama 4 Community License, a 7 MB download), \
         which is not installed at {place}; install it from the repository root with\n  {INSTALL}\n\
         or point TOOLCOST_LLAMA4 at its tokenizer.model"
    ))
}
