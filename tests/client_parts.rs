//! claude-cli 2.1.165 made of its parts: each part's text written here is the real part's size
//! on every tokenizer it was measured with, tool search switches what is sent, and `measure`
//! says what the base turn is in both positions; a captured request becomes a profile.

mod common;

use toolcost::client::Client;
use toolcost::tokens::Tokenizer;

const MEASURED: [Tokenizer; 4] = [
    Tokenizer::Kimi,
    Tokenizer::O200k,
    Tokenizer::ClaudeV3,
    Tokenizer::ClaudeV5,
];

/// The tolerance of each tokenizer: 1% on Kimi and o200k, 2% on the Claude families.
fn tolerance(tok: Tokenizer) -> f64 {
    match tok {
        Tokenizer::Kimi | Tokenizer::O200k => 0.01,
        _ => 0.02,
    }
}

#[test]
fn every_part_has_the_real_parts_size_on_every_tokenizer() {
    let c = Client::named("claude-cli").unwrap();
    let parts = c.measured_sizes();
    assert_eq!(parts.iter().filter(|p| p.kind == "system").count(), 4);
    assert_eq!(parts.iter().filter(|p| p.kind == "session").count(), 2);
    assert_eq!(parts.iter().filter(|p| p.kind == "tool").count(), 22);
    let mut failures = Vec::new();
    for p in parts {
        for tok in MEASURED {
            let ours = c.part_tokens(&p.kind, &p.name, tok);
            let theirs = p.tokens(tok);
            let off = (ours - theirs).abs() / theirs;
            if off.is_nan() || off > tolerance(tok) {
                failures.push(format!(
                    "{} {}: {ours} against {theirs} on {}",
                    p.kind,
                    p.name,
                    tok.name()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    // The sum holds too, as the client adds it up (its own text, counted alone): the parts sent
    // with tool search on, on Kimi's tokenizer and Claude's current one.
    let sent = c.sent_tool_names();
    for tok in [Tokenizer::Kimi, Tokenizer::ClaudeV5] {
        let theirs: f64 = parts
            .iter()
            .filter(|p| p.kind != "tool" || sent.contains(&p.name.as_str()))
            .map(|p| p.tokens(tok))
            .sum();
        let ours = c.parts_tokens(tok);
        assert!(
            (ours - theirs).abs() / theirs <= tolerance(tok),
            "{}: {ours} {theirs}",
            tok.name()
        );
    }
}

#[test]
fn tool_search_switches_what_is_sent() {
    let on = Client::named("claude-cli").unwrap();
    assert_eq!(
        on.tool_search_on(),
        Some(true),
        "2.1.165 searches by default"
    );
    assert_eq!(
        on.sent_tool_names(),
        [
            "Agent",
            "Bash",
            "Edit",
            "Glob",
            "Grep",
            "Read",
            "Write",
            "Skill",
            "ToolSearch"
        ]
    );
    let deferred = on.deferred_builtins();
    assert_eq!(deferred.len(), 14);
    let context = on.context.clone().unwrap();
    for d in &deferred {
        assert!(
            context.contains(&format!("\n{d}\n")),
            "{d} not named in {context}"
        );
    }
    let off = on.clone().with_tool_search(false);
    assert_eq!(off.sent_tool_names().len(), 22);
    assert!(!off.sent_tool_names().contains(&"ToolSearch"));
    assert!(off.context.is_none(), "no reminder without tool search");
    // The session context is a setting: without it the system prompt loses exactly its parts.
    let bare = on.clone().with_session(false);
    let session: f64 = on
        .session_parts
        .iter()
        .map(|p| Tokenizer::Kimi.count(&p.text))
        .sum();
    let system = |c: &Client| c.system_blocks().join("\n\n");
    let diff = Tokenizer::Kimi.count(&system(&on)) - Tokenizer::Kimi.count(&system(&bare));
    assert!((diff - session).abs() < 5.0, "{diff} {session}");
    assert!(on.describe().contains("2.1.165") && on.describe().contains("tool search on"));
    assert!(bare.describe().contains("no session context"));
}

/// `measure` names the switch's position in the client it reports and gives the base turn in
/// both positions, each beside what its parts count.
#[test]
fn measure_shows_the_switch_in_both_positions() {
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("toolcost")
            .unwrap()
            .args([
                "measure",
                "--rows",
                "20",
                "--surface",
                "per-row-mcp",
                "--model",
                "kimi-k2.7-code",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(&[]);
    assert!(
        text.starts_with("client claude-cli 2.1.165 (calibrated:claude-cli-2.1.165 parts)"),
        "{text}"
    );
    assert!(text.contains("14 deferred), measured below: "), "{text}");
    let off = run(&["--tool-search", "off"]);
    assert!(off.contains("(22 built-ins), measured below: "), "{off}");
    // The base turn of each position is its parts and a little more, on the card's rendering,
    // and the parts are the real client's within 1% on Kimi's tokenizer.
    let c = Client::named("claude-cli").unwrap();
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for on in [true, false] {
        let c = c.clone().with_tool_search(on);
        let parts = c.parts_tokens(Tokenizer::Kimi);
        let pos = if on {
            "tool search on ("
        } else {
            "tool search off ("
        };
        let after = &joined[joined
            .find(pos)
            .unwrap_or_else(|| panic!("{pos} in {joined}"))..];
        let after = after.replace(", measured below", "");
        let number = |from: &str| -> f64 {
            after[after.find(from).unwrap() + from.len()..]
                .split(|ch: char| !(ch.is_ascii_digit() || ch == ','))
                .next()
                .unwrap()
                .replace(',', "")
                .parse()
                .unwrap()
        };
        let billed = number("): ");
        let theirs = number("the real client's: ");
        assert!(
            billed > parts * 0.9 && billed < parts * 1.1,
            "{pos}: {billed} against parts {parts}"
        );
        assert!(
            (parts - theirs).abs() / theirs <= 0.01,
            "{pos}: {parts} against {theirs}"
        );
    }
    // A client without tool search refuses the switch with a word.
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args([
            "measure",
            "--rows",
            "5",
            "--client",
            "openai-agent",
            "--tool-search",
            "on",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tool search"));
}

/// A request the official anthropic SDK sends through the gateway becomes a profile, and
/// measuring with that profile (no catalogue: the client alone) bills exactly what the gateway
/// billed for the captured request once its MCP tools are left out; with them as the catalogue
/// it bills the capture itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_captured_request_becomes_a_profile_that_bills_as_captured() {
    if !common::python_sdks("anthropic") {
        return;
    }
    let g = common::start_gateway(toolcost::gateway::Upstream::Mock, |o| o.log_bodies = true).await;
    let seen = common::python_peer("sdk_capture.py", &g.base).await;
    let rows = toolcost::gateway::log::read_all(&g.log).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(seen["input"], rows[0].input_tokens);
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.json");
    let out = assert_cmd::Command::cargo_bin("toolcost")
        .unwrap()
        .args(["profile", "--from-log"])
        .arg(&g.log)
        .arg("--out")
        .arg(&profile)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains("2 MCP tool(s) of server `notes` left out"),
        "{said}"
    );
    // The client's own text is not printed.
    assert!(!said.contains("careful assistant"), "{said}");
    let file = toolcost::client::file::ProfileFile::read(&profile).unwrap();
    assert_eq!(file.tools.len(), 3);
    assert_eq!(file.rename, "mcp__{server}__{tool}");
    assert_eq!(
        file.shell.as_ref().map(|s| s.tool.as_str()),
        Some("run_shell")
    );
    assert_eq!(
        file.turn.as_deref(),
        Some("Which files mention the billing export?")
    );
    // The captured MCP tools as a catalogue of their own, measured with the profile: the
    // request is the captured one, and so is its bill.
    let capture = serde_json::json!({"tools": [
        {"name": "search_notes", "description": "Search the user's notes.", "inputSchema":
            {"type": "object", "properties": {"query": {"type": "string", "description": "The query"}}, "required": ["query"]}},
        {"name": "add_note", "description": "Add a note.", "inputSchema":
            {"type": "object", "properties": {"title": {"type": "string", "description": "The title"}, "body": {"type": "string", "description": "The body"}}, "required": ["title"]}}
    ]});
    let cat = dir.path().join("notes.json");
    std::fs::write(&cat, capture.to_string()).unwrap();
    let measured = |args: &[&str]| -> Vec<serde_json::Value> {
        let out = assert_cmd::Command::cargo_bin("toolcost")
            .unwrap()
            .args([
                "measure",
                "--surface",
                "per-row-mcp",
                "--json",
                "--client-profile",
            ])
            .arg(&profile)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let with = measured(&["--catalogue", cat.to_str().unwrap()]);
    assert_eq!(with[0]["model"], "claude-sonnet-4.6");
    assert_eq!(with[0]["input_tokens"], rows[0].input_tokens, "{with:?}");
}

/// `profile --from-log` refuses what is not a capture with a word that says what to do: a
/// missing file, a database that is no gateway log, a log that kept no bodies; and writes
/// nothing.
#[test]
fn profile_from_a_bad_log_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    let foreign = dir.path().join("theirs.db");
    rusqlite_like_file(&foreign);
    let bare = dir.path().join("bare.sqlite");
    drop(toolcost::gateway::log::open(&bare).unwrap());
    std::fs::remove_file(bare.with_extension("sqlite-wal")).ok();
    for (log, says) in [
        (dir.path().join("nosuch.sqlite"), "no such log file"),
        (foreign, "not a toolcost gateway log"),
        (bare, "run the gateway with --log-bodies"),
    ] {
        let r = assert_cmd::Command::cargo_bin("toolcost")
            .unwrap()
            .args(["profile", "--from-log"])
            .arg(&log)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(2), "{}", log.display());
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains(says), "{}: {err}", log.display());
        assert!(!out.exists());
    }
}

/// A file that is not SQLite at all.
fn rusqlite_like_file(path: &std::path::Path) {
    std::fs::write(
        path,
        b"this is not a database, just bytes that look like nothing",
    )
    .unwrap();
}
