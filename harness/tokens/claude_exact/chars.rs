//! What the Claude tokenizer reads of each character: its Unicode general category, whether it is
//! Alphabetic, its case, and the class the marked stream sorts it into.
//!
//! The tables cover the Basic Multilingual Plane and are built once from the Unicode data that
//! the regex crate ships (its `\p{..}` classes). Every character outside the BMP takes the same
//! path in the tokenizer whatever its category (an isolated character with no word markers), so
//! nothing is looked up for those.

use std::sync::OnceLock;

/// The general categories the tokenizer's rules tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Gc {
    Letter,
    Mark,
    /// Nd
    Decimal,
    /// No
    OtherNumber,
    /// Nl
    LetterNumber,
    Punctuation,
    Symbol,
    Separator,
    /// Cf
    Format,
    /// Cn: not assigned
    Unassigned,
    /// Cc, Cs, Co
    OtherControl,
}

/// The class a character takes in the marked stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Letters of scripts that take word markers and case marking.
    Wordy,
    /// Characters tokenized one at a time with no word markers (ideographs, Hangul, emoji, most
    /// symbols).
    Hard,
    /// ASCII and Arabic-Indic digits.
    Digit,
    /// ASCII punctuation and symbols, and a measured list of others.
    Punct,
    /// Separators and the ASCII whitespace controls.
    Space,
}

struct Tables {
    gc: Box<[u8; 0x10000]>,
    alphabetic: Box<[u64; 0x10000 / 64]>,
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let mut gc = Box::new([Gc::Unassigned as u8; 0x10000]);
        let cats: [(&str, Gc); 28] = [
            ("Lu", Gc::Letter),
            ("Ll", Gc::Letter),
            ("Lt", Gc::Letter),
            ("Lm", Gc::Letter),
            ("Lo", Gc::Letter),
            ("Mn", Gc::Mark),
            ("Mc", Gc::Mark),
            ("Me", Gc::Mark),
            ("Nd", Gc::Decimal),
            ("Nl", Gc::LetterNumber),
            ("No", Gc::OtherNumber),
            ("Pc", Gc::Punctuation),
            ("Pd", Gc::Punctuation),
            ("Ps", Gc::Punctuation),
            ("Pe", Gc::Punctuation),
            ("Pi", Gc::Punctuation),
            ("Pf", Gc::Punctuation),
            ("Po", Gc::Punctuation),
            ("Sm", Gc::Symbol),
            ("Sc", Gc::Symbol),
            ("Sk", Gc::Symbol),
            ("So", Gc::Symbol),
            ("Zs", Gc::Separator),
            ("Zl", Gc::Separator),
            ("Zp", Gc::Separator),
            ("Cc", Gc::OtherControl),
            ("Cf", Gc::Format),
            ("Co", Gc::OtherControl),
        ];
        for (name, cat) in cats {
            for (lo, hi) in ranges(&format!(r"\p{{gc={name}}}")) {
                for cp in lo..=hi.min(0xFFFF) {
                    gc[cp as usize] = cat as u8;
                }
            }
        }
        let mut alphabetic = Box::new([0u64; 0x10000 / 64]);
        for (lo, hi) in ranges(r"\p{Alphabetic}") {
            for cp in lo..=hi.min(0xFFFF) {
                alphabetic[cp as usize / 64] |= 1 << (cp % 64);
            }
        }
        Tables { gc, alphabetic }
    })
}

/// The BMP ranges of a Unicode class, from the regex crate's tables.
fn ranges(class: &str) -> Vec<(u32, u32)> {
    use regex_syntax::hir::{Class as HirClass, HirKind};
    let hir = regex_syntax::Parser::new()
        .parse(class)
        .expect("a Unicode class the regex crate knows");
    match hir.kind() {
        HirKind::Class(HirClass::Unicode(c)) => c
            .ranges()
            .iter()
            .filter(|r| (r.start() as u32) < 0x10000)
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect(),
        _ => Vec::new(),
    }
}

/// The general category of a BMP character (`Unassigned` for none outside it: callers ask only
/// of BMP characters).
pub fn gc(c: char) -> Gc {
    let cp = c as u32;
    if cp >= 0x10000 {
        return Gc::Unassigned;
    }
    match tables().gc[cp as usize] {
        0 => Gc::Letter,
        1 => Gc::Mark,
        2 => Gc::Decimal,
        3 => Gc::OtherNumber,
        4 => Gc::LetterNumber,
        5 => Gc::Punctuation,
        6 => Gc::Symbol,
        7 => Gc::Separator,
        8 => Gc::Format,
        9 => Gc::Unassigned,
        _ => Gc::OtherControl,
    }
}

