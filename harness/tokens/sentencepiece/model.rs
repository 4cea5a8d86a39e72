//! Reading a SentencePiece model file (a `ModelProto` protocol buffer) and checking it into
//! the tables [`super::SentencePiece`] encodes with: bounded reads, every refusal said.

use super::*;

/// A model file read, checked and built into the encoder's tables (see
/// [`SentencePiece::from_model_proto`]).
pub(super) fn read(bytes: &[u8]) -> Result<SentencePiece, String> {
    let raw = parse_model(bytes)?;
    raw.check_supported()?;
    build(&raw)
}

/// A model as read from the file, before checking.
struct RawModel<'a> {
    pieces: Vec<RawPiece<'a>>,
    /// `TrainerSpec.model_type` (UNIGRAM = 1 unless set).
    model_type: i32,
    treat_whitespace_as_suffix: bool,
    byte_fallback: bool,
    /// `NormalizerSpec.name`, for messages.
    normalizer_name: Vec<u8>,
    charsmap_len: usize,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
}

struct RawPiece<'a> {
    text: &'a [u8],
    score: f32,
    kind: u8,
}

impl RawModel<'_> {
    /// Refuses models whose encoding this code would not reproduce.
    fn check_supported(&self) -> Result<(), String> {
        if self.model_type != BPE {
            let name = MODEL_TYPES
                .get((self.model_type - 1) as usize)
                .copied()
                .unwrap_or("unknown");
            return Err(format!(
                "the SentencePiece model is of type {name}; only BPE models (such as Gemma's) are supported"
            ));
        }
        let only = "only models with an identity normaliser that keeps whitespace (Gemma's, Mistral's) are supported";
        if self.charsmap_len > 0 {
            return Err(format!(
                "the SentencePiece model's normaliser ({:?}) rewrites text with a character map; {only}",
                String::from_utf8_lossy(&self.normalizer_name)
            ));
        }
        if self.remove_extra_whitespaces {
            return Err(format!(
                "the SentencePiece model removes extra whitespace; {only}"
            ));
        }
        if self.treat_whitespace_as_suffix {
            return Err(format!(
                "the SentencePiece model treats whitespace as a suffix; {only}"
            ));
        }
        Ok(())
    }
}

