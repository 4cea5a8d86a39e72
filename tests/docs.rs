//! The README and `docs/` cannot drift from the tool:
//! - every `toolcost` command and flag they name exists (that command's `--help` names it);
//! - every relative link points at a file in the repository;
//! - every example in the README (a `$ toolcost ...` line in a code block, with the output
//!   shown under it) gives that output. `...` stands for lines left out and a line ending in
//!   `…` for a line that starts so.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("toolcost")
}

fn pages() -> Vec<(PathBuf, String)> {
    let mut out = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 8, "docs/ holds {} pages", docs.len());
    out.extend(docs);
    out.into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect()
}

/// The text of inline code spans and code blocks: where commands are written.
fn code(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            out.push(line.to_string());
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1 {
                out.push(span.to_string());
            }
        }
    }
    out
}

/// The name of a `--flag` written in the docs (`--max-line=N` is `max-line`), if `word` is one.
fn flag_name(word: &str) -> Option<String> {
    let name: String = word
        .strip_prefix("--")?
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    // A table's ruler (`-----`) is no flag.
    name.starts_with(|c: char| c.is_ascii_alphanumeric())
        .then_some(name)
}

struct Help(HashMap<Vec<String>, String>);

impl Help {
    fn of(&mut self, path: &[String]) -> &str {
        self.0.entry(path.to_vec()).or_insert_with(|| {
            let out = Command::new(bin())
                .args(path)
                .arg("--help")
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
    }

    /// The subcommands a help text lists.
    fn subcommands(&mut self, path: &[String]) -> Vec<String> {
        let help = self.of(path).to_string();
        help.split("Commands:")
            .nth(1)
            .map(|rest| {
                rest.lines()
                    .skip(1)
                    .take_while(|l| l.starts_with("  "))
                    .filter_map(|l| l.split_whitespace().next().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[test]
fn every_command_and_flag_the_docs_name_exists() {
    let mut help = Help(HashMap::new());
    let top = help.subcommands(&[]);
    assert!(top.contains(&"weigh".to_string()), "{top:?}");
    let mut checked = 0;
    let mut missing = Vec::new();
    for (page, text) in pages() {
        for span in code(&text) {
            let words: Vec<&str> = span.split_whitespace().collect();
            for (i, w) in words.iter().enumerate() {
                if *w != "toolcost" || words.get(i + 1).is_none() {
                    continue;
                }
                let cmd =
                    words[i + 1].trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-');
                if cmd.starts_with('-') || cmd.is_empty() || cmd == "toolcost" {
                    continue;
                }
                if !top.iter().any(|t| t == cmd) {
                    missing.push(format!(
                        "{}: `toolcost {cmd}` is not a command",
                        page.display()
                    ));
                    continue;
                }
                let mut path = vec![cmd.to_string()];
                let mut rest = &words[i + 2..];
                if let Some(sub) = rest.first() {
                    if help.subcommands(&path).iter().any(|s| s == sub) {
                        path.push(sub.to_string());
                        rest = &rest[1..];
                    }
                }
                for flag in rest {
                    // After `--` come the server's own arguments; a later `toolcost` starts anew.
                    if *flag == "--" || *flag == "toolcost" || flag.starts_with('|') {
                        break;
                    }
                    let Some(name) = flag_name(flag) else {
                        continue;
                    };
                    checked += 1;
                    if !help.of(&path).contains(&format!("--{name}")) {
                        missing.push(format!(
                            "{}: `toolcost {} --{name}`: not in that command's --help",
                            page.display(),
                            path.join(" ")
                        ));
                    }
                }
            }
        }
    }
    // A flag written on its own (`--page-size N` on the server's page) is a flag of some
    // command: every one is in some command's --help. Spans that run other tools are theirs.
    let mut every = String::new();
    for cmd in &top {
        let path = vec![cmd.clone()];
        every.push_str(help.of(&path));
        for sub in help.subcommands(&path) {
            every.push_str(help.of(&[cmd.clone(), sub]));
        }
    }
    let others = [
        "cargo",
        "npm",
        "pip",
        "python",
        "node",
        "git",
        "bash",
        "curl",
        "gh",
        "wrk",
        "hyperfine",
        "--test",
        "insta",
        "--",
    ];
    for (page, text) in pages() {
        for span in code(&text) {
            let words: Vec<&str> = span.split_whitespace().collect();
            if words
                .iter()
                .any(|w| others.contains(w) || w.starts_with("python"))
            {
                continue;
            }
            for w in words {
                let Some(name) = flag_name(w) else {
                    continue;
                };
                checked += 1;
                if !every.contains(&format!("--{name}")) {
                    missing.push(format!(
                        "{}: `--{name}` is no command's flag",
                        page.display()
                    ));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert!(checked > 60, "only {checked} flags found in the docs");
}

#[test]
fn every_relative_link_points_at_a_file() {
    let mut broken = Vec::new();
    for (page, text) in pages() {
        let dir = page.parent().unwrap();
        for part in text.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or("");
            let target = target.split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !dir.join(target).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_front_door() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines < 200,
        "the README is {lines} lines; move reference to docs/"
    );
}

/// The README's `$ toolcost ...` examples give the output shown under them.
#[test]
fn the_readme_examples_give_their_output() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut examples: Vec<(String, Vec<String>)> = Vec::new();
    let (mut in_block, mut in_example) = (false, false);
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            in_example = false;
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            examples.push((cmd.to_string(), Vec::new()));
            in_example = true;
        } else if let (true, Some((_, shown))) = (in_example, examples.last_mut()) {
            shown.push(line.to_string());
        }
    }
    assert!(examples.len() >= 3, "{} examples", examples.len());
    let exe = bin().display().to_string();
    for (cmd, shown) in &examples {
        let args: Vec<String> = cmd
            .split_whitespace()
            .map(|w| {
                if w == "toolcost" {
                    exe.clone()
                } else {
                    w.to_string()
                }
            })
            .collect();
        let out = Command::new(&args[0])
            .args(&args[1..])
            .current_dir(root())
            .env_remove("COLUMNS")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = String::from_utf8_lossy(&out.stdout).replace(&exe, "toolcost");
        let got: Vec<&str> = got.lines().map(str::trim_end).collect();
        // Each shown line appears, in order.
        let mut at = 0;
        for want in shown.iter().map(|l| l.trim_end()).filter(|l| *l != "...") {
            let found = got[at..].iter().position(|g| match want.strip_suffix('…') {
                Some(prefix) => g.starts_with(prefix),
                None => *g == want,
            });
            match found {
                Some(i) => at += i + 1,
                None => panic!(
                    "`{cmd}` no longer prints, in this order:\n{want}\n\nit printed:\n{}",
                    got.join("\n")
                ),
            }
        }
    }
}

#[test]
fn the_pages_exist_for_each_topic() {
    for page in [
        "surfaces",
        "commands",
        "server",
        "reliability",
        "gateway",
        "tasks",
        "sweeps",
        "discovery",
        "weigh",
        "ci",
        "output",
        "bench",
        "layout",
    ] {
        assert!(
            Path::new(&root())
                .join("docs")
                .join(format!("{page}.md"))
                .exists(),
            "docs/{page}.md"
        );
    }
}
