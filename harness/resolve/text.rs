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
        match chunk.is_ascii() {
            true => ascii_words(chunk, &mut buf, &mut f),
            false => char_words(chunk, &mut buf, &mut chars, &mut f),
        }
    }
}

/// Where a word ends inside a run of letters and digits, between `a` and `b` (`next`: the
/// character after `b`): lower to upper (`getPull`), the last capital of an acronym before a
/// capitalised word (`APIKey`), and letters to digits and back.
fn boundary(a: char, b: char, next: Option<char>) -> bool {
    let next_lower = next.is_some_and(char::is_lowercase);
    (a.is_lowercase() && b.is_uppercase())
        || (a.is_uppercase() && b.is_uppercase() && next_lower)
        || (a.is_alphabetic() != b.is_alphabetic())
}

/// The words of a run of letters and digits that is all ASCII: [`boundary`] on its bytes,
/// without decoding it into characters (most catalogue text takes this way).
fn ascii_words(chunk: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
    let b = chunk.as_bytes();
    let mut emit = |from: usize, to: usize| {
        buf.clear();
        buf.push_str(&chunk[from..to]);
        buf.make_ascii_lowercase();
        f(buf);
    };
    let mut start = 0;
    for i in 1..b.len() {
        if boundary(
            b[i - 1].into(),
            b[i].into(),
            b.get(i + 1).map(|&c| c.into()),
        ) {
            emit(start, i);
            start = i;
        }
    }
    if start < b.len() {
        emit(start, b.len());
    }
}

/// The words of any run of letters and digits, character by character.
fn char_words(chunk: &str, buf: &mut String, chars: &mut Vec<char>, f: &mut impl FnMut(&str)) {
    if chunk.is_empty() {
        return;
    }
    chars.clear();
    chars.extend(chunk.chars());
    let mut start = 0;
    let mut emit = |from: usize, to: usize| {
        buf.clear();
        buf.extend(&chars[from..to]);
        if buf.is_ascii() {
            buf.make_ascii_lowercase();
            f(buf);
        } else {
            // Whole-string lower-casing: a final sigma is lowered as at the end of a word.
            f(&buf.to_lowercase());
        }
    };
    for i in 1..chars.len() {
        if boundary(chars[i - 1], chars[i], chars.get(i + 1).copied()) {
            emit(start, i);
            start = i;
        }
    }
    if start < chars.len() {
        emit(start, chars.len());
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

/// The terms of a query ([`terms`]). A query's words are looked up among those remembered
/// but never added: whoever can send a query cannot choose what the memo holds.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_term(text, false, |t| out.push(t.to_string()));
    out
}

/// Word -> its index term (`None`: a stop word), for the words of catalogue text. Hashed with
/// foldhash, not SipHash: starting a server on 85,600 rows spent about a tenth of its time in
/// SipHash, most of it here. foldhash does not claim to resist chosen collisions, so only
/// catalogue text is remembered ([`query_terms`] adds nothing), and the table is emptied at
/// its bound.
type Memo = std::collections::HashMap<String, Option<String>, foldhash::fast::RandomState>;

thread_local! {
    /// This thread's [`Memo`].
    static TERMS: std::cell::RefCell<Memo> = Default::default();
}

/// Call `f` with each index term of `text` ([`terms`]), in order, without allocating each.
pub fn for_each_term(text: &str, f: impl FnMut(&str)) {
    each_term(text, true, f)
}

/// [`for_each_term`]; `remember`: add the words not yet remembered.
fn each_term(text: &str, remember: bool, mut f: impl FnMut(&str)) {
    // A catalogue repeats its words many times, so each word's term is remembered (per thread,
    // and forgotten past a bound so memory stays flat whatever text comes in). Only short
    // words: they are the ones that repeat.
    const MAX_REMEMBERED: usize = 1 << 16;
    const MAX_WORD: usize = 32;
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
            if !remember || w.len() > MAX_WORD {
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
        assert_eq!(
            query_terms("Listing the repositories"),
            ["list", "repositori"]
        );
    }

    /// A query's words are not remembered; catalogue text's are.
    #[test]
    fn queries_leave_the_term_memo_as_it_was() {
        let held = |w: &str| TERMS.with(|m| m.borrow().contains_key(w));
        assert_eq!(query_terms("zqxvoutlandish"), ["zqxvoutlandish"]);
        assert!(!held("zqxvoutlandish"));
        assert_eq!(terms("zqxvoutlandish"), ["zqxvoutlandish"]);
        assert!(held("zqxvoutlandish"));
    }

    /// ASCII runs split on their bytes exactly as any run splits on its characters.
    #[test]
    fn ascii_runs_split_as_characters_do() {
        let pieces = [
            "a", "b", "Z", "Q", "1", "22", "ab", "AB", "Ab", "aB", "x9", "9x",
        ];
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..20_000 {
            let chunk: String = (0..rng.below(8)).map(|_| *rng.pick(&pieces)).collect();
            let (mut bytes, mut chars) = (Vec::new(), Vec::new());
            ascii_words(&chunk, &mut String::new(), &mut |w| {
                bytes.push(w.to_string())
            });
            char_words(&chunk, &mut String::new(), &mut Vec::new(), &mut |w| {
                chars.push(w.to_string())
            });
            assert_eq!(bytes, chars, "{chunk:?}");
        }
    }
}