/// Builds the encoder from a checked model, refusing what SentencePiece refuses when it loads
/// a model (empty, overlong or repeated pieces, no unknown piece, bad byte pieces).
fn build(raw: &RawModel) -> Result<SentencePiece, String> {
    let n = raw.pieces.len();
    if n >= (u32::MAX / 2) as usize {
        return Err("the SentencePiece model has too many pieces".into());
    }
    let total: usize = raw.pieces.iter().map(|p| p.text.len()).sum();
    if total >= u32::MAX as usize {
        return Err("the SentencePiece model's pieces are too long in all".into());
    }
    let show = |t: &[u8]| format!("{:?}", String::from_utf8_lossy(t));
    let mut bytes = Vec::with_capacity(total);
    let mut entries = Vec::with_capacity(n);
    let mut n_mergeable = 0;
    let mut unk_id = None;
    let mut has_unused = false;
    let mut longest_mergeable = 0;
    let mut byte_found = [false; 256];
    for (id, p) in raw.pieces.iter().enumerate() {
        if p.text.is_empty() {
            return Err(format!("the SentencePiece model's piece {id} is empty"));
        }
        if p.text.len() >= MAX_PIECE_BYTES {
            return Err(format!(
                "the SentencePiece model's piece {id} is too long ({} bytes)",
                p.text.len()
            ));
        }
        if p.text.contains(&0) {
            return Err(format!(
                "the SentencePiece model's piece {id} holds a NUL character"
            ));
        }
        if p.score.is_nan() {
            return Err(format!(
                "the SentencePiece model's piece {id} ({}) has a score that is not a number",
                show(p.text)
            ));
        }
        match p.kind {
            NORMAL | USER_DEFINED | UNUSED => {
                n_mergeable += 1;
                longest_mergeable = longest_mergeable.max(p.text.len());
                has_unused |= p.kind == UNUSED;
            }
            // Control pieces (padding, BOS, EOS) are looked up but never come out of text.
            CONTROL => {}
            UNKNOWN => {
                if unk_id.is_some() {
                    return Err("the SentencePiece model has more than one unknown piece".into());
                }
                unk_id = Some(id as u32);
            }
            BYTE => {
                if !raw.byte_fallback {
                    return Err(format!(
                        "the SentencePiece model has byte piece {} but no byte fallback",
                        show(p.text)
                    ));
                }
                match byte_of_piece(p.text) {
                    Some(c) => byte_found[c as usize] = true,
                    None => {
                        return Err(format!(
                            "the SentencePiece model's byte piece {} is malformed",
                            show(p.text)
                        ))
                    }
                }
            }
            _ => {}
        }
        entries.push(Entry {
            start: bytes.len() as u32,
            len: p.text.len() as u32,
            rank: score_rank(p.score),
            kind: p.kind,
        });
        bytes.extend_from_slice(p.text);
    }
    let unk_id = unk_id.ok_or("the SentencePiece model has no unknown piece")?;
    if raw.byte_fallback && byte_found.contains(&false) {
        return Err("the SentencePiece model has byte fallback but not all 256 byte pieces".into());
    }

    let mut mergeable = Table::with_room_for(n_mergeable);
    let mut reserved = Table::with_room_for(n - n_mergeable);
    for id in 0..n as u32 {
        let table = match entries[id as usize].kind {
            NORMAL | USER_DEFINED | UNUSED => &mut mergeable,
            _ => &mut reserved,
        };
        if !table.insert(id, &bytes, &entries) {
            let e = &entries[id as usize];
            let text = &bytes[e.start as usize..(e.start + e.len) as usize];
            return Err(format!(
                "the SentencePiece model defines piece {} twice",
                show(text)
            ));
        }
    }
    for e in &entries {
        if !matches!(e.kind, NORMAL | USER_DEFINED | UNUSED) {
            let text = &bytes[e.start as usize..(e.start + e.len) as usize];
            if mergeable.find(text, &bytes, &entries).is_some() {
                return Err(format!(
                    "the SentencePiece model defines piece {} twice",
                    show(text)
                ));
            }
        }
    }

    let user_defined = Trie::new(
        raw.pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == USER_DEFINED)
            .map(|(id, p)| (p.text, id as u32)),
    );
    let mut sp = SentencePiece {
        bytes,
        entries,
        mergeable,
        reserved,
        user_defined,
        byte_ids: [unk_id; 256],
        unk_id,
        byte_fallback: raw.byte_fallback,
        escape_whitespaces: raw.escape_whitespaces,
        add_dummy_prefix: raw.add_dummy_prefix,
        has_unused,
        longest_mergeable,
        small_pairs: vec![(0, 0); SMALL * SMALL],
        joinable: vec![false; SMALL * SMALL],
        small_ids: [NONE; SMALL],
    };

    // The tables for ASCII characters and U+2581.
    let small_char = |i: usize| -> &'static [u8] {
        const ASCII: [u8; 128] = {
            let mut a = [0u8; 128];
            let mut i = 0;
            while i < 128 {
                a[i] = i as u8;
                i += 1;
            }
            a
        };
        if i < 0x80 {
            &ASCII[i..i + 1]
        } else {
            "\u{2581}".as_bytes()
        }
    };
    for x in 0..SMALL {
        if let Some((id, _)) = sp.mergeable.find(small_char(x), &sp.bytes, &sp.entries) {
            sp.small_ids[x] = id;
        }
        for y in 0..SMALL {
            let key = [small_char(x), small_char(y)].concat();
            if let Some((id, rank)) = sp.mergeable.find(&key, &sp.bytes, &sp.entries) {
                sp.small_pairs[x * SMALL + y] = (id + 1, rank);
            }
        }
    }
    for e in &sp.entries {
        if !matches!(e.kind, NORMAL | USER_DEFINED | UNUSED) {
            continue;
        }
        let piece = &sp.bytes[e.start as usize..(e.start + e.len) as usize];
        let (mut prev, mut pos) = (None, 0);
        while pos < piece.len() {
            let len = one_char_len(piece[pos]).min(piece.len() - pos);
            let small = small_index(&piece[pos..pos + len]);
            if let (Some(x), Some(y)) = (prev, small) {
                sp.joinable[x * SMALL + y] = true;
            }
            prev = small;
            pos += len;
        }
    }

    for c in 0..256usize {
        sp.byte_ids[c] = sp.final_id(format!("<0x{c:02X}>").as_bytes());
    }
    Ok(sp)
}

/// The byte a piece `<0xXX>` stands for (upper-case hex digits, as SentencePiece writes them).
fn byte_of_piece(t: &[u8]) -> Option<u8> {
    let hex = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    match t {
        [b'<', b'0', b'x', h, l, b'>'] => Some(hex(*h)? << 4 | hex(*l)?),
        _ => None,
    }
}