/// Unicode's derived Alphabetic property (BMP).
pub fn alphabetic(c: char) -> bool {
    let cp = c as u32;
    cp < 0x10000 && tables().alphabetic[cp as usize / 64] & (1 << (cp % 64)) != 0
}

/// Two case pairs of Unicode 16 the tokenizer knows; where the tables here are older they are
/// still letters and still a pair.
const NEW_CASE_PAIRS: [(char, char); 2] = [('\u{1C89}', '\u{1C8A}'), ('\u{A7CB}', '\u{0264}')];

pub fn new_cased(c: char) -> bool {
    NEW_CASE_PAIRS.iter().any(|&(u, l)| c == u || c == l)
}

/// Measured as caseless though Unicode calls it a capital (`ϴ`).
const UNCASED: char = '\u{03F4}';

/// A character's lowercase, as the tokenizer writes it after a case marker: the full mapping,
/// one character at a time (so a capital sigma is always `σ`).
pub fn push_lower(c: char, out: &mut Vec<u8>) {
    if c == UNCASED {
        push_char(c, out);
        return;
    }
    if let Some(&(_, l)) = NEW_CASE_PAIRS.iter().find(|&&(u, _)| u == c) {
        push_char(l, out);
        return;
    }
    for l in c.to_lowercase() {
        push_char(l, out);
    }
}

/// Whether a character's lowercase is itself.
pub fn lowers_to_itself(c: char) -> bool {
    if c == UNCASED {
        return true;
    }
    if NEW_CASE_PAIRS.iter().any(|&(u, _)| u == c) {
        return false;
    }
    let mut l = c.to_lowercase();
    l.next() == Some(c) && l.next().is_none()
}

/// A capital: an uppercase character whose lowercase differs (`ℂ` is uppercase with no
/// lowercase, and measures as caseless).
pub fn is_upper(c: char) -> bool {
    if c == UNCASED {
        return false;
    }
    NEW_CASE_PAIRS.iter().any(|&(u, _)| u == c) || (c.is_uppercase() && !lowers_to_itself(c))
}

pub fn is_lower(c: char) -> bool {
    NEW_CASE_PAIRS.iter().any(|&(_, l)| l == c) || c.is_lowercase()
}

pub fn push_char(c: char, out: &mut Vec<u8>) {
    let mut b = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
}

/// Variation selectors U+FE00..U+FE0F: marks that ride their base with no word markers.
pub fn is_selector(c: char) -> bool {
    ('\u{FE00}'..='\u{FE0F}').contains(&c)
}

/// Letters by category that the tokenizer takes one at a time (ideographs, Hangul syllables,
/// everything outside the BMP) and the ideographic iteration and closing marks, which continue
/// the Han run they follow.
fn is_hard_letter(cp: u32) -> bool {
    cp >= 0x10000
        || (0x4E00..=0x9FFF).contains(&cp)
        || (0x3400..=0x4DBF).contains(&cp)
        || (0xF900..=0xFAFF).contains(&cp)
        || (0xAC00..=0xD7A3).contains(&cp)
        || matches!(
            cp,
            0x3005 | 0x3006 | 0x3031 | 0x3032 | 0x3033 | 0x3034 | 0x3035 | 0x303B | 0x303C
        )
}

/// Non-ASCII symbols and punctuation measured to tile over the punctuation vocabulary; every
/// other non-ASCII symbol stands alone (measured per character: no category rule gives the
/// list).
const PUNCT_SYMS: &str = "—»«•°„–−£§€…√→（№†└│།·─═█";

/// Symbol-letters measured to take the full word model like Latin letters (by block, since the
/// category splits both ways): Runic golden numbers, Roman numerals, circled letters, Bamum
/// number-letters.
const SYMBOL_LETTERS: [(u32, u32); 4] = [
    (0x16EE, 0x16F0),
    (0x2160, 0x2188),
    (0x24B6, 0x24E9),
    (0xA6E6, 0xA6EF),
];

/// The stream class of a character of normalised text.
pub fn class(c: char) -> Class {
    let cp = c as u32;
    if cp < 0x80 {
        let b = cp as u8;
        return match b {
            b'a'..=b'z' | b'A'..=b'Z' => Class::Wordy,
            b'0'..=b'9' => Class::Digit,
            b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C => Class::Space,
            0x21..=0x2F | 0x3A..=0x40 | 0x5B..=0x60 | 0x7B..=0x7E => Class::Punct,
            _ => Class::Hard,
        };
    }
    if new_cased(c) {
        return Class::Wordy;
    }
    if cp >= 0x10000 {
        return Class::Hard;
    }
    let g = gc(c);
    if g == Gc::Separator {
        return Class::Space;
    }
    if SYMBOL_LETTERS
        .iter()
        .any(|&(lo, hi)| (lo..=hi).contains(&cp))
    {
        return Class::Wordy;
    }
    if g == Gc::Decimal && ((0x0660..=0x0669).contains(&cp) || (0x06F0..=0x06F9).contains(&cp)) {
        return Class::Digit;
    }
    if PUNCT_SYMS.contains(c) {
        return Class::Punct;
    }
    if is_selector(c) {
        return Class::Hard;
    }
    if g == Gc::Mark {
        return match alphabetic(c) {
            true => Class::Wordy,
            false => Class::Hard,
        };
    }
    if g == Gc::Letter && !is_hard_letter(cp) {
        return Class::Wordy;
    }
    Class::Hard
}

