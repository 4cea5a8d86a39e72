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
    for_each_word(text, |w| out.push(w.to_string()));
    out
}

/// Call `f` with each word of `text`, lower case (see [`words`]), reusing one buffer.
fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::new();
    let mut chars: Vec<char> = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        if chunk.is_empty() {
            continue;
        }
        chars.clear();
        chars.extend(chunk.chars());
        let mut start = 0;
        let mut emit = |from: usize, to: usize| {
            buf.clear();
            buf.extend(&chars[from..to]);
            if buf.is_ascii() {
                buf.make_ascii_lowercase();
                f(&buf);
            } else {
                // Whole-string lower-casing: a final sigma is lowered as at the end of a word.
                f(&buf.to_lowercase());
            }
        };
        for i in 1..chars.len() {
            let (a, b) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = (a.is_lowercase() && b.is_uppercase())
                || (a.is_uppercase() && b.is_uppercase() && next_lower)
                || (a.is_alphabetic() != b.is_alphabetic());
            if boundary {
                emit(start, i);
                start = i;
            }
        }
        if start < chars.len() {
            emit(start, chars.len());
        }
    }
}

/// Whether a lower-case word is a stop word.
pub fn is_stop(word: &str) -> bool {
    static SET: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| STOP.iter().copied().collect())
        .contains(word)
}

/// The Snowball English stem of a lower-case word.
pub fn stem(word: &str) -> String {
    stemmer().stem(word).into_owned()
}

/// Index terms: words, stop words dropped, stemmed.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_string()));
    out
}

/// Call `f` with each index term of `text` ([`terms`]), in order, without allocating each.
pub fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    // A catalogue repeats its words many times, so each word's term is remembered (per thread,
    // and forgotten past a bound so memory stays flat whatever text comes in). Only short
    // words: they are the ones that repeat, and a query could otherwise park megabytes of one
    // long made-up word in every worker's table.
    const MAX_REMEMBERED: usize = 1 << 16;
    const MAX_WORD: usize = 32;
    thread_local! {
        static TERMS: std::cell::RefCell<std::collections::HashMap<String, Option<String>>> =
            Default::default();
    }
    TERMS.with(|memo| {
        let mut memo = memo.borrow_mut();
        for_each_word(text, |w| {
            if let Some(t) = memo.get(w) {
                if let Some(t) = t {
                    f(t);
                }
                return;
            }
            let t = (!is_stop(w)).then(|| stem(w));
            if let Some(t) = &t {
                f(t);
            }
            if w.len() > MAX_WORD {
                return;
            }
            if memo.len() >= MAX_REMEMBERED {
                memo.clear();
            }
            memo.insert(w.to_string(), t);
        });
    });
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
