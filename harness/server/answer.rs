//! An answer's JSON text, held in pieces written one after another. A whole `tools/list`
//! answer is a few bytes around the snapshot's `tools` array, which is serialised once per
//! snapshot and shared: each answer writes those bytes as they are instead of copying them
//! into a text of its own.

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The text of one JSON-RPC answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Text {
    pieces: Vec<Bytes>,
}

impl Text {
    /// The text, pieces in order.
    pub fn of(pieces: impl IntoIterator<Item = Bytes>) -> Text {
        Text {
            pieces: pieces.into_iter().filter(|p| !p.is_empty()).collect(),
        }
    }

    /// Bytes in all.
    pub fn len(&self) -> usize {
        self.pieces.iter().map(Bytes::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The text as one string, for transports that write lines (stdio) or gather several
    /// answers into one (batches). Every piece is UTF-8 JSON text.
    pub fn into_string(self) -> String {
        let mut out = Vec::with_capacity(self.len());
        for p in &self.pieces {
            out.extend_from_slice(p);
        }
        String::from_utf8(out).expect("every piece of an answer is UTF-8 JSON text")
    }

    /// An HTTP body that writes the pieces as they are, with their exact length.
    pub fn into_body(self) -> Body {
        Body::new(Pieces {
            left: self.len() as u64,
            pieces: self.pieces.into(),
        })
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::of([Bytes::from(s)])
    }
}

/// A JSON-RPC answer over HTTP: `status`, the JSON content type, and the text as its body.
pub fn rpc_response(status: StatusCode, body: impl Into<Text>) -> Response {
    let body = body.into().into_body();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The body of a [`Text`]: one data frame per piece.
struct Pieces {
    pieces: VecDeque<Bytes>,
    left: u64,
}

impl http_body::Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = self.pieces.pop_front();
        if let Some(p) = &next {
            self.left -= p.len() as u64;
        }
        Poll::Ready(next.map(|p| Ok(Frame::data(p))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body carries the pieces' bytes in order, says their exact length up front, and the
    /// string is the same text.
    #[tokio::test]
    async fn a_text_is_its_pieces_in_order() {
        let shared = Bytes::from_static(b"[{\"name\":\"a\"}]");
        let text = Text::of([
            Bytes::from("{\"result\":{\"tools\":"),
            shared.clone(),
            Bytes::new(),
            Bytes::from("}}"),
        ]);
        let whole = "{\"result\":{\"tools\":[{\"name\":\"a\"}]}}";
        assert_eq!(text.len(), whole.len());
        let body = text.clone().into_body();
        assert_eq!(
            http_body::Body::size_hint(&body).exact(),
            Some(whole.len() as u64)
        );
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        assert_eq!(&bytes[..], whole.as_bytes());
        assert_eq!(text.into_string(), whole);
        assert!(Text::of([Bytes::new()]).is_empty());
    }
}
