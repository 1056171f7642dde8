//! The arena: matches, Elo/SPRT, gating and rating history.
//!
//! * [`matchplay`]: paired games between two [`PlayerSpec`]s (checkpoints searched with
//!   MCTS, uniform search, random mover, external USI engines) on parallel threads, for
//!   any `ArenaGame` (shogi and minishogi through `ShogiGame`, tai shogi through
//!   `TaiGame`; each game's adapters are in `shogi-registry`).
//! * [`alphabeta`]: a classical network-free baseline player (the fixed yardstick);
//!   [`alphabeta_tai`] is tai shogi's.
//! * [`stats`]: score, Elo with a 95% interval, LOS, SPRT.
//! * [`gate`]: the training loop's gate ([`gate_candidate`], [`gate_pending`]).
//! * [`ratings`]: the run's rating history (CSV, JSON, PNG).
//! * [`curve`]: a run's learning curve against one fixed opponent (CSV, JSON, PNG).

pub mod alphabeta;
pub mod alphabeta_tai;
pub mod curve;
pub mod error;
pub mod gate;
pub mod matchplay;
pub mod openings;
pub mod player;
mod plot;
pub mod ratings;
pub mod stats;
pub mod usi_client;

pub use alphabeta::{AlphaBeta, AlphaBetaLimits, AlphaBetaResult, BASELINE_VERSION};
pub use alphabeta_tai::{TAI_BASELINE_VERSION, TaiAlphaBeta};
pub use error::ArenaError;
pub use gate::{GATE_SPRT, GateConfig, GateReport, gate_candidate, gate_pending};
pub use matchplay::{
    GameResult, MATCH_OPENING_PLIES, MatchConfig, MatchSummary, adjudicate, play_match, run_match,
};
pub use openings::Openings;
pub use player::{
    GamePlayers, MATCH_TEMPERATURE_PLIES, PlayerSettings, PlayerSpec, PreparedPlayer, RootSettings,
    check_player,
};
pub use stats::{EloEstimate, Rating, SprtConfig, SprtDecision, SprtState, Tally};
pub use usi_client::{UsiEngine, UsiTimeControl, go_line, parse_usi_option, setoption_lines};
