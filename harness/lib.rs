//! toolcost: what it costs to show a catalogue of tool capabilities to a language model.
//!
//! Data flows one way: a [`catalogue`] of rows is exposed through a [`surface`] as the exact
//! request body a [`client`] would send; [`tokens`] counts what a provider would bill for it,
//! [`pricing`] turns tokens into dollars, and [`measure`] / [`reproduce`] assemble the tables
//! that [`report`] writes.

pub mod audit;
pub mod billing;
pub mod calibrate;
pub mod catalogue;
pub mod check;
pub mod claude_counts;
pub mod cli;
pub mod client;
pub mod clock;
pub mod discovery;
pub mod driver;
pub mod embed;
pub mod error;
pub mod gateway;
pub mod gemini_counts;
pub mod identity;
pub mod input;
pub mod installed;
pub mod json;
pub mod lint;
pub mod mcp;
pub mod measure;
pub mod net;
pub mod pricing;
pub mod provider;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod resolve;
pub mod rng;
pub mod sandbox;
pub mod schema;
pub mod secret;
pub mod server;
pub mod sse;
pub mod surface;
pub mod sweep;
pub mod sync;
pub mod tokens;
pub mod weigh;
pub mod wire;

pub use error::{Error, Result};
