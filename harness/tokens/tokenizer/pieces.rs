use super::super::pretoken::Pattern;
use super::{Bpe, Counts};
use std::cell::RefCell;
use std::collections::HashMap;

type Table = HashMap<Box<str>, u32, foldhash::fast::RandomState>;

/// Longer pretokens are encoded every time.
const MAX_LEN: usize = 24;
const MAX_ENTRIES: usize = 1 << 16;

thread_local! {
    static TABLES: [RefCell<Table>; 3] = Default::default();
}

/// The remembered pretokens of the vocabulary `which` names.
fn table_of(which: u8) -> usize {
    match which {
        super::memo::O200K => 0,
        super::memo::CL100K => 1,
        super::memo::LLAMA4 => 2,
        other => unreachable!("tokenizer key {other} has no pretokens"),
    }
}

/// The pretokens of `text` under the tokenizer `which` names.
pub fn split<'a>(bpe: &'a Bpe, which: u8, text: &'a str) -> impl Iterator<Item = &'a str> {
    let pattern = match which {
        super::memo::O200K => Pattern::O200k,
        super::memo::CL100K => Pattern::Cl100k,
        super::memo::LLAMA4 => Pattern::O200k,
        other => unreachable!("tokenizer key {other} has no pretokenizer"),
    };
    debug_assert_eq!(bpe.pattern(), pattern);
    super::super::pretoken::split(pattern, text)
}

/// Texts at least this long are cut into parts counted side by side on every core (an assumed
/// threshold: a few hundred definitions' worth, where starting the threads costs far less than
/// the count).
const SPLIT_FROM: usize = 1 << 20;
/// Bytes in each part of such a text, at least.
const PART_BYTES: usize = 64 << 10;

/// The BPE count of `text` (o200k or cl100k by `which`), equal to `bpe.count(text)`, and
/// its tokens by the kind of pretoken they are in. A long text (a name list of every tool, a
/// conversation of many results) is cut where its pretokens part cleanly ([`clean_parts`]) and
/// its parts are counted on every core: pretokens never cross such a place, so the parts' counts
/// add up to the whole's.
pub fn count(bpe: &Bpe, which: u8, text: &str) -> Counts {
    if text.len() < SPLIT_FROM {
        return count_one(bpe, which, text);
    }
    let parts = clean_parts(text, PART_BYTES);
    crate::sync::map_on_cores(&parts, |p| count_one(bpe, which, p))
        .into_iter()
        .fold(Counts::default(), Counts::plus)
}

/// `text` cut into parts of at least `at_least` bytes (the last may be shorter) at clean
/// boundaries: after an ASCII letter or digit, before a space and an ASCII letter, where both
/// pretokenizers end one pretoken and start the next ([`super::clean_cuts`]). A text without
/// such a place is one part.
fn clean_parts(text: &str, at_least: usize) -> Vec<&str> {
    let b = text.as_bytes();
    let clean = |i: usize| super::clean_at(b, i);
    let mut parts = Vec::new();
    let mut from = 0;
    let mut i = at_least;
    while i < b.len() {
        match (i..b.len()).find(|&j| clean(j)) {
            Some(j) => {
                parts.push(&text[from..j]);
                from = j;
                i = j + at_least;
            }
            None => break,
        }
    }
    parts.push(&text[from..]);
    parts
}

/// [`count`] of the text as one part, on this thread.
pub(super) fn count_one(bpe: &Bpe, which: u8, text: &str) -> Counts {
    TABLES.with(|tables| {
        let mut table = tables[table_of(which)].borrow_mut();
        let mut c = Counts::default();
        for p in split(bpe, which, text) {
            let (n, kind) = pretoken(&mut table, bpe, p);
            c.total += n;
            match kind {
                Kind::BareWord => c.bare_words += n,
                Kind::SpacedWord => c.spaced_words += n,
                Kind::Punctuation => c.punctuation += n,
                Kind::Other => {}
            }
        }
        c
    })
}

/// What a pretoken holds, for the current-Claude estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A letter, and no space first.
    BareWord,
    /// A letter after a space.
    SpacedWord,
    /// No letter, no digit and something other than whitespace.
    Punctuation,
    /// A digit (and no letter), or whitespace alone.
    Other,
}

fn kind_of(p: &str) -> Kind {
    if p.chars().any(char::is_alphabetic) {
        match p.starts_with(' ') {
            true => Kind::SpacedWord,
            false => Kind::BareWord,
        }
    } else if p.chars().any(char::is_numeric) || p.trim().is_empty() {
        Kind::Other
    } else {
        Kind::Punctuation
    }
}

/// One pretoken's count and kind, looked up or made and remembered (packed in the table as
/// the count times four plus the kind).
fn pretoken(table: &mut Table, bpe: &Bpe, p: &str) -> (usize, Kind) {
    const KINDS: [Kind; 4] = [
        Kind::BareWord,
        Kind::SpacedWord,
        Kind::Punctuation,
        Kind::Other,
    ];
    if p.len() > MAX_LEN {
        return (bpe.count_piece(p.as_bytes()), kind_of(p));
    }
    if let Some(&v) = table.get(p) {
        return ((v >> 2) as usize, KINDS[(v & 3) as usize]);
    }
    let (n, kind) = (bpe.count_piece(p.as_bytes()), kind_of(p));
    if table.len() >= MAX_ENTRIES {
        table.clear();
    }
    let code = KINDS.iter().position(|k| *k == kind).unwrap_or(3) as u32;
    // A pretoken of at most MAX_LEN bytes has at most that many tokens.
    table.insert(p.into(), (n as u32) << 2 | code);
    (n, kind)
}
