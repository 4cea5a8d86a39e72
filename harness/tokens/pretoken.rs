//! The o200k and cl100k pretokenizers, written out by hand for ASCII text.
//!
//! BPE merges never cross a pretoken, so a count is the sum of its pretokens' counts, and
//! splitting text into pretokens took about a third of a large `measure` (a perf profile of the
//! 85,600-tool capture: the regex search, its iterator, and the cache pool that each match
//! takes from and gives back to). Definition text is nearly all ASCII, where each pattern
//! comes down to a few byte classes, so pretokens are found here by a scan over a byte-class
//! table that reads each byte a bounded number of times. A pretoken that starts at a character
//! that is not ASCII, or whose rules would look at one, is the first pretoken the pattern's
//! regex ([`Fallback`]) finds from there (no pattern looks behind where a pretoken starts).
//!
//! The rules are tiktoken's patterns (with `\s+(?!\S)`, a look-ahead the regex engine here does
//! not have, written as `\s+$`, then `\s+\s` less its last character, then `\s+`: the same
//! matches) read under leftmost-first alternation on ASCII
//! text, where the letters are `[A-Z]` (upper) and `[a-z]` (lower), `\s` is tab, line feed,
//! vertical tab, form feed, carriage return and space, and no character is a mark. Tests
//! compare the two splitters on every ASCII byte in short contexts, on random text and on the
//! captured servers' definitions.

/// Which pattern to split by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    O200k,
    Cl100k,
}

const UPPER: u8 = 1;
const LOWER: u8 = 2;
const DIGIT: u8 = 4;
/// `\s`.
const SPACE: u8 = 8;
/// `\r` and `\n` (also `SPACE`).
const NEWLINE: u8 = 16;
/// Neither `\s`, a letter nor a digit: `[^\s\p{L}\p{N}]`.
const OTHER: u8 = 32;

const CLASS: [u8; 128] = {
    let mut t = [OTHER; 128];
    let mut b = 0;
    while b < 128 {
        t[b] = match b as u8 {
            b'A'..=b'Z' => UPPER,
            b'a'..=b'z' => LOWER,
            b'0'..=b'9' => DIGIT,
            b'\r' | b'\n' => SPACE | NEWLINE,
            b'\t' | 0x0b | 0x0c | b' ' => SPACE,
            _ => OTHER,
        };
        b += 1;
    }
    t
};

/// The pretokens of `text` under `pattern`.
pub fn split(pattern: Pattern, text: &str) -> Pretokens<'_> {
    Pretokens {
        pattern,
        text,
        at: 0,
        ascii_end: ascii_end(text.as_bytes(), 0),
    }
}

/// The first byte at or after `from` that is not ASCII, or the length of `bytes`.
fn ascii_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&c| !c.is_ascii())
        .map_or(bytes.len(), |p| from + p)
}

/// The pretokens of a text, in order.
pub struct Pretokens<'a> {
    pattern: Pattern,
    text: &'a str,
    at: usize,
    /// The first byte at or after `at` that is not ASCII (the text's length if none), found
    /// again once `at` has passed it.
    ascii_end: usize,
}

impl<'a> Iterator for Pretokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        if self.at >= bytes.len() {
            return None;
        }
        if self.ascii_end < self.at {
            self.ascii_end = ascii_end(bytes, self.at);
        }
        let mut scan = Scan {
            b: &bytes[self.at..self.ascii_end],
            whole: self.ascii_end == bytes.len(),
            edge: false,
        };
        let here = match scan.b.is_empty() {
            true => None,
            false => {
                let n = match self.pattern {
                    Pattern::O200k => scan.o200k(),
                    Pattern::Cl100k => scan.cl100k(),
                };
                (!scan.edge).then_some(n)
            }
        };
        // A pretoken the ASCII rules cannot settle (it starts at, or its rules looked as far
        // as, a character that is not ASCII) is the regex's first pretoken from here.
        let rest = &self.text[self.at..];
        let len = here.or_else(|| Fallback::of(self.pattern).first(rest));
        // Every rule and the regex match at least one character; were one not to, the rest
        // would be one pretoken rather than a loop without end.
        debug_assert!(len.is_some_and(|n| n > 0), "no pretoken at {rest:?}");
        let len = len.filter(|&n| n > 0).unwrap_or(rest.len());
        let start = self.at;
        self.at += len;
        Some(&self.text[start..self.at])
    }
}

