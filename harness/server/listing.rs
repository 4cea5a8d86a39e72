//! `tools/list` answers: the page a cursor names, and the bytes of one page.

use super::mcp::{LIST_TTL_MS, META_SERVER};
use super::state::State;
use crate::surface::Endpoint;
use serde_json::Value;

/// Tools per `tools/list` page unless `--page-size` says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 1_000;

/// Which slice of the list one `tools/list` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub start: usize,
    /// Tools per page; 0 is the whole list at once.
    pub size: usize,
}

/// Cursors are `t<offset>`: opaque to clients, checked here.
const CURSOR_PREFIX: char = 't';

impl Page {
    /// The page a cursor names (`None`: the first).
    pub fn at(cursor: Option<&str>, size: usize) -> Result<Page, String> {
        let Some(c) = cursor else {
            return Ok(Page { start: 0, size });
        };
        let start = c
            .strip_prefix(CURSOR_PREFIX)
            .filter(|d| !d.is_empty() && d.len() <= 12 && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|&s| size > 0 && s > 0 && s % size == 0)
            .ok_or_else(|| {
                format!(
                    "unknown cursor {:?}; send the `nextCursor` of the previous page, or none for the first",
                    c.chars().take(40).collect::<String>()
                )
            })?;
        Ok(Page { start, size })
    }

    fn cursor_after(self, len: usize) -> Option<String> {
        let end = self.start.checked_add(self.size)?;
        (self.size > 0 && end < len).then(|| format!("{CURSOR_PREFIX}{end}"))
    }
}

/// One page of the `tools/list` answer, written from each definition's text so the bytes are
/// the surface's bytes; `modern` (the server's info) adds the 2026-07-28 result fields after
/// the tools. A page that holds the whole list writes the `tools` array serialised once per
/// snapshot; only the id is new. `Err` when the page starts past the end (the list shrank, or
/// a forged cursor).
pub fn tools_list(
    st: &State,
    endpoint: Endpoint,
    id: &Value,
    page: Page,
    modern: Option<&Value>,
) -> Result<String, String> {
    let snap = st.snapshot();
    let all = snap.listing(endpoint.path);
    if page.start > 0 && page.start >= all.len() {
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
    let mut out = if page.start == 0 && end == all.len() {
        let tools = snap.tools_json(endpoint.path);
        let mut out = String::with_capacity(tools.len() + id.len() + 256);
        out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
        out.push_str(&id);
        out.push_str(",\"result\":{\"tools\":");
        out.push_str(&tools);
        out
    } else {
        let mut out = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[");
        for (i, t) in all[page.start..end].iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&t.raw);
        }
        out.push(']');
        out
    };
    if let Some(next) = page.cursor_after(all.len()) {
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
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_checked() {
        assert_eq!(Page::at(None, 10), Ok(Page { start: 0, size: 10 }));
        assert_eq!(
            Page::at(Some("t20"), 10),
            Ok(Page {
                start: 20,
                size: 10
            })
        );
        for bad in [
            "",
            "t",
            "t0",
            "t15",
            "x20",
            "t-10",
            "t99999999999999",
            "t20 ",
        ] {
            assert!(Page::at(Some(bad), 10).is_err(), "{bad:?}");
        }
        assert!(
            Page::at(Some("t10"), 0).is_err(),
            "no cursors when nothing pages"
        );
        assert_eq!(
            Page {
                start: 20,
                size: 10
            }
            .cursor_after(30),
            None
        );
        assert_eq!(
            Page { start: 0, size: 10 }.cursor_after(11),
            Some("t10".into())
        );
    }
}
