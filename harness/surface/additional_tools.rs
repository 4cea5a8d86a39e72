//! `additional-tools`: the name list with enabled definitions delivered as OpenAI Responses
//! `additional_tools` input items (role `developer`) after each enabling result; `tools` holds
//! the client's built-ins and `enable_tools` and never changes.
//!
//! Rules (openai-python 3.57.0: `AdditionalTools` in `ResponseInputItemParam`, "a list of
//! additional tools made available at this item"; role `developer` only). OpenAI publishes no
//! rendering position or model list for the item: the mock bills its definitions where the item
//! appears, with the function walk, so the prefix before it stays cached (assumed). OpenAI
//! Responses only.

use super::name_list::{Delivered, Delivery};
use crate::wire::Format;

pub const ADDITIONAL_TOOLS: Delivered = Delivered {
    name: "additional-tools",
    about: "the name list, enabled definitions added as additional_tools input items (OpenAI Responses only)",
    colour: [0, 128, 128],
    delivery: Delivery::AdditionalTools,
    only: Format::OpenaiResponses,
    mechanism: "additional_tools items",
    headers: &[],
};
