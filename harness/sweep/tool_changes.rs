//! The sweep summary's section on the providers' own tool changes (`name-list-native`,
//! `allowed-tools`, `additional-tools`, `programmatic`): what they change in whole tasks.

use super::summary::money;
use crate::driver::TaskResult;
use crate::report::{markdown, percent, thousands, Align};
use crate::surface::SurfaceKind;

/// What the providers' own ways of changing tools mid-conversation change: per N, client and
/// task, the cheapest successful whole task without them and with them, and the share of input
/// read from the prompt cache over the task's rounds on each (derived from the task rows).
pub(super) fn section(s: &mut String, tasks: &[TaskResult]) {
    let own = |t: &TaskResult| SurfaceKind::parse(&t.surface).is_ok_and(|k| k.provider_own());
    if !tasks.iter().any(|t| own(t) && t.success) {
        return;
    }
    s.push_str("## The providers' own tool changes (whole tasks, derived)\n\n");
    s.push_str("Per N, client and task: the cheapest task that succeeded on the other surfaces, and on every surface once the provider's own mechanisms (name-list-native, allowed-tools, additional-tools, programmatic) are among them. Cache share is the input read from the prompt cache over all of the task's rounds.\n\n");
    let share = |t: &TaskResult| match t.input_tokens {
        0 => "-".to_string(),
        n => percent(t.cached_input_tokens as f64 / n as f64),
    };

    let mut keys: Vec<(usize, &str, &str)> = Vec::new();
    for t in tasks
        .iter()
        .filter(|t| t.policy == "serial" || t.policy.is_empty())
    {
        let k = (t.rows, t.client.as_str(), t.task.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut lines = Vec::new();
    for (n, client, task) in keys {
        let pool: Vec<&TaskResult> = tasks
            .iter()
            .filter(|t| t.rows == n && t.client == client && t.task == task)
            .filter(|t| t.policy == "serial" || t.policy.is_empty())
            .collect();
        let without = cheapest(pool.iter().copied().filter(|t| !own(t)));
        let with = cheapest(pool.iter().copied());
        let Some(with) = with else { continue };
        let cell = |t: Option<&TaskResult>| {
            t.map_or(("-".to_string(), "-".to_string(), "-".to_string()), |t| {
                (t.surface_shown(), money(t.cost_usd), share(t))
            })
        };
        let (ws, wc, wh) = cell(without);
        let (s2, c2, h2) = cell(Some(with));
        lines.push(vec![
            thousands(n as u64),
            client.to_string(),
            task.to_string(),
            ws,
            wc,
            wh,
            s2,
            c2,
            h2,
        ]);
    }
    s.push_str(&markdown::table(
        &[
            ("N", Align::Right),
            ("client", Align::Left),
            ("task", Align::Left),
            ("cheapest without", Align::Left),
            ("cost", Align::Right),
            ("cache share", Align::Right),
            ("cheapest with", Align::Left),
            ("cost", Align::Right),
            ("cache share", Align::Right),
        ],
        lines,
    ));
    s.push('\n');
    // Each provider mechanism beside the surface it changes, where both were played.
    let pairs = [
        ("name-list-native", "name-list"),
        ("additional-tools", "name-list"),
        ("allowed-tools", "per-row-mcp"),
        ("programmatic", "code-mode"),
    ];
    let mut rows = Vec::new();
    for t in tasks.iter().filter(|t| own(t) && t.success) {
        for (mine, other) in pairs.iter().filter(|(m, _)| *m == t.surface) {
            let Some(o) = tasks.iter().find(|o| {
                o.surface == *other
                    && o.rows == t.rows
                    && o.client == t.client
                    && o.task == t.task
                    && o.policy == t.policy
            }) else {
                continue;
            };
            rows.push(vec![
                thousands(t.rows as u64),
                t.client.clone(),
                t.task.clone(),
                t.policy.clone(),
                format!("{mine} / {other}"),
                format!("{} / {}", t.rounds, o.rounds),
                format!("{} / {}", share(t), share(o)),
                format!(
                    "{} / {}",
                    money(t.cost_usd),
                    if o.success {
                        money(o.cost_usd)
                    } else {
                        "failed".into()
                    }
                ),
                format!(
                    "{} / {}",
                    thousands(t.wire_bytes as u64),
                    thousands(o.wire_bytes as u64)
                ),
            ]);
        }
    }
    if !rows.is_empty() {
        s.push_str(&markdown::table(
            &[
                ("N", Align::Right),
                ("client", Align::Left),
                ("task", Align::Left),
                ("policy", Align::Left),
                ("surface / its counterpart", Align::Left),
                ("rounds", Align::Right),
                ("cache share", Align::Right),
                ("cost", Align::Right),
                ("request bytes", Align::Right),
            ],
            rows,
        ));
        s.push('\n');
    }
}

/// The cheapest task that succeeded.
fn cheapest<'a>(pool: impl Iterator<Item = &'a TaskResult>) -> Option<&'a TaskResult> {
    pool.filter(|t| t.success)
        .min_by(|a, b| a.cost_usd.total_cmp(&b.cost_usd))
}
