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
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > max {
        return Err(too_large(path, bytes.len() as u64, max));
    }
    Ok(bytes)
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
}
