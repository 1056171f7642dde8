//! The search tree's storage: an arena of [`Node`]s (`u32` indices, `NONE` for none)
//! whose children are contiguous, and the game-theoretic values ([`Proven`]) the search
//! proves. Values are stored from Black's absolute point of view (sum of Black's expected
//! score, sum of draw probability) so nothing assumes that turns alternate.

use shogi_game::{Color, Outcome};

/// No node (a root's parent, a leaf's first child).
pub(crate) const NONE: u32 = u32::MAX;

/// A game-theoretic value proven by the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proven {
    /// Not proven.
    Unknown,
    /// `winner` wins with best play in `plies` plies from this node.
    Win {
        /// The winner.
        winner: Color,
        /// Plies until the game ends.
        plies: u32,
    },
    /// A draw with best play, in `plies` plies.
    Draw {
        /// Plies until the game ends.
        plies: u32,
    },
}

impl Proven {
    pub(crate) fn from_outcome(o: &Outcome) -> Proven {
        match o.winner {
            Some(w) => Proven::Win {
                winner: w,
                plies: 0,
            },
            None => Proven::Draw { plies: 0 },
        }
    }
    pub(crate) fn is_known(&self) -> bool {
        !matches!(self, Proven::Unknown)
    }
    /// Exact (black score, draw) of a proven value; a draw is worth `draw_black` to
    /// Black (0.5 unless the search has contempt).
    pub(crate) fn black_value(&self, draw_black: f32) -> (f32, f32) {
        match self {
            Proven::Win {
                winner: Color::Black,
                ..
            } => (1.0, 0.0),
            Proven::Win {
                winner: Color::White,
                ..
            } => (0.0, 0.0),
            _ => (draw_black, 1.0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Unexpanded,
    InFlight,
    Expanded,
    Terminal,
}

#[derive(Clone, Debug)]
pub(crate) struct Node<M> {
    pub(crate) mv: Option<M>,
    pub(crate) parent: u32,
    pub(crate) first_child: u32,
    pub(crate) num_children: u32,
    pub(crate) prior: f32,
    pub(crate) visits: u32,
    pub(crate) in_flight: u32,
    pub(crate) black_score: f64,
    pub(crate) draw: f64,
    /// Raw evaluator value (Black's expected score) of this node, when evaluated.
    pub(crate) nn_black: f32,
    pub(crate) to_move: Color,
    pub(crate) state: State,
    pub(crate) proven: Proven,
}

impl<M> Node<M> {
    pub(crate) fn new(mv: Option<M>, parent: u32, prior: f32) -> Self {
        Node {
            mv,
            parent,
            first_child: NONE,
            num_children: 0,
            prior,
            visits: 0,
            in_flight: 0,
            black_score: 0.0,
            draw: 0.0,
            nn_black: 0.5,
            to_move: Color::Black,
            state: State::Unexpanded,
            proven: Proven::Unknown,
        }
    }
    pub(crate) fn children(&self) -> std::ops::Range<usize> {
        if self.first_child == NONE {
            0..0
        } else {
            self.first_child as usize..(self.first_child + self.num_children) as usize
        }
    }
    /// Sum of scores for `c` over real visits.
    #[inline]
    pub(crate) fn score_for(&self, c: Color) -> f64 {
        match c {
            Color::Black => self.black_score,
            Color::White => self.visits as f64 - self.black_score,
        }
    }
    /// The evaluator's value of this node (its expected score) for `c`.
    #[inline]
    pub(crate) fn nn_value_for(&self, c: Color) -> f32 {
        match c {
            Color::Black => self.nn_black,
            Color::White => 1.0 - self.nn_black,
        }
    }
    /// Mean score for `c` (exact when proven), `None` when unvisited.
    pub(crate) fn q_for(&self, c: Color, draw_black: f32) -> Option<f32> {
        if self.proven.is_known() {
            let (b, _) = self.proven.black_value(draw_black);
            return Some(if c == Color::Black { b } else { 1.0 - b });
        }
        (self.visits > 0).then(|| (self.score_for(c) / self.visits as f64) as f32)
    }
}
