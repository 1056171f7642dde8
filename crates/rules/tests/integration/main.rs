//! The integration tests of shogi-rules, one module per subject, in one test binary:
//! one compile and link (and one process) for them all instead of one per file.

mod crosscheck;
mod exchange;
mod kifu;
mod mate_history;
mod naive;
mod outcome_after;
mod perft;
mod props;
mod rules;
