//! The integration tests of shogi-arena, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

mod alphabeta;
mod arena;
mod common;
mod free_captures;
mod ladder_fit;
