//! `name-list-native`: the name list with enabled definitions delivered the way Anthropic's
//! mid-conversation tool changes do it. `tools` holds the client's built-ins and
//! `enable_tools` and never changes; each enabling result is followed by a `role: "system"`
//! message of `tool_addition` blocks carrying the enabled definitions by value, so the cached
//! prefix before it survives and the definitions bill from where they appear.
//!
//! Rules (Anthropic's docs, "Mid-conversation system messages and tool changes", read
//! 2026-12-02 through the stored docs corpus; anthropic-sdk-python 2.14.0 beta types): the
//! blocks go only in a system message, which must follow a user turn (one of tool results
//! counts) and precede an assistant turn or end the conversation; an inline `tool_definition`
//! needs the `inline-tools-2026-09-15` beta header (the SDK's tool runner `add_tools` sends
//! exactly this); a `tool_reference` must name a declared tool. A `tools` array with one tool
//! that is not deferred (here `enable_tools`) keeps the first addition from changing the start
//! of the prompt. Anthropic Messages only.

use super::name_list::{Delivery, Session};
use super::play::Player;
use super::{Built, Context, Endpoint, Surface};
use crate::resolve::Method;
use crate::wire::Format;

pub struct NameListNative;

impl Surface for NameListNative {
    fn name(&self) -> &'static str {
        "name-list-native"
    }
    fn about(&self) -> &'static str {
        "the name list, enabled definitions added as tool_addition blocks in a system message (Anthropic Messages only)"
    }
    fn in_all(&self) -> bool {
        true
    }
    fn lacks(&self, format: Format) -> Option<String> {
        match format {
            Format::AnthropicMessages => None,
            Format::OpenaiChat | Format::OpenaiResponses => Some(format!(
                "{}: Anthropic Messages only (tool_addition blocks); {} has no such mechanism",
                self.name(),
                format.name()
            )),
        }
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        // A tool_addition that carries its definition by value needs this beta.
        &[("anthropic-beta", "inline-tools-2026-09-15")]
    }
    fn colour(&self) -> [u8; 3] {
        [197, 176, 213]
    }
    fn build(&self, ctx: &Context) -> Built {
        Session::delivering(ctx, Delivery::ToolAddition).request(ctx, Vec::new())
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
        Box::new(Session::delivering(ctx, Delivery::ToolAddition))
    }
}
