//! The integration tests of shogi-tai, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

mod exchange;
mod moves;
mod net;
mod playout;
mod setup;
