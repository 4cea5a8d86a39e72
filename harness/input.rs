//! Reading a file the user named: only a regular file (a symlink to one is followed), and at
//! most a stated number of bytes. A FIFO, a device (`/dev/zero`), a socket or a directory is
//! refused with its path before anything is read, so a named input can neither block the
//! command forever nor grow its memory without bound.

use crate::error::{Error, Result};
use std::io::Read;
use std::path::Path;

/// Config, lock, scenario and calibration files: far under this.
pub const SMALL: u64 = 16 << 20;
/// Catalogues and captures (an 85,600-tool capture is about 130 MB).
pub const LARGE: u64 = 1 << 30;

/// The bytes of `path`, a regular file of at most `max` bytes.
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>> {
    let (file, len) = open(path, max)?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > max {
        return Err(too_large(path, bytes.len() as u64, max));
    }
    Ok(bytes)
}

/// `path` opened for reading, with its length: a regular file of at most `max` bytes.
pub fn open(path: &Path, max: u64) -> Result<(std::fs::File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    refuse_unless_regular(path, &meta)?;
    // Opened without blocking, so a path swapped for a FIFO after the check cannot hang the
    // open; the opened file is checked again.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    refuse_unless_regular(path, &meta)?;
    if meta.len() > max {
        return Err(too_large(path, meta.len(), max));
    }
    Ok((file, meta.len()))
}

/// A reader of text read as it streams: at most `max` bytes, UTF-8 throughout (a sequence cut
/// by a read's end is checked with the bytes that complete it), a leading byte-order mark left
/// out. What breaks a rule is an error of kind `InvalidData` whose message says which, so a
/// parser that reads through it stops there (a file that grows past its checked length is caught
/// here too).
pub struct TextStream<R> {
    inner: R,
    max: u64,
    read: u64,
    /// The start of a UTF-8 sequence the last read cut, and how many of its bytes there are.
    carry: ([u8; 4], usize),
    started: bool,
}

impl<R: Read> TextStream<R> {
    pub fn new(inner: R, max: u64) -> TextStream<R> {
        TextStream {
            inner,
            max,
            read: 0,
            carry: ([0; 4], 0),
            started: false,
        }
    }

    fn fail(what: String) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, what)
    }

    /// Check `buf` as the next bytes of the text: the sequence carried from the last read is
    /// completed first; a sequence cut at `buf`'s end is carried to the next.
    fn check(&mut self, mut buf: &[u8]) -> std::io::Result<()> {
        const NOT_UTF8: &str = "not UTF-8 text";
        let (mut seq, have) = self.carry;
        if have > 0 {
            let need = utf8_len(seq[0]).saturating_sub(have);
            let take = need.min(buf.len());
            seq[have..have + take].copy_from_slice(&buf[..take]);
            buf = &buf[take..];
            if take < need {
                self.carry = (seq, have + take);
                return Ok(());
            }
            std::str::from_utf8(&seq[..have + take]).map_err(|_| Self::fail(NOT_UTF8.into()))?;
            self.carry.1 = 0;
        }
        match std::str::from_utf8(buf) {
            Ok(_) => Ok(()),
            // Cut at the end: kept until the next read completes it.
            Err(e) if e.error_len().is_none() => {
                let rest = &buf[e.valid_up_to()..];
                self.carry.0[..rest.len()].copy_from_slice(rest);
                self.carry.1 = rest.len();
                Ok(())
            }
            Err(_) => Err(Self::fail(NOT_UTF8.into())),
        }
    }
}

/// Bytes in the UTF-8 sequence a lead byte opens (1 for a byte that cannot open one, which
/// the check then refuses).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

impl<R: Read> Read for TextStream<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = self.inner.read(buf)?;
        if !self.started && n > 0 {
            self.started = true;
            // Editors on Windows start UTF-8 files with a byte-order mark; JSON has no place
            // for it. A read shorter than the mark cannot hold one whole; it is read as text.
            if buf[..n].starts_with(b"\xef\xbb\xbf") {
                buf.copy_within(3..n, 0);
                self.read += 3;
                n -= 3;
                if n == 0 {
                    // Nothing after the mark in this read is not the end of the text.
                    n = self.inner.read(buf)?;
                }
            }
        }
        self.read += n as u64;
        if self.read > self.max {
            return Err(Self::fail(format!(
                "more than {} bytes; this input is bounded",
                self.max
            )));
        }
        if n == 0 && self.carry.1 > 0 {
            return Err(Self::fail(
                "not UTF-8 text (it ends inside a character)".into(),
            ));
        }
        self.check(&buf[..n])?;
        Ok(n)
    }
}

