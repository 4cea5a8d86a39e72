//! The uncased BERT tokenizer the encoder was trained with: clean the text, pad CJK ideographs,
//! strip accents, lower-case, split on white space and punctuation, then cut each word into the
//! longest vocabulary pieces from the left (continuations carry `##`), `[UNK]` for a word that
//! cannot be cut or is longer than 100 characters.
//!
//! Unicode categories are approximated where std has no table: controls are `Cc`, the format
//! characters (`Cf`) of the Latin, Arabic, Syriac, Mongolian and general blocks, tags and
//! private use; punctuation (`P*`) is listed by block (Latin-1, Greek, Armenian, Hebrew,
//! Arabic, Devanagari, Thai, general, supplemental, brackets, CJK, forms, full-width) and may
//! miss rarer scripts' marks; accents are stripped as every combining mark (`M*`, where the
//! reference strips `Mn` only, which differs on spacing vowel signs of Indic scripts).
//! `tests/embed.rs` checks the ids against the reference tokenizer.

use crate::error::{Error, Result};
use std::collections::HashMap;
use unicode_normalization::{char::is_combining_mark, UnicodeNormalization};

/// A word longer than this many characters is one `[UNK]`.
const MAX_WORD_CHARS: usize = 100;

pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    pub cls: u32,
    pub sep: u32,
}

impl WordPiece {
    /// From `vocab.txt`: one piece per line, its id the line number.
    pub fn from_vocab(text: &str, origin: &str) -> Result<WordPiece> {
        let vocab: HashMap<String, u32> = text
            .lines()
            .enumerate()
            .map(|(i, l)| (l.to_string(), i as u32))
            .collect();
        // A piece listed twice keeps its last line's id; ids are line numbers either way.
        let lines = text.lines().count();
        let id = |t: &str| {
            vocab.get(t).copied().ok_or_else(|| {
                Error::input(format!(
                    "{origin}: the vocabulary lacks the special token {t}"
                ))
            })
        };
        if lines > super::minilm::VOCAB {
            return Err(Error::input(format!(
                "{origin}: {lines} pieces, more than the model's {} embeddings",
                super::minilm::VOCAB
            )));
        }
        Ok(WordPiece {
            unk: id("[UNK]")?,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            vocab,
        })
    }

    /// The ids of `text` between `[CLS]` and `[SEP]`, at most `max` in all.
    pub fn encode(&self, text: &str, max: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        let room = max.saturating_sub(2);
        'words: for word in words(text) {
            for id in self.pieces(&word) {
                if ids.len() > room {
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        ids
    }

    fn pieces(&self, word: &str) -> Vec<u32> {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_WORD_CHARS {
            return vec![self.unk];
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut key = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while end > start {
                let from = chars[start].0;
                let to = chars.get(end).map_or(word.len(), |c| c.0);
                key.clear();
                if start > 0 {
                    key.push_str("##");
                }
                key.push_str(&word[from..to]);
                if let Some(&id) = self.vocab.get(&key) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => out.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        out
    }
}

/// The normalised words and punctuation marks of `text`, in order.
fn words(text: &str) -> Vec<String> {
    let mut clean = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if c.is_whitespace() {
            clean.push(' ');
        } else if is_cjk(c) {
            clean.push(' ');
            clean.push(c);
            clean.push(' ');
        } else {
            clean.push(c);
        }
    }
    let folded: String = clean
        .nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect();
    let mut out = Vec::new();
    for chunk in folded.split_whitespace() {
        let mut word = String::new();
        for c in chunk.chars() {
            if is_punctuation(c) {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                out.push(c.to_string());
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    c.is_control()
        || matches!(c, '\u{ad}' | '\u{600}'..='\u{605}' | '\u{61c}' | '\u{6dd}' | '\u{70f}'
            | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}' | '\u{e000}'..='\u{f8ff}' | '\u{e0001}'..='\u{e007f}'
            | '\u{f0000}'..='\u{10ffff}')
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c as u32, 0xA1 | 0xA7 | 0xAB | 0xB6 | 0xB7 | 0xBB | 0xBF | 0x37E | 0x387
            | 0x55A..=0x55F | 0x589 | 0x58A | 0x5BE | 0x5C0 | 0x5C3 | 0x5C6 | 0x5F3 | 0x5F4
            | 0x609 | 0x60A | 0x60C | 0x60D | 0x61B | 0x61D..=0x61F | 0x66A..=0x66D | 0x6D4
            | 0x964 | 0x965 | 0x970 | 0xE4F | 0xE5A | 0xE5B | 0x2010..=0x2027
            | 0x2030..=0x2043 | 0x2045..=0x2051 | 0x2053..=0x205E | 0x207D | 0x207E | 0x208D
            | 0x208E | 0x2308..=0x230B | 0x2329 | 0x232A | 0x2768..=0x2775 | 0x27C5 | 0x27C6
            | 0x27E6..=0x27EF | 0x2983..=0x2998 | 0x29D8..=0x29DB | 0x29FC | 0x29FD
            | 0x2E00..=0x2E2E | 0x2E30..=0x2E4F | 0x3001..=0x3003 | 0x3008..=0x3011
            | 0x3014..=0x301F | 0x3030 | 0x303D | 0x30A0 | 0x30FB | 0xFE10..=0xFE19
            | 0xFE30..=0xFE52 | 0xFE54..=0xFE61 | 0xFE63 | 0xFE68 | 0xFE6A | 0xFE6B
            | 0xFF01..=0xFF03 | 0xFF05..=0xFF0A | 0xFF0C..=0xFF0F | 0xFF1A | 0xFF1B | 0xFF1F
            | 0xFF20 | 0xFF3B..=0xFF3D | 0xFF3F | 0xFF5B | 0xFF5D | 0xFF5F..=0xFF65)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let vocab =
            "[PAD]\n[UNK]\n[CLS]\n[SEP]\nsend\nan\nemail\n##s\nun\n##aff\n##able\n,\n!\ncafe\n中";
        WordPiece::from_vocab(vocab, "test").unwrap()
    }

    #[test]
    fn cuts_words_into_the_longest_pieces_and_marks_the_rest_unknown() {
        let wp = tiny();
        assert_eq!(wp.encode("Send an EMAILS!", 64), vec![2, 4, 5, 6, 7, 12, 3]);
        assert_eq!(wp.encode("unaffable, zzz", 64), vec![2, 8, 9, 10, 11, 1, 3]);
        assert_eq!(wp.encode("Café\u{200b}中", 64), vec![2, 13, 14, 3]);
        assert_eq!(wp.encode("send send send send", 4), vec![2, 4, 4, 3]);
        assert_eq!(wp.encode(&"a".repeat(101), 8), vec![2, 1, 3]);
        assert_eq!(wp.encode("", 8), vec![2, 3]);
    }
}
