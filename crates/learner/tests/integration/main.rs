//! The integration tests of shogi-learner, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

mod common;
mod end_to_end;
mod samples;
mod window;
