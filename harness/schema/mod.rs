//! Strict input schemas: a validator that names each violation by JSON pointer, and a
//! normaliser whose output always validates, is idempotent, and keeps meaning where it can.
//!
//! "Strict" is what Moonshot/Kimi-style clients enforce (the real captures): the root is
//! `type: object`; every `required` name exists in `properties`; every node has a `type`;
//! no `anyOf`/`oneOf`/`allOf`; no `$ref`.

pub mod instance;
mod normalise;
mod validate;

#[cfg(test)]
pub(crate) use normalise::normalise_slowly;
pub use normalise::{
    is_normal, normalise, normalise_checked, normalise_reported, normalised, Change, Effect,
    Exceeded, Reported, MAX_EXPANDED_BYTES, MAX_REF_CHAIN,
};
pub use validate::{validate, Violation, ViolationKind};
