//! The classical, network-free baseline for tai shogi: negamax alpha-beta with iterative
//! deepening and a capture quiescence search with stand-pat and delta pruning (at most
//! four plies of captures), on the material that
//! adjudicates tai games ([`shogi_tai::material`]: each piece worth its mobility, a pawn
//! 1, a gold 6, a lion 24, a free king 32), plus a bonus for each royal piece beyond the
//! last. It gives tai a fixed scale as [`crate::alphabeta`] does for shogi and
//! minishogi: `alphabeta:depth=1` means the same opponent on every machine.
//!
//! The game's own rules end every line: the last royal captured, no legal move, the
//! fourfold repetition (or the forbidden one) and the ply cap, each read from the game
//! after the move, whose history the search carries along. There is no transposition
//! table (tai positions rarely recur inside a shallow search), so no score depends on
//! another path. Limits are [`AlphaBetaLimits`]' with the same meaning: depth 1 always
//! completes, and a node or time limit abandons the iteration it cuts short.
//!
//! Move ordering: captures by the material they take (royals first), the least valuable
//! capturer first; the quiet moves after them in generation order. A seeded noise of
//! 0..=3 units (a pawn is 8) breaks ties differently per game.

use shogi_game::{Color, Game};
use shogi_tai::material::{kind_value, material_points};
use shogi_tai::{TaiGame, TaiMove};

use crate::alphabeta::{AlphaBetaResult, INF, MATE, tie_break_noise};
use crate::limits::{AlphaBetaLimits, SearchBudget};

/// The version of the tai baseline's play (see [`crate::BASELINE_VERSION`], the shogi
/// one): bumped whenever a change alters the moves it chooses.
///
/// Version 2: a node limit lets the iteration in progress reach one node past it, as the
/// shogi baseline's does (one definition of the limits for both).
pub const TAI_BASELINE_VERSION: u32 = 2;

/// Evaluation units per material point (a pawn), so that the tie-break noise is smaller
/// than any difference in material.
const UNIT: i32 = 8;
/// A royal piece beyond the last, in material points: losing the last royal loses the
/// game, so a spare one is worth about a free king (the strongest mover, 32).
const SPARE_ROYAL: i32 = 32;
/// Deepest iteration (and the largest `depth=N` honoured).
const MAX_DEPTH: u32 = 32;
/// Plies of captures the quiescence search follows below the nominal depth: tai's 177
/// pieces a side offer dozens of captures a position once the armies meet, so the
/// chain is cut where take, retake, take, retake is settled.
const QUIESCENCE_PLIES: u32 = 4;
/// Delta pruning: a capture is not searched when even its material plus this margin
/// (in material points: a lion's worth) cannot lift the stand-pat score to alpha.
const DELTA_MARGIN: i32 = 24;

/// The tai baseline searcher. Reusable across searches; [`TaiAlphaBeta::new_game`]
/// takes a new noise seed, so that a game's moves depend only on the game and the seed.
#[derive(Debug, Default)]
pub struct TaiAlphaBeta {
    seed: u64,
    budget: SearchBudget,
}

impl TaiAlphaBeta {
    /// A searcher whose tie-break noise comes from `seed` (0: no noise).
    pub fn new(seed: u64) -> TaiAlphaBeta {
        TaiAlphaBeta {
            seed,
            ..TaiAlphaBeta::default()
        }
    }

