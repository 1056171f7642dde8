//! The game seam shared by every variant (standard shogi, minishogi, later tai shogi).
//!
//! Search, self-play, the arena and the USI engine are generic over [`Game`]. Nothing
//! here assumes a board size, drops, or one move per turn: a variant decides what a move
//! is, how positions are keyed, and when the game is over.

use std::fmt::{Debug, Display};
use std::hash::Hash;

mod kind;
mod sfen;

pub use kind::{GameKind, UnknownGame};
pub use sfen::push_sfen_rank;

/// The two players. Black (先手, sente) moves first in an even game; in handicap games
/// (駒落ち) White (後手, gote) is the handicap giver and moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// 先手 sente.
    Black = 0,
    /// 後手 gote.
    White = 1,
}

impl Color {
    /// Both colours, Black first.
    pub const ALL: [Color; 2] = [Color::Black, Color::White];
    /// Number of colours.
    pub const NUM: usize = 2;

    /// The other colour.
    #[inline]
    pub const fn flip(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// 0 for Black, 1 for White.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        self.flip()
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// 詰み: the side to move is in check with no legal move.
    Checkmate,
    /// The side to move has no legal move but is not in check (it loses in shogi).
    NoLegalMoves,
    /// 千日手 sennichite: the same position for the fourth time (draw).
    Repetition,
    /// 連続王手の千日手: the repetition came from perpetual check; the checker loses.
    PerpetualCheck,
    /// 入玉宣言: a successful impasse declaration (27-point rule) by the side to move.
    ImpasseDeclaration,
    /// The older 24-point impasse rule (持将棋): both kings entered, points decide.
    Impasse24,
    /// The configured maximum number of plies was reached (draw).
    MaxPlies,
    /// A player resigned (投了).
    Resignation,
    /// All royal pieces of one side were captured (tai shogi).
    RoyalsCaptured,
    /// A player lost on time, crashed, or played an illegal move (arena, engine).
    Forfeit,
    /// A game record's time-up (CSA `%TIME_UP`, KIF 切れ負け): the side to move lost on
    /// time. Kept apart from [`EndReason::Forfeit`] so an exported record says so again
    /// and an import's filters (which leave time-ups out by default) see it.
    TimeUp,
    /// A game stopped at the ply limit was given to the side ahead in material (arena
    /// and self-play adjudication; the rules themselves call it a draw).
    Adjudication,
}

/// The result of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Color>,
    /// Why the game ended.
    pub reason: EndReason,
}

impl Outcome {
    /// A win for `winner`.
    pub const fn win(winner: Color, reason: EndReason) -> Self {
        Outcome {
            winner: Some(winner),
            reason,
        }
    }

    /// A draw.
    pub const fn draw(reason: EndReason) -> Self {
        Outcome {
            winner: None,
            reason,
        }
    }

    /// The score for `side`: 1 win, 0.5 draw, 0 loss.
    pub fn score_for(&self, side: Color) -> f32 {
        match self.winner {
            Some(w) if w == side => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }
}

/// Plays up to `plies` moves, each the legal move at the index `pick(number of legal
/// moves)` returns (a random index, for random positions and openings), stopping early
/// where the game ends. Returns the plies played.
pub fn play_picked_moves<G: Game>(
    game: &mut G,
    plies: usize,
    mut pick: impl FnMut(usize) -> usize,
) -> usize {
    let mut legal = Vec::new();
    for played in 0..plies {
        legal.clear();
        if game.outcome().is_none() {
            game.legal_moves(&mut legal);
        }
        if legal.is_empty() {
            return played;
        }
        game.play_unchecked(legal[pick(legal.len())]);
    }
    plies
}

/// A game in progress: a position plus whatever history its end rules need
/// (repetition keys, checks given). Cheap to clone: search clones it once per simulation.
///
/// Implementations are plain data, `Send + Sync`, and never block.
pub trait Game: Clone + Send + Sync + Debug + 'static {
    /// One move (for tai shogi possibly a multi-step lion move).
    type Move: Copy + Eq + Hash + Debug + Display + Send + Sync + 'static;

