//! Discovery quality: labelled query sets generated with a catalogue, and how well each
//! resolver finds the right row (recall@1, recall@5, MRR), with what the misses add to a task on
//! each surface that searches. `toolcost search-eval` drives it.

pub mod eval;
pub mod queries;
pub mod real;
pub mod report;
pub mod tasks;
