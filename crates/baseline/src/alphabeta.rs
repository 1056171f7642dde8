//! A classical, network-free baseline player for shogi and minishogi: negamax alpha-beta
//! with iterative deepening, a capture quiescence search with stand-pat, a transposition
//! table keyed by the zobrist key, move ordering (TT move, MVV-LVA captures, killers,
//! history), mate scores that prefer the shorter mate, and the game's end rules
//! (checkmate, no legal moves, 千日手 repetition and perpetual check, the ply cap).
//!
//! Its strength is fixed by a depth or a node count, never by time, so ratings against
//! it mean the same on every machine. It is a yardstick, not a competitor. A time limit
//! (`movetime=MS`) exists for equal-time matches against the networks; such a player
//! depends on the machine and is not a rung of the fixed scale.
//!
//! Evaluation (centipawns, from the side to move): material with promoted values and
//! hand pieces worth 10% more than on the board, plus king safety: golds, silvers and
//! promoted minor pieces near their own king, and any piece near the enemy king.
//! A seeded noise of 0..=3 centipawns per position breaks ties differently per game
//! (the same seed always gives the same moves).
//!
//! Simplifications: the first repetition of a position inside the search (or of one in
//! the game's history) is scored as the rules' fourth would be (draw, or a loss for the
//! side that checked with every move); the 27-point impasse declaration is not searched.
//!
//! Scores that depend on how a position was reached (a repetition draw, the ply cap) are
//! never used to cut off a later search through the transposition table, which lives for
//! the whole game: a node whose score came from such a verdict anywhere below it keeps
//! only its move in the table. The ply cap is the rules' own: a mate given on the last
//! allowed ply wins, as the game says, and the quiescence search stops at the cap too.

use std::fmt;

use crate::limits::{AlphaBetaLimits, MAX_DEPTH, SearchBudget};

use shogi_rules::{Color, Move, MoveList, PieceKind, Position, ShogiGame, Square};

/// The version of the baseline's play: bumped whenever a change alters the moves it
/// chooses for a given position, game so far, limit and seed, so that games cached by
/// rung (`scripts/bench/ladder.sh`) are played again rather than reused. A match with an
/// `alphabeta` player records it in its `summary.json` (`baseline_version`).
///
/// 1: the first baseline. 2: a mate on the last allowed ply wins (it was scored as the
/// cap's draw), the quiescence search stops at the ply cap, path-dependent scores
/// (repetition, ply cap) no longer cut later searches through the transposition table,
/// and depth 1 always completes under a node limit.
pub const BASELINE_VERSION: u32 = 2;

/// Score of a mate at the root (mate in `n` plies scores `MATE - n`).
pub const MATE: i32 = 32_000;
/// Scores beyond this are mates.
pub(crate) const MATE_BOUND: i32 = MATE - 1_000;
pub(crate) const INF: i32 = MATE + 1;
/// Deepest ply the search reaches (quiescence included).
const MAX_PLY: usize = 128;
/// Transposition table entries (16 bytes each: 4 MiB).
const TT_BITS: u32 = 18;
/// A table entry cuts off a search only when the ply cap is more than the entry's depth
/// plus this many plies away (a quiescence search may run past the nominal depth): an
/// entry computed far from the cap does not know that the cap ends the game.
const CAP_MARGIN: u32 = 16;
/// Board values by [`PieceKind`] index (pawn .. dragon).
const VALUE: [i32; 14] = [
    100, 300, 350, 500, 800, 950, 550, 0, 500, 480, 480, 520, 1050, 1250,
];
/// Hand values by hand-kind index (pawn .. gold): 10% above the board value.
const HAND_VALUE: [i32; 7] = [110, 330, 385, 550, 880, 1045, 605];
/// Bonus of a gold-like defender (gold, silver, promoted minors) at Chebyshev distance
/// 0..=3 from its own king.
const DEFEND: [i32; 4] = [0, 35, 20, 8];
/// Bonus of any non-king piece at Chebyshev distance 0..=3 from the enemy king.
const ATTACK: [i32; 4] = [0, 30, 18, 8];

