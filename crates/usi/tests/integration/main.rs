//! The integration tests of shogi-usi, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

#[path = "../common/mod.rs"]
mod common;
mod mate;
mod protocol;
mod repetition;
mod robustness;
