//! The fixed rows every generated catalogue starts with (`NOW`, `EMAIL_SEND`, `AIG_LIST`,
//! `ORDER_GET`, `ECHO`, `SUM`), and the queries written for them by hand: the labelled query
//! sets and the driver's paraphrased tasks both read them here.

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