    /// Takes a new noise seed.
    pub fn new_game(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// The static evaluation from the side to move, with the seeded noise: material
    /// times [`UNIT`], plus [`SPARE_ROYAL`] for each royal piece more than the other side.
    pub fn evaluate(&self, game: &TaiGame) -> i32 {
        let me = game.side_to_move();
        let points = |c: Color| {
            material_points(game.position(), c) as i32 + SPARE_ROYAL * game.royal_count(c) as i32
        };
        UNIT * (points(me) - points(!me)) + tie_break_noise(game.key(), self.seed)
    }

    /// Searches the game's current position within `limits`; the game's history counts
    /// for repetitions and its ply cap ends lines.
    pub fn search(&mut self, game: &TaiGame, limits: &AlphaBetaLimits) -> AlphaBetaResult<TaiMove> {
        self.budget = SearchBudget::start(limits);
        let max_depth = limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        let mut result = AlphaBetaResult::empty();
        if game.outcome().is_some() {
            return result;
        }
        let mut moves = ordered_moves(game, false);
        if moves.is_empty() {
            return result;
        }
        for depth in 1..=max_depth {
            if self.budget.stop_before(depth) {
                break;
            }
            let Some((best, score)) = self.root(game, &moves, depth) else {
                break;
            };
            // The best move first in the next iteration.
            if let Some(i) = moves.iter().position(|&m| m == best) {
                let mv = moves.remove(i);
                moves.insert(0, mv);
            }
            if result.complete_iteration(Some(best), score, depth) {
                break;
            }
        }
        result.nodes = self.budget.nodes;
        result
    }

    /// One iteration at the root: the best move and its score, `None` when the limits
    /// cut it short (nothing of it is kept then).
    fn root(&mut self, game: &TaiGame, moves: &[TaiMove], depth: u32) -> Option<(TaiMove, i32)> {
        let mut alpha = -INF;
        let mut best = None;
        for &mv in moves {
            let mut child = game.clone();
            child.play_unchecked(mv);
            let score = -self.negamax(&child, depth - 1, -INF, -alpha, 1);
            if self.budget.aborted {
                return None;
            }
            if score > alpha {
                alpha = score;
                best = Some(mv);
            }
        }
        best.map(|mv| (mv, alpha))
    }

    fn negamax(&mut self, game: &TaiGame, depth: u32, mut alpha: i32, beta: i32, ply: u32) -> i32 {
        if self.budget.count_node() {
            return 0;
        }
        if let Some(score) = terminal_score(game, ply) {
            return score;
        }
        if depth == 0 {
            return self.quiesce(game, alpha, beta, ply, QUIESCENCE_PLIES);
        }
        let mut best = -INF;
        for mv in ordered_moves(game, false) {
            let mut child = game.clone();
            child.play_unchecked(mv);
            let score = -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1);
            if self.budget.aborted {
                return 0;
            }
            if raise(&mut best, &mut alpha, score, beta) {
                break;
            }
        }
        best
    }

    /// Captures only, from a stand-pat on the static evaluation.
    fn quiesce(&mut self, game: &TaiGame, mut alpha: i32, beta: i32, ply: u32, left: u32) -> i32 {
        let stand_pat = self.evaluate(game);
        if stand_pat >= beta || left == 0 {
            return stand_pat;
        }
        alpha = alpha.max(stand_pat);
        let mut best = stand_pat;
        for mv in ordered_moves(game, true) {
            let (value, royals) = game.capture_gain(mv);
            if royals == 0 && stand_pat + UNIT * (value as i32 + DELTA_MARGIN) < alpha {
                // Ordered by material taken: the rest gain no more.
                break;
            }
            let mut child = game.clone();
            child.play_unchecked(mv);
            if self.budget.count_node() {
                return 0;
            }
            let score = match terminal_score(&child, ply + 1) {
                Some(score) => -score,
                None => -self.quiesce(&child, -beta, -alpha, ply + 1, left - 1),
            };
            if self.budget.aborted {
                return 0;
            }
            if raise(&mut best, &mut alpha, score, beta) {
                break;
            }
        }
        best
    }
}

/// Takes a move's `score` into the node's `best` and `alpha`; true on a beta cutoff.
fn raise(best: &mut i32, alpha: &mut i32, score: i32, beta: i32) -> bool {
    *best = (*best).max(score);
    *alpha = (*alpha).max(score);
    *alpha >= beta
}

/// The score of a finished game from its side to move, `ply` plies below the root
/// (a shorter win scores higher); `None` while the game goes on.
fn terminal_score(game: &TaiGame, ply: u32) -> Option<i32> {
    let outcome = game.outcome()?;
    Some(match outcome.winner {
        None => 0,
        Some(w) if w == game.side_to_move() => MATE - ply as i32,
        Some(_) => -(MATE - ply as i32),
    })
}

