//! The integration tests of shogi-mcts, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

mod batch;
mod knobs;
mod parallel;
mod search;
