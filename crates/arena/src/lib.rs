//! The arena: matches, Elo/SPRT, gating and rating history.
pub mod rundir;

pub use rundir::RunDir;
