//! Server-sent events on raw bytes: split a stream into whole events without changing a byte,
//! with a bound on how long one event may grow. The gateway passes whole events only (so an
//! error event after a cut stream never lands inside a half-sent one) and the MCP client reads
//! its answers from them.

/// Why an event could not be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLong(pub usize);

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an event grew past {} bytes without ending", self.0)
    }
}

/// Bytes in, whole events out. An event ends at a blank line (`\n\n`, `\r\n\r\n`, `\n\r\n`).
#[derive(Debug)]
pub struct Splitter {
    buf: Vec<u8>,
    /// Where the scan for the next line end resumes.
    scanned: usize,
    /// Where the current line starts.
    line_start: usize,
    max_event: usize,
}

impl Splitter {
    pub fn new(max_event: usize) -> Splitter {
        Splitter {
            buf: Vec::new(),
            scanned: 0,
            line_start: 0,
            max_event,
        }
    }

    /// Add bytes; return the events they complete, each with its terminating blank line.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<Vec<u8>>, TooLong> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        let mut event_start = 0;
        let mut i = self.scanned;
        while i < self.buf.len() {
            if self.buf[i] == b'\n' {
                let line = &self.buf[self.line_start..i];
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.is_empty() && self.line_start > event_start {
                    out.push(self.buf[event_start..=i].to_vec());
                    event_start = i + 1;
                } else if line.is_empty() {
                    // A blank line with no event before it: keep it with the next event.
                }
                self.line_start = i + 1;
            }
            i += 1;
        }
        self.buf.drain(..event_start);
        self.line_start -= event_start;
        self.scanned = self.buf.len();
        if self.buf.len() > self.max_event {
            return Err(TooLong(self.max_event));
        }
        Ok(out)
    }

    /// The bytes of an event not yet ended.
    pub fn pending(&self) -> &[u8] {
        &self.buf
    }
}

/// The `data:` lines of one event, joined with `\n` as the SSE grammar says; `None` when it
/// has none. Invalid UTF-8 is replaced, never an error.
pub fn data(event: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(event);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The event's name (`event:` line), if it has one.
pub fn name(event: &[u8]) -> Option<String> {
    String::from_utf8_lossy(event)
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .find_map(|l| l.strip_prefix("event:").map(|n| n.trim().to_string()))
}
