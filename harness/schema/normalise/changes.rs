//! What a normal form changes: where it accepts other instances than the schema given.

use super::Normaliser;
use serde::Serialize;
use serde_json::Value;

/// A normal form and what it changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Reported {
    pub schema: Value,
    pub changes: Vec<Change>,
}

/// What one change does to the set of instances a schema accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// The normal form refuses some instances the schema accepts.
    Narrows,
    /// The normal form accepts some instances the schema refuses.
    Widens,
    /// Both, or a different shape altogether.
    Changes,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Narrows => "narrows",
            Effect::Widens => "widens",
            Effect::Changes => "changes",
        }
    }
}

/// One place where the normal form does not accept what the schema accepts: a JSON pointer
/// into the schema given, the effect, and what the strict rules forced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub pointer: String,
    pub effect: Effect,
    pub message: String,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = crate::schema::validate::pointer_shown(&self.pointer);
        write!(f, "{at}: {} ({})", self.message, self.effect.as_str())
    }
}

/// Changes recorded per schema at most; a hostile schema cannot grow the list without bound.
const MAX_CHANGES: usize = 256;

impl Normaliser<'_> {
    /// Record one change, once per place and reason, at most [`MAX_CHANGES`].
    pub(super) fn change(&self, pointer: &str, effect: Effect, message: String) {
        let mut changes = self.changes.borrow_mut();
        if changes.len() >= MAX_CHANGES
            || changes
                .iter()
                .any(|c| c.pointer == pointer && c.message == message)
        {
            return;
        }
        changes.push(Change {
            pointer: pointer.to_string(),
            effect,
            message,
        });
    }
}