/// What one search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlphaBetaResult<M = Move> {
    /// The move to play (`None` when the side to move has no legal move).
    pub best_move: Option<M>,
    /// Its score in centipawns from the side to move; `MATE - n` for a mate in `n`
    /// plies, `-(MATE - n)` when mated.
    pub score: i32,
    /// The deepest completed iteration.
    pub depth: u32,
    /// Nodes searched (quiescence included).
    pub nodes: u64,
}

impl<M> AlphaBetaResult<M> {
    /// No move yet: the score of being mated, before the first iteration.
    pub(crate) fn empty() -> Self {
        AlphaBetaResult {
            best_move: None,
            score: -MATE,
            depth: 0,
            nodes: 0,
        }
    }

    /// Keeps a completed iteration at `depth` (its best move, where it found one, and
    /// its score); true when the score is a mate within the horizon, which no deeper
    /// iteration will change.
    pub(crate) fn complete_iteration(&mut self, best: Option<M>, score: i32, depth: u32) -> bool {
        if best.is_some() {
            self.best_move = best;
        }
        self.score = score;
        self.depth = depth;
        score.abs() >= MATE_BOUND && (MATE - score.abs()) <= depth as i32
    }

    /// Plies to the mate the score announces (positive: the side to move mates).
    pub fn mate_in(&self) -> Option<i32> {
        if self.score >= MATE_BOUND {
            Some(MATE - self.score)
        } else if self.score <= -MATE_BOUND {
            Some(-(MATE + self.score))
        } else {
            None
        }
    }
}

#[derive(Clone, Copy, Default)]
struct TtEntry {
    key: u64,
    score: i32,
    mv: u16,
    depth: i8,
    bound: u8,
}

const BOUND_EXACT: u8 = 1;
const BOUND_LOWER: u8 = 2;
const BOUND_UPPER: u8 = 3;
/// Set beside the bound when the score depends on the path that reached the node (a
/// repetition or the ply cap decided a line below it): only the move is used then.
const PATH_DEPENDENT: u8 = 4;

/// A score and whether it depends on the path that reached the node (a repetition or
/// the ply cap decided some line below it), so that it must not be reused elsewhere.
type Scored = (i32, bool);

/// The baseline searcher. Reusable across searches; [`AlphaBeta::new_game`] clears
/// what it learned so that a game's moves depend only on the game and the seed.
pub struct AlphaBeta {
    tt: Vec<TtEntry>,
    killers: [[u16; 2]; MAX_PLY],
    history: Vec<i32>,
    /// Keys (and whether the side to move was in check) of the game so far and the
    /// search path, one per position.
    stack: Vec<(u64, bool)>,
    budget: SearchBudget,
    seed: u64,
    /// Plies already played when the search starts, and the game's ply cap (0: none).
    root_ply: u32,
    max_plies: u32,
}

impl Default for AlphaBeta {
    fn default() -> Self {
        AlphaBeta::new(0)
    }
}

impl fmt::Debug for AlphaBeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlphaBeta")
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

#[inline]
fn chebyshev(a: Square, b: Square) -> usize {
    let df = (a.file() as i32 - b.file() as i32).unsigned_abs();
    let dr = (a.rank() as i32 - b.rank() as i32).unsigned_abs();
    df.max(dr) as usize
}

#[inline]
fn is_defender(k: PieceKind) -> bool {
    matches!(
        k,
        PieceKind::Gold
            | PieceKind::Silver
            | PieceKind::ProPawn
            | PieceKind::ProLance
            | PieceKind::ProKnight
            | PieceKind::ProSilver
    )
}