/// The ASCII rules over `b`, the ASCII bytes from where a pretoken starts. `whole`: `b` runs
/// to the end of the text; otherwise a character that is not ASCII follows it, and a rule
/// that looks past `b`'s last byte sets `edge` (its answer is not to be trusted).
struct Scan<'b> {
    b: &'b [u8],
    whole: bool,
    edge: bool,
}

impl Scan<'_> {
    fn class(&mut self, i: usize) -> u8 {
        match self.b.get(i) {
            Some(&c) => CLASS[c as usize],
            None => {
                self.edge |= !self.whole;
                0
            }
        }
    }

    /// How many bytes from `i` on are of a class in `mask`.
    fn run(&mut self, i: usize, mask: u8) -> usize {
        self.run_upto(i, mask, usize::MAX)
    }

    /// [`Scan::run`], stopping at `most` bytes (a run that stops there looked no further).
    fn run_upto(&mut self, i: usize, mask: u8, most: usize) -> usize {
        let i = i.min(self.b.len());
        let n = self.b[i..]
            .iter()
            .take(most)
            .take_while(|&&c| CLASS[c as usize] & mask != 0)
            .count();
        if n < most && i + n == self.b.len() {
            self.edge |= !self.whole;
        }
        n
    }

    /// The byte at `i`, lowercased; `None` past the end.
    fn low(&mut self, i: usize) -> Option<u8> {
        let c = self.b.get(i).map(u8::to_ascii_lowercase);
        if c.is_none() {
            self.edge |= !self.whole;
        }
        c
    }

    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `i`: its length, or 0.
    fn contraction(&mut self, i: usize) -> usize {
        if self.low(i) != Some(b'\'') {
            return 0;
        }
        match self.low(i + 1) {
            Some(b's' | b't' | b'm' | b'd') => 2,
            Some(c @ (b'r' | b'v' | b'l')) => {
                let second = if c == b'l' { b'l' } else { b'e' };
                match self.low(i + 2) == Some(second) {
                    true => 3,
                    false => 0,
                }
            }
            _ => 0,
        }
    }

    /// The whitespace rules both patterns end with, at `b[0]` (whitespace): `\s*[\r\n]+`,
    /// `\s+$`, `\s+\s` less its last byte, `\s+`.
    fn spaces(&mut self) -> usize {
        let w = self.run(0, SPACE);
        // `\s*` gives back all it can until `[\r\n]+` matches: up to the run's last line break.
        if let Some(last) = self.b[..w]
            .iter()
            .rposition(|&c| CLASS[c as usize] & NEWLINE != 0)
        {
            return last + 1;
        }
        if w == self.b.len() || w == 1 {
            return w;
        }
        w - 1
    }

    /// `[^\s\p{L}\p{N}]+` and the bytes of `tail` after it, from `i`; 0 where no such byte
    /// is at `i`.
    fn symbols(&mut self, i: usize, tail: &[u8]) -> usize {
        let o = self.run(i, OTHER);
        if o == 0 {
            return 0;
        }
        let from = i + o;
        let t = self.b[from..]
            .iter()
            .take_while(|c| tail.contains(c))
            .count();
        if from + t == self.b.len() {
            self.edge |= !self.whole;
        }
        o + t
    }

    fn o200k(&mut self) -> usize {
        let c0 = self.class(0);
        // 1: [^\r\n\p{L}\p{N}]?[upper]*[lower]+('s...)?
        // 2: [^\r\n\p{L}\p{N}]?[upper]+[lower]*('s...)?
        // A lead byte is no letter, so the optional lead is taken exactly when it is there.
        let start = usize::from(lead(c0));
        let uppers = self.run(start, UPPER);
        let lowers = self.run(start + uppers, LOWER);
        if lowers > 0 || uppers > 0 {
            let end = start + uppers + lowers;
            return end + self.contraction(end);
        }
        // 3 and 4: `\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]+[\r\n/]*`, then the whitespace rules
        self.after_words(c0, b"\r\n/")
    }

    fn cl100k(&mut self) -> usize {
        let c0 = self.class(0);
        // 1: (?i:'s|'t|'re|'ve|'m|'ll|'d)
        let n = self.contraction(0);
        if n > 0 {
            return n;
        }
        // 2: [^\r\n\p{L}\p{N}]?\p{L}+
        let start = usize::from(lead(c0));
        let letters = self.run(start, UPPER | LOWER);
        if letters > 0 {
            return start + letters;
        }
        // 3 and 4: `\p{N}{1,3}`, ` ?[^\s\p{L}\p{N}]+[\r\n]*`, then the whitespace rules
        self.after_words(c0, b"\r\n")
    }

    /// The rules both patterns share after their word rules: `\p{N}{1,3}`, then
    /// ` ?[^\s\p{L}\p{N}]+` followed by any of `tail`, then the whitespace rules.
    fn after_words(&mut self, c0: u8, tail: &[u8]) -> usize {
        if c0 & DIGIT != 0 {
            return self.run_upto(0, DIGIT, 3);
        }
        let space = usize::from(self.b[0] == b' ');
        let s = self.symbols(space, tail);
        if s > 0 {
            return space + s;
        }
        self.spaces()
    }
}

