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
//! (assumed). OpenAI's 128 tools per request (FACTS section 3) count here as on every
//! Responses request, so the surface fits catalogues of up to 125 tools beside the built-ins
//! and `enable_tools`. OpenAI Responses only: Chat Completions nests the choice differently;
//! Anthropic has no such choice.

use super::name_list::{Delivery, Session};
use super::play::Player;
use super::{Built, Context, Endpoint, Surface};
use crate::resolve::Method;
use crate::wire::Format;

pub struct AllowedTools;

impl Surface for AllowedTools {
    fn name(&self) -> &'static str {
        "allowed-tools"
    }
    fn about(&self) -> &'static str {
        "every definition in tools, the callable subset named in tool_choice allowed_tools, plus enable_tools (OpenAI Responses only)"
    }
    fn in_all(&self) -> bool {
        true
    }
    fn lacks(&self, format: Format) -> Option<String> {
        match format {
            Format::OpenaiResponses => None,
            Format::AnthropicMessages | Format::OpenaiChat => Some(format!(
                "{}: OpenAI Responses only ({}); {} has no such mechanism",
                self.name(),
                "tool_choice allowed_tools",
                format.name()
            )),
        }
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    fn colour(&self) -> [u8; 3] {
        [255, 187, 120]
    }
    fn build(&self, ctx: &Context) -> Built {
        Session::delivering(ctx, Delivery::Allowed).request(ctx, Vec::new())
    }
    fn endpoint(&self) -> Option<Endpoint> {
        None
    }
    fn calls_at(&self) -> Option<&'static str> {
        // An enabled name is the per-row tool: its calls go to the per-row endpoint.
        Some(super::per_row_mcp::ENDPOINT.path)
    }
    fn discovery(&self) -> Option<(Method, usize)> {
        None
    }
    fn player(&self, ctx: &Context) -> Box<dyn Player> {
        Box::new(Session::delivering(ctx, Delivery::Allowed))
    }
}
