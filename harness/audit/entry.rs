//! What every host's entry is made of, read the way that host reads it: placeholders expanded
//! in its syntax, relative paths resolved against the folder the host resolves them in, and
//! the environment a started server gets.
//!
//! The environment: a server gets a minimal base (the variables the official MCP SDKs pass on
//! by default, `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`, with Codex's locale and
//! temporary-folder additions) and its entry's own `env` on top, never toolcost's whole
//! environment: an API key in the shell that runs `toolcost audit` does not reach a server a
//! configuration file names.

use super::{Reach, Server};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The variables a started server inherits from toolcost's environment (the MCP SDKs'
/// `DEFAULT_INHERITED_ENV_VARS` on POSIX, and Codex's `DEFAULT_ENV_VARS` additions).
pub const BASE_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ",
];

/// Where a configuration is read: the folder the host runs in, the user's home, and the
/// variables placeholders may name.
#[derive(Debug, Clone)]
pub struct Context {
    /// The folder the host would run in (the project): toolcost's working folder.
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    pub vars: HashMap<String, String>,
    /// Every value a placeholder took from `vars`, in order: what a report must never show.
    pub expanded: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Context {
    /// The context of this process.
    pub fn here() -> Context {
        Context {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            home: std::env::var_os("HOME").map(PathBuf::from),
            vars: std::env::vars().collect(),
            expanded: Default::default(),
        }
    }

    /// The value of a variable a placeholder names, remembered as expanded.
    fn var(&self, name: &str) -> Option<String> {
        let v = self.vars.get(name)?.clone();
        crate::sync::lock(&self.expanded).push(v.clone());
        Some(v)
    }

    /// How many values have been expanded so far ([`Context::expanded_since`]).
    pub fn expanded_len(&self) -> usize {
        crate::sync::lock(&self.expanded).len()
    }

    /// The values expanded after the first `from`.
    pub fn expanded_since(&self, from: usize) -> Vec<String> {
        crate::sync::lock(&self.expanded)
            .get(from..)
            .map(<[String]>::to_vec)
            .unwrap_or_default()
    }

    /// The base environment a started server gets.
    pub fn base_env(&self) -> Vec<(String, String)> {
        BASE_ENV
            .iter()
            .filter_map(|k| self.vars.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect()
    }
}

/// The placeholder syntax of a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// None: values are literal (Codex, Claude Desktop).
    Literal,
    /// `${VAR}` and `${VAR:-default}`; a variable unset with no default makes the entry
    /// unusable (Claude Code does not parse such a configuration).
    Shell,
    /// `$VAR` and `${VAR}`; an unset one is left as written (Gemini CLI).
    ShellKeep,
    /// The editor's `${env:VAR}` (unset: empty), `${userHome}`, `${workspaceFolder}`,
    /// `${workspaceFolderBasename}`, `${pathSeparator}` and `${/}`; `${input:...}` asks the user
    /// and so cannot be expanded here (VS Code, Cursor, Windsurf).
    Editor,
}

/// `s` with its placeholders expanded, or why it cannot be.
pub fn expand(s: &str, syntax: Syntax, cx: &Context, folder: &Path) -> Result<String, String> {
    if syntax == Syntax::Literal || !s.contains('$') {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let Some(close) = body.find('}') else {
                out.push_str(&rest[i..]);
                return Ok(out);
            };
            let inner = &body[..close];
            out.push_str(&braced(inner, syntax, cx, folder)?);
            rest = &body[close + 1..];
            continue;
        }
        // `$VAR` (Gemini CLI only).
        let name_len = after
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        match (syntax, name_len) {
            (Syntax::ShellKeep, n) if n > 0 => {
                let name = &after[..n];
                match cx.var(name) {
                    Some(v) => out.push_str(&v),
                    None => {
                        out.push('$');
                        out.push_str(name);
                    }
                }
                rest = &after[n..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// One `${...}`.
fn braced(inner: &str, syntax: Syntax, cx: &Context, folder: &Path) -> Result<String, String> {
    let home = || {
        cx.home
            .as_ref()
            .map(|h| h.display().to_string())
            .unwrap_or_default()
    };
    match syntax {
        Syntax::Literal => Ok(format!("${{{inner}}}")),
        Syntax::Shell => {
            let (name, default) = match inner.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (inner, None),
            };
            match (cx.var(name), default) {
                (Some(v), _) => Ok(v),
                (None, Some(d)) => Ok(d.to_string()),
                (None, None) => Err(format!(
                    "`${{{name}}}` is not set and has no default: the host would not read this configuration"
                )),
            }
        }
        Syntax::ShellKeep => Ok(cx.var(inner).unwrap_or_else(|| format!("${{{inner}}}"))),
        Syntax::Editor => {
            if let Some(name) = inner.strip_prefix("env:") {
                return Ok(cx.var(name).unwrap_or_default());
            }
            if let Some(id) = inner.strip_prefix("input:") {
                return Err(format!(
                    "`${{input:{id}}}` is asked of the user when the host starts the server: run it from the host"
                ));
            }
            match inner {
                "userHome" => Ok(home()),
                "workspaceFolder" => Ok(folder.display().to_string()),
                "workspaceFolderBasename" => Ok(folder
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default()),
                "pathSeparator" | "/" => Ok("/".into()),
                other => Err(format!(
                    "`${{{other}}}` is a variable toolcost cannot resolve outside the host"
                )),
            }
        }
    }
}

/// How an entry is reached, as its host decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio,
    /// Streamable HTTP at this URL (before expansion).
    Http(String),
    /// The host would not reach it: why.
    Refused(String),
    /// The host does not start it (disabled, not approved, filtered): why.
    Off(String),
}

/// Strings of a list member.
pub fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

/// A member as text.
pub fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// What a host's rules decide beyond the transport.
pub struct Rules<'a> {
    pub syntax: Syntax,
    /// The folder relative paths resolve against, and a server runs in when `cwd` is not set.
    pub folder: &'a Path,
    /// Where the entry comes from (`user`, `project`, a file), for the report.
    pub scope: &'a str,
    /// Tools the host keeps (only these) and drops.
    pub include: Option<Vec<String>>,
    pub exclude: Vec<String>,
    /// Names of variables the entry copies from the host's environment (Codex's `env_vars`).
    pub env_vars: Vec<String>,
    /// Whether the host starts a server in the entry's `cwd`; a host that does not (Claude
    /// Code, Claude Desktop, Cursor, Windsurf document none) starts it in `folder`.
    pub honors_cwd: bool,
}

/// A server from one entry.
pub fn server(name: &str, v: &Value, transport: Transport, rules: Rules, cx: &Context) -> Server {
    let before = cx.expanded_len();
    let reach = reach(v, transport, &rules, cx).unwrap_or_else(Reach::Unreachable);
    // What the entry took from the environment (placeholders, Codex's `env_vars`).
    let secrets = cx.expanded_since(before);
    let shown = match &reach {
        Reach::Stdio { argv, .. } => Path::new(&argv[0])
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or(&argv[0])
            .to_string(),
        Reach::Http { url, .. } => reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(String::from))
            .unwrap_or_else(|| "(unparsable URL)".into()),
        Reach::Unreachable(_) | Reach::Off(_) => String::new(),
    };
    Server {
        name: name.to_string(),
        scope: rules.scope.to_string(),
        shown,
        reach,
        secrets,
        include: rules.include,
        exclude: rules.exclude,
    }
}

fn reach(v: &Value, transport: Transport, rules: &Rules, cx: &Context) -> Result<Reach, String> {
    let x = |s: &str| expand(s, rules.syntax, cx, rules.folder);
    match transport {
        Transport::Refused(why) => Ok(Reach::Unreachable(why)),
        Transport::Off(why) => Ok(Reach::Off(why)),
        Transport::Http(url) => {
            let url = x(&url)?;
            let mut headers = Vec::new();
            for map in ["headers", "http_headers"] {
                for (k, h) in v.get(map).and_then(Value::as_object).into_iter().flatten() {
                    if let Some(h) = h.as_str() {
                        headers.push(format!("{k}: {}", x(h)?));
                    }
                }
            }
            Ok(Reach::Http { url, headers })
        }
        Transport::Stdio => {
            let Some(command) = text(v, "command") else {
                return Err("neither `command` nor a URL is configured".into());
            };
            let cwd = match text(v, "cwd").filter(|_| rules.honors_cwd) {
                Some(c) => {
                    let c = PathBuf::from(x(c)?);
                    match c.is_absolute() {
                        true => c,
                        false => rules.folder.join(c),
                    }
                }
                None => rules.folder.to_path_buf(),
            };
            let mut argv = vec![resolve(&x(command)?, &cwd)];
            for a in strings(v.get("args")) {
                argv.push(x(&a)?);
            }
            let mut env = cx.base_env();
            for name in &rules.env_vars {
                if let Some(val) = cx.var(name) {
                    env.push((name.clone(), val));
                }
            }
            let empty = Map::new();
            for (k, val) in v.get("env").and_then(Value::as_object).unwrap_or(&empty) {
                match val {
                    Value::String(s) => env.push((k.clone(), x(s)?)),
                    Value::Null => env.retain(|(name, _)| name != k),
                    other => env.push((k.clone(), other.to_string())),
                }
            }
            Ok(Reach::Stdio { argv, env, cwd })
        }
    }
}

/// A program named with a relative path (`./server`, `bin/server`) resolved against the folder
/// the server runs in; a bare name is left for `PATH`.
fn resolve(program: &str, cwd: &Path) -> String {
    let p = Path::new(program);
    match p.is_relative() && program.contains('/') {
        true => cwd.join(p).display().to_string(),
        false => program.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> Context {
        Context {
            cwd: PathBuf::from("/work/proj"),
            home: Some(PathBuf::from("/home/u")),
            vars: [
                ("TOKEN", "t0k"),
                ("PATH", "/usr/bin"),
                ("OPENAI_API_KEY", "sk-x"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            expanded: Default::default(),
        }
    }

    #[test]
    fn each_syntax_expands_as_its_host_does() {
        let f = Path::new("/work/proj");
        let c = cx();
        assert_eq!(expand("a${TOKEN}b", Syntax::Shell, &c, f).unwrap(), "at0kb");
        assert_eq!(expand("${NOPE:-d}", Syntax::Shell, &c, f).unwrap(), "d");
        assert!(expand("${NOPE}", Syntax::Shell, &c, f).is_err());
        assert_eq!(
            expand("$TOKEN/${NOPE}", Syntax::ShellKeep, &c, f).unwrap(),
            "t0k/${NOPE}"
        );
        assert_eq!(expand("${env:NOPE}x", Syntax::Editor, &c, f).unwrap(), "x");
        assert_eq!(
            expand("${workspaceFolder}/s", Syntax::Editor, &c, f).unwrap(),
            "/work/proj/s"
        );
        assert!(expand("${input:key}", Syntax::Editor, &c, f)
            .unwrap_err()
            .contains("input"));
        assert_eq!(
            expand("${TOKEN}", Syntax::Literal, &c, f).unwrap(),
            "${TOKEN}"
        );
    }

    #[test]
    fn a_server_gets_a_minimal_environment_and_its_folder() {
        let v =
            serde_json::json!({"command": "./bin/srv", "args": ["${TOKEN}"], "env": {"A": "1"}});
        let rules = Rules {
            syntax: Syntax::Shell,
            folder: Path::new("/cfg"),
            scope: "project",
            include: None,
            exclude: vec![],
            env_vars: vec![],
            honors_cwd: false,
        };
        let s = server("s", &v, Transport::Stdio, rules, &cx());
        let Reach::Stdio { argv, env, cwd } = s.reach else {
            panic!("{:?}", s.reach)
        };
        assert_eq!(argv, vec!["/cfg/./bin/srv".to_string(), "t0k".into()]);
        assert_eq!(cwd, PathBuf::from("/cfg"));
        // A `cwd` the host ignores is ignored; one it honours is where the server runs.
        let mut v = v.clone();
        v["cwd"] = "sub".into();
        let rules = |honors_cwd| Rules {
            syntax: Syntax::Shell,
            folder: Path::new("/cfg"),
            scope: "project",
            include: None,
            exclude: vec![],
            env_vars: vec![],
            honors_cwd,
        };
        for (honors, want) in [(false, "/cfg"), (true, "/cfg/sub")] {
            let s = server("s", &v, Transport::Stdio, rules(honors), &cx());
            let Reach::Stdio { cwd, .. } = s.reach else {
                panic!("{:?}", s.reach)
            };
            assert_eq!(cwd, PathBuf::from(want));
        }
        assert!(env.iter().any(|(k, _)| k == "PATH"));
        assert!(env.iter().any(|(k, v)| k == "A" && v == "1"));
        assert!(!env
            .iter()
            .any(|(k, _)| k == "OPENAI_API_KEY" || k == "TOKEN"));
    }
}
