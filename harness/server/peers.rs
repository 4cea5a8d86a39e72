//! Connections per peer address: each address may hold only its share of the server's
//! connection slots, and the last few slots go only to addresses that hold none, so a peer
//! that opens connections and sends nothing (or reopens each one the header timeout closes)
//! cannot keep other peers out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Open connections by peer address.
pub struct Peers {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    /// The most connections one address may hold.
    per_peer: usize,
    /// Slots kept for addresses that hold none.
    reserve: usize,
}

/// One connection's place in [`Peers`], given back when it is dropped.
pub struct Seat {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    ip: IpAddr,
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut open = crate::sync::lock(&self.open);
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

impl Peers {
    /// For a server of `max` connection slots: an address may hold half of them (at least 16,
    /// so a small server's one client keeps its parallel connections), and on a server of 40
    /// or more a tenth of them is kept for addresses that hold none. Both shares are assumed:
    /// with the default 200, one flooding address holds 100 and a client's 64 parallel
    /// connections still fit.
    pub fn new(max: usize) -> Peers {
        Peers {
            open: Arc::default(),
            per_peer: (max / 2).max(16),
            reserve: match max >= 40 {
                true => max / 10,
                false => 0,
            },
        }
    }

    /// A seat for a new connection from `ip`, when `free` slots are left after it took its
    /// own; `None`: refuse it.
    pub fn seat(&self, ip: IpAddr, free: usize) -> Option<Seat> {
        let mut open = crate::sync::lock(&self.open);
        let held = open.get(&ip).copied().unwrap_or(0);
        if held >= self.per_peer || (held > 0 && free < self.reserve) {
            return None;
        }
        *open.entry(ip).or_insert(0) += 1;
        Some(Seat {
            open: self.open.clone(),
            ip,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_its_share_and_new_ones_keep_room() {
        let p = Peers::new(200);
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let b: IpAddr = "127.0.0.3".parse().unwrap();
        let seats: Vec<Seat> = (0..100).filter_map(|_| p.seat(a, 100)).collect();
        assert_eq!(seats.len(), 100);
        assert!(p.seat(a, 100).is_none(), "a's share is full");
        // Few slots left: only an address holding none gets one.
        let held = p.seat(b, 5);
        assert!(held.is_some());
        let again = p.seat(b, 5);
        assert!(
            again.is_none(),
            "b already holds one while the reserve is reached"
        );
        drop(seats);
        assert!(p.seat(a, 100).is_some(), "seats are given back");
        assert!(crate::sync::lock(&p.open).len() <= 2);
    }
}