/// The seeded tie-break noise of a position with zobrist `key`: 0..=3, the same for the
/// same key and seed; 0 when `seed` is 0 (noise off).
pub(crate) fn tie_break_noise(key: u64, seed: u64) -> i32 {
    if seed == 0 {
        0
    } else {
        ((key ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 62) as i32
    }
}

/// The static evaluation from `c`'s side, without noise.
pub fn evaluate_for(pos: &Position, c: Color) -> i32 {
    let mut score = [0i32; 2];
    let kings = [pos.king_square(Color::Black), pos.king_square(Color::White)];
    for side in Color::ALL {
        let s = side.index();
        let own_king = kings[s];
        let their_king = kings[side.flip().index()];
        let mut total = 0;
        for sq in pos.pieces(side) {
            let Some(p) = pos.piece_at(sq) else { continue };
            if p.kind == PieceKind::King {
                continue;
            }
            total += VALUE[p.kind.index()];
            if is_defender(p.kind) {
                let d = chebyshev(sq, own_king);
                if d < DEFEND.len() {
                    total += DEFEND[d];
                }
            }
            let d = chebyshev(sq, their_king);
            if d < ATTACK.len() {
                total += ATTACK[d];
            }
        }
        let hand = pos.hand(side);
        for (k, &n) in hand.iter().enumerate() {
            total += HAND_VALUE[k] * n as i32;
        }
        score[s] = total;
    }
    score[c.index()] - score[c.flip().index()]
}

impl AlphaBeta {
    /// A searcher whose tie-break noise comes from `seed`.
    pub fn new(seed: u64) -> AlphaBeta {
        AlphaBeta {
            tt: vec![TtEntry::default(); 1 << TT_BITS],
            killers: [[0; 2]; MAX_PLY],
            history: vec![0; 81 * 21],
            stack: Vec::with_capacity(1024),
            budget: SearchBudget::default(),
            seed,
            root_ply: 0,
            max_plies: 0,
        }
    }

    /// Forgets the table, killers and history and takes a new noise seed.
    pub fn new_game(&mut self, seed: u64) {
        self.tt.fill(TtEntry::default());
        self.killers = [[0; 2]; MAX_PLY];
        self.history.fill(0);
        self.seed = seed;
    }

    /// The evaluation the search uses (with the seeded noise), from the side to move.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        evaluate_for(pos, pos.side_to_move()) + tie_break_noise(pos.key(), self.seed)
    }

    /// Searches the game's current position within `limits`. The game's history counts
    /// for repetitions and its ply cap ends lines.
    pub fn search(&mut self, game: &ShogiGame, limits: &AlphaBetaLimits) -> AlphaBetaResult {
        // The keys of every position of the game, rebuilt from its moves.
        self.stack.clear();
        let mut p = game.start_position().clone();
        self.stack.push((p.key(), p.in_check()));
        for &mv in game.moves() {
            p.play_unchecked(mv);
            self.stack.push((p.key(), p.in_check()));
        }
        self.root_ply = game.moves().len() as u32;
        self.max_plies = game.rules().max_plies;
        self.run(game.position(), limits)
    }

    /// Searches `pos` with no history before it (no ply cap).
    pub fn search_position(&mut self, pos: &Position, limits: &AlphaBetaLimits) -> AlphaBetaResult {
        self.stack.clear();
        self.stack.push((pos.key(), pos.in_check()));
        self.root_ply = 0;
        self.max_plies = 0;
        self.run(pos, limits)
    }

    fn run(&mut self, pos: &Position, limits: &AlphaBetaLimits) -> AlphaBetaResult {
        let base = self.stack.len();
        self.budget = SearchBudget::start(limits);
        let max_depth = limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        let mut legal = MoveList::new();
        pos.generate(&mut legal);
        let mut result = AlphaBetaResult::empty();
        if legal.is_empty() {
            return result;
        }
        for depth in 1..=max_depth {
            if self.budget.stop_before(depth) {
                break;
            }
            let (mv, score) = self.root(pos, &legal, depth as i32, result.best_move);
            self.stack.truncate(base);
            if self.budget.aborted {
                break;
            }
            if result.complete_iteration(mv, score, depth) {
                break;
            }
        }
        result.nodes = self.budget.nodes;
        result
    }

    fn root(
        &mut self,
        pos: &Position,
        legal: &MoveList,
        depth: i32,
        prev_best: Option<Move>,
    ) -> (Option<Move>, i32) {
        let mut moves: Vec<(i32, Move)> = legal
            .iter()
            .map(|&mv| {
                (
                    self.order_score(pos, mv, 0, prev_best.map(Move::to_u16)),
                    mv,
                )
            })
            .collect();
        moves.sort_by_key(|&(s, _)| std::cmp::Reverse(s));
        let mut alpha = -INF;
        let beta = INF;
        let mut best = None;
        let mut path_dependent = false;
        for (i, &(_, mv)) in moves.iter().enumerate() {
            let child = pos.after(mv);
            self.stack.push((child.key(), child.in_check()));
            let (score, dep) = if i == 0 {
                neg(self.negamax(&child, depth - 1, -beta, -alpha, 1))
            } else {
                let (s, dep) = neg(self.negamax(&child, depth - 1, -alpha - 1, -alpha, 1));
                if s > alpha && !self.budget.aborted {
                    let (s, dep2) = neg(self.negamax(&child, depth - 1, -beta, -alpha, 1));
                    (s, dep || dep2)
                } else {
                    (s, dep)
                }
            };
            self.stack.pop();
            if self.budget.aborted {
                // An unfinished iteration: nothing of it is kept.
                return (None, 0);
            }
            path_dependent |= dep;
            if score > alpha {
                alpha = score;
                best = Some(mv);
            }
        }
        if let Some(mv) = best {
            self.tt_store(
                pos.key(),
                depth,
                alpha,
                BOUND_EXACT,
                path_dependent,
                mv.to_u16(),
                0,
            );
        }
        (best, alpha)
    }

    /// Draw, win or loss by the rules of repetition for the position on top of the
    /// stack (reached at `ply` from the root), from the side to move.
    fn repetition_verdict(&self, ply: usize) -> Option<i32> {
        let now = self.stack.len() - 1;
        let key = self.stack[now].0;
        let mut j = now;
        while j >= 2 {
            j -= 2;
            if self.stack[j].0 == key {
                // Positions j+1..=now; those reached by the opponent's moves are now,
                // now-2, ...; ours are now-1, now-3, ...
                let theirs_all_check = (j + 1..=now)
                    .filter(|i| (now - i).is_multiple_of(2))
                    .all(|i| self.stack[i].1);
                if theirs_all_check {
                    return Some(MATE - ply as i32);
                }
                let ours_all_check = (j + 1..=now)
                    .filter(|i| (now - i) % 2 == 1)
                    .all(|i| self.stack[i].1);
                if ours_all_check {
                    return Some(-(MATE - ply as i32));
                }
                return Some(0);
            }
        }
        None
    }

    /// Plies left before the game's ply cap at `ply` from the root (`None`: no cap).
    #[inline]
    fn plies_to_cap(&self, ply: usize) -> Option<u32> {
        (self.max_plies > 0).then(|| self.max_plies.saturating_sub(self.root_ply + ply as u32))
    }

    /// The exact score of a position at the ply cap, as the rules end the game there:
    /// lost when the side to move has no legal move (checkmate, or no move at all; the
    /// rules test that before the cap), else the cap's draw (which depends on the path).
    fn at_cap(&self, pos: &Position, ply: usize) -> Scored {
        let mut legal = MoveList::new();
        pos.generate(&mut legal);
        if legal.is_empty() {
            (-(MATE - ply as i32), false)
        } else {
            (0, true)
        }
    }

    /// The exact score of a position one ply before the cap: a move that leaves the
    /// opponent without a legal move wins, anything else reaches the cap's draw.
    fn before_cap(&self, pos: &Position, legal: &MoveList, ply: usize) -> Scored {
        for &mv in legal.iter() {
            let mut replies = MoveList::new();
            pos.after(mv).generate(&mut replies);
            if replies.is_empty() {
                return (MATE - ply as i32 - 1, false);
            }
        }
        (0, true)
    }

    fn order_score(&self, pos: &Position, mv: Move, ply: usize, tt_move: Option<u16>) -> i32 {
        if Some(mv.to_u16()) == tt_move {
            return 1 << 30;
        }
        if let Some(from) = mv.from()
            && let Some(victim) = pos.piece_at(mv.to())
        {
            let attacker = pos.piece_at(from).map_or(0, |p| VALUE[p.kind.index()]);
            return (1 << 28) + VALUE[victim.kind.index()] * 16 - attacker / 16;
        }
        let promo = if mv.is_promotion() { 1 << 26 } else { 0 };
        if ply < MAX_PLY && self.killers[ply].contains(&mv.to_u16()) {
            return (1 << 27) + promo;
        }
        promo + self.history[history_index(pos, mv)]
    }

    /// The transposition table's move for `key`, and its score where that score cuts
    /// the search at `depth` within (`alpha`, `beta`): only a score that does not depend
    /// on the path, computed out of the ply cap's reach.
    fn tt_probe(
        &self,
        key: u64,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
        to_cap: Option<u32>,
    ) -> (Option<u16>, Option<i32>) {
        let entry = self.tt[(key as usize) & ((1 << TT_BITS) - 1)];
        if entry.key != key || entry.bound == 0 {
            return (None, None);
        }
        let reusable = entry.bound & PATH_DEPENDENT == 0
            && to_cap.is_none_or(|left| left > entry.depth.max(0) as u32 + CAP_MARGIN);
        if !reusable || (entry.depth as i32) < depth {
            return (Some(entry.mv), None);
        }
        let s = score_from_tt(entry.score, ply);
        let cut = match entry.bound & !PATH_DEPENDENT {
            BOUND_EXACT => true,
            BOUND_LOWER => s >= beta,
            _ => s <= alpha,
        };
        (Some(entry.mv), cut.then_some(s))
    }

    /// A quiet move that cut the search off becomes a killer at `ply` and gains history.
    fn remember_cutoff(&mut self, pos: &Position, mv: Move, depth: i32, ply: usize) {
        let quiet = mv.is_drop() || pos.piece_at(mv.to()).is_none();
        if !quiet {
            return;
        }
        let k = &mut self.killers[ply];
        if k[0] != mv.to_u16() {
            k[1] = k[0];
            k[0] = mv.to_u16();
        }
        let h = &mut self.history[history_index(pos, mv)];
        *h = (*h + depth * depth).min(1 << 20);
    }

    fn negamax(
        &mut self,
        pos: &Position,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
    ) -> Scored {
        if self.budget.count_node() {
            return (0, false);
        }
        // A repeated position always has legal moves (one was played from it before),
        // so the repetition verdict never hides a mate.
        if let Some(v) = self.repetition_verdict(ply) {
            return (v, true);
        }
        let to_cap = self.plies_to_cap(ply);
        if to_cap == Some(0) {
            return self.at_cap(pos, ply);
        }
        let in_check = pos.in_check();
        let depth = if in_check { depth + 1 } else { depth };
        if depth <= 0 || ply >= MAX_PLY - 16 {
            return self.quiesce(pos, alpha, beta, ply);
        }
        // Mate-distance pruning.
        let alpha0 = alpha.max(-(MATE - ply as i32));
        let beta = beta.min(MATE - ply as i32 - 1);
        if alpha0 >= beta {
            return (alpha0, false);
        }
        alpha = alpha0;
        let orig_alpha = alpha;
        let key = pos.key();
        let (tt_move, cut) = self.tt_probe(key, depth, alpha, beta, ply, to_cap);
        if let Some(s) = cut {
            return (s, false);
        }
        let mut legal = MoveList::new();
        pos.generate(&mut legal);
        if legal.is_empty() {
            // Checkmate, or no legal move at all: both lose.
            return (-(MATE - ply as i32), false);
        }
        let mut moves: Vec<(i32, Move)> = legal
            .iter()
            .map(|&mv| (self.order_score(pos, mv, ply, tt_move), mv))
            .collect();
        moves.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.to_u16().cmp(&b.1.to_u16())));
        let mut best = -INF;
        let mut best_move = moves[0].1;
        let mut path_dependent = false;
        for (i, &(_, mv)) in moves.iter().enumerate() {
            let child = pos.after(mv);
            self.stack.push((child.key(), child.in_check()));
            let (score, dep) = self.search_child(&child, i == 0, depth - 1, alpha, beta, ply + 1);
            self.stack.pop();
            if self.budget.aborted {
                return (0, false);
            }
            path_dependent |= dep;
            if score > best {
                best = score;
                best_move = mv;
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                self.remember_cutoff(pos, mv, depth, ply);
                break;
            }
        }
        let bound = if best >= beta {
            BOUND_LOWER
        } else if best > orig_alpha {
            BOUND_EXACT
        } else {
            BOUND_UPPER
        };
        self.tt_store(
            key,
            depth,
            best,
            bound,
            path_dependent,
            best_move.to_u16(),
            ply,
        );
        (best, path_dependent)
    }

    /// A child's score from the parent's side (principal variation search): the first
    /// child with the full window, each later one with a null window first and again with
    /// the full window only when it lands inside.
    fn search_child(
        &mut self,
        child: &Position,
        first: bool,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
    ) -> Scored {
        if first {
            return neg(self.negamax(child, depth, -beta, -alpha, ply));
        }
        let (s, dep) = neg(self.negamax(child, depth, -alpha - 1, -alpha, ply));
        if s > alpha && s < beta && !self.budget.aborted {
            let (s, dep2) = neg(self.negamax(child, depth, -beta, -alpha, ply));
            (s, dep || dep2)
        } else {
            (s, dep)
        }
    }

    fn quiesce(&mut self, pos: &Position, mut alpha: i32, beta: i32, ply: usize) -> Scored {
        if self.budget.count_node() {
            return (0, false);
        }
        let to_cap = self.plies_to_cap(ply);
        if to_cap == Some(0) {
            return self.at_cap(pos, ply);
        }
        let in_check = pos.in_check();
        let mut legal = MoveList::new();
        pos.generate(&mut legal);
        if legal.is_empty() {
            return (-(MATE - ply as i32), false);
        }
        if to_cap == Some(1) {
            // The last move of the game: its value is known without an evaluation.
            return self.before_cap(pos, &legal, ply);
        }
        if ply >= MAX_PLY - 1 {
            return (self.evaluate(pos), false);
        }
        let mut best = -INF;
        if !in_check {
            let stand = self.evaluate(pos);
            if stand >= beta {
                return (stand, false);
            }
            best = stand;
            alpha = alpha.max(stand);
        }
        let mut moves: Vec<(i32, Move)> = legal
            .iter()
            .filter_map(|&mv| {
                let victim = if mv.is_drop() {
                    None
                } else {
                    pos.piece_at(mv.to())
                };
                match victim {
                    Some(v) => {
                        let attacker = mv
                            .from()
                            .and_then(|f| pos.piece_at(f))
                            .map_or(0, |p| VALUE[p.kind.index()]);
                        Some((VALUE[v.kind.index()] * 16 - attacker / 16, mv))
                    }
                    // In check every evasion is searched.
                    None if in_check => Some((-(1 << 20), mv)),
                    None => None,
                }
            })
            .collect();
        moves.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.to_u16().cmp(&b.1.to_u16())));
        let mut path_dependent = false;
        for &(_, mv) in &moves {
            let child = pos.after(mv);
            let (score, dep) = neg(self.quiesce(&child, -beta, -alpha, ply + 1));
            if self.budget.aborted {
                return (0, false);
            }
            path_dependent |= dep;
            if score > best {
                best = score;
            }
            if score > alpha {
                alpha = score;
                if alpha >= beta {
                    break;
                }
            }
        }
        (best, path_dependent)
    }

    #[allow(clippy::too_many_arguments)]
    fn tt_store(
        &mut self,
        key: u64,
        depth: i32,
        score: i32,
        bound: u8,
        path_dependent: bool,
        mv: u16,
        ply: usize,
    ) {
        let slot = &mut self.tt[(key as usize) & ((1 << TT_BITS) - 1)];
        if slot.key != key || depth as i8 >= slot.depth || bound == BOUND_EXACT {
            *slot = TtEntry {
                key,
                score: score_to_tt(score, ply),
                mv,
                depth: depth.clamp(0, 127) as i8,
                bound: if path_dependent {
                    bound | PATH_DEPENDENT
                } else {
                    bound
                },
            };
        }
    }
}

/// The child's score and dependence seen from the parent.
#[inline]
fn neg((score, dep): Scored) -> Scored {
    (-score, dep)
}

#[inline]
fn history_index(pos: &Position, mv: Move) -> usize {
    let kind = match mv.drop_kind() {
        Some(k) => 14 + k.index().min(6),
        None => mv
            .from()
            .and_then(|f| pos.piece_at(f))
            .map_or(0, |p| p.kind.index()),
    };
    kind * 81 + mv.to().index()
}

/// Mate scores are stored relative to the node, read back relative to the root.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}
