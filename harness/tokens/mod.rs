//! Tokenizers: a text to its tokens, for every family toolcost counts with (OpenAI's, Claude's,
//! Gemma's and the open-weight families'), behind one registry ([`Tokenizer`]). What surrounds
//! a text in a request (tools blocks, frames, chat templates, caching) is
//! the `billing` module's, which counts with these.

mod bpe;
pub mod claude;
pub mod claude_exact;
pub mod families;
pub mod gemma3;
pub mod llama4;
mod pretoken;
pub mod sentencepiece;
mod tokenizer;

pub(crate) use tokenizer::counting_whole_now;
pub use tokenizer::{clean_cuts, counting_whole, on_cores, Part, Tokenizer};

/// A seed drawn once per process for the hashes that stay inside it (the token-count memo's
/// keys, the prompt cache's digests): a text cannot be written to aim at them without it.
pub(crate) fn process_seed() -> u64 {
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SEED.get_or_init(|| {
        use std::hash::BuildHasher;
        std::collections::hash_map::RandomState::new().hash_one(0u64)
    })
}
