//! The integration tests of shogi-features, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

mod attack_planes;
mod common;
mod encoding;
mod exchange_planes;
