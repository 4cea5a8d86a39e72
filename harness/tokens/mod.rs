//! Token counting: the tokenizers (OpenAI's, Claude's, Gemma's and the open-weight families') and
//! the provider render models that turn a request body into billed input tokens.

mod bpe;
pub mod cache;
pub mod claude;
pub mod claude_exact;
pub mod families;
pub mod gemma3;
mod pretoken;
mod prompt;
pub mod render;
pub mod sentencepiece;
mod tokenizer;

pub use cache::{CacheRule, PromptCache};
pub use render::{
    billed_input, billed_with, definition_tokens, Billing, RenderModel, ToolsBilling,
};
pub use tokenizer::{clean_cuts, counting_whole, Part, Tokenizer};

/// A seed drawn once per process for the hashes that stay inside it (the token-count memo's
/// keys, the prompt cache's digests): a text cannot be written to aim at them without it.
fn process_seed() -> u64 {
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SEED.get_or_init(|| {
        use std::hash::BuildHasher;
        std::collections::hash_map::RandomState::new().hash_one(0u64)
    })
}