/// A pattern as a regex, for the pretokens the ASCII rules cannot settle: tiktoken's
/// alternatives in order, `\s+(?!\S)` as `\s+$` among the first ones, then `\s+\s` whose last
/// character is a look-ahead (left out of the pretoken), then `\s+`. The patterns are OpenAI's
/// published definitions of the two encodings.
pub struct Fallback {
    regex: regex_automata::meta::Regex,
    /// For each of the regex's patterns, whether its last character is a look-ahead.
    lookahead: [bool; 3],
}

impl Fallback {
    /// The regex of a pattern, built the first time it is needed.
    pub fn of(pattern: Pattern) -> &'static Fallback {
        static O200K: std::sync::OnceLock<Fallback> = std::sync::OnceLock::new();
        static CL100K: std::sync::OnceLock<Fallback> = std::sync::OnceLock::new();
        let cell = match pattern {
            Pattern::O200k => &O200K,
            Pattern::Cl100k => &CL100K,
        };
        cell.get_or_init(|| {
        let words = match pattern {
                Pattern::O200k => [
                    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                    "\\p{N}{1,3}",
                    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
                ]
                .join("|"),
                Pattern::Cl100k => [
                    "(?i:'s|'t|'re|'ve|'m|'ll|'d)",
                    "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+",
                    "\\p{N}{1,3}",
                    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*",
                ]
                .join("|"),
            };
            let first = format!("{words}|\\s*[\\r\\n]+|\\s+$");
            Fallback {
                regex: regex_automata::meta::Regex::new_many(&[first.as_str(), "\\s+\\s", "\\s+"])
                    .expect("the pretokenizer patterns are valid"),
                lookahead: [false, true, false],
            }
        })
    }

    /// The length of the first pretoken of `text` (`None` when nothing matches).
    pub fn first(&self, text: &str) -> Option<usize> {
        let input = regex_automata::Input::new(text).anchored(regex_automata::Anchored::Yes);
        let m = self.regex.find(input)?;
        let mut end = m.end();
        if self.lookahead[m.pattern().as_usize()] {
            // The look-ahead character is not part of the pretoken.
            end -= text[..end].chars().next_back().map_or(0, char::len_utf8);
        }
        (end > 0).then_some(end)
    }
}

