//! The safetensors file format, read-only: an 8-byte little-endian header length, a JSON header
//! naming each tensor's dtype, shape and byte range, then the raw tensor bytes.
//!
//! Only what the encoder needs is accepted: `F32` tensors, little-endian, whole ranges inside the
//! file. Everything else is refused with the tensor's name, so a damaged or foreign file fails at
//! load time, never as wrong numbers later.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::Path;

/// The largest header this reader accepts (the model's is about 11 KB).
const MAX_HEADER: u64 = 16 << 20;

/// One tensor's place in the file.
#[derive(Debug, Clone)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    start: usize,
    end: usize,
}

/// A loaded safetensors file: its bytes and where each tensor lies in them.
pub struct Tensors {
    bytes: Vec<u8>,
    data: usize,
    entries: HashMap<String, Entry>,
    origin: String,
}

impl Tensors {
    pub fn read(path: &Path) -> Result<Tensors> {
        let bytes = crate::input::read(path, crate::input::LARGE)?;
        Tensors::parse(bytes, &path.display().to_string())
    }

    pub fn parse(bytes: Vec<u8>, origin: &str) -> Result<Tensors> {
        let bad =
            |why: String| Error::input(format!("{origin}: not a usable safetensors file: {why}"));
        let Some(len) = bytes.get(..8) else {
            return Err(bad("shorter than its 8-byte header length".into()));
        };
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes"));
        if len > MAX_HEADER || len + 8 > bytes.len() as u64 {
            return Err(bad(format!("header length {len} does not fit the file")));
        }
        let data = 8 + len as usize;
        let header: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&bytes[8..data]).map_err(|e| bad(format!("header: {e}")))?;
        let room = bytes.len() - data;
        let mut entries = HashMap::new();
        for (name, v) in header {
            if name == "__metadata__" {
                continue;
            }
            let dtype = v["dtype"].as_str().unwrap_or("").to_string();
            let shape: Option<Vec<usize>> = v["shape"].as_array().and_then(|a| {
                a.iter()
                    .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
                    .collect()
            });
            let range: Option<Vec<usize>> = v["data_offsets"].as_array().and_then(|a| {
                a.iter()
                    .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
                    .collect()
            });
            let (Some(shape), Some(&[start, end])) = (shape, range.as_deref()) else {
                return Err(bad(format!(
                    "tensor `{name}` lacks a shape or a byte range"
                )));
            };
            if start > end || end > room {
                return Err(bad(format!("tensor `{name}` lies outside the file")));
            }
            entries.insert(
                name,
                Entry {
                    dtype,
                    shape,
                    start,
                    end,
                },
            );
        }
        Ok(Tensors {
            bytes,
            data,
            entries,
            origin: origin.to_string(),
        })
    }

    /// The tensor `name` as `f32`s, checked to have `shape`.
    pub fn f32(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let e = self.entries.get(name).ok_or_else(|| {
            Error::input(format!("{}: the model has no tensor `{name}`", self.origin))
        })?;
        if e.dtype != "F32" || e.shape != shape {
            return Err(Error::input(format!(
                "{}: tensor `{name}` is {} {:?}, expected F32 {shape:?}",
                self.origin, e.dtype, e.shape
            )));
        }
        let count: usize = shape.iter().product();
        let raw = &self.bytes[self.data + e.start..self.data + e.end];
        if raw.len() != count * 4 {
            return Err(Error::input(format!(
                "{}: tensor `{name}` holds {} bytes for {count} values",
                self.origin,
                raw.len()
            )));
        }
        let values: Vec<f32> = raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(Error::input(format!(
                "{}: tensor `{name}` holds {} at index {i}, not a finite weight",
                self.origin, values[i]
            )));
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(header.as_bytes());
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn reads_a_tensor_and_refuses_what_does_not_fit() {
        let data: Vec<u8> = [1.0f32, -2.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let ok = file(
            r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
            &data,
        );
        let t = Tensors::parse(ok, "t").unwrap();
        assert_eq!(t.f32("a", &[2]).unwrap(), vec![1.0, -2.5]);
        assert!(t
            .f32("a", &[1, 2])
            .unwrap_err()
            .to_string()
            .contains("expected F32 [1, 2]"));
        assert!(t
            .f32("b", &[2])
            .unwrap_err()
            .to_string()
            .contains("no tensor `b`"));
        let outside = file(
            r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
            &data,
        );
        assert!(Tensors::parse(outside, "t")
            .err()
            .unwrap()
            .to_string()
            .contains("outside"));
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(b"{}");
        assert!(Tensors::parse(huge, "t")
            .err()
            .unwrap()
            .to_string()
            .contains("does not fit"));
        assert!(Tensors::parse(vec![1, 2], "t").is_err());
        // A weight that is not a finite number is refused with its tensor and index.
        for bad in [f32::NAN, f32::INFINITY] {
            let data: Vec<u8> = [1.0f32, bad].iter().flat_map(|v| v.to_le_bytes()).collect();
            let t = Tensors::parse(
                file(
                    r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
                    &data,
                ),
                "t",
            )
            .unwrap();
            let err = t.f32("a", &[2]).unwrap_err().to_string();
            assert!(err.contains("`a`") && err.contains("index 1"), "{err}");
        }
        let half = file(
            r#"{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}"#,
            &data,
        );
        assert!(Tensors::parse(half, "t").unwrap().f32("a", &[2]).is_err());
    }
}
