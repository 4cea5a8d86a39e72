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

use super::name_list::{Delivered, Delivery};
use crate::wire::Format;

pub const NAME_LIST_NATIVE: Delivered = Delivered {
    name: "name-list-native",
    about: "the name list, enabled definitions added as tool_addition blocks in a system message (Anthropic Messages only)",
    colour: [197, 176, 213],
    delivery: Delivery::ToolAddition,
    only: Format::AnthropicMessages,
    mechanism: "tool_addition blocks",
    // A tool_addition that carries its definition by value needs this beta.
    headers: &[("anthropic-beta", "inline-tools-2026-09-15")],
};
