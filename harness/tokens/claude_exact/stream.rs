//! Normalised text to the marked stream the vocabulary is tiled over.
//!
//! The text is cut into maximal runs of one class ([`chars::Class`]). A run of letters is a
//! word: written between a word-start and a word-end marker, its case folded behind a marker
//! where the whole word is title case (or, on v3, all capitals of four or more). Punctuation,
//! digits other than ASCII, separator marks and a few symbols take a border marker on a side
//! where they meet a single space. A single space between a word end and a word start is not
//! written at all (the two markers stand for it). Everything else is written as it is. These
//! rules are the measured behaviour of `count_tokens` (ctok 1.3.0's reconstruction, checked
//! here against recorded counts).
//!
//! Markers are the bytes [`BOW`], [`EOW`], [`SHIFT`] and [`CAPS`], which never occur in UTF-8.

use super::chars::{self, Class, Gc};

pub const BOW: u8 = 0xF8;
pub const EOW: u8 = 0xF9;
pub const SHIFT: u8 = 0xFA;
pub const CAPS: u8 = 0xFB;

/// What the stream depends on in a family.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// The message frame ends in a word start, which stands for one leading space.
    pub frame_bow: bool,
    /// Words of capitals this long or longer fold behind the all-caps marker (None: never).
    pub allcaps_min: Option<usize>,
}

/// A run's class: the character classes, and a combining mark with no base before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Wordy,
    Hard,
    Digit,
    Punct,
    Space,
    StrayMark,
}

fn kind(c: Class) -> Kind {
    match c {
        Class::Wordy => Kind::Wordy,
        Class::Hard => Kind::Hard,
        Class::Digit => Kind::Digit,
        Class::Punct => Kind::Punct,
        Class::Space => Kind::Space,
    }
}

#[derive(Debug, Clone, Copy)]
struct Run<'a> {
    kind: Kind,
    body: &'a str,
}

impl Run<'_> {
    fn last(&self) -> char {
        self.body.chars().next_back().unwrap_or(' ')
    }
}

/// The English contraction suffixes an apostrophe binds to the word before it.
const CONTRACTIONS: [&str; 7] = ["s", "t", "d", "m", "ll", "re", "ve"];

/// Which part of a mixed run of hard characters a character belongs to: a number and the
/// ideograph beside it take their border markers each on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HardPart {
    Punct,
    Number,
    Letter,
}

fn hard_part(c: char) -> HardPart {
    if chars::marks_like_punct(c) {
        HardPart::Punct
    } else if chars::is_border_digit(c) {
        HardPart::Number
    } else {
        HardPart::Letter
    }
}

/// Each ASCII byte's run kind: [`chars::class`] of it (no ASCII character is a combining mark).
static ASCII_KINDS: std::sync::LazyLock<[Kind; 128]> =
    std::sync::LazyLock::new(|| std::array::from_fn(|b| kind(chars::class(b as u8 as char))));

fn runs(text: &str) -> Vec<Run<'_>> {
    let kinds = &*ASCII_KINDS;
    let bytes = text.as_bytes();
    let mut out: Vec<Run<'_>> = Vec::with_capacity(bytes.len() / 4 + 1);
    let Some(c0) = text.chars().next() else {
        return out;
    };
    let mut start = 0;
    let mut cur = kind(chars::class(c0));
    if cur == Kind::Wordy && chars::is_stray_mark(c0) {
        cur = Kind::StrayMark;
    }
    let mut i = c0.len_utf8();
    while i < bytes.len() {
        // An ASCII byte is a character of its own kind, never a stray mark: no decoding.
        let b = bytes[i];
        if b < 0x80 {
            let k = kinds[b as usize];
            if k != cur {
                out.push(Run {
                    kind: cur,
                    body: &text[start..i],
                });
                start = i;
                cur = k;
            }
            i += 1;
            continue;
        }
        let at = i;
        let c = text[at..].chars().next().expect("a character starts here");
        i += c.len_utf8();
        let k = kind(chars::class(c));
        let stray = k == Kind::Wordy && chars::is_stray_mark(c);
        if cur == Kind::StrayMark && stray {
            continue;
        }
        if k == cur {
            continue;
        }
        out.push(Run {
            kind: cur,
            body: &text[start..at],
        });
        start = at;
        cur = match stray && cur != Kind::Wordy {
            true => Kind::StrayMark,
            false => k,
        };
    }
    out.push(Run {
        kind: cur,
        body: &text[start..],
    });
    // A hard run is split where the kind of character changes; a variation selector rides the
    // part before it.
    if !out.iter().any(|r| r.kind == Kind::Hard && r.body.len() > 1) {
        return out;
    }
    let mut split = Vec::with_capacity(out.len());
    for r in out {
        if r.kind != Kind::Hard || r.body.chars().nth(1).is_none() {
            split.push(r);
            continue;
        }
        let mut it = r.body.char_indices();
        let (_, c0) = it.next().expect("a run is not empty");
        let mut part = hard_part(c0);
        let mut from = 0;
        for (i, c) in it {
            if chars::is_selector(c) {
                continue;
            }
            let p = hard_part(c);
            if p != part {
                split.push(Run {
                    kind: Kind::Hard,
                    body: &r.body[from..i],
                });
                from = i;
                part = p;
            }
        }
        split.push(Run {
            kind: Kind::Hard,
            body: &r.body[from..],
        });
    }
    split
}