/// `[^\r\n\p{L}\p{N}]`: one byte that may start a word.
fn lead(c: u8) -> bool {
    c & OTHER != 0 || (c & SPACE != 0 && c & NEWLINE == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(text: &str) {
        for (pattern, bpe) in [
            (Pattern::O200k, bpe_openai::o200k_base()),
            (Pattern::Cl100k, bpe_openai::cl100k_base()),
        ] {
            let theirs: Vec<&str> = bpe.split(text).collect();
            let ours: Vec<&str> = split(pattern, text).collect();
            assert_eq!(ours, theirs, "{pattern:?} splits {text:?} differently");
            // The regex alone, from the start of the text on.
            let mut at = 0;
            let mut regex = Vec::new();
            while at < text.len() {
                let n = Fallback::of(pattern)
                    .first(&text[at..])
                    .unwrap_or(text.len() - at);
                regex.push(&text[at..at + n]);
                at += n;
            }
            assert_eq!(
                regex, theirs,
                "{pattern:?}'s regex splits {text:?} differently"
            );
        }
    }

    /// Every ASCII byte in every short context, and random text weighted towards the bytes
    /// the rules turn on (case changes, apostrophes, digits, runs of mixed whitespace).
    #[test]
    fn ascii_splits_as_the_regex_does() {
        for c in 0u8..128 {
            for ctx in [
                "", "a", "A", "1", " ", "\n", "'", "/", "!", "  ", "\r\n", "\t",
            ] {
                let c = char::from(c);
                both(&format!("{c}{ctx}"));
                both(&format!("{ctx}{c}"));
                both(&format!("{ctx}{c}{ctx}x"));
            }
        }
        let alphabet: &[&str] = &[
            "a", "b", "Z", "Q", "x", "'", "s", "S", "t", "re", "RE", "vE", "ll", "Ll", "m", "D",
            "1", "22", "3333", " ", "  ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "/", "//", "{",
            "\"", ":", ",", "}", "_", "-", ".", "\x00", "\x1f", "\x7f", "HTTP", "Server",
        ];
        random(7, alphabet, 24);
    }

    /// 20,000 texts of fewer than `most` pieces drawn from `alphabet`, each split both ways.
    fn random(seed: u64, alphabet: &[&str], most: usize) {
        let mut rng = crate::rng::Rng::new(seed);
        for _ in 0..20_000 {
            let n = rng.below(most);
            let text: String = (0..n).map(|_| *rng.pick(alphabet)).collect();
            both(&text);
        }
    }

    /// Characters that are not ASCII, among ASCII text: letters, a mark, digits, spaces,
    /// punctuation, and `ſ`, which `(?i:'s)` matches.
    #[test]
    fn mixed_text_splits_as_the_regex_does() {
        for text in [
            "café au lait",
            "naïve’s test",
            "\u{a0}x \u{2003}y",
            "Ünïcödé\r\n  x",
            "日本語のテキスト 123",
            "Add the numbers [fn · math]",
            "don'ſ it'S",
            "e\u{301}t\u{301}e\u{301}",
            "1234567890é 12é 1é 123é 1234١ 12١",
        ] {
            both(text);
        }
        let alphabet: &[&str] = &[
            "a",
            "Z",
            "'",
            "s",
            "re",
            "1",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "/",
            "{",
            "\"",
            ":",
            "é",
            "É",
            "·",
            "’",
            "\u{a0}",
            "\u{2003}",
            "\u{2028}",
            "\u{85}",
            "ſ",
            "Σ",
            "σ",
            "日",
            "\u{301}",
            "١",
            "²",
            "\u{1f600}",
            "ǅ",
            "ʰ",
        ];
        random(11, alphabet, 16);
    }

    /// Every tool of every captured server, as compact JSON.
    #[test]
    fn captured_definitions_split_as_the_regex_does() {
        // `../shared` beside the checkout, or `TOOLCOST_SHARED`, as the integration tests.
        let shared = std::env::var_os("TOOLCOST_SHARED").map_or_else(
            || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
            std::path::PathBuf::from,
        );
        let dir = shared.join("real-mcp");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("shared/real-mcp: set TOOLCOST_SHARED") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("capture");
            both(&text);
            text.lines().for_each(both);
            seen += 1;
        }
        assert!(seen >= 10, "only {seen} captures under {}", dir.display());
    }
}
