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
    let mut fold = Fold::start(String::new(), None);
    for part in parts {
        fold.step(bpe, which, part)?;
    }
    fold.end(bpe, which).counts(&Tally::default())
}

/// [`assemble`] of many parts, on the machine's cores: the parts are cut into a run per core at
/// pieces, and each run after the first is folded from the state the run before it most likely
/// ends in (its last piece not yet counted, as it was written, and the joints after it). Where
/// a run before ends in another state (a join glued its last piece to the one before), that
/// run is folded again, after it, from the state it does end in; so the count is
/// [`assemble`]'s, whatever the parts.
pub fn assemble_on_cores<'a>(bpe: &Bpe, which: u8, parts: &[Part<'a>]) -> Option<Counts> {
    assemble_in_runs(bpe, which, parts, crate::sync::cores(), MIN_RUN)
}

/// [`assemble_on_cores`] in at most `runs` runs of at least `min_run` parts each.
pub(super) fn assemble_in_runs<'a>(
    bpe: &Bpe,
    which: u8,
    parts: &[Part<'a>],
    runs: usize,
    min_run: usize,
) -> Option<Counts> {
    let runs = runs.min(parts.len() / min_run.max(1));
    if runs < 2 {
        return assemble(bpe, which, parts.iter().copied());
    }
    // Each run starts at a piece, near an equal share of the parts.
    let mut starts = vec![0];
    for k in 1..runs {
        let at = parts.len() * k / runs;
        if let Some(i) = (at..parts.len()).find(|&i| matches!(parts[i], Part::Piece(_))) {
            if i > *starts.last().unwrap_or(&0) {
                starts.push(i);
            }
        }
    }
    let ends: Vec<usize> = starts[1..].iter().copied().chain([parts.len()]).collect();
    // The state a run most likely starts in: the piece before it, uncounted, whole, less the
    // first pretoken the join before it took (where one did), and the joints between.
    let before = |at: usize| -> (String, Option<(usize, &'a str)>) {
        let mut joint = String::new();
        let mut i = at;
        while i > 0 {
            i -= 1;
            match parts[i] {
                Part::Joint(j) => joint.insert_str(0, j),
                Part::Piece(q) => return (joint, Some((i, q))),
            }
        }
        (joint, None)
    };
    let guess = |start: usize| -> Fold<'a> {
        let (joint, Some((at, q))) = before(start) else {
            return Fold::start(before(start).0, None);
        };
        let taken = match before(at) {
            (j, None) if j.is_empty() => 0,
            (j, Some((_, b))) if j.is_empty() && clean(b, q) => 0,
            _ => first_run(bpe, which, q).map_or(0, str::len),
        };
        Fold::start(joint, Some((Cow::Borrowed(q), taken)))
    };
    let run = |mut fold: Fold<'a>, from: usize, to: usize| -> Option<Fold<'a>> {
        for part in &parts[from..to] {
            fold.step(bpe, which, *part)?;
        }
        Some(fold)
    };
    let folded: Vec<Option<Fold<'a>>> = std::thread::scope(|s| {
        let handles: Vec<_> = starts
            .iter()
            .zip(&ends)
            .map(|(&from, &to)| s.spawn(move || run(guess(from), from, to)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    // Runs joined in order: each run's own tally, checked against what came before it.
    let mut counted = Tally::default();
    let mut last: Option<Fold<'a>> = None;
    for ((fold, &from), &to) in folded.into_iter().zip(&starts).zip(&ends) {
        let fold = match last.take() {
            // The first run starts where the text does.
            None => fold?,
            Some(prev) => {
                let (tally, state) = prev.split();
                counted = counted.then(&tally)?;
                match fold {
                    Some(f) if f.starts_as(&state) => f,
                    // Not the state guessed (or the guess could not be folded): fold again.
                    Some(_) | None => run(state, from, to)?,
                }
            }
        };
        last = Some(fold);
    }
    last?.end(bpe, which).counts(&counted)
}

/// Runs of fewer parts than this are not worth a thread (an assumed size: a few thousand
/// definitions' joins).
const MIN_RUN: usize = 8192;

/// Parts from this many on are assembled on the machine's cores ([`assemble_on_cores`]).
pub const ON_CORES_FROM: usize = 2 * MIN_RUN;

/// What a fold has counted: each kind's sum, signed, and the lowest it fell to after any join
/// took tokens away, so that runs folded apart are held to [`assemble`]'s rule (a count never
/// falls below nothing) once joined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    sum: [i64; 4],
    low: [i64; 4],
}

impl Tally {
    fn kinds(c: Counts) -> [i64; 4] {
        [c.total, c.bare_words, c.spaced_words, c.punctuation].map(|n| n as i64)
    }

    fn add(&mut self, c: Counts) {
        for (s, n) in self.sum.iter_mut().zip(Tally::kinds(c)) {
            *s += n;
        }
    }

    fn take(&mut self, c: Counts) {
        for ((s, l), n) in self.sum.iter_mut().zip(&mut self.low).zip(Tally::kinds(c)) {
            *s -= n;
            *l = (*l).min(*s);
        }
    }

    /// The counts of this tally after `before`, or `None` where they fall below nothing.
    fn counts(&self, before: &Tally) -> Option<Counts> {
        let t = before.then(self)?;
        let n = |f: usize| usize::try_from(t.sum[f]).ok();
        Some(Counts {
            total: n(0)?,
            bare_words: n(1)?,
            spaced_words: n(2)?,
            punctuation: n(3)?,
        })
    }

    /// This tally followed by `next`, or `None` where `next` falls below nothing after it.
    fn then(&self, next: &Tally) -> Option<Tally> {
        let mut out = *self;
        for f in 0..4 {
            if self.sum[f] + next.low[f] < 0 {
                return None;
            }
            out.low[f] = self.low[f].min(self.sum[f] + next.low[f]);
            out.sum[f] += next.sum[f];
        }
        Some(out)
    }
}

/// A fold over parts between two of them: what it has counted, the joints since its last
/// piece, and that piece, not yet counted (glued from several where joins did not fit), with the
/// length of its first pretoken where the join before it took it.
struct Fold<'a> {
    tally: Tally,
    joint: String,
    cur: Option<(Cow<'a, str>, usize)>,
    /// The joints and the piece it started from.
    began: (String, Option<(Cow<'a, str>, usize)>),
}

impl<'a> Fold<'a> {
    fn start(joint: String, cur: Option<(Cow<'a, str>, usize)>) -> Fold<'a> {
        Fold {
            tally: Tally::default(),
            began: (joint.clone(), cur.clone()),
            joint,
            cur,
        }
    }

    /// Whether this fold started in `state` (the state another fold ended in).
    fn starts_as(&self, state: &Fold<'a>) -> bool {
        self.began.0 == state.joint && self.began.1 == state.cur
    }

    /// The tally so far, and the state to go on from.
    fn split(self) -> (Tally, Fold<'a>) {
        (self.tally, Fold::start(self.joint, self.cur))
    }

    /// Take one part; `None` where a joint is not punctuation.
    fn step(&mut self, bpe: &Bpe, which: u8, part: Part<'a>) -> Option<()> {
        let count = |t: &str| memo::count(which, t, |t| pieces::count(bpe, which, t));
        let p = match part {
            Part::Joint(j) if punct(j) => {
                self.joint.push_str(j);
                return Some(());
            }
            Part::Joint(_) => return None,
            Part::Piece(p) => p,
        };
        let q = self.cur.take();
        if let Some((q, _)) = q
            .as_ref()
            .filter(|(q, _)| self.joint.is_empty() && clean(q, p))
        {
            // A clean boundary: the left piece's count stands as it is.
            self.tally.add(count(q));
            self.cur = Some((Cow::Borrowed(p), 0));
            return Some(());
        }
        let left = q.as_ref().map(|(q, taken)| (q.as_ref(), *taken));
        self.cur = Some(
            match (left.is_some() || !self.joint.is_empty())
                .then(|| join(bpe, which, left, &self.joint, Some(p)))
            {
                // Nothing before it.
                None => (Cow::Borrowed(p), 0),
                Some(Some((m, minus, taken))) => {
                    if let Some((q, _)) = q.as_ref() {
                        self.tally.add(count(q.as_ref()));
                    }
                    self.tally.add(Counts::punctuation(m));
                    self.tally.take(Counts::punctuation(minus));
                    (Cow::Borrowed(p), taken)
                }
                Some(None) => match q {
                    Some((q, taken)) => (Cow::Owned(format!("{q}{}{p}", self.joint)), taken),
                    None => (Cow::Owned(format!("{}{p}", self.joint)), 0),
                },
            },
        );
        self.joint.clear();
        Some(())
    }

    /// Count what is left: the last piece and the joints after it.
    fn end(self, bpe: &Bpe, which: u8) -> Tally {
        let count = |t: &str| memo::count(which, t, |t| pieces::count(bpe, which, t));
        let mut tally = self.tally;
        match self.cur {
            None => tally.add(pieces::count(bpe, which, self.joint.as_str())),
            Some((q, _)) if self.joint.is_empty() => tally.add(count(q.as_ref())),
            Some((q, taken)) => {
                match join(bpe, which, Some((q.as_ref(), taken)), &self.joint, None) {
                    Some((m, minus, _)) => {
                        tally.add(count(q.as_ref()));
                        tally.add(Counts::punctuation(m));
                        tally.take(Counts::punctuation(minus));
                    }
                    None => tally.add(count(&format!("{q}{}", self.joint))),
                }
            }
        }
        tally
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Tokenizer;

    /// Parts assembled in runs side by side count what they count in one run, and what the
    /// whole text counts: JSON-like pieces and joints of every kind, joins that take a
    /// piece's first pretoken, pieces glued across a run's start (whose runs are folded again),
    /// and a joint that is not punctuation (no count either way).
    #[test]
    fn parts_assembled_in_runs_count_as_in_one() {
        let pieces = [
            "{\"type\":\"function\",\"function\":{\"name\":\"a_b\",\"description\":\"Reads",
            " the file at a path",
            ".\",\"parameters\":",
            "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\"}}}",
            " naïve \u{1f600} words",
            "camelCase",
            "42",
            "x",
            "\"}",
            "{\"",
        ];
        let joints = ["", ",", "}", "}}", "]", "[", "\":\""];
        let mut rng = crate::rng::Rng::new(5);
        for case in 0..12 {
            let n = 300 + rng.below(400);
            let mut parts = Vec::new();
            for _ in 0..n {
                let part = match (case % 3, rng.below(3)) {
                    // Letters only: every join glues.
                    (0, _) => Part::Piece(["ab", "cd", "Ef"][rng.below(3)]),
                    (_, 0) => Part::Joint(joints[rng.below(joints.len())]),
                    _ => Part::Piece(pieces[rng.below(pieces.len())]),
                };
                parts.push(part);
            }
            if case == 11 {
                parts.insert(n / 2, Part::Joint("ab"));
            }
            let text: String = parts
                .iter()
                .map(|p| match p {
                    Part::Piece(t) | Part::Joint(t) => *t,
                })
                .collect();
            for (tok, vocab) in [
                (Tokenizer::O200k, crate::tokens::families::Bpe::O200k),
                (Tokenizer::Cl100k, crate::tokens::families::Bpe::Cl100k),
            ] {
                let (bpe, which) = super::super::bpe_of(vocab);
                let one = assemble(bpe, which, parts.iter().copied());
                for runs in [2, 3, 7] {
                    let split = assemble_in_runs(bpe, which, &parts, runs, 16);
                    assert_eq!(split, one, "case {case}, {runs} runs, {tok:?}");
                }
                match one {
                    Some(c) => assert_eq!(
                        c.total as f64,
                        super::super::counting_whole(|| tok.count(&text)),
                        "case {case} {tok:?}"
                    ),
                    None => assert_eq!(case, 11),
                }
            }
        }
    }
}
