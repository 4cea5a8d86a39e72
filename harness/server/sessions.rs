//! The sessions of the MCP revisions that have them (2025-11-25 and older): the version each
//! negotiated, in tables of bounded size whose oldest entries go first. Sessions opened with the
//! server's token and those opened without it are kept apart, each table bounded on its own, so
//! a flood of tokenless `initialize` calls forgets only tokenless sessions, never a token
//! holder's.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Open sessions kept per endpoint; past it the oldest is forgotten (its holder gets 404 and
/// initializes again, as the spec tells it to).
pub const MAX_SESSIONS: usize = 10_000;

/// Open sessions by id, each with the version its `initialize` negotiated; bounded, one table
/// for sessions without the token and one for sessions with it.
#[derive(Default)]
pub struct Sessions(Mutex<[SessionTable; 2]>);

#[derive(Default)]
struct SessionTable {
    open: HashMap<String, &'static str>,
    /// Ids in the order they opened (closed ones are skipped when the oldest is dropped).
    order: VecDeque<String>,
}

impl Sessions {
    /// Open a session; `authenticated`: its `initialize` carried the server's token.
    pub fn open(&self, version: &'static str, authenticated: bool) -> String {
        // 128 bits from the OS: the transports section asks for ids nobody can guess.
        let id = super::state::random_hex()[..32].to_string();
        let mut tables = crate::sync::lock(&self.0);
        let t = &mut tables[usize::from(authenticated)];
        while t.open.len() >= MAX_SESSIONS {
            match t.order.pop_front() {
                Some(old) => {
                    t.open.remove(&old);
                }
                None => break,
            }
        }
        if t.order.len() > 2 * MAX_SESSIONS {
            let SessionTable { open, order } = t;
            order.retain(|id| open.contains_key(id));
        }
        t.open.insert(id.clone(), version);
        t.order.push_back(id.clone());
        id
    }
    /// The version a known session speaks.
    pub fn version(&self, id: &str) -> Option<&'static str> {
        let tables = crate::sync::lock(&self.0);
        tables.iter().find_map(|t| t.open.get(id).copied())
    }
    pub fn known(&self, id: &str) -> bool {
        self.version(id).is_some()
    }
    pub fn close(&self, id: &str) -> bool {
        let mut tables = crate::sync::lock(&self.0);
        tables.iter_mut().any(|t| t.open.remove(id).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::mcp::{ASSUMED, NEWEST_LEGACY};

    #[test]
    fn sessions_are_bounded_and_keep_their_version() {
        let s = Sessions::default();
        let first = s.open("2025-06-18", false);
        let holder = s.open("2025-06-18", true);
        assert_eq!(s.version(&first), Some("2025-06-18"));
        let mut last = String::new();
        for _ in 0..MAX_SESSIONS {
            last = s.open(NEWEST_LEGACY, false);
        }
        assert!(!s.known(&first), "the oldest session went first");
        assert!(
            s.known(&holder),
            "tokenless sessions never push out a token holder's"
        );
        assert_eq!(s.version(&last), Some(NEWEST_LEGACY));
        assert!(s.close(&last) && !s.close(&last));
        // Opening and closing forever leaves the order queue bounded too.
        for _ in 0..3 * MAX_SESSIONS {
            let id = s.open(ASSUMED, false);
            s.close(&id);
        }
        assert!(crate::sync::lock(&s.0)[0].order.len() <= 2 * MAX_SESSIONS + 1);
    }
}
