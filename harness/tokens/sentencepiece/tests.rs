//! The encoder on hand-made models: merges, ties, frozen pieces, byte fallback, refusals.

use super::*;

// ---- Writing a ModelProto by hand ----

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, field << 3 | wire);
}

fn field_bytes(out: &mut Vec<u8>, field: u64, b: &[u8]) {
    key(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn field_varint(out: &mut Vec<u8>, field: u64, v: u64) {
    key(out, field, 0);
    varint(out, v);
}

struct Spec {
    model_type: u64,
    byte_fallback: bool,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    charsmap: &'static [u8],
    escape_whitespaces: bool,
    normalizer: bool,
}

fn gemma_like() -> Spec {
    Spec {
        model_type: 2,
        byte_fallback: true,
        add_dummy_prefix: false,
        remove_extra_whitespaces: false,
        charsmap: b"",
        escape_whitespaces: true,
        normalizer: true,
    }
}

/// A model with `<unk>` (id 0), the 256 byte pieces if byte fallback is on (ids 1..=256),
/// then the given pieces.
fn model(spec: &Spec, pieces: &[(&str, f32, u64)]) -> Vec<u8> {
    let mut all: Vec<(String, f32, u64)> = vec![("<unk>".into(), 0.0, 2)];
    if spec.byte_fallback {
        for c in 0..256 {
            all.push((format!("<0x{c:02X}>"), 0.0, 6));
        }
    }
    all.extend(pieces.iter().map(|&(p, s, t)| (p.to_string(), s, t)));
    let mut out = Vec::new();
    for (p, s, t) in &all {
        let mut m = Vec::new();
        field_bytes(&mut m, 1, p.as_bytes());
        key(&mut m, 2, 5);
        m.extend_from_slice(&s.to_bits().to_le_bytes());
        if *t != 1 {
            field_varint(&mut m, 3, *t);
        }
        field_bytes(&mut out, 1, &m);
    }
    let mut t = Vec::new();
    field_varint(&mut t, 3, spec.model_type);
    field_varint(&mut t, 4, all.len() as u64);
    field_varint(&mut t, 35, spec.byte_fallback as u64);
    field_varint(&mut t, 40, 0);
    field_bytes(&mut out, 2, &t);
    if spec.normalizer {
        let mut n = Vec::new();
        field_bytes(&mut n, 1, b"identity");
        field_bytes(&mut n, 2, spec.charsmap);
        field_varint(&mut n, 3, spec.add_dummy_prefix as u64);
        field_varint(&mut n, 4, spec.remove_extra_whitespaces as u64);
        field_varint(&mut n, 5, spec.escape_whitespaces as u64);
        field_bytes(&mut out, 3, &n);
    }
    out
}

/// The pieces of an encoding, written as text (byte pieces as `<0xXX>`).
fn pieces(sp: &SentencePiece, text: &str) -> Vec<String> {
    let ids = sp.encode(text);
    assert_eq!(
        ids.len(),
        sp.count(text),
        "count and encode disagree on {text:?}"
    );
    ids.iter()
        .map(|&id| String::from_utf8_lossy(sp.piece(id)).into_owned())
        .collect()
}

fn load(pieces: &[(&str, f32, u64)]) -> SentencePiece {
    SentencePiece::from_model_proto(&model(&gemma_like(), pieces)).unwrap()
}

// ---- Encoding ----

#[test]
fn merges_highest_score_first() {
    let sp = load(&[
        ("a", -10.0, 1),
        ("b", -10.0, 1),
        ("c", -10.0, 1),
        ("bc", -1.0, 1),
        ("ab", -2.0, 1),
        ("abc", -3.0, 1),
    ]);
    // "bc" wins over "ab"; then "a"+"bc" is "abc".
    assert_eq!(pieces(&sp, "abc"), ["abc"]);
    // Without "abc" reachable: "ab" + "c"? "bc" is taken first, leaving "a", "bc".
    assert_eq!(pieces(&sp, "abcc"), ["abc", "c"]);
    assert_eq!(pieces(&sp, "cab"), ["c", "ab"]);
    assert_eq!(sp.vocab_size(), 1 + 256 + 6);
}

#[test]
fn ties_go_to_the_leftmost_pair() {
    let sp = load(&[("a", -5.0, 1), ("aa", -1.0, 1)]);
    assert_eq!(pieces(&sp, "aaa"), ["aa", "a"]);
    assert_eq!(pieces(&sp, "aaaaa"), ["aa", "aa", "a"]);
    // Two different pieces of equal score: the left one is made first.
    let sp = load(&[
        ("x", -5.0, 1),
        ("y", -5.0, 1),
        ("xy", -1.0, 1),
        ("yx", -1.0, 1),
    ]);
    assert_eq!(pieces(&sp, "xyx"), ["xy", "x"]);
    assert_eq!(pieces(&sp, "yxy"), ["yx", "y"]);
}

#[test]
fn negative_zero_ranks_below_zero() {
    // "pq" scores -0.0 and "qr" 0.0: the reference merges "qr" (no tie), while two
    // scores of -0.0 do tie and the leftmost pair wins.
    let three = |pq: f32, qr: f32| {
        load(&[
            ("p", -5.0, 1),
            ("q", -5.0, 1),
            ("r", -5.0, 1),
            ("pq", pq, 1),
            ("qr", qr, 1),
        ])
    };
    assert_eq!(pieces(&three(-0.0, 0.0), "pqr"), ["p", "qr"]);
    assert_eq!(pieces(&three(0.0, -0.0), "pqr"), ["pq", "r"]);
    assert_eq!(pieces(&three(-0.0, -0.0), "pqr"), ["pq", "r"]);
    assert_eq!(pieces(&three(1e-45, 0.0), "pqr"), ["pq", "r"]);
    assert_eq!(pieces(&three(-1.5, -1.4), "pqr"), ["p", "qr"]);
}

#[test]
fn stale_pairs_are_skipped() {
    // "bc" then "abc" must not be merged from a stale "ab".
    let sp = load(&[
        ("a", -9.0, 1),
        ("b", -9.0, 1),
        ("c", -9.0, 1),
        ("d", -9.0, 1),
        ("ab", -3.0, 1),
        ("bc", -1.0, 1),
        ("cd", -2.0, 1),
        ("abcd", -4.0, 1),
    ]);
    // bc first: a, bc, d; then no "abc" or "bcd": stays.
    assert_eq!(pieces(&sp, "abcd"), ["a", "bc", "d"]);
}

#[test]
fn spaces_become_lower_one_eighth_block() {
    let sp = load(&[
        ("\u{2581}", -1.0, 1),
        ("\u{2581}a", -0.5, 1),
        ("a", -2.0, 1),
    ]);
    assert_eq!(pieces(&sp, "a a"), ["a", "\u{2581}a"]);
    assert_eq!(pieces(&sp, "\u{2581}a"), ["\u{2581}a"]);
    let mut spec = gemma_like();
    spec.escape_whitespaces = false;
    let sp = SentencePiece::from_model_proto(&model(
        &spec,
        &[(" a", -0.5, 1), ("a", -1.0, 1), (" ", -1.0, 1)],
    ))
    .unwrap();
    assert_eq!(pieces(&sp, "a a"), ["a", " a"]);
}

#[test]
fn pieces_may_span_a_space() {
    // "a▁b" holds "a" before "▁", so the text is not cut there and "a b" merges whole;
    // "c▁" is no piece, so "c b" is cut before the space.
    let sp = load(&[
        ("a", -9.0, 1),
        ("b", -9.0, 1),
        ("c", -9.0, 1),
        ("\u{2581}", -9.0, 1),
        ("a\u{2581}", -2.0, 1),
        ("a\u{2581}b", -1.0, 1),
        ("\u{2581}b", -3.0, 1),
    ]);
    assert_eq!(pieces(&sp, "a b"), ["a\u{2581}b"]);
    assert_eq!(pieces(&sp, "c b"), ["c", "\u{2581}b"]);
    assert_eq!(pieces(&sp, "ca bc"), ["c", "a\u{2581}b", "c"]);
}

#[test]
fn user_defined_pieces_are_frozen_and_longest_first() {
    let sp = load(&[
        ("<b>", 0.0, 4),
        ("<br>", 0.0, 4),
        ("\n", 0.0, 4),
        ("\n\n", 0.0, 4),
        ("x", -1.0, 1),
        ("x<", -0.1, 1),
        (">x", -0.1, 1),
        ("b", -1.0, 1),
        ("r", -1.0, 1),
        ("<", -1.0, 1),
        (">", -1.0, 1),
        ("<b", -0.05, 1),
    ]);
    assert_eq!(pieces(&sp, "x<b>x"), ["x", "<b>", "x"]);
    assert_eq!(pieces(&sp, "x<br>x"), ["x", "<br>", "x"]);
    // "<b" is no user-defined piece: merged normally (it outscores "x<"), then ">x".
    assert_eq!(pieces(&sp, "x<bx>x"), ["x", "<b", "x", ">x"]);
    assert_eq!(pieces(&sp, "\n\n\nx"), ["\n\n", "\n", "x"]);
    assert_eq!(pieces(&sp, "x\n\nx"), ["x", "\n\n", "x"]);
}

#[test]
fn unknown_characters_fall_back_to_bytes() {
    let sp = load(&[("a", -1.0, 1)]);
    assert_eq!(pieces(&sp, "aé"), ["a", "<0xC3>", "<0xA9>"]);
    assert_eq!(
        sp.encode("\u{1F600}"),
        [1 + 0xF0, 1 + 0x9F, 1 + 0x98, 1 + 0x80]
    );
    assert_eq!(sp.encode(""), Vec::<u32>::new());
    assert_eq!(sp.count(""), 0);
}

#[test]
fn without_byte_fallback_a_run_of_unknowns_is_one_unk() {
    let mut spec = gemma_like();
    spec.byte_fallback = false;
    let sp = SentencePiece::from_model_proto(&model(&spec, &[("a", -1.0, 1)])).unwrap();
    assert_eq!(sp.encode("éé a"), [0, 1]);
    assert_eq!(sp.encode("aéa"), [1, 0, 1]);
    assert_eq!(sp.count("ééaéé"), 3);
}

#[test]
fn unused_pieces_are_split_back() {
    // "abc" is unused: it is still merged ("ab" + "c"), then split back into them.
    let sp = load(&[
        ("a", -9.0, 1),
        ("b", -9.0, 1),
        ("c", -9.0, 1),
        ("ab", -1.0, 1),
        ("abc", -0.5, 5),
    ]);
    assert!(sp.has_unused);
    assert_eq!(pieces(&sp, "abc"), ["ab", "c"]);
    assert_eq!(pieces(&sp, "abcab"), ["ab", "c", "ab"]);
    // Unused inside unused: both undone.
    let sp = load(&[
        ("a", -9.0, 1),
        ("b", -9.0, 1),
        ("c", -9.0, 1),
        ("ab", -1.0, 5),
        ("abc", -0.5, 5),
    ]);
    assert_eq!(pieces(&sp, "abc"), ["a", "b", "c"]);
}

#[test]
fn control_pieces_are_not_matched_in_text() {
    let sp = load(&[
        ("<s>", 0.0, 3),
        ("<", -1.0, 1),
        ("s", -1.0, 1),
        (">", -1.0, 1),
    ]);
    assert_eq!(pieces(&sp, "<s>"), ["<", "s", ">"]);
}

#[test]
fn long_runs_take_linear_log_time() {
    let sp = load(&[("a", -1.0, 1), ("aa", -0.5, 1), ("aaaa", -0.25, 1)]);
    let text = "a".repeat(200_001);
    assert_eq!(sp.count(&text), 50_001);
}

#[test]
fn a_dummy_prefix_goes_before_a_text_that_is_not_empty() {
    let mut spec = gemma_like();
    spec.add_dummy_prefix = true;
    let pieces_in = [
        ("\u{2581}", -1.0, 1),
        ("a", -2.0, 1),
        ("\u{2581}a", -0.5, 1),
        ("[R]", 0.0, 4),
    ];
    let sp = SentencePiece::from_model_proto(&model(&spec, &pieces_in)).unwrap();
    assert_eq!(pieces(&sp, "a"), ["\u{2581}a"]);
    assert_eq!(pieces(&sp, "a a"), ["\u{2581}a", "\u{2581}a"]);
    assert_eq!(pieces(&sp, " a"), ["\u{2581}", "\u{2581}a"]);
    // A user-defined piece at the start stays whole after the prefix.
    assert_eq!(pieces(&sp, "[R]a"), ["\u{2581}", "[R]", "a"]);
    assert!(sp.encode("").is_empty());
}

// ---- Refusals ----

#[test]
fn refuses_other_models() {
    let mut spec = gemma_like();
    spec.model_type = 1;
    let e = SentencePiece::from_model_proto(&model(&spec, &[]))
        .err()
        .unwrap();
    assert!(e.contains("UNIGRAM") && e.contains("only BPE"), "{e}");

    let mut spec = gemma_like();
    spec.remove_extra_whitespaces = true;
    let e = SentencePiece::from_model_proto(&model(&spec, &[]))
        .err()
        .unwrap();
    assert!(e.contains("extra whitespace"), "{e}");

    let mut spec = gemma_like();
    spec.charsmap = b"\x04\0\0\0abcdxyz";
    let e = SentencePiece::from_model_proto(&model(&spec, &[]))
        .err()
        .unwrap();
    assert!(e.contains("character map"), "{e}");

    // No normaliser spec at all: the defaults remove extra whitespace.
    let mut spec = gemma_like();
    spec.normalizer = false;
    assert!(SentencePiece::from_model_proto(&model(&spec, &[])).is_err());
}

#[test]
fn refuses_bad_vocabularies() {
    let dup =
        SentencePiece::from_model_proto(&model(&gemma_like(), &[("a", 0.0, 1), ("a", -1.0, 4)]));
    assert!(dup.err().unwrap().contains("twice"));
    // Also across types (the reference refuses this too).
    let dup =
        SentencePiece::from_model_proto(&model(&gemma_like(), &[("a", 0.0, 1), ("a", 0.0, 3)]));
    assert!(dup.err().unwrap().contains("twice"));
    let nan = SentencePiece::from_model_proto(&model(&gemma_like(), &[("a", f32::NAN, 1)]));
    assert!(nan.is_err());
    let empty = SentencePiece::from_model_proto(&model(&gemma_like(), &[("", 0.0, 1)]));
    assert!(empty.err().unwrap().contains("empty"));
    let bad_byte = SentencePiece::from_model_proto(&model(&gemma_like(), &[("<0xzz>", 0.0, 6)]));
    assert!(bad_byte.is_err());
    let mut spec = gemma_like();
    spec.byte_fallback = false;
    let stray_byte = SentencePiece::from_model_proto(&model(&spec, &[("<0x41>", 0.0, 6)]));
    assert!(stray_byte.is_err());
    // No unknown piece.
    let mut out = Vec::new();
    let mut t = Vec::new();
    field_varint(&mut t, 3, 2);
    field_bytes(&mut out, 2, &t);
    let mut n = Vec::new();
    field_varint(&mut n, 3, 0);
    field_varint(&mut n, 4, 0);
    field_bytes(&mut out, 3, &n);
    let e = SentencePiece::from_model_proto(&out).err().unwrap();
    assert!(e.contains("no unknown"), "{e}");
}

#[test]
fn truncated_and_garbage_files_are_errors_not_panics() {
    let good = model(
        &gemma_like(),
        &[("a", -1.0, 1), ("ab", -0.5, 1), ("<b>", 0.0, 4)],
    );
    assert!(SentencePiece::from_model_proto(&good).is_ok());
    for cut in 0..good.len() {
        // A cut may land between fields and still read as a (refused or smaller) model.
        let _ = SentencePiece::from_model_proto(&good[..cut]);
    }
    let e = SentencePiece::from_model_proto(&good[..good.len() - 3])
        .err()
        .unwrap();
    assert!(e.contains("cut short"), "{e}");
    assert!(SentencePiece::from_model_proto(b"").is_err());
    assert!(SentencePiece::from_model_proto(b"\x00\x01").is_err());
    assert!(SentencePiece::from_model_proto(&[0xff; 20]).is_err());
    assert!(SentencePiece::from_model_proto(b"\x0a\xff\xff\xff\xff\x0f").is_err());

    // Random bytes and random corruptions of a good model.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..3000 {
        let len = (next() % 64) as usize;
        let junk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let _ = SentencePiece::from_model_proto(&junk);
        let mut bent = good.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() as usize) % bent.len();
            bent[i] = next() as u8;
        }
        if let Ok(sp) = SentencePiece::from_model_proto(&bent) {
            let _ = sp.encode("ab <b> a\u{e9}");
        }
    }
}

#[test]
fn unknown_fields_and_repeats_follow_protobuf_rules() {
    let mut m = model(&gemma_like(), &[("a", -1.0, 1), ("aa", -0.5, 1)]);
    // An unknown field of every wire type at the top level.
    field_varint(&mut m, 99, 12345);
    key(&mut m, 98, 1);
    m.extend_from_slice(&[0; 8]);
    key(&mut m, 97, 5);
    m.extend_from_slice(&[0; 4]);
    field_bytes(&mut m, 96, b"whatever");
    // A second normaliser spec is merged into the first; its escape setting wins.
    let mut n = Vec::new();
    field_varint(&mut n, 5, 0);
    field_bytes(&mut m, 3, &n);
    let sp = SentencePiece::from_model_proto(&m).unwrap();
    assert!(!sp.escape_whitespaces);
    assert_eq!(sp.count("aaa"), 2);
}
