//! What a provider bills for a request, in tokens: the render models that turn a request body
//! into billed input tokens (each provider's tools block, message frames and tool prompts, the
//! open-weight families' chat templates: [`render`]), and the prompt cache that splits them
//! into cache reads, writes and uncached input ([`cache`]). The tokenizers they count with are
//! [`crate::tokens`]'s; nothing there looks back here.

pub mod cache;
mod prompt;
pub mod render;

pub use cache::{CacheRule, PromptCache};
pub use render::{
    billed_input, billed_with, definition_tokens, Billing, RenderModel, ToolsBilling,
};

/// The process's seed for the hashes that stay inside it (the prompt cache's digests, a shared
/// definition's memo key).
fn process_seed() -> u64 {
    crate::tokens::process_seed()
}
