//! The tasks a scenario plays: a user message, the key a competent model needs, the calls it
//! makes, and the words it searches with (and the words it tries when the first search misses).

use serde_json::{json, Value};

pub const NAMES: [&str; 5] = ["turn", "now", "email", "aig", "orders"];

#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    pub prompt: String,
    /// The row the task needs; `None` for a bare turn.
    pub key: Option<&'static str>,
    /// Arguments of each call, in order.
    pub calls: Vec<Value>,
    pub query: &'static str,
    pub reformulation: &'static str,
}

/// A task by name. With `paraphrase`, the first search uses the labelled query set's
/// paraphrase for the task's row and the task's own words become the reformulation.
pub fn task(name: &str, orders: usize, paraphrase: bool) -> Task {
    let t = |prompt: &str, key: Option<&'static str>, calls, query, reformulation| {
        let para = key
            .filter(|_| paraphrase)
            .and_then(crate::catalogue::fixed::queries);
        let (query, reformulation) = match para {
            Some((_, p)) => (p, query),
            None => (query, reformulation),
        };
        Task {
            name: name.to_string(),
            prompt: prompt.to_string(),
            key,
            calls,
            query,
            reformulation,
        }
    };
    match name {
        "now" => t(
            "what time is it",
            Some("NOW"),
            vec![json!({})],
            "current time",
            "now clock date time zone",
        ),
        "email" => t(
            "send an email to ops@example.com saying the deploy finished",
            Some("EMAIL_SEND"),
            vec![
                json!({"to": ["ops@example.com"], "subject": "Deploy finished", "body": "The deploy finished."}),
            ],
            "send an email",
            "email send message recipients",
        ),
        "aig" => t(
            "list the AI gateways on account acct_demo",
            Some("AIG_LIST"),
            vec![json!({"account_id": "acct_demo"})],
            "list AI gateways",
            "aig gateway list account",
        ),
        "orders" => t(
            &format!("add up the totals of orders ord_1 to ord_{orders}"),
            Some("ORDER_GET"),
            (1..=orders)
                .map(|i| json!({"order_id": format!("ord_{i}")}))
                .collect(),
            "order total",
            "fetch one order by id",
        ),
        _ => t("what time is it", None, Vec::new(), "", ""),
    }
}
