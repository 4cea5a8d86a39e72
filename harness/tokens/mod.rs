//! Token counting: the tokenizers (o200k, cl100k and the calibrated Kimi estimator) and the
//! provider render models that turn a request body into billed input tokens.

pub mod cache;
mod pretoken;
mod prompt;
pub mod render;
mod tokenizer;

pub use cache::{CacheRule, PromptCache};
pub use render::{billed_input, billed_with, Billing, RenderModel, ToolsBilling};
pub use tokenizer::{counting_whole, Part, Tokenizer, KIMI_PER_O200K};
