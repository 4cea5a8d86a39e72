use super::*;

/// Segments cover the text in order, each within the limit unless no clean boundary lets
/// it be, and each tokenizer counted whole counts the segments as it counts the text.
#[test]
fn segments_count_as_the_whole_text() {
    let text = "Return the account's invoices, 25 per page.\n\n  {\"type\": \"string\", \
                \"enum\": [\"a\", \"b\"]} 数据检索 and Überprüfung 😀 x1 2024-12-07 \
                <think>reason</think>   spaced   words\tTAB can't won't 12345 alpha beta \
                gamma_delta EPSILON zeta    \r\n end.";
    let joined: String = segments(text, 16).collect();
    assert_eq!(joined, text);
    assert!(segments(text, 16).count() > 8);
    let run = "a".repeat(40);
    assert_eq!(segments(&run, 16).collect::<Vec<_>>(), vec![run.as_str()]);
    for t in Tokenizer::ALL {
        let whole = match t.spec().counter {
            Counter::Splintr(v) => v.count(text),
            Counter::Whole(count) if t.name() == "gemma3" => count(text),
            Counter::Whole(_) => continue,
            Counter::Bpe { .. } | Counter::ClaudeEstimate | Counter::Claude(_) => continue,
        };
        for max in [8, 16, 40, 100] {
            let cut: usize = match t.spec().counter {
                Counter::Splintr(v) => segments(text, max).map(|s| v.count(s)).sum(),
                Counter::Whole(count) => segments(text, max).map(count).sum(),
                Counter::Bpe { .. } | Counter::ClaudeEstimate | Counter::Claude(_) => 0,
            };
            assert_eq!(cut, whole, "{} cut at {max} bytes", t.name());
        }
    }
}

/// Work spread over the cores inside [`counting_whole`] counts whole too, so the whole
/// counts that assembled ones are tested against are not assembled themselves.
#[test]
fn workers_count_whole_inside_counting_whole() {
    let items: Vec<u32> = (0..500).collect();
    let whole = counting_whole_now;
    assert!(counting_whole(|| on_cores(&items, |_| whole()))
        .into_iter()
        .all(|w| w));
    assert!(on_cores(&items, |_| whole()).into_iter().all(|w| !w));
}

/// Remembered pretoken counts are each pretoken's own: a pretoken and the same bytes with a
/// NUL after them, or one byte more, never share a count, for pretokens of 1 to 28 bytes
/// (on both sides of the longest one remembered, 24).
#[test]
fn remembered_pretoken_counts_are_their_own() {
    let words = [
        "a",
        "a\0",
        "a\0\0",
        "\0",
        "zq",
        "zqzqzqzqzqzqzqz",
        "zqzqzqzqzqzqzqzq",
    ];
    let mut rng = crate::rng::Rng::new(3);
    for which in [Tokenizer::O200k, Tokenizer::Cl100k] {
        let (bpe, key) = match which {
            Tokenizer::O200k => bpe_of(families::Bpe::O200k),
            _ => bpe_of(families::Bpe::Cl100k),
        };
        for _ in 0..3_000 {
            let n = rng.below(6);
            let text: String = (0..n)
                .map(|_| {
                    let w = *rng.pick(&words);
                    let k = rng.below(28);
                    match rng.chance(0.5) {
                        true => w.to_string(),
                        false => "x".repeat(k),
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(
                pieces::count(bpe, key, &text).total,
                bpe.count(text.as_str()),
                "{text:?}"
            );
        }
    }
}

/// A text long enough to be counted in parts on every core counts as the whole does, by
/// kind too, under both BPEs: prose, JSON, other scripts and runs of spaces, with and
/// without clean places to cut.
#[test]
fn long_texts_counted_in_parts_count_as_the_whole() {
    let words = [
        "the",
        "Quick",
        "x2",
        "42",
        "naïve",
        "don't",
        "{\"a\":",
        "\"b\"}",
        "  ",
        "\n",
        "中文",
        "\u{1f600}",
        "a.",
        "b,",
        "snake_case",
    ];
    let mut rng = crate::rng::Rng::new(23);
    let mut prose = String::new();
    while prose.len() < (3 << 20) {
        let word: &&str = rng.pick(&words);
        prose.push_str(word);
        prose.push(' ');
    }
    // No clean place at all: one part.
    let solid = "{\"k\":[1,2]}".repeat(120_000);
    for text in [prose.as_str(), solid.as_str()] {
        for which in [memo::O200K, memo::CL100K] {
            let bpe = match which {
                memo::O200K => Bpe::o200k(),
                _ => Bpe::cl100k(),
            };
            let parted = pieces::count(bpe, which, text);
            assert_eq!(parted.total, bpe.count(text), "{which}");
            // By kind too: the parts' pretokens are the whole's.
            assert_eq!(parted, pieces::count_one(bpe, which, text), "{which}");
        }
    }
}

/// A text cut into pieces at clean boundaries (a letter or digit, then a space and a
/// letter) and at JSON punctuation counts as the whole text does, under every tokenizer,
/// the current-Claude estimate included; a cut that is not clean (inside a word, before a
/// second space) is glued and counted whole, with the same result.
#[test]
fn pieces_cut_at_clean_boundaries_count_as_the_whole() {
    let words = [
        "the",
        "Quick",
        "fox",
        "jumps",
        "x2",
        "42",
        "naïve",
        "don't",
        "{\"a\":",
        "\"b\"}",
        "UPPER",
        "camelCase",
        "snake_case",
        "·",
        "\u{1f600}",
        "over",
        "\n",
        "a.",
        "b,",
    ];
    let mut rng = crate::rng::Rng::new(17);
    for _ in 0..1500 {
        let n = 1 + rng.below(14);
        let text: String = (0..n)
            .map(|i| {
                let sep = match rng.below(5) {
                    0 => "",
                    1 => "  ",
                    _ => " ",
                };
                format!("{}{}", if i == 0 { "" } else { sep }, rng.pick(&words))
            })
            .collect();
        // Cut at every byte boundary that is a char boundary, some of the time.
        let mut cuts = vec![0];
        for i in 1..text.len() {
            if text.is_char_boundary(i) && rng.chance(0.3) {
                cuts.push(i);
            }
        }
        cuts.push(text.len());
        let pieces: Vec<&str> = cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect();
        for tok in [
            Tokenizer::O200k,
            Tokenizer::Cl100k,
            Tokenizer::Kimi,
            Tokenizer::ClaudeEst,
            Tokenizer::ClaudeLegacyEst,
        ] {
            let parts = pieces.iter().map(|p| Part::Piece(p));
            let assembled = tok.count_parts(parts);
            let whole = counting_whole(|| tok.count(&text));
            assert!(
                (assembled - whole).abs() < 1e-9,
                "{tok:?} {pieces:?}: {assembled} against {whole}"
            );
        }
    }
}