    /// Short variant name (`shogi`, `minishogi`, `tai`).
    fn variant_name(&self) -> &'static str;

    /// The side to move.
    fn side_to_move(&self) -> Color;

    /// Plies played since the game's start position.
    fn ply(&self) -> u32;

    /// Appends every legal move to `out` (which is not cleared).
    fn legal_moves(&self, out: &mut Vec<Self::Move>);

    /// Plays a move that `legal_moves` produced. Behaviour on other moves is unspecified
    /// (it may panic in debug builds) but never memory-unsafe.
    fn play_unchecked(&mut self, mv: Self::Move);

    /// Plays `mv` if it is legal here (and the game is not over); otherwise leaves the
    /// game as it was and says why. The default checks against [`Game::legal_moves`]; a
    /// game with a faster legality test overrides it.
    fn play(&mut self, mv: Self::Move) -> Result<(), String> {
        if self.outcome().is_some() {
            return Err(format!("{mv}: the game is over"));
        }
        let mut legal = Vec::new();
        self.legal_moves(&mut legal);
        if !legal.contains(&mv) {
            return Err(format!("{mv} is not legal here"));
        }
        self.play_unchecked(mv);
        Ok(())
    }

    /// `Some` once the game is over, by the rules as configured for this game (mate,
    /// repetition, impasse declaration when enabled, max plies). Resignation is decided
    /// by players, not here.
    fn outcome(&self) -> Option<Outcome>;

    /// [`Game::outcome`] of the game after `mv` (a move [`Game::legal_moves`] produced),
    /// leaving this game as it is: a search's check of every child it expands. The
    /// default plays `mv` on a clone; a game whose clone carries its history overrides
    /// it with a test that copies only the position.
    fn outcome_after(&self, mv: Self::Move) -> Option<Outcome> {
        let mut next = self.clone();
        next.play_unchecked(mv);
        next.outcome()
    }

    /// [`Game::outcome_after`] of each of `moves` (one expansion's moves, all legal
    /// here): `ended(k, outcome)` for each `moves[k]` that ends the game, in order. The
    /// default asks move by move; a game whose test has a part that holds whatever the
    /// move is overrides it to do that part once.
    fn outcomes_after(&self, moves: &[Self::Move], mut ended: impl FnMut(usize, Outcome))
    where
        Self: Sized,
    {
        for (k, &mv) in moves.iter().enumerate() {
            if let Some(o) = self.outcome_after(mv) {
                ended(k, o);
            }
        }
    }

    /// A hash of the position (board, hands, side to move), for caches and repetition.
    fn key(&self) -> u64;

    /// Whether the side to move is in check (false in variants without check).
    fn in_check(&self) -> bool {
        false
    }

    /// Parses a move in the variant's text notation (USI for shogi) against this
    /// position; `None` if malformed or illegal.
    fn parse_move(&self, text: &str) -> Option<Self::Move> {
        let mut moves = Vec::new();
        self.legal_moves(&mut moves);
        moves.into_iter().find(|mv| mv.to_string() == text)
    }

    /// A forced mate (詰み) for the side to move proven by a mate search of at most
    /// `max_nodes` nodes and `max_plies` plies, never past the game's ply cap: the line,
    /// the attacker's move first and mate after the last. `None` when none was found in
    /// that budget or the variant has no mate solver.
    fn find_mate(&self, _max_nodes: usize, _max_plies: u32) -> Option<Vec<Self::Move>> {
        None
    }

    /// Leaf count of the legal-move tree `depth` plies deep (perft). A game that ends
    /// inside the tree is a leaf of its own and is not expanded. With `bulk` the last
    /// ply is counted from the move list instead of making each move (the same count,
    /// faster). A game with a faster counter overrides it.
    fn perft(&self, depth: u32, bulk: bool) -> u64 {
        if depth == 0 || self.outcome().is_some() {
            return 1;
        }
        let mut moves = Vec::new();
        self.legal_moves(&mut moves);
        if depth == 1 && bulk {
            return moves.len() as u64;
        }
        moves
            .into_iter()
            .map(|mv| {
                let mut next = self.clone();
                next.play_unchecked(mv);
                next.perft(depth - 1, bulk)
            })
            .sum()
    }