fn hard_bow(body: &str) -> bool {
    body.chars()
        .next()
        .is_some_and(|c| chars::is_selector(c) || chars::marks_like_punct(c))
}

fn hard_eow(body: &str) -> bool {
    body.chars()
        .next_back()
        .is_some_and(|c| chars::is_selector(c) || chars::marks_like_punct(c))
}

/// A uniform run of decimal digits or of other numbers.
fn digit_run(body: &str) -> bool {
    let mut it = body.chars();
    let Some(k) = it.next().and_then(chars::number_kind) else {
        return false;
    };
    it.all(|c| chars::number_kind(c) == Some(k))
}

fn digit_bow(body: &str) -> bool {
    digit_run(body) && body.chars().next().is_some_and(chars::is_border_digit)
}

fn digit_eow(body: &str) -> bool {
    digit_run(body) && body.chars().next_back().is_some_and(chars::is_border_digit)
}

/// A lone `'` that opens the word after it (`'First`): the boundary before it is not absorbed.
fn opens_word(runs: &[Run<'_>], i: usize) -> bool {
    runs[i].body == "'"
        && runs
            .get(i + 1)
            .is_some_and(|r| matches!(r.kind, Kind::Wordy | Kind::StrayMark))
}

/// Whether a run writes a border marker of its own on its right side.
fn takes_right_border(r: &Run<'_>) -> bool {
    r.kind == Kind::Punct
        || hard_eow(r.body)
        || (matches!(r.kind, Kind::Digit | Kind::Hard) && digit_eow(r.body))
}

/// Whether the lone apostrophe before word `i` is that word's start (`it's`): the suffix is an
/// English contraction, the apostrophe is a run of its own, and what stands before the
/// apostrophe writes no right border marker.
fn contraction_seam(runs: &[Run<'_>], i: usize) -> bool {
    if i == 0 || runs[i].body.len() > 2 || !CONTRACTIONS.contains(&runs[i].body) {
        return false;
    }
    let prev = &runs[i - 1];
    if prev.kind != Kind::Punct || prev.body != "'" {
        return false;
    }
    i < 2 || !takes_right_border(&runs[i - 2])
}

/// A word as written after its case is marked: the markers in front (none, title case or all
/// capitals) and whether the body is the word lowered.
enum Case {
    AsIs,
    Title,
    AllCaps,
}

fn span_is_upper(body: &str) -> bool {
    let mut any = false;
    for c in body.chars() {
        let up = chars::is_upper(c);
        if up || chars::is_lower(c) {
            any = true;
            if !up {
                return false;
            }
        }
    }
    any
}

fn case_of(body: &str, allcaps_min: Option<usize>) -> Case {
    let b = body.as_bytes();
    if b.iter().all(u8::is_ascii_alphabetic) {
        // The common case, without the Unicode tables.
        let upper = b.iter().filter(|c| c.is_ascii_uppercase()).count();
        if let Some(min) = allcaps_min {
            if upper == b.len() && b.len() >= min {
                return Case::AllCaps;
            }
        }
        return match b[0].is_ascii_uppercase() && upper == 1 {
            true => Case::Title,
            false => Case::AsIs,
        };
    }
    let unlowerable = body.chars().any(|c| {
        (chars::new_cased(c) || matches!(chars::gc(c), Gc::Letter | Gc::Mark))
            && !chars::is_lower(c)
            && (!chars::is_upper(c) || chars::lowers_to_itself(c))
    });
    if let Some(min) = allcaps_min {
        if !unlowerable && span_is_upper(body) && body.chars().count() >= min {
            return Case::AllCaps;
        }
    }
    let mut it = body.chars();
    let first = it.next().expect("a word is not empty");
    if chars::lowers_to_itself(first) {
        return Case::AsIs;
    }
    match chars::is_upper(first) && !it.any(chars::is_upper) {
        true => Case::Title,
        false => Case::AsIs,
    }
}

/// Write a word (`bow`: with its word-start marker) and its word-end marker.
fn push_word(out: &mut Vec<u8>, body: &str, allcaps_min: Option<usize>, bow: bool, mark: bool) {
    // A word opened by a stray mark has that mark for its head: no case marker applies.
    // Most words are ASCII, and neither capital is: the searches are left out for them.
    let ascii = body.is_ascii();
    let case = match mark {
        false => Case::AsIs,
        true if !ascii && body.contains('ẞ') => Case::AsIs,
        true if !ascii && body.contains('İ') => return push_dotted_capital(out, body, bow),
        true => case_of(body, allcaps_min),
    };
    match case {
        Case::AsIs => {
            if bow {
                out.push(BOW);
            }
            out.extend_from_slice(body.as_bytes());
        }
        Case::Title | Case::AllCaps => {
            out.push(match case {
                Case::Title => SHIFT,
                _ => CAPS,
            });
            if bow {
                out.push(BOW);
            }
            match ascii {
                true => out.extend(body.bytes().map(|b| b.to_ascii_lowercase())),
                false => body.chars().for_each(|c| chars::push_lower(c, out)),
            }
        }
    }
    out.push(EOW);
}

/// A word with a dotted capital I: title case only where another capital heads it and no other
/// capital follows, the İ itself kept as it is; otherwise as written.
fn push_dotted_capital(out: &mut Vec<u8>, body: &str, bow: bool) {
    let mut it = body.chars();
    let first = it.next().expect("a word is not empty");
    let title = chars::is_upper(first)
        && first != 'İ'
        && !it.clone().any(|c| c != 'İ' && chars::is_upper(c));
    if title {
        out.push(SHIFT);
    }
    if bow {
        out.push(BOW);
    }
    match title {
        true => {
            chars::push_lower(first, out);
            for c in it {
                match c {
                    'İ' => chars::push_char(c, out),
                    _ => chars::push_lower(c, out),
                }
            }
        }
        false => out.extend_from_slice(body.as_bytes()),
    }
    out.push(EOW);
}

/// The marked stream of normalised text, trailing newlines already taken off. `head_space`:
/// the raw text began with a space (one the frame's word start can stand for).
pub fn stream(norm: &str, rules: Rules, head_space: bool, out: &mut Vec<u8>) {
    let mut norm = norm;
    if rules.frame_bow
        && head_space
        && norm.as_bytes().first() == Some(&b' ')
        && norm.as_bytes().get(1) != Some(&b' ')
    {
        norm = &norm[1..];
    }
    let runs = runs(norm);
    if runs.is_empty() {
        if rules.frame_bow {
            out.push(BOW);
        }
        return;
    }
    let n = runs.len();
    let borders_space = |i: usize, left: bool| -> bool {
        if left {
            if i == 0 {
                return rules.frame_bow;
            }
            let r = &runs[i - 1];
            r.kind == Kind::Space && r.last() == ' '
        } else {
            match runs.get(i + 1) {
                Some(r) => {
                    r.kind == Kind::Space && r.body.starts_with(' ') && !r.body.starts_with("  ")
                }
                None => false,
            }
        }
    };
    let first = &runs[0];
    let head_quote = opens_word(&runs, 0);
    let own_bow = !head_quote
        && (matches!(first.kind, Kind::Wordy | Kind::Punct | Kind::StrayMark)
            || hard_bow(first.body)
            || (matches!(first.kind, Kind::Digit | Kind::Hard) && digit_bow(first.body))
            || (first.kind == Kind::Space && first.body.starts_with(' ')));
    let start = out.len();
    if rules.frame_bow && !own_bow {
        out.push(if head_quote { b' ' } else { BOW });
    }
    for i in 0..n {
        let r = &runs[i];
        match r.kind {
            Kind::Wordy => {
                let fused = i > 0 && runs[i - 1].kind == Kind::StrayMark;
                let bow = !(fused || contraction_seam(&runs, i));
                push_word(out, r.body, rules.allcaps_min, bow, !fused);
            }
            Kind::StrayMark => {
                out.push(BOW);
                out.extend_from_slice(r.body.as_bytes());
                if runs.get(i + 1).is_none_or(|x| x.kind != Kind::Wordy) {
                    out.push(EOW);
                }
            }
            // Whitespace and digits with ASCII at both ends take no marker of their own (the
            // common case, decided here without decoding them).
            Kind::Space | Kind::Digit
                if r.body.as_bytes()[0].is_ascii()
                    && r.body.as_bytes()[r.body.len() - 1].is_ascii() =>
            {
                out.extend_from_slice(r.body.as_bytes());
            }
            _ if r.kind == Kind::Punct || hard_bow(r.body) || hard_eow(r.body) => {
                let punct = r.kind == Kind::Punct;
                if borders_space(i, true) && !opens_word(&runs, i) && (punct || hard_bow(r.body)) {
                    out.push(BOW);
                }
                out.extend_from_slice(r.body.as_bytes());
                if borders_space(i, false) && (punct || hard_eow(r.body)) {
                    out.push(EOW);
                }
            }
            Kind::Digit | Kind::Hard if digit_run(r.body) => {
                if digit_bow(r.body) && borders_space(i, true) {
                    out.push(BOW);
                }
                out.extend_from_slice(r.body.as_bytes());
                if digit_eow(r.body) && borders_space(i, false) {
                    out.push(EOW);
                }
            }
            Kind::Digit | Kind::Hard | Kind::Punct | Kind::Space => {
                out.extend_from_slice(r.body.as_bytes());
            }
        }
    }
    remove_seams(out, start);
}

/// Drop each single space between a word end and a word start (case markers may stand between
/// the space and the start): the two markers are that space.
fn remove_seams(out: &mut Vec<u8>, from: usize) {
    // Only spaces are dropped: the bytes between two spaces move down as one block.
    let len = out.len();
    let mut w = from;
    let mut r = from;
    while let Some(at) = memchr::memchr(b' ', &out[r..len]) {
        let space = r + at;
        if w != r {
            out.copy_within(r..space, w);
        }
        w += space - r;
        let mut k = space + 1;
        while k < len && (out[k] == SHIFT || out[k] == CAPS) {
            k += 1;
        }
        let seam = w > from && out[w - 1] == EOW && k < len && out[k] == BOW;
        if !seam {
            out[w] = b' ';
            w += 1;
        }
        r = space + 1;
    }
    if w != r {
        out.copy_within(r..len, w);
    }
    w += len - r;
    out.truncate(w);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str, rules: Rules) -> String {
        let mut out = Vec::new();
        stream(text, rules, text.starts_with(' '), &mut out);
        let mut s = String::new();
        let mut i = 0;
        while i < out.len() {
            match out[i] {
                BOW => s.push_str("<b>"),
                EOW => s.push_str("<e>"),
                SHIFT => s.push_str("<S>"),
                CAPS => s.push_str("<C>"),
                _ => {
                    let n = match out[i] {
                        b if b < 0x80 => 1,
                        b if b >= 0xF0 => 4,
                        b if b >= 0xE0 => 3,
                        _ => 2,
                    };
                    s.push_str(std::str::from_utf8(&out[i..i + n]).unwrap());
                    i += n;
                    continue;
                }
            }
            i += 1;
        }
        s
    }

    const V3: Rules = Rules {
        frame_bow: true,
        allcaps_min: Some(4),
    };
    const V5: Rules = Rules {
        frame_bow: false,
        allcaps_min: None,
    };

    /// The marked streams of the published examples of the rules.
    #[test]
    fn words_punctuation_and_case_take_their_markers() {
        assert_eq!(shown("hello, world", V3), "<b>hello<e>,<e><b>world<e>");
        assert_eq!(
            shown("Hello NASA it's", V3),
            "<S><b>hello<e><C><b>nasa<e><b>it<e>'s<e>"
        );
        assert_eq!(shown("Hello NASA", V5), "<S><b>hello<e><b>NASA<e>");
        assert_eq!(shown("a! b", V3), "<b>a<e>!<e><b>b<e>");
        assert_eq!(shown("{\"a\": 1}", V5), "{\"<b>a<e>\":<e> 1}");
        assert_eq!(shown("x  y", V5), "<b>x<e>  <b>y<e>");
    }
}
