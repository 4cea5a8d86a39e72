use super::{memo, pieces, Bpe, Counts, Part};
use std::borrow::Cow;

fn punct(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_punctuation())
}

/// The last pretoken of a piece: its trailing run of ASCII punctuation, when an ASCII letter
/// or digit comes before it.
fn last_run(text: &str) -> Option<&str> {
    let start = text.len()
        - text
            .bytes()
            .rev()
            .take_while(u8::is_ascii_punctuation)
            .count();
    let before = *text.as_bytes().get(start.checked_sub(1)?)?;
    (before.is_ascii_alphanumeric() && start < text.len()).then(|| &text[start..])
}

/// The first pretoken of a piece, when it is ASCII punctuation alone and not the whole piece.
fn first_run<'a>(bpe: &'a Bpe, which: u8, text: &'a str) -> Option<&'a str> {
    let first = pieces::split(bpe, which, text).next()?;
    (!first.is_empty() && first.len() < text.len() && punct(first)).then_some(first)
}

/// Tokens of `a`, `b` and `c` as one pretoken, or `None` where the pretokenizer does not
/// keep them together.
fn merged(bpe: &Bpe, which: u8, a: &str, b: &str, c: &str) -> Option<usize> {
    let text = format!("{a}{b}{c}");
    let mut split = pieces::split(bpe, which, &text);
    (split.next() == Some(text.as_str()) && split.next().is_none())
        .then(|| bpe.count_piece(text.as_bytes()))
}

/// The left side of a join: the last pretoken of `q` (whose first `taken` bytes an earlier
/// join took), the joint, and the first pretoken of `p` (`None`: nothing follows), counted
/// as one; with the tokens to take off `q`'s and `p`'s own counts.
fn join(
    bpe: &Bpe,
    which: u8,
    q: Option<(&str, usize)>,
    joint: &str,
    p: Option<&str>,
) -> Option<(usize, usize, usize)> {
    let one = |s: &str| bpe.count_piece(s.as_bytes());
    let last = match q {
        Some((q, taken)) => {
            let l = last_run(q)?;
            (taken + l.len() <= q.len()).then_some(l)?
        }
        None => "",
    };
    let first = match p {
        Some(p) => first_run(bpe, which, p)?,
        None => "",
    };
    Some((
        merged(bpe, which, last, joint, first)?,
        one(last) + one(first),
        first.len(),
    ))
}

/// Whether two pieces meet where both patterns end one pretoken and start the next:
/// `left` ends in an ASCII letter or digit, and `right` starts with a space and an ASCII
/// letter. The pretoken that ends the letter or digit run cannot take the space (no rule
/// goes on from a letter or digit into whitespace, and the contractions need an
/// apostrophe), and one starts at the space whatever came before it (no rule looks back),
/// so the text's pretokens are the two pieces' own.
pub fn clean(left: &str, right: &str) -> bool {
    let r = right.as_bytes();
    left.as_bytes()
        .last()
        .is_some_and(u8::is_ascii_alphanumeric)
        && r.first() == Some(&b' ')
        && r.get(1).is_some_and(u8::is_ascii_alphabetic)
}

/// The count of the parts' text; `None` where a joint is not punctuation. A join that does
/// not fit the rule glues its two pieces into one, counted whole.
pub fn assemble<'a>(bpe: &Bpe, which: u8, parts: impl Iterator<Item = Part<'a>>) -> Option<Counts> {
    let count = |t: &str| memo::count(which, t, |t| pieces::count(bpe, which, t));
    let mut total = Counts::default();
    let mut joint = String::new();
    // The piece not yet counted (glued from several where joins did not fit), and the length
    // of its first pretoken where the join before it took it.
    let mut cur: Option<(Cow<'a, str>, usize)> = None;
    for part in parts {
        let p = match part {
            Part::Joint(j) if punct(j) => {
                joint.push_str(j);
                continue;
            }
            Part::Joint(_) => return None,
            Part::Piece(p) => p,
        };
        let q = cur.take();
        if let Some((q, _)) = q.as_ref().filter(|(q, _)| joint.is_empty() && clean(q, p)) {
            // A clean boundary: the left piece's count stands as it is.
            total = total.plus(count(q));
            cur = Some((Cow::Borrowed(p), 0));
            continue;
        }
        let left = q.as_ref().map(|(q, taken)| (q.as_ref(), *taken));
        cur = Some(
            match (left.is_some() || !joint.is_empty())
                .then(|| join(bpe, which, left, &joint, Some(p)))
            {
                // Nothing before it.
                None => (Cow::Borrowed(p), 0),
                Some(Some((m, minus, taken))) => {
                    let q = q
                        .as_ref()
                        .map_or(Counts::default(), |(q, _)| count(q.as_ref()));
                    total = total
                        .plus(q)
                        .plus(Counts::punctuation(m))
                        .minus(Counts::punctuation(minus))?;
                    (Cow::Borrowed(p), taken)
                }
                Some(None) => match q {
                    Some((q, taken)) => (Cow::Owned(format!("{q}{joint}{p}")), taken),
                    None => (Cow::Owned(format!("{joint}{p}")), 0),
                },
            },
        );
        joint.clear();
    }
    Some(match cur {
        None => pieces::count(bpe, which, joint.as_str()),
        Some((q, _)) if joint.is_empty() => total.plus(count(q.as_ref())),
        Some((q, taken)) => match join(bpe, which, Some((q.as_ref(), taken)), &joint, None) {
            Some((m, minus, _)) => total
                .plus(count(q.as_ref()))
                .plus(Counts::punctuation(m))
                .minus(Counts::punctuation(minus))?,
            None => total.plus(count(&format!("{q}{joint}"))),
        },
    })
}
