//! `additional-tools`: the name list with enabled definitions delivered as OpenAI Responses
//! `additional_tools` input items (role `developer`) after each enabling result; `tools` holds
//! the client's built-ins and `enable_tools` and never changes.
//!
//! Rules (openai-python 3.57.0: `AdditionalTools` in `ResponseInputItemParam`, "a list of
//! additional tools made available at this item"; role `developer` only). OpenAI publishes no
//! rendering position or model list for the item: the mock bills its definitions where the item
//! appears, with the function walk, so the prefix before it stays cached (assumed). OpenAI
//! Responses only.

use super::name_list::{Delivery, Session};
use super::play::Player;
use super::{Built, Context, Endpoint, Surface};
use crate::resolve::Method;
use crate::wire::Format;

pub struct AdditionalTools;

impl Surface for AdditionalTools {
    fn name(&self) -> &'static str {
        "additional-tools"
    }
    fn about(&self) -> &'static str {
        "the name list, enabled definitions added as additional_tools input items (OpenAI Responses only)"
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
                "additional_tools items",
                format.name()
            )),
        }
    }
    fn headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    fn colour(&self) -> [u8; 3] {
        [0, 128, 128]
    }
    fn build(&self, ctx: &Context) -> Built {
        Session::delivering(ctx, Delivery::AdditionalTools).request(ctx, Vec::new())
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
        Box::new(Session::delivering(ctx, Delivery::AdditionalTools))
    }
}
