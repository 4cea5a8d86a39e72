//! `tools/list` answers: the page a cursor names, the bytes of one page, and the cursors.
//!
//! A cursor is opaque to clients (the pagination section of every MCP revision: clients MUST
//! NOT parse or modify one, and an invalid cursor SHOULD get -32602). Ours names the snapshot
//! it was issued for (the directory's generation) and the offset of the next page, signed with
//! an HMAC-SHA256 tag over the endpoint, generation, offset and page size under a key drawn
//! when the server starts. So a cursor from another endpoint, a forged or edited one, or one
//! from an earlier run fails its tag, and one issued before a directory change is recognised
//! as stale: the client is told to list again from the first page instead of being handed a
//! page of a list that has since moved (a removed row would otherwise make it skip a tool).
//! The server keeps nothing per cursor.

use super::answer::Text;
use super::guard::constant_time_eq;
use super::mcp::{LIST_TTL_MS, META_SERVER};
use super::state::State;
use crate::surface::Endpoint;
use axum::body::Bytes;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Tools per `tools/list` page unless `--page-size` says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 1_000;

/// Bytes of the tag a cursor carries (128 bits of HMAC-SHA256), written as hex.
const TAG_BYTES: usize = 16;
/// The longest cursor this server writes: two 64-bit numbers in hex, two dots, the tag.
const MAX_CURSOR_CHARS: usize = 16 + 1 + 16 + 1 + 2 * TAG_BYTES;

/// Which slice of the list one `tools/list` answers, in which snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Page {
    start: usize,
    /// Tools per page; 0 is the whole list at once.
    size: usize,
}

/// Issues and checks the cursors of one endpoint's list in one snapshot.
struct Cursors<'a> {
    key: [u8; 32],
    path: &'a str,
    generation: u64,
    size: usize,
}

impl Cursors<'_> {
    /// The cursor of the page that starts at `start`.
    fn issue_at(&self, generation: u64, start: usize) -> String {
        let msg = format!(
            "tools/list cursor\n{}\n{generation}\n{start}\n{}",
            self.path, self.size
        );
        let tag = hmac_sha256(&self.key, msg.as_bytes());
        let hex: String = tag[..TAG_BYTES]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("{generation:x}.{start:x}.{hex}")
    }

    /// The page a cursor names (`None`: the first); `Err` is the -32602 message.
    fn page(&self, cursor: Option<&str>) -> Result<Page, String> {
        let Some(c) = cursor else {
            return Ok(Page {
                start: 0,
                size: self.size,
            });
        };
        if self.size == 0 {
            return Err(
                "this server answers tools/list with the whole list and issues no cursors; list without one"
                    .into(),
            );
        }
        let unknown = || {
            format!(
                "unknown cursor {:?}: not one this endpoint issued (cursors belong to the endpoint and the server run that wrote them); list again from the first page, without a cursor",
                c.chars().take(40).collect::<String>()
            )
        };
        let number = |s: &str| {
            (!s.is_empty() && s.len() <= 16 && s.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| u64::from_str_radix(s, 16).ok())
                .flatten()
        };
        let mut parts = c.splitn(3, '.');
        let (Some(g), Some(s), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(unknown());
        };
        let (Some(generation), Some(start)) = (number(g), number(s)) else {
            return Err(unknown());
        };
        let Ok(start) = usize::try_from(start) else {
            return Err(unknown());
        };
        // The text this server would have written for these numbers, compared whole: the tag
        // and the canonical spelling of both numbers are checked at once.
        if c.len() > MAX_CURSOR_CHARS
            || !constant_time_eq(self.issue_at(generation, start).as_bytes(), c.as_bytes())
        {
            return Err(unknown());
        }
        if generation != self.generation {
            return Err(
                "the tool list changed after this cursor was issued (the server sent notifications/tools/list_changed); list again from the first page, without a cursor"
                    .into(),
            );
        }
        if start == 0 || start % self.size != 0 {
            return Err(unknown());
        }
        Ok(Page {
            start,
            size: self.size,
        })
    }

    /// The cursor of the page after `page`, when the list goes on.
    fn after(&self, page: Page, len: usize) -> Option<String> {
        let end = page.start.checked_add(page.size)?;
        (page.size > 0 && end < len).then(|| self.issue_at(self.generation, end))
    }
}

/// The key cursors are tagged with, derived from the server's secret for this one use.
fn cursor_key(st: &State) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"toolcost tools/list cursor key\n");
    h.update(st.id_secret.as_bytes());
    h.finalize().into()
}

/// HMAC-SHA256 (RFC 2104) with a key of at most one block.
fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    debug_assert!(key.len() <= 64);
    let mut ipad = [0x36u8; 64];
    let mut opad = [0x5cu8; 64];
    for (i, k) in key.iter().enumerate() {
        ipad[i] ^= k;
        opad[i] ^= k;
    }
    let inner = Sha256::new()
        .chain_update(ipad)
        .chain_update(msg)
        .finalize();
    Sha256::new()
        .chain_update(opad)
        .chain_update(inner)
        .finalize()
        .into()
}

