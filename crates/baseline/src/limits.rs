//! What one baseline search may spend, shared by the shogi and tai baselines: the limits
//! a player is given (`depth=N`, `nodes=N`, `movetime=MS`, read and written as text) and
//! the budget that counts a search's nodes against them.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// Deepest iteration of the shogi baseline (and the largest `depth=N`).
pub(crate) const MAX_DEPTH: u32 = 64;
/// The clock is read once every this many nodes (a power of two).
const CLOCK_EVERY: u64 = 1024;

/// The node and time limits of one search and whether they have ended it, shared by the
/// shogi and tai baselines: depth 1 always completes (so the move played is always a
/// searched one); from depth 2 on, passing the node limit or the deadline abandons the
/// iteration in progress.
#[derive(Debug)]
pub(crate) struct SearchBudget {
    /// Nodes searched so far.
    pub(crate) nodes: u64,
    node_limit: u64,
    /// When the search must stop (a `movetime` limit).
    deadline: Option<Instant>,
    /// Whether the limits may end the iteration in progress (not during depth 1).
    stoppable: bool,
    /// Whether they did: the iteration in progress is to be abandoned.
    pub(crate) aborted: bool,
}

impl Default for SearchBudget {
    fn default() -> Self {
        SearchBudget {
            nodes: 0,
            node_limit: u64::MAX,
            deadline: None,
            stoppable: false,
            aborted: false,
        }
    }
}

impl SearchBudget {
    /// A fresh budget for a search starting now.
    pub(crate) fn start(limits: &AlphaBetaLimits) -> SearchBudget {
        SearchBudget {
            node_limit: limits.nodes.unwrap_or(u64::MAX),
            deadline: limits
                .movetime
                .and_then(|ms| Instant::now().checked_add(Duration::from_millis(ms))),
            ..SearchBudget::default()
        }
    }

    /// Before iteration `depth`: whether the limits end the search here (never before
    /// depth 1).
    pub(crate) fn stop_before(&mut self, depth: u32) -> bool {
        self.stoppable = depth > 1;
        self.stoppable
            && (self.nodes >= self.node_limit || self.deadline.is_some_and(|d| Instant::now() >= d))
    }

    /// Counts a node; true once the limits have ended the iteration in progress.
    #[inline]
    pub(crate) fn count_node(&mut self) -> bool {
        self.nodes += 1;
        if self.stoppable
            && (self.nodes > self.node_limit
                || (self.nodes.is_multiple_of(CLOCK_EVERY)
                    && self.deadline.is_some_and(|d| Instant::now() >= d)))
        {
            self.aborted = true;
        }
        self.aborted
    }
}

/// How much a baseline player searches per move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AlphaBetaLimits {
    /// Iterative deepening stops after this depth (plies, quiescence not counted).
    pub depth: Option<u32>,
    /// Iterative deepening stops once this many nodes were searched; the move of the
    /// last completed iteration is played. Depth 1 always completes.
    pub nodes: Option<u64>,
    /// Iterative deepening stops once this many milliseconds have passed (an unfinished
    /// iteration is abandoned); the move of the last completed iteration is played.
    /// Depth 1 always completes. Unlike depth and nodes this depends on the machine.
    pub movetime: Option<u64>,
}

impl AlphaBetaLimits {
    /// A depth limit alone.
    pub fn depth(d: u32) -> AlphaBetaLimits {
        AlphaBetaLimits {
            depth: Some(d),
            nodes: None,
            movetime: None,
        }
    }
}

impl FromStr for AlphaBetaLimits {
    type Err = String;
    /// `depth=N`, `nodes=N`, `movetime=MS` or several of them, comma separated
    /// (whichever is reached first ends the search).
    fn from_str(s: &str) -> Result<Self, String> {
        let mut limits = AlphaBetaLimits {
            depth: None,
            nodes: None,
            movetime: None,
        };
        for part in s.split(',') {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                format!("alphabeta: expected depth=N, nodes=N or movetime=MS, got `{part}`")
            })?;
            let n: u64 = value
                .trim()
                .parse()
                .map_err(|_| format!("alphabeta: `{value}` is not a number"))?;
            if n == 0 {
                return Err(format!("alphabeta: {key} must be at least 1"));
            }
            match key.trim() {
                "depth" if n <= u64::from(MAX_DEPTH) => limits.depth = Some(n as u32),
                "depth" => {
                    return Err(format!("alphabeta: depth must be at most {MAX_DEPTH}"));
                }
                "nodes" => limits.nodes = Some(n),
                "movetime" => limits.movetime = Some(n),
                other => {
                    return Err(format!(
                        "alphabeta: unknown limit `{other}` (use depth=N, nodes=N or movetime=MS)"
                    ));
                }
            }
        }
        if limits.depth.is_none() && limits.nodes.is_none() && limits.movetime.is_none() {
            return Err("alphabeta: give depth=N, nodes=N or movetime=MS".into());
        }
        Ok(limits)
    }
}

impl fmt::Display for AlphaBetaLimits {
    /// The limits as parsed: `depth=N,nodes=N,movetime=MS`, those that are set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = [
            self.depth.map(|d| format!("depth={d}")),
            self.nodes.map(|n| format!("nodes={n}")),
            self.movetime.map(|t| format!("movetime={t}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            // No limit searches to the deepest depth.
            return write!(f, "depth={}", MAX_DEPTH);
        }
        f.write_str(&parts.join(","))
    }
}
