//! The tokenizer the better resolvers share (and the query-set check uses): identifiers split
//! into words (snake, camel, kebab, dotted), lower case, the Snowball English stop words
//! dropped, every word reduced by the Snowball English stemmer (`rust-stemmers`).

use rust_stemmers::{Algorithm, Stemmer};
use std::sync::OnceLock;

/// The Snowball English stop-word list (snowballstem.org, `english/stop.txt`), plus "please"
/// and "can", which users put in front of requests.
pub const STOP: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "would",
    "should",
    "could",
    "ought",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "please",
    "can",
];

fn stemmer() -> &'static Stemmer {
    static S: OnceLock<Stemmer> = OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Words of a text or an identifier, lower case: `getPullRequest`, `get_pull_request`,
/// `get-pull-request` and `get.pull.request` all give `get pull request`; `APIKey` gives
/// `api key`.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = chunk.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (a, b) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = (a.is_lowercase() && b.is_uppercase())
                || (a.is_uppercase() && b.is_uppercase() && next_lower)
                || (a.is_alphabetic() != b.is_alphabetic());
            if boundary {
                out.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        if start < chars.len() {
            out.push(chars[start..].iter().collect::<String>().to_lowercase());
        }
    }
    out
}

/// Whether a lower-case word is a stop word.
pub fn is_stop(word: &str) -> bool {
    STOP.contains(&word)
}

/// The Snowball English stem of a lower-case word.
pub fn stem(word: &str) -> String {
    stemmer().stem(word).into_owned()
}

/// Index terms: words, stop words dropped, stemmed.
pub fn terms(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !is_stop(w))
        .map(|w| stem(&w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_into_words() {
        for id in [
            "getPullRequest",
            "get_pull_request",
            "get-pull-request",
            "get.pull.request",
            "GetPullRequest",
        ] {
            assert_eq!(words(id), ["get", "pull", "request"], "{id}");
        }
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(
            words("TwilioApiV2010--ListSipIpAddress"),
            ["twilio", "api", "v", "2010", "list", "sip", "ip", "address"]
        );
        assert_eq!(terms("Listing the repositories"), ["list", "repositori"]);
    }
}
