//! Generic batched Monte Carlo tree search for shogi-zero.
//!
//! * [`Search`]: PUCT (AlphaZero) or Gumbel AlphaZero root, several simulations in flight
//!   per tree (virtual loss) evaluated in one batch, tree reuse, terminal detection and
//!   proven win/loss propagation, playout cap randomization, simulation / node / time /
//!   stop-flag limits.
//! * [`Evaluator`]: the batch evaluation seam (network, or the test evaluators
//!   [`UniformEvaluator`], [`RolloutEvaluator`], [`FnEvaluator`]).
//! * [`batch`]: a batching inference service so many threads share one network.
//! * `toy` (feature `toy`, on for this crate's own tests and benches only): tiny games
//!   implementing [`shogi_game::Game`].
//!
//! ```
//! use shogi_game::Game;
//! use shogi_mcts::toy::TicTacToe;
//! use shogi_mcts::{Search, SearchConfig, SearchLimits, UniformEvaluator};
//!
//! let mut game = TicTacToe::new();
//! let mut search = Search::new(SearchConfig { simulations: 64, ..SearchConfig::default() }, 7);
//! let evaluator = UniformEvaluator::default();
//! while game.outcome().is_none() {
//!     let r = search.search(&game, &evaluator, &SearchLimits::default()).unwrap();
//!     // r.policy_target / r.root_wdl are the training targets when r.is_full_search.
//!     let mv = r.best_move.unwrap();
//!     search.advance(mv); // tree reuse
//!     game.play_unchecked(mv);
//! }
//! ```
//!
//! Nothing here assumes a board size, drops or alternating turns: everything goes through
//! [`shogi_game::Game`].

pub mod batch;
pub mod config;
pub mod eval;
pub mod gumbel;
pub mod knobs;
pub mod noise;
mod result;
pub mod search;
#[cfg(any(test, feature = "toy"))]
pub mod toy;
mod tree;

pub use config::{
    GUMBEL_TIME_SHARE, GumbelInterior, PLAY_TREE_BATCH, RETIRED_KNOBS, RetiredKnob, RootSelection,
    RootSettings, SEARCH_KNOBS, SearchConfig, SearchKnob, SearchSpeed, UnknownRootSelection, knob,
    play_knobs,
};
pub use eval::{
    EvalError, EvalRequest, Evaluator, FnEvaluator, MAX_FAILED_EVALUATIONS_IN_A_ROW,
    RolloutEvaluator, UniformEvaluator, Wdl, check_finite, evaluate_retrying,
};
pub use search::{
    LEAF_EXCHANGE_GAIN, LeafBatch, Progress, Proven, Search, SearchError, SearchLimits,
    SearchResult, SharedProgress, StopReason, raise_by_exchange,
};
