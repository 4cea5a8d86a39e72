//! The fixed rows every generated catalogue starts with (`NOW`, `EMAIL_SEND`, `AIG_LIST`,
//! `ORDER_GET`, `ECHO`, `SUM`), and the queries written for them by hand: the labelled query
//! sets and the driver's paraphrased tasks both read them here.

use super::{Row, Runner};
use serde_json::json;

/// The fixed rows, with the queries written for them by hand.
pub const QUERIES: &[(&str, &str, &str)] = &[
    (
        "NOW",
        "current date and time",
        "what does the clock say right now",
    ),
    ("EMAIL_SEND", "send an email", "mail a note to a colleague"),
    ("AIG_LIST", "list the AI gateways", "show my LLM proxies"),
    (
        "ORDER_GET",
        "fetch one order by id",
        "look up a purchase by its number",
    ),
    (
        "ECHO",
        "return the arguments unchanged",
        "repeat back what I say",
    ),
    ("SUM", "add a list of numbers", "total up these amounts"),
];

/// The hand-written (lexical, paraphrase) queries of a fixed row.
pub fn queries(key: &str) -> Option<(&'static str, &'static str)> {
    QUERIES
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, l, p)| (*l, *p))
}

/// The rows every profile contains, in this order, for the scenarios' tasks.
pub fn fixed_row(i: usize) -> Option<Row> {
    let (key, runner, target, auth, content, category, schema) = match i {
        0 => (
            "NOW",
            Runner::Fn,
            "fn:now",
            None,
            "# WHAT: Return the current date and time in UTC and in a named time zone\n# WHEN_TO_USE: the user asks what time or date it is\n# ARGS: timezone\n# EX: [NOW]{}[/NOW]\nfn:now\n",
            "clock",
            json!({"type": "object", "properties": {"timezone": {"type": "string", "description": "IANA time zone name, such as Europe/Berlin; UTC when omitted"}}}),
        ),
        1 => (
            "EMAIL_SEND",
            Runner::Fn,
            "fn:email_send",
            Some("bearer:RESEND_API_KEY"),
            "# WHAT: Send one email from the workspace address to one or more recipients\n# WHEN_TO_USE: the user asks you to send, mail or email someone a message\n# ARGS: to, subject, body\n# EX: [EMAIL_SEND]{\"to\":[\"ops@example.com\"],\"subject\":\"Hello\",\"body\":\"Hi\"}[/EMAIL_SEND]\nfn:email_send\n",
            "mail",
            json!({"type": "object", "properties": {
                "to": {"type": "array", "items": {"type": "string", "format": "email"}, "description": "Recipient addresses"},
                "subject": {"type": "string", "description": "Subject line"},
                "body": {"type": "string", "description": "Plain-text body"}
            }, "required": ["to", "subject", "body"]}),
        ),
        2 => (
            "AIG_LIST",
            Runner::Fn,
            "fn:aig_list",
            Some("bearer:CLOUDFLARE_API_TOKEN"),
            "# WHAT: List AI Gateways on the account\n# WHEN_TO_USE: you need to list the AI gateways of an account\n# ARGS: account_id\n# EX: [AIG_LIST]{}[/AIG_LIST]\nfn:aig_list\n",
            "ai",
            json!({"type": "object", "properties": {"account_id": {"type": "string", "description": "Cloudflare account identifier"}}}),
        ),
        3 => (
            "ORDER_GET",
            Runner::Fn,
            "fn:order_get",
            Some("bearer:SHOP_API_KEY"),
            "# WHAT: Fetch one order by id with its line items, currency and total in cents\n# WHEN_TO_USE: you need the details or the total of a known order\n# ARGS: order_id\n# EX: [ORDER_GET]{\"order_id\":\"ord_1001\"}[/ORDER_GET]\nfn:order_get\n",
            "commerce",
            json!({"type": "object", "properties": {"order_id": {"type": "string", "description": "Order identifier, such as ord_1001"}}, "required": ["order_id"]}),
        ),
        4 => (
            "ECHO",
            Runner::Fn,
            "fn:echo",
            None,
            "# WHAT: Return the arguments it was given, unchanged\n# WHEN_TO_USE: you want to check that dispatch works end to end\n# ARGS: message\n# EX: [ECHO]{\"message\":\"hello\"}[/ECHO]\nfn:echo\n",
            "debug",
            json!({"type": "object", "properties": {"message": {"type": "string", "description": "Any text"}}}),
        ),
        5 => (
            "SUM",
            Runner::Fn,
            "fn:sum",
            None,
            "# WHAT: Add a list of numbers and return the total\n# WHEN_TO_USE: you need the sum of several amounts\n# ARGS: numbers\n# EX: [SUM]{\"numbers\":[1,2,3]}[/SUM]\nfn:sum\n",
            "math",
            json!({"type": "object", "properties": {"numbers": {"type": "array", "items": {"type": "number"}, "description": "The numbers to add"}}, "required": ["numbers"]}),
        ),
        _ => return None,
    };
    Some(Row {
        key: key.into(),
        runner,
        target: Some(target.into()),
        auth: auth.map(String::from),
        content: content.into(),
        category: Some(category.into()),
        planner_rank: 10,
        enabled: true,
        planner_visible: true,
        input_schema: Some(schema.into()),
    })
}
