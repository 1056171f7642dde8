//! The integration tests of shogi-selfplay, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

mod export;
mod faults;
mod hcpe3;
mod play;
mod tsume;
