//! What one search is asked ([`SearchLimits`]) and what it answers ([`SearchResult`],
//! [`StopReason`], [`SearchError`]).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::eval::{EvalError, Wdl};
use crate::tree::Proven;

/// Limits for one `search` call, on top of the config.
#[derive(Clone, Debug, Default)]
pub struct SearchLimits {
    /// Full simulation budget; `None` = `SearchConfig::simulations`. With playout cap
    /// randomization a cheap search uses `SearchConfig::cheap_simulations` instead.
    pub simulations: Option<u32>,
    /// Node limit; `None` = `SearchConfig::max_nodes`.
    pub max_nodes: Option<usize>,
    /// Stop when this instant passes (checked between batches).
    pub deadline: Option<Instant>,
    /// Stop when this flag becomes true (checked between batches and between gathered
    /// leaves, so the search returns within one evaluator batch).
    pub stop: Option<Arc<AtomicBool>>,
}

impl SearchLimits {
    /// Only a simulation budget.
    pub fn simulations(n: u32) -> Self {
        SearchLimits {
            simulations: Some(n),
            ..Default::default()
        }
    }
}

/// Why a search returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The simulation budget was spent.
    Simulations,
    /// The node limit was reached.
    Nodes,
    /// The deadline passed.
    Deadline,
    /// The stop flag was raised.
    Stopped,
    /// The root's value was proven (`SearchConfig::stop_when_proven`).
    Proven,
    /// The root position is already over (no move to choose).
    Terminal,
}

/// Search failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// The evaluator failed; the tree was discarded.
    #[error("evaluation failed: {0}")]
    Eval(#[from] EvalError),
}

/// What one `search` call found. Vectors indexed like `moves` (the root's legal moves in
/// the order `Game::legal_moves` produced them).
#[derive(Clone, Debug)]
pub struct SearchResult<M> {
    /// The move to play (after temperature / Gumbel selection); `None` if the root is over.
    pub best_move: Option<M>,
    /// Root legal moves, in the tree's order of the root's children (the moves that end
    /// the game first, then by prior, highest first), not the move generator's.
    pub moves: Vec<M>,
    /// Visit counts of root children (including visits reused from an earlier search).
    pub visits: Vec<u32>,
    /// Root priors as used by the search (after Dirichlet noise).
    pub priors: Vec<f32>,
    /// Mean value (expected score for the root's side to move) of each root child;
    /// `None` when unvisited.
    pub q: Vec<Option<f32>>,
    /// Policy training target: visit distribution (PUCT) or Gumbel improved policy.
    pub policy_target: Vec<f32>,
    /// Root value (side to move's view): the exact value when proven, else the mean over
    /// all root visits.
    pub root_wdl: Wdl,
    /// The evaluator's raw value of the root (side to move's view).
    pub root_raw_wdl: Wdl,
    /// Proven root value, if any.
    pub proven: Proven,
    /// Principal variation (most visited / proven-best children).
    pub pv: Vec<M>,
    /// Deepest leaf reached this search (plies below the root).
    pub max_depth: u32,
    /// Mean leaf depth this search.
    pub avg_depth: f32,
    /// Simulations (leaf playouts below the root) run by this call.
    pub simulations: u32,
    /// Visits of the root after the search (reused + this call + its own evaluation).
    pub root_visits: u32,
    /// Nodes in the tree.
    pub nodes: usize,
    /// Evaluator batches this call.
    pub batches: u32,
    /// Selections that hit a leaf already waiting for evaluation.
    pub collisions: u32,
    /// Positions this call sent to the evaluator: its simulations less those that ended
    /// at an exact value (a game's end, a proven node), which cost next to nothing.
    pub evaluations: u32,
    /// Whether this was a full search (always true without playout cap randomization);
    /// only full searches should be recorded as policy targets.
    pub is_full_search: bool,
    /// Why the search returned.
    pub stop_reason: StopReason,
    /// Wall time of the call.
    pub elapsed: Duration,
}

impl<M> SearchResult<M> {
    /// Root expected score W + 0.5 D for the side to move.
    pub fn root_value(&self) -> f32 {
        self.root_wdl.expected_score()
    }
}
