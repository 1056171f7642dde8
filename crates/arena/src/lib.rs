//! The arena: players and matches between them, and the gate.
//!
//! * [`player`]: what can play ([`PlayerSpec`]: checkpoints searched with MCTS, uniform
//!   search, a random mover, the classical baselines of `shogi-baseline`, external USI
//!   engines through [`usi_client`]).
//! * [`matchplay`]: paired games between two players on parallel threads, for any
//!   `ArenaGame` (shogi and minishogi through `ShogiGame`, tai shogi through `TaiGame`;
//!   each game's adapters are in `shogi-registry`), from [`openings`].
//! * [`gate`]: the training loop's gate ([`gate_candidate`], [`gate_pending`]), which
//!   writes the run's rating history (`shogi-ratings`).
//!
//! What the results mean (Elo, SPRT, rating history, learning curves, their plots) is
//! `shogi-ratings`; the classical players are `shogi-baseline`; the root settings a
//! network player searches with are `shogi-mcts`'s `RootSettings`. Each item has one
//! path: its own crate's.

pub mod error;
pub mod gate;
pub mod matchplay;
pub mod openings;
pub mod player;
pub mod usi_client;

pub use error::ArenaError;
pub use gate::{
    GATE_SPRT, GateConfig, GateReport, gate_candidate, gate_pending, gate_pending_reporting,
    pass_over, set_aside, unloadable,
};
pub use matchplay::{
    GameResult, MATCH_OPENING_PLIES, MatchConfig, MatchProgress, MatchSummary, Report, adjudicate,
    play_match, run_match, run_match_reporting,
};
pub use openings::Openings;
pub use player::{
    MATCH_TEMPERATURE_PLIES, PlayerSettings, PlayerSpec, PreparedPlayer, baseline_version,
    check_player,
};
pub use usi_client::{
    UsiEngine, UsiTimeControl, VARIANT_OPTIONS, go_line, parse_usi_option, setoption_lines,
    variant_setoption,
};
