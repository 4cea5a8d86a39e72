//! A `tools/list` capture's tools arrays cut out of its text as it is read: each element of an
//! array that holds the tools (the envelope's `tools`, or its `result`'s) is handed out whole,
//! in batches, and the rest of the text is kept with those arrays emptied, to be parsed on its
//! own. Nothing here decides whether the text is JSON: the parser reads the rest and every
//! element, and the cuts are checked between elements (a comma between two, nothing after the
//! last). A text this reading does not follow (nested too deep, keys written with escapes, a
//! reader that fails) gives `None`, and the caller reads the text whole.

use std::io::Read;

/// Which array an element came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The envelope's own `tools`.
    Top,
    /// The `tools` of the envelope's `result`.
    Result,
}

/// A text read through: the rest of it, with the arrays that were cut out written `[]`, and
/// those arrays in the order they came.
pub struct Split {
    pub rest: String,
    pub arrays: Vec<Which>,
}

/// Containers deeper than this are not followed (the parser refuses JSON deeper than 128).
const MAX_DEPTH: usize = 256;

/// What an open container is, for the cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// The envelope (`{` at the top).
    Envelope,
    /// The envelope's `result` object.
    ResultObject,
    /// An array whose elements are cut out; the `Which` it is.
    Cut(Which),
    /// Anything else: kept in the rest as it is.
    Other,
}

/// Where the reading is in an object of the envelope or its result (the only ones whose keys
/// matter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    /// The next string is a key.
    Expected,
    /// The key just read: `tools`, `result`, or another.
    Tools,
    Result,
    Another,
}

/// Read `reader` through, handing each cut array's elements to `batch` (the array's number
/// among the cut ones, the place of the batch's first element in its array, the elements' text)
/// `per_batch` at a time.
pub fn split(
    mut reader: impl Read,
    per_batch: usize,
    mut batch: impl FnMut(usize, usize, Vec<String>),
) -> Option<Split> {
    let mut s = Scanner::default();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        s.feed(&buf[..n], per_batch, &mut batch)?;
    }
    // The text ends inside nothing: every container closed, no element or string open.
    if !s.stack.is_empty() || s.in_string || s.element_depth.is_some() || s.scalar {
        return None;
    }
    let rest = String::from_utf8(s.rest).ok()?;
    Some(Split {
        rest,
        arrays: s.arrays,
    })
}

#[derive(Default)]
struct Scanner {
    stack: Vec<Frame>,
    /// Per open envelope or result object: where its keys are.
    keys: Vec<Key>,
    in_string: bool,
    escaped: bool,
    /// The key being read, while it may still be `tools` or `result`.
    key: Vec<u8>,
    reading_key: bool,
    /// Inside an element of a cut array: the stack's depth the element's containers start at
    /// (the element's text is in `element`).
    element_depth: Option<usize>,
    /// Inside a scalar element (a number, `true`...), which ends at a comma, a bracket or a
    /// blank.
    scalar: bool,
    /// In a cut array: whether an element may start (after `[` or a comma), or whether a comma
    /// or the end must come (after an element).
    want_element: bool,
    element: Vec<u8>,
    elements: Vec<String>,
    /// Place in its array of the first element in `elements`, and of the next.
    first: usize,
    next: usize,
    rest: Vec<u8>,
    arrays: Vec<Which>,
}

fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl Scanner {
    /// The frame of the innermost open container.
    fn top(&self) -> Option<Frame> {
        self.stack.last().copied()
    }

    fn feed(
        &mut self,
        bytes: &[u8],
        per_batch: usize,
        batch: &mut impl FnMut(usize, usize, Vec<String>),
    ) -> Option<()> {
        let mut i = 0;
        while i < bytes.len() {
            // Inside an element: copy through to its end, following strings and brackets.
            if let Some(depth) = self.element_depth {
                let start = i;
                let mut ended = false;
                while i < bytes.len() {
                    if self.in_string {
                        if self.escaped {
                            // The byte after a backslash, which the last read ended on.
                            self.escaped = false;
                            i += 1;
                            continue;
                        }
                        let Some(k) = memchr::memchr2(b'"', b'\\', &bytes[i..]) else {
                            i = bytes.len();
                            break;
                        };
                        i += k;
                        if bytes[i] == b'\\' {
                            // The byte after a backslash is escaped, in this read or the next.
                            match i + 1 < bytes.len() {
                                true => i += 2,
                                false => {
                                    self.escaped = true;
                                    i += 1;
                                }
                            }
                            continue;
                        }
                        self.in_string = false;
                        i += 1;
                        // A string that is the element itself ends it.
                        if self.stack.len() == depth {
                            ended = true;
                            break;
                        }
                        continue;
                    }
                    match bytes[i] {
                        b'"' => self.in_string = true,
                        b'{' | b'[' => {
                            if self.stack.len() >= MAX_DEPTH {
                                return None;
                            }
                            self.stack.push(Frame::Other);
                        }
                        b'}' | b']' => {
                            self.stack.pop()?;
                            if self.stack.len() == depth {
                                i += 1;
                                ended = true;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                self.element.extend_from_slice(&bytes[start..i]);
                if ended {
                    self.end_element(per_batch, batch)?;
                }
                continue;
            }
            let b = bytes[i];
            // A scalar element: up to a blank, a comma or the end of the array.
            if self.scalar {
                if blank(b) || b == b',' || b == b']' {
                    self.scalar = false;
                    self.end_element(per_batch, batch)?;
                    // The byte is read again, as what follows an element.
                } else {
                    self.element.push(b);
                    i += 1;
                }
                continue;
            }
            // A string outside the elements: a key of the envelope or its result, or text
            // kept in the rest.
            if self.in_string {
                let k = match self.escaped {
                    true => 0,
                    false => memchr::memchr2(b'"', b'\\', &bytes[i..]).unwrap_or(bytes.len() - i),
                };
                // Only a key of six bytes or fewer can be `tools` or `result`.
                if self.reading_key && self.key.len() <= 6 {
                    self.key.extend_from_slice(&bytes[i..i + k.min(7)]);
                }
                self.rest.extend_from_slice(&bytes[i..i + k]);
                i += k;
                if i == bytes.len() {
                    continue;
                }
                let b = bytes[i];
                self.rest.push(b);
                i += 1;
                if self.escaped {
                    self.escaped = false;
                    // A key written with an escape is not followed: it may name `tools`.
                    if self.reading_key {
                        return None;
                    }
                    continue;
                }
                match b {
                    b'\\' => self.escaped = true,
                    _ => {
                        self.in_string = false;
                        if self.reading_key {
                            self.reading_key = false;
                            let key = match self.key.as_slice() {
                                b"tools" => Key::Tools,
                                b"result" => Key::Result,
                                _ => Key::Another,
                            };
                            *self.keys.last_mut()? = key;
                            self.key.clear();
                        }
                    }
                }
                continue;
            }
            i += 1;
            if let Some(Frame::Cut(_)) = self.top() {
                // Between the elements of a cut array.
                match b {
                    _ if blank(b) => {}
                    b']' if self.want_element && self.next > 0 => return None,
                    b']' => {
                        self.flush(batch);
                        self.stack.pop();
                        self.rest.push(b']');
                    }
                    b',' if !self.want_element => self.want_element = true,
                    b',' => return None,
                    _ if !self.want_element => return None,
                    _ => {
                        self.want_element = false;
                        self.element.push(b);
                        match b {
                            b'{' | b'[' => {
                                self.element_depth = Some(self.stack.len());
                                self.stack.push(Frame::Other);
                            }
                            b'"' => {
                                self.element_depth = Some(self.stack.len());
                                self.in_string = true;
                            }
                            _ => self.scalar = true,
                        }
                    }
                }
                continue;
            }
            self.rest.push(b);
            match b {
                b'"' => {
                    self.in_string = true;
                    self.reading_key = matches!(
                        (self.top(), self.keys.last()),
                        (
                            Some(Frame::Envelope | Frame::ResultObject),
                            Some(Key::Expected)
                        )
                    );
                }
                b',' => {
                    if let (Some(Frame::Envelope | Frame::ResultObject), Some(k)) =
                        (self.top(), self.keys.last_mut())
                    {
                        *k = Key::Expected;
                    }
                }
                b'{' | b'[' => {
                    if self.stack.len() >= MAX_DEPTH {
                        return None;
                    }
                    let frame = match (b, self.top(), self.keys.last()) {
                        (b'{', None, _) => Frame::Envelope,
                        (b'{', Some(Frame::Envelope), Some(Key::Result)) => Frame::ResultObject,
                        (b'[', Some(Frame::Envelope), Some(Key::Tools)) => Frame::Cut(Which::Top),
                        (b'[', Some(Frame::ResultObject), Some(Key::Tools)) => {
                            Frame::Cut(Which::Result)
                        }
                        _ => Frame::Other,
                    };
                    // A value of the envelope or its result ends its key's turn.
                    if let (Some(Frame::Envelope | Frame::ResultObject), Some(k)) =
                        (self.top(), self.keys.last_mut())
                    {
                        *k = Key::Another;
                    }
                    self.stack.push(frame);
                    match frame {
                        Frame::Envelope | Frame::ResultObject => self.keys.push(Key::Expected),
                        Frame::Cut(which) => {
                            self.arrays.push(which);
                            self.want_element = true;
                            self.first = 0;
                            self.next = 0;
                        }
                        Frame::Other => {}
                    }
                }
                b'}' | b']' => {
                    if let Some(Frame::Envelope | Frame::ResultObject) = self.stack.pop() {
                        self.keys.pop();
                    }
                }
                _ => {}
            }
        }
        Some(())
    }

    /// An element has ended: it joins the batch, which is handed out when full.
    fn end_element(
        &mut self,
        per_batch: usize,
        batch: &mut impl FnMut(usize, usize, Vec<String>),
    ) -> Option<()> {
        self.element_depth = None;
        let text = String::from_utf8(std::mem::take(&mut self.element)).ok()?;
        self.elements.push(text);
        self.next += 1;
        if self.elements.len() >= per_batch.max(1) {
            self.flush(batch);
        }
        Some(())
    }

    /// Hand out the elements read and not yet handed out.
    fn flush(&mut self, batch: &mut impl FnMut(usize, usize, Vec<String>)) {
        if self.elements.is_empty() {
            return;
        }
        let array = self.arrays.len() - 1;
        batch(array, self.first, std::mem::take(&mut self.elements));
        self.first = self.next;
    }
}
