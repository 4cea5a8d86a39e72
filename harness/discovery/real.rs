//! The labelled query set over the captured `tools/list` results of real MCP servers
//! (`fixtures/queries/real-mcp.jsonl`, written by hand from the task, never from the tools'
//! text). Each query names its capture; a query is `paraphrase` only if it shares no content
//! word (the resolvers' own tokenizer: split identifiers, Snowball stop words and stems) with
//! the name or the whole description of any tool that answers it, and `lexical` only if it
//! shares at least one; [`check`] verifies both.

use super::queries::{Query, QueryKind};
use crate::catalogue::Catalogue;
use crate::error::{Error, Result};
use crate::resolve::text::terms;
use std::collections::HashSet;
use std::path::Path;

/// Every `*.tools.json` capture in `dir`, as (file name without `.tools.json`, catalogue),
/// sorted by name.
pub fn captures(dir: &Path) -> Result<Vec<(String, Catalogue)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = e.map_err(|e| Error::io(dir, e))?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if let Some(stem) = name.strip_suffix(".tools.json") {
            out.push((stem.to_string(), Catalogue::load(&path)?));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The content words (stems) of a tool's name and whole description.
fn tool_terms(cat: &Catalogue, name: &str) -> Option<HashSet<String>> {
    let tool = cat.tools.iter().find(|t| t.name == name)?;
    let parsed = tool.parsed();
    let desc = parsed["description"].as_str().unwrap_or("");
    Some(terms(&format!("{name} {desc}")).into_iter().collect())
}

/// Fill each query's `novel_words` and list every problem: an unknown capture or tool, or a
/// `paraphrase` that shares a content word with a tool that answers it.
pub fn check(queries: &mut [Query], caps: &[(String, Catalogue)]) -> Vec<String> {
    let mut problems = Vec::new();
    for q in queries.iter_mut() {
        let Some((_, cat)) = caps
            .iter()
            .find(|(s, _)| q.server.as_deref() == Some(s.as_str()))
        else {
            problems.push(format!("`{}`: no capture named {:?}", q.text, q.server));
            continue;
        };
        let mut shared: HashSet<String> = HashSet::new();
        let words = terms(&q.text);
        for name in q.relevant.iter().chain(std::iter::once(&q.target)) {
            match tool_terms(cat, name) {
                Some(t) => shared.extend(words.iter().filter(|w| t.contains(*w)).cloned()),
                None => problems.push(format!("`{}`: no tool `{name}`", q.text)),
            }
        }
        q.novel_words = if words.is_empty() {
            0.0
        } else {
            words.iter().filter(|w| !shared.contains(*w)).count() as f64 / words.len() as f64
        };
        if q.kind == QueryKind::Lexical && shared.is_empty() {
            problems.push(format!(
                "`{}` is labelled lexical but shares no word with `{}`",
                q.text, q.target
            ));
        }
        if q.kind == QueryKind::Paraphrase && !shared.is_empty() {
            let mut s: Vec<_> = shared.into_iter().collect();
            s.sort();
            problems.push(format!(
                "`{}` is labelled paraphrase but shares {} with `{}`",
                q.text,
                s.join(", "),
                q.target
            ));
        }
    }
    problems
}

/// Read a query set over captures and check it against them.
pub fn read_checked(queries: &Path, caps: &[(String, Catalogue)]) -> Result<Vec<Query>> {
    let mut q = super::queries::read(queries)?;
    let problems = check(&mut q, caps);
    if !problems.is_empty() {
        return Err(Error::input(format!(
            "{}: {} problem(s):\n{}",
            queries.display(),
            problems.len(),
            problems.join("\n")
        )));
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paraphrase_that_uses_the_tools_words_is_refused() {
        let cat = crate::catalogue::capture::catalogue(
            "t".into(),
            "t".into(),
            crate::catalogue::capture::parse(
                r#"{"tools":[{"name":"list_pull_requests","description":"List open PRs","inputSchema":{"type":"object"}}]}"#,
            )
            .unwrap(),
        );
        let caps = vec![("t".to_string(), cat)];
        let q = |text: &str, kind| Query {
            text: text.into(),
            kind,
            target: "list_pull_requests".into(),
            relevant: vec!["list_pull_requests".into()],
            novel_words: 0.0,
            server: Some("t".into()),
        };
        let mut ok = vec![q("which changes wait for review", QueryKind::Paraphrase)];
        assert!(check(&mut ok, &caps).is_empty());
        assert_eq!(ok[0].novel_words, 1.0);
        // "Listing" stems to the name's "list": not a paraphrase.
        let mut bad = vec![q("listing what waits for review", QueryKind::Paraphrase)];
        assert!(check(&mut bad, &caps)[0].contains("shares list"));
    }
}