/// Reads a serialised `ModelProto`. Fields this code does not use are skipped by their wire
/// type; a repeated singular field keeps its last value and repeated sub-messages are merged,
/// as protocol buffers do; an enum value outside the enum leaves the field as it was.
fn parse_model(bytes: &[u8]) -> Result<RawModel<'_>, String> {
    let mut m = RawModel {
        pieces: Vec::new(),
        model_type: 1,
        treat_whitespace_as_suffix: false,
        byte_fallback: false,
        normalizer_name: Vec::new(),
        charsmap_len: 0,
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
        escape_whitespaces: true,
    };
    let mut r = Wire {
        buf: bytes,
        pos: 0,
        base: 0,
    };
    while !r.at_end() {
        let (field, wire) = r.key()?;
        match (field, wire) {
            (1, 2) => {
                let mut p = r.message()?;
                let mut piece = RawPiece {
                    text: &[],
                    score: 0.0,
                    kind: NORMAL,
                };
                while !p.at_end() {
                    match p.key()? {
                        (1, 2) => piece.text = p.bytes()?,
                        (2, 5) => piece.score = f32::from_bits(p.fixed32()?),
                        (3, 0) => {
                            let v = p.varint()? as i32;
                            if (1..=6).contains(&v) {
                                piece.kind = v as u8;
                            }
                        }
                        (_, w) => p.skip(w)?,
                    }
                }
                m.pieces.push(piece);
            }
            (2, 2) => {
                let mut t = r.message()?;
                while !t.at_end() {
                    match t.key()? {
                        (3, 0) => {
                            let v = t.varint()? as i32;
                            if (1..=4).contains(&v) {
                                m.model_type = v;
                            }
                        }
                        (24, 0) => m.treat_whitespace_as_suffix = t.varint()? != 0,
                        (35, 0) => m.byte_fallback = t.varint()? != 0,
                        (_, w) => t.skip(w)?,
                    }
                }
            }
            (3, 2) => {
                let mut s = r.message()?;
                while !s.at_end() {
                    match s.key()? {
                        (1, 2) => m.normalizer_name = s.bytes()?.to_vec(),
                        (2, 2) => m.charsmap_len = s.bytes()?.len(),
                        (3, 0) => m.add_dummy_prefix = s.varint()? != 0,
                        (4, 0) => m.remove_extra_whitespaces = s.varint()? != 0,
                        (5, 0) => m.escape_whitespaces = s.varint()? != 0,
                        (_, w) => s.skip(w)?,
                    }
                }
            }
            (_, w) => r.skip(w)?,
        }
    }
    Ok(m)
}

/// A reader of protocol-buffer wire format over a byte slice; every read is bounds-checked.
struct Wire<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Where `buf` starts in the whole file, for messages.
    base: usize,
}

impl<'a> Wire<'a> {
    fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn cut_short(&self, what: &str) -> String {
        format!(
            "the SentencePiece model file is cut short or corrupt: {what} at byte {} runs past its end",
            self.base + self.pos
        )
    }