    /// Material points of `c`, for adjudicating games stopped at a ply cap (`None`: the
    /// variant has no material count).
    fn material_points(&self, _c: Color) -> Option<u32> {
        None
    }

    /// Material of `c` valued on `scale` (board and hand); `None` where the variant
    /// has no such count. [`MaterialScale::Impasse`] is [`Game::material_points`].
    fn material_on(&self, c: Color, scale: MaterialScale) -> Option<u32> {
        match scale {
            MaterialScale::Impasse => self.material_points(c),
            MaterialScale::Mobility => None,
        }
    }

    /// The most material the side to move wins on `scale` with one capture and the
    /// recaptures that follow on its square (a static exchange evaluation, no search);
    /// `None` where the variant does not compute it.
    fn exchange_gain(&self, _scale: MaterialScale) -> Option<u32> {
        None
    }

    /// Whether `mv` (legal here) wins material by static exchange: a capture whose
    /// recaptures on that square leave the mover ahead on the rules' own piece values.
    /// False where the variant does not compute it.
    fn wins_material(&self, _mv: Self::Move) -> bool {
        false
    }

    /// What the mover of `mv` (legal here) loses by static exchange one ply later, on
    /// the rules' own piece values: the opponent's best exchange after `mv` minus what
    /// `mv` takes; below 0 when it wins material, above 0 when it leaves a piece en
    /// prise or ignores one that is attacked. 0 where the variant does not compute it.
    fn static_loss_after(&self, _mv: Self::Move) -> i32 {
        0
    }
}

/// The piece values of a material count (a learning target's, not the rules').
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum MaterialScale {
    /// The variant's adjudication count, [`Game::material_points`]: in shogi the impasse
    /// declaration's points (rook and bishop 5, every other piece 1), which price a
    /// silver, a gold and a pawn alike.
    #[default]
    Impasse,
    /// Each piece worth its mobility: the squares it reaches from the centre of an
    /// empty board (shogi: pawn 1, knight 2, lance 4, silver 5, gold and the promoted
    /// minors 6, bishop and rook 16, horse and dragon 20; tai shogi's own count, which
    /// is this already). Values only the move rules define.
    Mobility,
}

/// The outcome of a game stopped at its ply cap when games are adjudicated by material:
/// a win ([`EndReason::Adjudication`]) for the side at least `margin` points ahead, else
/// `outcome` unchanged. Any other outcome, `margin` 0 and variants without material
/// points are left as they are.
pub fn adjudicate<G: Game>(game: &G, outcome: Outcome, margin: u32) -> Outcome {
    // The search calls this on every terminal leaf: count material only when it matters.
    if margin == 0 || outcome.reason != EndReason::MaxPlies {
        return outcome;
    }
    match (
        game.material_points(Color::Black),
        game.material_points(Color::White),
    ) {
        (Some(black), Some(white)) => adjudicate_points(black, white, outcome, margin),
        _ => outcome,
    }
}

/// [`adjudicate`] from the two sides' material points.
pub fn adjudicate_points(black: u32, white: u32, outcome: Outcome, margin: u32) -> Outcome {
    if margin == 0 || outcome.reason != EndReason::MaxPlies {
        return outcome;
    }
    if black >= white.saturating_add(margin) {
        Outcome::win(Color::Black, EndReason::Adjudication)
    } else if white >= black.saturating_add(margin) {
        Outcome::win(Color::White, EndReason::Adjudication)
    } else {
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colors_flip_and_score() {
        assert_eq!(!Color::Black, Color::White);
        assert_eq!(Color::White.flip(), Color::Black);
        let o = Outcome::win(Color::White, EndReason::Checkmate);
        assert_eq!(o.score_for(Color::White), 1.0);
        assert_eq!(o.score_for(Color::Black), 0.0);
        assert_eq!(
            Outcome::draw(EndReason::Repetition).score_for(Color::Black),
            0.5
        );
    }
}
