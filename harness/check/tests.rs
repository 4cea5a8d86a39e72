use super::*;

fn lock(tools: &[(&str, usize, u64)]) -> Lock {
    let tools: BTreeMap<String, Weight> = tools
        .iter()
        .map(|(n, b, t)| {
            (
                n.to_string(),
                Weight {
                    bytes: *b,
                    tokens: *t,
                    anthropic: None,
                    openai: None,
                },
            )
        })
        .collect();
    Lock::new("o200k", tools)
}

/// A rename by case alone is one definition respelled: its growth is held to the
/// per-definition budget against the definition it replaced.
#[test]
fn a_case_only_rename_is_held_to_the_old_definition() {
    let base = lock(&[("search", 100, 20), ("big", 5_000, 1_000)]);
    let renamed = lock(&[("SEARCH", 300, 60), ("big", 5_000, 1_000)]);
    let o = check(&renamed, &base, &Budget::default()).unwrap();
    assert!(
        o.violations
            .iter()
            .any(|v| v.tool == "SEARCH (was search)" && v.rule == "max_tool_growth_pct"),
        "{:?}",
        o.violations
    );
    let same = lock(&[("Search", 100, 20), ("big", 5_000, 1_000)]);
    let o = check(&same, &base, &Budget::default()).unwrap();
    assert!(
        !o.violations.iter().any(|v| v.tool.contains("was")),
        "{:?}",
        o.violations
    );
}

/// Under the default budget no tool set can grow without bound: a rename to a huge tool, or
/// many tools added, is over it.
#[test]
fn renames_and_additions_cannot_walk_around_the_gate() {
    let base = lock(&[("a", 100, 20), ("b", 200, 40)]);
    let budget = Budget::default();
    // `b` renamed to `b2`, and grown fifty times.
    let renamed = lock(&[("a", 100, 20), ("b2", 10_000, 2_000)]);
    let o = check(&renamed, &base, &budget).unwrap();
    assert!(!o.passed());
    assert!(
        o.violations.iter().any(|v| v.tool == "b2"),
        "{:?}",
        o.violations
    );
    // Many small tools added: each within the per-definition bound, the total not.
    let mut many: Vec<(String, usize, u64)> = vec![("a".into(), 100, 20), ("b".into(), 200, 40)];
    for i in 0..400 {
        many.push((format!("t{i}"), 150, 30));
    }
    let many: Vec<(&str, usize, u64)> = many.iter().map(|(n, b, t)| (n.as_str(), *b, *t)).collect();
    let o = check(&lock(&many), &base, &budget).unwrap();
    assert!(o.growth_pct > 15_000.0);
    assert!(
        o.violations.iter().any(|v| v.rule == "max_growth_pct"),
        "{:?}",
        o.violations
    );
    // From an empty baseline, any growth is past any finite budget.
    let loose = Budget {
        max_growth_pct: Some(1e9),
        ..Default::default()
    };
    let o = check(&lock(&many), &lock(&[]), &loose).unwrap();
    assert!(!o.passed() && o.growth_pct.is_infinite());
    assert!(render(&o, "x", Format::Table).contains("all new"));
    assert!(check(&lock(&[]), &lock(&[]), &loose).unwrap().passed());
}

#[test]
fn changes_and_violations() {
    let base = lock(&[("a", 100, 20), ("b", 200, 40), ("c", 50, 10)]);
    let now = lock(&[("a", 100, 20), ("b", 300, 70), ("d", 80, 15)]);
    let budget = Budget {
        max_tokens_per_tool: Some(60),
        max_growth_pct: Some(10.0),
        ..Default::default()
    };
    let o = check(&now, &base, &budget).unwrap();
    let kinds: Vec<(&str, Change)> = o
        .changes
        .iter()
        .map(|c| (c.name.as_str(), c.change.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("b", Change::Grown),
            ("d", Change::Added),
            ("c", Change::Removed)
        ]
    );
    let rules: Vec<&str> = o.violations.iter().map(|v| v.rule.as_str()).collect();
    // b grew 75%: the per-definition gate (on by default) flags it too.
    assert_eq!(
        rules,
        vec![
            "max_tokens_per_tool",
            "max_tool_growth_pct",
            "max_growth_pct"
        ]
    );
    assert!((o.growth_pct - 50.0).abs() < 1e-9);
    assert!(render(&o, "x", Format::Github)
        .starts_with("::error title=toolcost max_tokens_per_tool::b is 70"));
    assert!(check(&now, &now, &budget)
        .unwrap()
        .violations
        .iter()
        .all(|v| v.rule != "max_growth_pct"));
}

#[test]
fn a_lock_for_another_tokenizer_is_an_error() {
    let mut other = lock(&[]);
    other.tokenizer = "cl100k".into();
    assert!(check(&lock(&[]), &other, &Budget::default()).is_err());
}
