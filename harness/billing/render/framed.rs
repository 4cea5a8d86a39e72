//! A definition's compact JSON as a provider renders it, in parts whose counts are shared
//! across renderings (see [`Framed`]).

use crate::json;
use crate::tokens::Part;
use crate::wire::ToolRef;
use std::borrow::Cow;

/// each rendering gives it.
pub(super) struct Framed<'a> {
    /// Everything before the description's prose: the open and the description up to its
    /// first clean cut ([`crate::tokens::clean_cuts`]).
    head: String,
    /// The description as JSON; its prose (between the cuts) is a piece of its own.
    description: String,
    prose: std::ops::Range<usize>,
    /// The description after its last cut, and what comes before the schema.
    neck: String,
    schema: Cow<'a, str>,
    tail: &'static str,
}

impl<'a> Framed<'a> {
    /// `{"name","description","input_schema"}`, or a server tool (`tool_search_tool_*`) as sent.
    pub(super) fn anthropic(d: ToolRef<'a>) -> Framed<'a> {
        match d.parts() {
            Some(p) => Framed::around(
                format!("{{\"name\":{},\"description\":", json::compact(p.name)),
                p.description,
                ",\"input_schema\":",
                p.schema.text(),
                "}",
            ),
            None => Framed::as_sent(d),
        }
    }

    /// `{"name","description","parameters"}`: a Gemini function declaration.
    pub(super) fn gemini(d: ToolRef<'a>) -> Framed<'a> {
        match d.parts() {
            Some(p) => Framed::around(
                format!("{{\"name\":{},\"description\":", json::compact(p.name)),
                p.description,
                ",\"parameters\":",
                p.schema.text(),
                "}",
            ),
            None => Framed::as_sent(d),
        }
    }

    /// `open`, the description as JSON, `before_schema`, the schema, `tail`.
    pub(super) fn around(
        open: String,
        description: &str,
        before_schema: &str,
        schema: Cow<'a, str>,
        tail: &'static str,
    ) -> Framed<'a> {
        let description = json::compact(description);
        let [first, prose, last] = crate::tokens::clean_cuts(&description);
        let prose = first.len()..first.len() + prose.len();
        let (head, neck) = (open + first, format!("{last}{before_schema}"));
        Framed {
            head,
            description,
            prose,
            neck,
            schema,
            tail,
        }
    }

    pub(super) fn as_sent(d: ToolRef) -> Framed<'a> {
        Framed {
            head: d.text(),
            description: String::new(),
            prose: 0..0,
            neck: String::new(),
            schema: Cow::Borrowed(""),
            tail: "",
        }
    }

    /// The parts, in order. A schema of punctuation alone (`{}`) joins its neighbours.
    pub(super) fn parts(&self) -> impl Iterator<Item = Part<'_>> + Clone {
        let schema = match self.schema.bytes().all(|b| b.is_ascii_punctuation()) {
            true => Part::Joint(&self.schema),
            false => Part::Piece(&self.schema),
        };
        let prose = &self.description[self.prose.clone()];
        fn piece(t: &str) -> Option<Part<'_>> {
            (!t.is_empty()).then_some(Part::Piece(t))
        }
        [
            Some(Part::Piece(&self.head)),
            piece(prose),
            piece(&self.neck),
            Some(schema),
            Some(Part::Joint(self.tail)),
        ]
        .into_iter()
        .flatten()
    }
}
