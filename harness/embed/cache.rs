//! Vectors kept: on disk, one file per (encoder, list of texts), so a catalogue's rows are
//! encoded once; and in the process, one vector per text, so a directory change re-encodes only
//! the rows it changed.
//!
//! The folder is `$TOOLCOST_CACHE`, else `$XDG_CACHE_HOME/toolcost`, else `~/.cache/toolcost`;
//! with none of them set nothing is kept on disk. A file is written under a name no other writer
//! uses and renamed into place, so a killed run leaves no half file under the final name; a file
//! whose size, header or checksum does not match is ignored and written again.

use super::minilm::WIDTH;
use super::Encoder;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const MAGIC: &[u8; 8] = b"TCEMB02\n";
/// Header: magic, count, XXH3-64 of the payload.
const HEADER: usize = 24;
/// Texts whose vectors the process keeps (1.5 KB each); past it the memo starts again.
const MEMO_TEXTS: usize = 100_000;

/// The flat `texts.len() x WIDTH` vectors of `texts`, from the caches or encoded now.
pub fn vectors(encoder: &Encoder, texts: &[String]) -> Vec<f32> {
    let keys: Vec<u128> = texts.iter().map(|t| text_key(encoder.digest, t)).collect();
    let path = dir().map(|d| d.join(format!("minilm-{:032x}.f32", list_key(&keys))));
    if let Some(v) = path.as_deref().and_then(|p| read(p, texts.len())) {
        return v;
    }
    let flat = from_memo(encoder, texts, &keys);
    if let Some(p) = &path {
        // A cache that cannot be written costs time on the next run, never a result.
        let _ = write(p, texts.len(), &flat);
    }
    flat
}

fn memo() -> &'static Mutex<HashMap<u128, Box<[f32]>>> {
    static MEMO: std::sync::OnceLock<Mutex<HashMap<u128, Box<[f32]>>>> = std::sync::OnceLock::new();
    MEMO.get_or_init(Default::default)
}

/// Encode the texts the memo lacks, then assemble all of them in order. What the memo holds is
/// copied out under one lock, so another thread clearing it meanwhile loses nothing here.
fn from_memo(encoder: &Encoder, texts: &[String], keys: &[u128]) -> Vec<f32> {
    let mut found: Vec<Option<Vec<f32>>> = {
        let m = crate::sync::lock(memo());
        keys.iter().map(|k| m.get(k).map(|v| v.to_vec())).collect()
    };
    let missing: Vec<usize> = (0..texts.len()).filter(|&i| found[i].is_none()).collect();
    let todo: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
    let fresh = encoder.encode_all(&todo);
    {
        let mut m = crate::sync::lock(memo());
        if m.len() + fresh.len() > MEMO_TEXTS {
            m.clear();
        }
        for (&i, v) in missing.iter().zip(&fresh) {
            m.insert(keys[i], v.as_slice().into());
        }
    }
    for (i, v) in missing.into_iter().zip(fresh) {
        found[i] = Some(v);
    }
    found
        .into_iter()
        .flat_map(|v| v.expect("every text found or encoded"))
        .collect()
}

fn text_key(model: u128, text: &str) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&model.to_le_bytes());
    h.update(text.as_bytes());
    h.digest128()
}

fn list_key(keys: &[u128]) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for k in keys {
        h.update(&k.to_le_bytes());
    }
    h.digest128()
}

fn dir() -> Option<PathBuf> {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("TOOLCOST_CACHE")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("toolcost")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("toolcost")))
}

fn read(path: &Path, count: usize) -> Option<Vec<f32>> {
    let want = HEADER + count * WIDTH * 4;
    if std::fs::metadata(path).ok()?.len() != want as u64 {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let payload = bytes.get(HEADER..)?;
    if bytes.len() != want
        || &bytes[..8] != MAGIC
        || bytes[8..16] != (count as u64).to_le_bytes()
        || bytes[16..24] != xxhash_rust::xxh3::xxh3_64(payload).to_le_bytes()
    {
        return None;
    }
    Some(
        payload
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect(),
    )
}

fn write(path: &Path, count: usize, flat: &[f32]) -> std::io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let parent = path.parent().expect("a file in a folder");
    std::fs::create_dir_all(parent)?;
    let payload: Vec<u8> = flat.iter().flat_map(|v| v.to_le_bytes()).collect();
    let tmp = parent.join(format!(
        ".{}.tmp-{}-{}",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("vectors"),
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(MAGIC)?;
        f.write_all(&(count as u64).to_le_bytes())?;
        f.write_all(&xxhash_rust::xxh3::xxh3_64(&payload).to_le_bytes())?;
        f.write_all(&payload)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v.f32");
        let flat: Vec<f32> = (0..2 * WIDTH).map(|i| i as f32).collect();
        write(&p, 2, &flat).unwrap();
        assert_eq!(read(&p, 2).unwrap(), flat);
        assert!(read(&p, 3).is_none(), "wrong count");
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[HEADER + 5] ^= 1;
        std::fs::write(&p, &bytes).unwrap();
        assert!(read(&p, 2).is_none(), "a flipped bit in the payload");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp left"
        );
    }
}
