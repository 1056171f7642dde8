//! Ratings: what the matches of `shogi-arena` mean, kept and drawn.
//!
//! * [`stats`]: score, Elo with a 95% interval, LOS, SPRT.
//! * [`ratings`]: a run's rating history, one entry a gated network (CSV, JSON, PNG).
//! * [`curve`]: a run's learning curve against one fixed opponent (CSV, JSON, PNG).

pub mod curve;
mod error;
mod plot;
pub mod ratings;
pub mod stats;

pub use error::RatingsError;
pub use stats::{EloEstimate, Rating, SprtConfig, SprtDecision, SprtState, Tally};
