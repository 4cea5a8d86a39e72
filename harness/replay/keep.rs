//! Which tools to keep loaded: the sessions' input tokens when a set of tools is sent up front
//! and every other tool is deferred behind a search, loaded where a session first calls it.
//!
//! The model of one session, all of it input tokens (derived from the requests' observed or
//! estimated input and the definitions' own counts):
//!
//! - each request bills what it billed without any of the session's definitions (`base`), the
//!   definitions kept loaded, those a search loaded earlier in the session, and the search
//!   tool's definition whenever anything is deferred;
//! - a deferred tool the session calls costs one search round more, just before the request
//!   that made the call: that request's input again, and the definition the search returns;
//!   it is loaded from the call on.
//!
//! A miss (a search that does not find the tool) would add rounds: the model assumes none, so
//! deferral's cost is a floor; the report says so.

use std::collections::HashMap;

/// The largest tools × sessions whose per-tool decisions are then improved one flip at a time
/// (an assumed bound on the work: each flip prices every session).
const LOCAL_SEARCH_BOUND: usize = 200_000;

/// One session's shape.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// Per request, its input tokens without any of the session's definitions.
    pub base: Vec<u64>,
    /// Each tool the session could call: its definition's tokens, by the tool's index in the
    /// catalogue of all sessions ([`Plan::tools`]).
    pub defined: Vec<usize>,
    /// The tools the session called, each with the index of the request whose answer first
    /// called it.
    pub first_call: HashMap<usize, usize>,
}

/// All sessions, over one catalogue of tools.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Each tool's name and definition tokens.
    pub tools: Vec<(String, u64)>,
    pub sessions: Vec<Session>,
    /// The search tool's definition tokens, billed on every request while anything is deferred.
    pub search_tokens: u64,
}

impl Plan {
    /// Input tokens of every session with `kept` (by tool index) loaded up front.
    pub fn cost(&self, kept: &[bool]) -> u64 {
        self.sessions
            .iter()
            .map(|s| self.session_cost(s, kept))
            .sum()
    }

    /// One session's input tokens with `kept` loaded up front.
    pub fn session_cost(&self, s: &Session, kept: &[bool]) -> u64 {
        let deferred: Vec<usize> = s.defined.iter().copied().filter(|&t| !kept[t]).collect();
        let search = if deferred.is_empty() {
            0
        } else {
            self.search_tokens
        };
        let up_front: u64 = s
            .defined
            .iter()
            .filter(|&&t| kept[t])
            .map(|&t| self.tools[t].1)
            .sum();
        // Input of request `r`: its base, the kept and the loaded definitions, the search tool.
        let input = |r: usize| -> u64 {
            let loaded: u64 = deferred
                .iter()
                .filter(|t| s.first_call.get(t).is_some_and(|&c| c < r))
                .map(|&t| self.tools[t].1)
                .sum();
            s.base[r] + up_front + loaded + search
        };
        let requests: u64 = (0..s.base.len()).map(input).sum();
        let rounds: u64 = deferred
            .iter()
            .filter_map(|t| s.first_call.get(t).map(|&c| (t, c)))
            .filter(|&(_, c)| c < s.base.len())
            .map(|(&t, c)| input(c) + self.tools[t].1)
            .sum();
        requests + rounds
    }

    /// The set worth keeping loaded: for each tool, kept when loading it in every session
    /// costs less than deferring it (its searches and its loads where called), then improved one
    /// tool at a time while any change lowers the total (a bounded number of passes), and
    /// compared with keeping everything (which drops the search tool).
    pub fn best(&self) -> Vec<bool> {
        let n = self.tools.len();
        let mut kept = vec![false; n];
        for (t, k) in kept.iter_mut().enumerate() {
            let (mut keep, mut defer) = (0u64, 0u64);
            for s in self.sessions.iter().filter(|s| s.defined.contains(&t)) {
                let d = self.tools[t].1;
                keep += d * s.base.len() as u64;
                if let Some(&c) = s.first_call.get(&t) {
                    let after = s.base.len().saturating_sub(c + 1) as u64;
                    defer += d * after + s.base.get(c).copied().unwrap_or(0) + d;
                }
            }
            *k = keep < defer;
        }
        let mut best = self.cost(&kept);
        // Each pass prices every session once per tool: on large logs the per-tool decision
        // stands alone (its error is the searches' dependence on what else is loaded).
        let passes = match n.saturating_mul(self.sessions.len()) <= LOCAL_SEARCH_BOUND {
            true => 8,
            false => 0,
        };
        for _ in 0..passes {
            let mut better = false;
            for t in 0..n {
                kept[t] = !kept[t];
                let c = self.cost(&kept);
                match c < best {
                    true => (best, better) = (c, true),
                    false => kept[t] = !kept[t],
                }
            }
            if !better {
                break;
            }
        }
        let all = vec![true; n];
        match self.cost(&all) < best {
            true => all,
            false => kept,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan of `sessions` sessions over `n` tools: a few called often, many never.
    fn plan(n: usize, sessions: usize, seed: u64) -> Plan {
        let mut rng = crate::rng::Rng::new(seed);
        let tools = (0..n)
            .map(|i| (format!("t{i}"), 50 + rng.below(400) as u64))
            .collect();
        let sessions = (0..sessions)
            .map(|_| {
                let len = 2 + rng.below(12);
                let mut first_call = HashMap::new();
                for t in 0..n {
                    // Tool 0 is called in most sessions, tool 1 in some, the rest rarely.
                    let p = match t {
                        0 => 80,
                        1 => 30,
                        _ => 3,
                    };
                    if rng.below(100) < p {
                        first_call.insert(t, rng.below(len));
                    }
                }
                Session {
                    base: (0..len).map(|_| 2_000 + rng.below(3_000) as u64).collect(),
                    defined: (0..n).collect(),
                    first_call,
                }
            })
            .collect();
        Plan {
            tools,
            sessions,
            search_tokens: 300,
        }
    }

    /// On small catalogues the set found is the cheapest of every set there is.
    #[test]
    fn the_best_set_is_the_cheapest_by_brute_force() {
        for seed in 0..20 {
            let p = plan(8, 12, seed);
            let found = p.cost(&p.best());
            let cheapest = (0u32..1 << 8)
                .map(|mask| {
                    let kept: Vec<bool> = (0..8).map(|t| mask & (1 << t) != 0).collect();
                    p.cost(&kept)
                })
                .min()
                .unwrap();
            assert_eq!(found, cheapest, "seed {seed}");
        }
    }

    /// With a few tools called often and many never, keeping the best set costs less than
    /// sending every definition and less than deferring every one.
    #[test]
    fn the_best_set_beats_both_extremes() {
        let p = plan(40, 60, 7);
        let best = p.best();
        let (all, none) = (vec![true; 40], vec![false; 40]);
        assert!(p.cost(&best) < p.cost(&all));
        assert!(p.cost(&best) < p.cost(&none));
        assert!(best[0], "the tool called in most sessions is kept");
        assert!(best.iter().filter(|k| **k).count() < 10);
    }
}
