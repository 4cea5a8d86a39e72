//! The text the Claude tokenizer reads: what the API changes, strips or folds before any token
//! is made, as measured against `count_tokens` (ctok 1.3.0's measurements, `fixtures/tokenizers/
//! claude/`).
//!
//! In order: Unicode NFC; the C0 and C1 controls other than TAB, LF and NUL are removed; NUL
//! reads as a space; a decomposed Thai SARA AM is composed; BMP private-use characters are
//! removed (their neighbours meet); on the v3 family the four curly quotes fold to ASCII; and
//! the other space separators (no-break, en, em, thin, line and paragraph separators...) read as
//! a space, all but the ideographic space U+3000, which is its own token.

use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;

fn dropped(c: char) -> bool {
    matches!(c as u32, 0x01..=0x08 | 0x0B..=0x1F | 0x7F..=0x9F | 0xE000..=0xF8FF)
}

fn as_space(c: char) -> bool {
    matches!(
        c as u32,
        0x00 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F
    )
}

fn folded_quote(c: char) -> Option<char> {
    match c {
        '\u{2018}' | '\u{2019}' => Some('\''),
        '\u{201C}' | '\u{201D}' => Some('"'),
        _ => None,
    }
}

/// The normalised text. ASCII text with no control character other than TAB and LF comes back
/// as it is, unallocated.
pub fn normalise(text: &str, fold_quotes: bool) -> Cow<'_, str> {
    let plain = text
        .bytes()
        .all(|b| b.is_ascii() && (b >= 0x20 && b != 0x7F || b == b'\t' || b == b'\n'));
    if plain {
        return Cow::Borrowed(text);
    }
    // Text the rules leave as it is (most non-ASCII text: composed, no control, no folded
    // character) comes back unallocated too.
    let untouched = text.chars().all(|c| {
        let cp = c as u32;
        cp >= 0x20 && !dropped(c) && !as_space(c) && cp != 0x0E4D || c == '\t' || c == '\n'
    }) && !(fold_quotes && text.chars().any(|c| folded_quote(c).is_some()));
    if untouched
        && unicode_normalization::is_nfc_quick(text.chars())
            == unicode_normalization::IsNormalized::Yes
    {
        return Cow::Borrowed(text);
    }
    let composed: Cow<'_, str> = match unicode_normalization::is_nfc_quick(text.chars()) {
        unicode_normalization::IsNormalized::Yes => Cow::Borrowed(text),
        _ => Cow::Owned(text.nfc().collect()),
    };
    // Controls go first and the Thai fold reads what they left; private-use characters go
    // after the fold, as measured.
    let mut out = String::with_capacity(composed.len());
    let mut chars = composed
        .chars()
        .filter(|&c| !matches!(c as u32, 0x01..=0x08 | 0x0B..=0x1F | 0x7F..=0x9F))
        .peekable();
    while let Some(c) = chars.next() {
        if c == '\u{0E4D}' && chars.peek() == Some(&'\u{0E32}') {
            chars.next();
            out.push('\u{0E33}');
            continue;
        }
        if dropped(c) {
            continue;
        }
        let c = match (fold_quotes, folded_quote(c)) {
            (true, Some(q)) => q,
            _ => c,
        };
        out.push(if as_space(c) { ' ' } else { c });
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_folds_and_strips_as_measured() {
        assert_eq!(normalise("a\u{0}b\u{7}c\rd", true), "a bcd");
        assert_eq!(normalise("e\u{301}", true), "é");
        assert_eq!(normalise("\u{2018}x\u{201D}", true), "'x\"");
        assert_eq!(normalise("\u{2018}x\u{201D}", false), "\u{2018}x\u{201D}");
        assert_eq!(
            normalise("a\u{A0}b\u{3000}c\u{E000}d", false),
            "a b\u{3000}cd"
        );
        assert_eq!(normalise("\u{0E4D}\u{0E32}", false), "\u{0E33}");
        assert!(matches!(normalise("plain\ttext\n", true), Cow::Borrowed(_)));
        assert!(matches!(normalise("naïve — 中文", true), Cow::Borrowed(_)));
        assert_eq!(normalise("naïve \u{2019}", true), "naïve '");
    }
}
