//! The integration tests of shogi-model, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

mod checkpoint;
mod common;
mod crosscheck;
mod evaluator;
mod inference;
mod train;
