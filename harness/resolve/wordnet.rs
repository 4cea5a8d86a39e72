//! Query expansion from WordNet 3.0 (Princeton University; the WordNet 3.0 licence, a
//! permissive BSD-style licence, is in `fixtures/wordnet/LICENSE`), read from the database
//! that Debian's `wordnet-base` package ships and reduced by `fixtures/wordnet/build.py` to
//! one line per common lemma: its synonyms in its three most frequent senses and the direct
//! hypernyms of the first. Nothing here comes from the generator's word lists.

use super::text::{is_stop, stem};
use std::collections::HashMap;
use std::sync::OnceLock;

const TABLE: &str = include_str!("../../fixtures/wordnet/synonyms.txt");

/// Stem -> stems of its WordNet neighbours (itself excluded).
fn table() -> &'static HashMap<String, Vec<String>> {
    static T: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    T.get_or_init(|| {
        let mut t: HashMap<String, Vec<String>> = HashMap::new();
        for line in TABLE.lines() {
            let mut it = line.split(' ');
            let Some(lemma) = it.next() else { continue };
            if is_stop(lemma) {
                continue;
            }
            let key = stem(lemma);
            let entry = t.entry(key.clone()).or_default();
            for s in it.filter(|s| !is_stop(s)).map(stem) {
                if s != key && !entry.contains(&s) {
                    entry.push(s);
                }
            }
        }
        t
    })
}

/// The stems WordNet relates to a stemmed query term.
pub fn related(term: &str) -> &'static [String] {
    table().get(term).map(Vec::as_slice).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_relates_common_words() {
        assert!(super::related("phone").iter().any(|s| s == "telephon"));
        assert!(super::related("zzzz").is_empty());
    }
}