/// A BMP mark that is not Alphabetic (and not a variation selector): it closes a word and stands
/// outside it, as punctuation does.
pub fn is_separator_mark(c: char) -> bool {
    (c as u32) < 0x10000 && gc(c) == Gc::Mark && !is_selector(c) && !alphabetic(c)
}

/// A Syriac vowel point or superscript alaph: where no base holds it, a word-forming letter.
pub fn is_syriac_vowel(c: char) -> bool {
    let cp = c as u32;
    cp == 0x0711 || (0x0730..=0x073F).contains(&cp)
}

/// A combining mark that, with nothing before it to be its base, opens a word of its own.
pub fn is_stray_mark(c: char) -> bool {
    // No character below U+0300 is a combining mark.
    if (c as u32) < 0x300 || is_syriac_vowel(c) {
        return false;
    }
    unicode_normalization::char::canonical_combining_class(c) != 0 && !is_separator_mark(c)
}

/// The members of the CJK Symbols and Punctuation block that are symbols (So), measured without
/// border markers like the block's punctuation.
const IDEOGRAPHIC_SYMBOLS: &str = "〄〒〓〠〶〷〾〿";

/// Whether a character takes border markers as punctuation does where it meets a space:
/// punctuation, symbols, format and unassigned characters and separator marks, but not the
/// ideographic punctuation block and nothing outside the BMP.
pub fn marks_like_punct(c: char) -> bool {
    let cp = c as u32;
    if cp >= 0x10000 {
        return false;
    }
    if cp < 0x80 {
        return class(c) == Class::Punct;
    }
    if is_separator_mark(c) {
        return true;
    }
    let g = gc(c);
    let ideographic = (0x3001..=0x303F).contains(&cp)
        && (g == Gc::Punctuation || IDEOGRAPHIC_SYMBOLS.contains(c));
    matches!(
        g,
        Gc::Punctuation | Gc::Symbol | Gc::Format | Gc::Unassigned
    ) && !ideographic
}

/// A digit that takes a border marker where it meets a space: every BMP digit (Nd) or other
/// number (No) except the ASCII digits.
pub fn is_border_digit(c: char) -> bool {
    let cp = c as u32;
    (0x80..0x10000).contains(&cp) && matches!(gc(c), Gc::Decimal | Gc::OtherNumber)
}

/// The number category of a character (Nd or No), for telling uniform digit runs.
pub fn number_kind(c: char) -> Option<Gc> {
    if c.is_ascii_digit() {
        return Some(Gc::Decimal);
    }
    if (c as u32) < 0x80 {
        return None;
    }
    match gc(c) {
        g @ (Gc::Decimal | Gc::OtherNumber) => Some(g),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes of characters of every kind the rules tell apart.
    #[test]
    fn characters_take_their_classes() {
        for (c, want) in [
            ('a', Class::Wordy),
            ('Z', Class::Wordy),
            ('é', Class::Wordy),
            ('ж', Class::Wordy),
            ('7', Class::Digit),
            ('٣', Class::Digit),
            ('३', Class::Hard),
            ('{', Class::Punct),
            ('—', Class::Punct),
            ('“', Class::Hard),
            (' ', Class::Space),
            ('\u{3000}', Class::Space),
            ('中', Class::Hard),
            ('한', Class::Hard),
            ('ー', Class::Wordy),
            ('\u{1F600}', Class::Hard),
            ('Ⅻ', Class::Wordy),
            ('\u{0301}', Class::Hard),
            ('\u{0345}', Class::Wordy),
            ('\u{FE0F}', Class::Hard),
        ] {
            assert_eq!(class(c), want, "{c:?}");
        }
        assert!(is_upper('A') && !is_upper('ℂ') && !is_upper('ϴ') && is_upper('Σ'));
        assert!(is_lower('a') && !is_lower('A'));
        assert!(marks_like_punct('“') && !marks_like_punct('。') && !marks_like_punct('😀'));
        assert!(is_border_digit('३') && !is_border_digit('3'));
    }
}
