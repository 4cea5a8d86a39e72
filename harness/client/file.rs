//! A client profile as a JSON file: what `toolcost profile --from-log` writes from a captured
//! request and `--client-profile FILE` reads, so a user measures their own client exactly.
//!
//! The file holds the user's own text (their system prompt, their tools' descriptions): it is
//! written only where they ask and never printed unless they ask for it.

use super::{Client, NameListMode, Part, Shell, ShellForm};
use crate::error::{Error, Result};
use crate::provider::CacheMark;
use crate::wire::{self, Format};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// The version of the file's layout.
pub const VERSION: u32 = 1;

/// A client profile file. Field names are a contract: they do not change without a new
/// [`VERSION`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    /// The layout's version ([`VERSION`]).
    pub toolcost_client_profile: u32,
    pub name: String,
    pub about: String,
    /// The evidence label of the profile's text (`observed:<capture>` for a captured one).
    pub label: String,
    pub format: Format,
    /// The price card the profile measures with by default.
    pub model: String,
    /// The `model` the client sends.
    pub wire_model: String,
    pub max_tokens: u32,
    /// How the client names an MCP tool: `{server}` and `{tool}` stand for its parts.
    pub rename: String,
    pub max_tools: Option<usize>,
    pub name_list_mode: NameListMode,
    pub cache_marks: Vec<CacheMark>,
    /// The built-in the client reaches HTTP with, if it has one.
    pub shell: Option<Shell>,
    /// The system prompt's parts, in order.
    pub system: Vec<FilePart>,
    /// The built-in tools, in the client's request format, as sent.
    pub tools: Vec<Value>,
    /// What the client puts in the first user message before the turn.
    pub context: Option<String>,
    /// The user's turn of the capture, the default turn of a measurement with this profile.
    pub turn: Option<String>,
}

/// One part of the system prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilePart {
    pub name: String,
    pub text: String,
}

impl ProfileFile {
    /// Read a profile file (at most 16 MiB), checked.
    pub fn read(path: &Path) -> Result<ProfileFile> {
        let text = crate::input::read_text(path, crate::input::SMALL)?;
        let f: ProfileFile = serde_json::from_str(&text).map_err(|e| {
            Error::input(format!(
                "{}: not a toolcost client profile ({e}); make one with `toolcost profile --from-log LOG.sqlite --out FILE`",
                path.display()
            ))
        })?;
        if f.toolcost_client_profile != VERSION {
            return Err(Error::input(format!(
                "{}: client profile layout {} is not the {VERSION} this toolcost reads",
                path.display(),
                f.toolcost_client_profile
            )));
        }
        if !f.rename.contains("{tool}") {
            return Err(Error::input(format!(
                "{}: `rename` must contain {{tool}} (it has `{}`)",
                path.display(),
                f.rename
            )));
        }
        for (i, t) in f.tools.iter().enumerate() {
            if wire::definition_parts(t).is_none() && t.get("type").is_none() {
                return Err(Error::input(format!(
                    "{}: tool {i} has neither a name and schema nor a type",
                    path.display()
                )));
            }
        }
        Ok(f)
    }

    /// Write it as pretty JSON, atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::input(format!("profile: {e}")))?;
        crate::report::write_atomic(path, format!("{text}\n").as_bytes())
    }

    /// The client this file describes.
    pub fn client(self) -> Client {
        let shell = self.shell.unwrap_or(Shell {
            // No shell among the tools: the protocol-only surface's calls name no tool the
            // request has, which `run` reports as a failed call.
            tool: String::new(),
            form: ShellForm::CommandText,
        });
        let mut client = Client {
            name: self.name,
            about: self.about,
            format: self.format,
            model: self.model,
            wire_model: self.wire_model,
            max_tokens: self.max_tokens,
            rename: self.rename,
            max_tools: self.max_tools,
            name_list_mode: self.name_list_mode,
            cache_marks: self.cache_marks,
            shell,
            context: None,
            tools: Vec::new(),
            version: None,
            label: Some(self.label),
            system_parts: self
                .system
                .into_iter()
                .map(|p| Part {
                    name: p.name,
                    text: p.text,
                })
                .collect(),
            session_parts: Vec::new(),
            session: true,
            builtins: self.tools,
            tool_search: None,
            base_context: self.context,
            measured_tools: Vec::new(),
            measured: Vec::new(),
            turn: self.turn,
        };
        client.assemble();
        client
    }
}

impl Client {
    /// A client from a profile file ([`ProfileFile`]).
    pub fn from_file(path: &Path) -> Result<Client> {
        Ok(ProfileFile::read(path)?.client())
    }
}
