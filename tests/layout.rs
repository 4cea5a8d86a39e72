//! The module layout stays one-way: no top-level module of `harness/` reaches another that
//! reaches it back, nothing below `cli/` imports `cli`, and no match over surfaces or formats
//! hides new variants behind a catch-all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Top-level module of each file, and the top-level modules it names as `crate::X`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(&root).unwrap();
            let first = rel.components().next()?.as_os_str().to_string_lossy();
            let name = first.trim_end_matches(".rs").to_string();
            (name != "lib" && name != "main").then_some(name)
        })
        .collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let from = first.trim_end_matches(".rs").to_string();
        if from == "lib" || from == "main" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let deps = g.entry(from.clone()).or_default();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + 7..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) && name != from {
                deps.insert(name);
            }
        }
        // `use crate::{a, b}` groups.
        for (i, _) in text.match_indices("use crate::{") {
            let rest = &text[i + 12..];
            let group = &rest[..rest.find('}').unwrap_or(0)];
            for part in group.split(',') {
                let name = part.trim().split("::").next().unwrap_or("").to_string();
                if modules.contains(&name) && name != from {
                    deps.insert(name);
                }
            }
        }
    }
    g
}

#[test]
fn modules_depend_one_way() {
    let g = graph();
    // Kahn's algorithm: whatever cannot be ordered sits on a cycle.
    let mut indegree: BTreeMap<&str, usize> = g.keys().map(|k| (k.as_str(), 0)).collect();
    for deps in g.values() {
        for d in deps {
            *indegree.entry(d.as_str()).or_default() += 1;
        }
    }
    let mut ready: Vec<&str> = indegree
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(k, _)| *k)
        .collect();
    let mut ordered = 0;
    while let Some(m) = ready.pop() {
        ordered += 1;
        for d in g.get(m).into_iter().flatten() {
            let n = indegree.get_mut(d.as_str()).unwrap();
            *n -= 1;
            if *n == 0 {
                ready.push(d);
            }
        }
    }
    let stuck: Vec<&str> = indegree
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(
        ordered,
        indegree.len(),
        "modules on an import cycle: {stuck:?}"
    );
}

#[test]
fn nothing_below_the_command_line_imports_it() {
    for (module, deps) in graph() {
        if module != "cli" {
            assert!(!deps.contains("cli"), "{module} imports cli");
        }
    }
}

#[test]
fn no_catch_all_arm_over_surfaces_or_formats() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
    let mut files = Vec::new();
    sources(&root, &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let l = line.trim_start();
            let over_variants = [
                "Format::",
                "Calls::",
                "Phase::",
                "SearchSide::",
                "SearchMethod::",
            ]
            .iter()
            .any(|v| l.starts_with(v));
            assert!(
                !(over_variants && l.contains("| _")),
                "{}:{}: a catch-all arm over variants",
                f.display(),
                i + 1
            );
            if l.starts_with("_ =>") {
                // The arm above must not be over a surface or format enum.
                let before: Vec<&str> = text.lines().take(i).collect();
                let prev = before.iter().rev().find(|p| p.trim_start().contains("=>"));
                if let Some(p) = prev {
                    let p = p.trim_start();
                    assert!(
                        ![
                            "Format::",
                            "Calls::",
                            "Phase::",
                            "SearchSide::",
                            "SearchMethod::",
                            "Listing::"
                        ]
                        .iter()
                        .any(|v| p.starts_with(v)),
                        "{}:{}: `_ =>` after an arm over a surface or format enum",
                        f.display(),
                        i + 1
                    );
                }
            }
        }
    }
}

/// No source file under harness/ grows past 700 lines: a module owns one thing, and a file
/// that long holds several (split it by what each part owns, or move its tests beside it).
#[test]
fn no_source_file_is_over_700_lines() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harness");
    let mut long = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                if lines > 700 {
                    long.push(format!("{} ({lines} lines)", path.display()));
                }
            }
        }
    }
    assert!(long.is_empty(), "over 700 lines: {long:?}");
}