    fn varint(&mut self) -> Result<u64, String> {
        let at = self.pos;
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&c) = self.buf.get(self.pos) else {
                self.pos = at;
                return Err(self.cut_short("a number"));
            };
            self.pos += 1;
            v |= u64::from(c & 0x7f) << (7 * i);
            if c < 0x80 {
                return Ok(v);
            }
        }
        Err(format!(
            "the SentencePiece model file is corrupt: a number at byte {} is longer than 10 bytes",
            self.base + at
        ))
    }

    /// A field's number and wire type.
    fn key(&mut self) -> Result<(u64, u8), String> {
        let at = self.base + self.pos;
        let k = self.varint()?;
        if k >> 3 == 0 {
            return Err(format!(
                "the SentencePiece model file is corrupt (not a model?): field number 0 at byte {at}"
            ));
        }
        Ok((k >> 3, (k & 7) as u8))
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let at = self.pos;
        let len = self.varint()?;
        if len > (self.buf.len() - self.pos) as u64 {
            self.pos = at;
            return Err(self.cut_short("a length-delimited field"));
        }
        let s = &self.buf[self.pos..self.pos + len as usize];
        self.pos += len as usize;
        Ok(s)
    }

    /// A length-delimited field, as a reader of its own.
    fn message(&mut self) -> Result<Wire<'a>, String> {
        let b = self.bytes()?;
        Ok(Wire {
            buf: b,
            pos: 0,
            base: self.base + self.pos - b.len(),
        })
    }

    fn fixed(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.buf.len() - self.pos < n {
            return Err(self.cut_short("a fixed-size field"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn fixed32(&mut self) -> Result<u32, String> {
        let s = self.fixed(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// Skips a field of this wire type.
    fn skip(&mut self, wire: u8) -> Result<(), String> {
        match wire {
            0 => self.varint().map(drop),
            1 => self.fixed(8).map(drop),
            2 => self.bytes().map(drop),
            5 => self.fixed(4).map(drop),
            3 | 4 => Err(format!(
                "the SentencePiece model file uses protocol-buffer groups (byte {}), which no SentencePiece model has",
                self.base + self.pos
            )),
            _ => Err(format!(
                "the SentencePiece model file is corrupt (not a model?): wire type {wire} before byte {}",
                self.base + self.pos
            )),
        }
    }
}

/// What a plain-text vocabulary does not carry: the model file's settings and pieces that
/// the text form left out.
pub struct TextSettings {
    /// Whether a text that is not empty gets one space before it (the model file's
    /// `add_dummy_prefix`).
    pub add_dummy_prefix: bool,
    /// User-defined pieces of the model file that the text form does not hold; they are given
    /// the ids after the file's (their count is what matters, not their id).
    pub user_defined: &'static [&'static str],
}

/// Reads a SentencePiece vocabulary in the plain-text form `splintr`'s vocabulary crates ship
/// (one line per id, in id order: the piece in standard base64, its score and, in the newer
/// form, its type number), with the settings every such model file shares: BPE, byte
/// fallback, spaces escaped as U+2581, an identity normaliser; `settings` gives the rest. A
/// line of two fields is typed as SentencePiece types such pieces: `<unk>` unknown, `<s>` and
/// `</s>` control, `<0xXX>` byte, any other normal. Every line is checked; a malformed one is
/// refused by its line number.
pub(super) fn read_text(text: &[u8], settings: &TextSettings) -> Result<SentencePiece, String> {
    let text = std::str::from_utf8(text).map_err(|_| "the vocabulary is not UTF-8 text")?;
    let mut pieces = Vec::new();
    let mut meta = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let bad = |what: &str| format!("the vocabulary's line {}: {what}", i + 1);
        let mut f = line.split(' ');
        let (Some(p), Some(s), k, None) = (f.next(), f.next(), f.next(), f.next()) else {
            return Err(bad("not `piece score [type]`"));
        };
        let piece = base64(p).ok_or_else(|| bad("the piece is not base64"))?;
        let score: f32 = s.parse().map_err(|_| bad("the score is not a number"))?;
        let kind: u8 = match k {
            Some(k) => k.parse().map_err(|_| bad("the type is not a number"))?,
            None => match piece.as_slice() {
                b"<unk>" => UNKNOWN,
                b"<s>" | b"</s>" => CONTROL,
                t if byte_of_piece(t).is_some() => BYTE,
                _ => NORMAL,
            },
        };
        if !(NORMAL..=BYTE).contains(&kind) {
            return Err(bad("the type is not a SentencePiece piece type"));
        }
        pieces.push(piece);
        meta.push((score, kind));
    }
    let raw = RawModel {
        pieces: pieces
            .iter()
            .zip(&meta)
            .map(|(t, &(score, kind))| RawPiece {
                text: t,
                score,
                kind,
            })
            .chain(settings.user_defined.iter().map(|t| RawPiece {
                text: t.as_bytes(),
                score: 0.0,
                kind: USER_DEFINED,
            }))
            .collect(),
        model_type: BPE,
        treat_whitespace_as_suffix: false,
        byte_fallback: true,
        normalizer_name: b"identity".to_vec(),
        charsmap_len: 0,
        add_dummy_prefix: settings.add_dummy_prefix,
        remove_extra_whitespaces: false,
        escape_whitespaces: true,
    };
    raw.check_supported()?;
    build(&raw)
}

/// Standard base64 with `=` padding; `None` for anything else.
fn base64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

#[cfg(test)]
mod text_tests {
    use super::base64;

    #[test]
    fn base64_reads_what_it_should_and_refuses_the_rest() {
        assert_eq!(base64("PHBhZD4=").unwrap(), b"<pad>");
        assert_eq!(base64("YWJj").unwrap(), b"abc");
        assert_eq!(base64("YQ==").unwrap(), b"a");
        assert_eq!(base64("").unwrap(), b"");
        for bad in ["YQ=", "Y===", "YQ==YWJj", "YW*j"] {
            assert!(base64(bad).is_none(), "{bad}");
        }
    }
}