/// The legal moves (only the captures with `captures_only`), captures first: royals
/// taken, then the material taken, then the cheapest capturer.
fn ordered_moves(game: &TaiGame, captures_only: bool) -> Vec<TaiMove> {
    let mut legal = Vec::new();
    game.legal_moves(&mut legal);
    let mut scored: Vec<(i64, TaiMove)> = legal
        .into_iter()
        .filter_map(|mv| {
            let (value, royals) = game.capture_gain(mv);
            let captures = royals > 0 || value > 0;
            if captures_only && !captures {
                return None;
            }
            let mover = game
                .position()
                .piece(mv.from())
                .map_or(0, |p| kind_value(p.kind));
            let key = if captures {
                (i64::from(royals) << 40) + (i64::from(value) << 16) - i64::from(mover)
            } else {
                i64::MIN
            };
            Some((key, mv))
        })
        .collect();
    // Stable: quiet moves keep the generator's order.
    scored.sort_by_key(|&(key, _)| std::cmp::Reverse(key));
    scored.into_iter().map(|(_, mv)| mv).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shogi_tai::{Catalogue, Piece, Position, Square, TaiRules};

    fn kind(abbr: &str) -> shogi_tai::PieceKind {
        Catalogue::get().by_abbr(abbr).expect(abbr)
    }

    fn sq(text: &str) -> Square {
        Square::parse(text).expect(text)
    }

    /// A position with the given pieces and each side's one royal (a crown prince) near
    /// its far corner, off the lines of the pieces the tests place; Black to move.
    fn game_of(pieces: &[(&str, &str, Color)]) -> TaiGame {
        let mut pos = Position::empty();
        for (at, color) in [("24y", Color::Black), ("2a", Color::White)] {
            pos.set(sq(at), Some(Piece::new(kind("CP"), color)));
        }
        for &(at, abbr, color) in pieces {
            pos.set(sq(at), Some(Piece::new(kind(abbr), color)));
        }
        TaiGame::new(pos, TaiRules::default())
    }

    fn best(game: &TaiGame, limits: &str) -> AlphaBetaResult<TaiMove> {
        TaiAlphaBeta::new(7).search(game, &limits.parse().unwrap())
    }

    #[test]
    fn a_hanging_piece_is_taken() {
        // Black's free king (a queen that never promotes) looks down an open file at a
        // lone gold.
        let game = game_of(&[("13m", "FK", Color::Black), ("13f", "G", Color::White)]);
        let r = best(&game, "depth=1");
        let mv = r.best_move.unwrap();
        assert_eq!((mv.from(), mv.to()), (sq("13m"), sq("13f")), "{mv}");
        assert!(
            r.score >= UNIT * kind_value(kind("G")) as i32,
            "{}",
            r.score
        );
    }

    #[test]
    fn the_quiescence_search_sees_the_recapture() {
        // The pawn on 13f is defended by the gold behind it (White moves toward y): free
        // king takes pawn, gold takes free king loses 32 points for 1.
        let game = game_of(&[
            ("13m", "FK", Color::Black),
            ("13f", "P", Color::White),
            ("13e", "G", Color::White),
        ]);
        let mv = best(&game, "depth=1").best_move.unwrap();
        assert_ne!(mv.to(), sq("13f"), "{mv}");
        // Undefended, the same pawn is taken.
        let game = game_of(&[("13m", "FK", Color::Black), ("13f", "P", Color::White)]);
        let mv = best(&game, "depth=1").best_move.unwrap();
        assert_eq!(mv.to(), sq("13f"), "{mv}");
    }

    #[test]
    fn a_capture_that_demotes_is_weighed_after_the_promotion() {
        // In tai shogi a capture promotes: a rook (16) that takes becomes a gold general
        // (6), so taking a lone gold loses 4 points and the baseline declines it; a pawn
        // (which never promotes, by the seed) takes it for the full 6.
        let game = game_of(&[("13m", "R", Color::Black), ("13f", "G", Color::White)]);
        let mv = best(&game, "depth=1").best_move.unwrap();
        assert_ne!(mv.to(), sq("13f"), "{mv}");
        let game = game_of(&[("13g", "P", Color::Black), ("13f", "G", Color::White)]);
        let r = best(&game, "depth=1");
        assert_eq!(r.best_move.unwrap().to(), sq("13f"));
        // From 1 point against 6 to 1 against 0 (less the tie-break noise).
        assert!((UNIT - 3..=UNIT).contains(&r.score), "{}", r.score);
    }

    #[test]
    fn taking_the_last_royal_wins_at_once() {
        // White's only royal on 2a, a black gold right below it (Black moves toward a).
        let game = game_of(&[("2b", "G", Color::Black), ("13f", "R", Color::White)]);
        let r = best(&game, "depth=2");
        let mv = r.best_move.unwrap();
        assert_eq!(mv.to(), sq("2a"), "{mv}");
        assert_eq!(r.score, MATE - 1);
        assert_eq!(r.depth, 1, "a win within the horizon ends the deepening");
    }

    #[test]
    fn the_setup_is_searched_within_its_limits() {
        let game = TaiGame::startpos(TaiRules::default());
        let mut legal = Vec::new();
        game.legal_moves(&mut legal);
        let one = best(&game, "depth=1");
        assert!(legal.contains(&one.best_move.unwrap()));
        assert_eq!(one.depth, 1);
        // Every root move is a node (and any capture the quiescence search follows).
        assert!(one.nodes >= legal.len() as u64, "{} nodes", one.nodes);
        // Depth 1 completes under any node limit; deeper iterations are abandoned.
        let capped = best(&game, "depth=3,nodes=10");
        assert_eq!(capped.depth, 1);
        assert!(legal.contains(&capped.best_move.unwrap()));
        // The same seed plays the same move.
        assert_eq!(best(&game, "depth=1").best_move, one.best_move);
    }

    #[test]
    fn a_finished_game_has_no_move() {
        let mut game = game_of(&[("2b", "G", Color::Black)]);
        let mv = game.parse_move("2b2a").expect("gold takes the prince");
        game.play_unchecked(mv);
        assert!(game.outcome().is_some());
        assert_eq!(best(&game, "depth=1").best_move, None);
    }
}
