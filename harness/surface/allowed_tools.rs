//! `allowed-tools`: every definition in `tools` from the first request, with the callable
//! subset named in `tool_choice: {"type": "allowed_tools", "mode": "auto", "tools": [...]}`:
//! the client's built-ins, `enable_tools` and the tools enabled so far. The model enables a
//! tool by name as on the name list; only `tool_choice` changes from round to round, never
//! `tools`.
//!
//! Rules (openai-python 3.57.0 `ToolChoiceAllowedParam`; OpenAI's prompt-caching guide, read
//! 2026-12-02: a cache hit needs identical tools). That narrowing through `tool_choice` keeps
//! the cached prefix is inferred from that rule, not stated by OpenAI; where `tool_choice` is
//! rendered is not published, and the mock takes it as outside the cached prefix and unbilled
//! (assumed). OpenAI's 128 tools per request (the providers' documentation) count here as on every
//! Responses request, so the surface fits catalogues of up to 125 tools beside the built-ins
//! and `enable_tools`. OpenAI Responses only: Chat Completions nests the choice differently;
//! Anthropic has no such choice.

use super::name_list::{Delivered, Delivery};
use crate::wire::Format;

pub const ALLOWED_TOOLS: Delivered = Delivered {
    name: "allowed-tools",
    about: "every definition in tools, the callable subset named in tool_choice allowed_tools, plus enable_tools (OpenAI Responses only)",
    colour: [255, 187, 120],
    delivery: Delivery::Allowed,
    only: Format::OpenaiResponses,
    mechanism: "tool_choice allowed_tools",
    headers: &[],
};