/// [`read`] as UTF-8 text.
pub fn read_text(path: &Path, max: u64) -> Result<String> {
    String::from_utf8(read(path, max)?)
        .map_err(|e| Error::input(format!("{}: not UTF-8 text: {e}", path.display())))
}

/// Refuse a path that is not a regular file (for inputs opened by another library, such as a
/// SQLite database).
pub fn check_regular(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    refuse_unless_regular(path, &meta)
}

fn refuse_unless_regular(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    let what = match () {
        _ if t.is_file() => return Ok(()),
        _ if t.is_dir() => "a directory",
        _ if t.is_fifo() => "a FIFO",
        _ if t.is_char_device() || t.is_block_device() => "a device",
        _ if t.is_socket() => "a socket",
        _ => "not a regular file",
    };
    Err(Error::input(format!(
        "{}: {what}, not a regular file; name a file",
        path.display()
    )))
}

fn too_large(path: &Path, len: u64, max: u64) -> Error {
    Error::input(format!(
        "{}: more than {max} bytes ({len}); this input is read whole, so it is bounded",
        path.display()
    ))
}

/// JSON values, one per line, from plain text or its gzip (as the recorded sets are shipped):
/// at most `max_bytes` unpacked and `max_rows` values, each bounded in nodes
/// ([`crate::json::check_nodes`]); `what` names the input in errors.
pub fn json_lines(
    bytes: &[u8],
    what: &str,
    max_bytes: u64,
    max_rows: usize,
) -> Result<Vec<serde_json::Value>> {
    let mut text = String::new();
    let read = match bytes.starts_with(&[0x1f, 0x8b]) {
        true => flate2::read::GzDecoder::new(bytes)
            .take(max_bytes + 1)
            .read_to_string(&mut text)
            .map(|_| ()),
        false => std::str::from_utf8(bytes)
            .map(|s| text.push_str(s))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
    };
    read.map_err(|e| Error::input(format!("{what} could not be read: {e}")))?;
    if text.len() as u64 > max_bytes {
        return Err(Error::input(format!(
            "{what} hold more than {max_bytes} bytes of text"
        )));
    }
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        if out.len() >= max_rows {
            return Err(Error::input(format!(
                "{what} hold more than {max_rows} rows"
            )));
        }
        let at = |e: String| Error::input(format!("{what}, line {}: {e}", i + 1));
        crate::json::check_nodes(line.as_bytes(), "a line").map_err(at)?;
        let v = serde_json::from_str(line).map_err(|e| at(crate::json::why_unreadable(&e)))?;
        out.push(v);
    }
    Ok(out)
}

/// A TOML parse error as position and message, without the line of the file the parser's own
/// message quotes (a configuration's line may hold a secret: an `env` value, a token).
pub fn toml_error(e: &toml::de::Error, text: &str) -> String {
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            format!(
                "TOML parse error at line {line}, column {column}: {}",
                e.message().trim()
            )
        }
        None => format!("TOML parse error: {}", e.message().trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_directories_are_refused_and_size_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let err = read(&link, SMALL).unwrap_err().to_string();
        assert!(err.contains("a device") && err.contains("zero"), "{err}");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read(&fifo, SMALL).unwrap_err().to_string();
        assert!(err.contains("a FIFO"), "{err}");
        let err = read(dir.path(), SMALL).unwrap_err().to_string();
        assert!(err.contains("a directory"), "{err}");
        let f = dir.path().join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read(&f, 10).unwrap(), b"0123456789");
        let err = read(&f, 9).unwrap_err().to_string();
        assert!(err.contains("more than 9 bytes"), "{err}");
    }

    /// Reads of a text as it streams: characters cut by a read's end are whole across reads, a
    /// byte-order mark is left out, bytes that are not UTF-8 and text past the bound are refused.
    #[test]
    fn a_text_stream_checks_utf8_across_reads_and_its_bound() {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let all = |bytes: &[u8], step: usize, max: u64| {
            let mut out = Vec::new();
            TextStream::new(Trickle(bytes, step), max)
                .read_to_end(&mut out)
                .map(|_| out)
                .map_err(|e| e.to_string())
        };
        let text = "a é 中 😀 z".as_bytes();
        for step in 1..6 {
            assert_eq!(all(text, step, 100).unwrap(), text);
            let marked = [b"\xef\xbb\xbf".as_slice(), text].concat();
            assert_eq!(all(&marked, step.max(3), 100).unwrap(), text);
            for bad in [&b"ab\xffcd"[..], b"ab\xe4\xb8", b"\xc3(", b"x\xf0\x9f\x98"] {
                let err = all(bad, step, 100).unwrap_err();
                assert!(err.contains("not UTF-8"), "{bad:?} {step}: {err}");
            }
        }
        let err = all(text, 4, 5).unwrap_err();
        assert!(err.contains("more than 5 bytes"), "{err}");
    }
}
