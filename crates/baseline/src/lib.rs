//! The classical baselines: network-free players whose strength depends only on their
//! settings (a depth, a node budget), never on the machine, so they make a fixed scale
//! (`alphabeta:depth=1` = 0 Elo; docs/STRENGTH.md).
//!
//! * [`alphabeta`]: alpha-beta with quiescence for shogi and minishogi.
//! * [`alphabeta_tai`]: tai shogi's.

pub mod alphabeta;
pub mod alphabeta_tai;

pub use alphabeta::{AlphaBeta, AlphaBetaLimits, AlphaBetaResult, BASELINE_VERSION};
pub use alphabeta_tai::{TAI_BASELINE_VERSION, TaiAlphaBeta};
