//! The integration tests of shogi-records, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file. The
//! tests that replay records through a game's adapters are shogi-registry's (it depends
//! on this crate).

mod hcpe;
mod import_run;
