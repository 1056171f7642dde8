//! The integration tests of shogi-records, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

mod hcpe;
mod records;