/// One page of the `tools/list` answer, written from each definition's text so the bytes are
/// the surface's bytes; `modern` (the server's info) adds the 2026-07-28 result fields after
/// the tools. A page that holds the whole list is the `tools` array serialised once per
/// snapshot, shared by every answer, with the id and the rest around it. `Err` is the -32602
/// message for a cursor that is not valid for this endpoint's list as it is now.
pub fn tools_list(
    st: &State,
    endpoint: Endpoint,
    id: &Value,
    cursor: Option<&str>,
    modern: Option<&Value>,
) -> Result<Text, String> {
    let (snap, generation) = st.snapshot_at();
    let cursors = Cursors {
        key: cursor_key(st),
        path: endpoint.path,
        // A list that never follows the directory keeps its cursors across changes.
        generation: if super::mcp::list_changes(endpoint) {
            generation
        } else {
            0
        },
        size: st.limits.tools_page,
    };
    let page = cursors.page(cursor)?;
    let all = snap.listing(endpoint.path);
    if page.start > 0 && page.start >= all.len() {
        // A cursor of this snapshot always points inside its list; kept as a guard.
        return Err(format!(
            "the cursor points past the end of the list ({} tools); list again from the first page",
            all.len()
        ));
    }
    let end = match page.size {
        0 => all.len(),
        n => all.len().min(page.start + n),
    };
    let id = crate::json::compact(id);
    let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":");
    let tools = if page.start == 0 && end == all.len() {
        snap.tools_json(endpoint.path)
    } else {
        let mut out = String::from("[");
        for (i, t) in all[page.start..end].iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(t.raw());
        }
        out.push(']');
        Bytes::from(out)
    };
    let mut out = String::new();
    if let Some(next) = cursors.after(page, all.len()) {
        out.push_str(&format!(",\"nextCursor\":\"{next}\""));
    }
    if let Some(info) = modern {
        // 2026-07-28: every result says it is complete, list results carry cache hints, and
        // the server names itself in the result's `_meta`.
        out.push_str(&format!(
            ",\"ttlMs\":{LIST_TTL_MS},\"cacheScope\":\"public\",\"resultType\":\"complete\",\"_meta\":{{\"{META_SERVER}\":{}}}",
            crate::json::compact(info)
        ));
    }
    out.push_str("}}");
    Ok(Text::of([Bytes::from(head), tools, Bytes::from(out)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursors(path: &str, generation: u64, size: usize) -> Cursors<'_> {
        Cursors {
            key: [7; 32],
            path,
            generation,
            size,
        }
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // RFC 4231, test case 2.
        let tag = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn cursors_are_bound_to_endpoint_snapshot_and_page_size() {
        let c = cursors("/mcp", 3, 10);
        assert_eq!(c.page(None), Ok(Page { start: 0, size: 10 }));
        let next = c.after(Page { start: 0, size: 10 }, 25).unwrap();
        assert_eq!(
            c.page(Some(&next)),
            Ok(Page {
                start: 10,
                size: 10
            })
        );
        assert_eq!(
            c.after(
                Page {
                    start: 20,
                    size: 10
                },
                25
            ),
            None
        );
        assert!(cursors("/mcp/min", 3, 10).page(Some(&next)).is_err());
        assert!(cursors("/mcp", 3, 20).page(Some(&next)).is_err());
        let stale = cursors("/mcp", 4, 10).page(Some(&next)).unwrap_err();
        assert!(stale.contains("changed"), "{stale}");
        let other_key = Cursors {
            key: [8; 32],
            ..cursors("/mcp", 3, 10)
        };
        assert!(other_key.page(Some(&next)).unwrap_err().contains("unknown"));
        assert!(cursors("/mcp", 3, 0).page(Some(&next)).is_err());
        // The old offset cursors, and edits of a real one, are refused.
        let mut edited = next.clone().into_bytes();
        let last = edited.len() - 1;
        edited[last] = if edited[last] == b'0' { b'1' } else { b'0' };
        for bad in [
            "".to_string(),
            "t10".into(),
            String::from_utf8(edited).unwrap(),
            next.to_uppercase(),
            format!("0{next}"),
            format!("{next} "),
            next.replacen('.', "..", 1),
            next[..next.len() - 1].to_string(),
        ] {
            assert!(c.page(Some(&bad)).is_err(), "{bad:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn no_string_but_an_issued_one_is_a_cursor(s in "\\PC{0,80}", g in 0u64..4, start in 0usize..100) {
            let c = cursors("/mcp", 1, 10);
            let issued = c.issue_at(1, start);
            if s != issued {
                proptest::prop_assert!(c.page(Some(&s)).is_err());
            }
            // Any one-character change of an issued cursor is refused.
            let real = c.issue_at(g, 10);
            let at = start % real.len();
            let mut b = real.clone().into_bytes();
            b[at] = if b[at] == b'a' { b'b' } else { b'a' };
            let edited = String::from_utf8(b).unwrap();
            proptest::prop_assert!(edited == real || c.page(Some(&edited)).is_err());
        }
    }
}
