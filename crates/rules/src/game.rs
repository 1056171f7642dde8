//! [`ShogiGame`]: a position plus the history that the end-of-game rules need.

use shogi_game::{EndReason, Game, MaterialScale, Outcome};

use crate::mate::{MateLimits, MateResult, MateStats, search_mate_after};
use crate::position::Position;
use crate::types::{Color, Move, MoveList, PieceKind, Variant};

/// Impasse (入玉) handling. Reads from a run config as `none`, `declaration27`, `points24`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ImpasseRule {
    /// No impasse rule: entering kings play on until mate, repetition or the ply cap.
    #[default]
    None,
    /// 27-point declaration (入玉宣言, CSA / USI `bestmove win`). The side to move wins
    /// as soon as it meets the conditions (see [`ShogiGame::can_declare_win`]): a
    /// declaring player always would, so `outcome` declares automatically.
    Declaration27,
    /// The older 24-point rule (持将棋): once both kings are in their enemy camps the game
    /// ends; a side with fewer than 24 points loses, otherwise it is a draw.
    Points24,
}

/// Rules that end a game besides mate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GameRules {
    /// The game is drawn when this many plies have been played (0 = no cap).
    pub max_plies: u32,
    /// Impasse rule.
    pub impasse: ImpasseRule,
}

impl Default for GameRules {
    fn default() -> Self {
        GameRules {
            max_plies: 512,
            impasse: ImpasseRule::None,
        }
    }
}

/// A game in progress: position, keys of every position so far, and which of those
/// positions had the side to move in check (for 連続王手の千日手).
#[derive(Debug)]
pub struct ShogiGame {
    pos: Position,
    start: Position,
    keys: Vec<u64>,
    /// A Bloom filter of `keys` (one bit a key, [`key_bit`]): most positions a search
    /// asks about were never seen, and the filter says so without scanning the game.
    seen_keys: [u64; KEY_FILTER_WORDS],
    checks: Vec<bool>,
    moves: Vec<Move>,
    rules: GameRules,
    declared: Option<Color>,
    /// Plies after which a second occurrence already ends the game by the repetition
    /// rule (see [`ShogiGame::set_twofold_after`]); `None`: the fourfold rule throughout.
    twofold_after: Option<u32>,
}

/// Plies of room a clone's histories get: a search clones the game at its root for
/// every simulation and plays a few moves down the tree, which would otherwise grow
/// (reallocate and copy) all three histories on the first move.
const CLONE_SPARE_PLIES: usize = 16;

/// Words of [`ShogiGame`]'s filter of the keys seen: 1,024 bits, about a quarter set
/// after 300 plies.
const KEY_FILTER_WORDS: usize = 16;

/// The word and bit of `key` in the key filter.
#[inline]
fn key_bit(key: u64) -> (usize, u64) {
    let bit = (key >> 20) as usize % (KEY_FILTER_WORDS * 64);
    (bit / 64, 1 << (bit % 64))
}

fn key_filter_of(key: u64) -> [u64; KEY_FILTER_WORDS] {
    let mut filter = [0; KEY_FILTER_WORDS];
    let (word, mask) = key_bit(key);
    filter[word] |= mask;
    filter
}

impl Clone for ShogiGame {
    fn clone(&self) -> Self {
        fn with_room<T: Copy>(v: &[T]) -> Vec<T> {
            let mut out = Vec::with_capacity(v.len() + CLONE_SPARE_PLIES);
            out.extend_from_slice(v);
            out
        }
        ShogiGame {
            pos: self.pos.clone(),
            start: self.start.clone(),
            keys: with_room(&self.keys),
            seen_keys: self.seen_keys,
            checks: with_room(&self.checks),
            moves: with_room(&self.moves),
            rules: self.rules,
            declared: self.declared,
            twofold_after: self.twofold_after,
        }
    }

    /// Into this game's storage: a search that copies its root's game into a spare game
    /// at every simulation reuses the histories' allocations (and their room to grow).
    fn clone_from(&mut self, source: &Self) {
        fn refill<T: Copy>(into: &mut Vec<T>, from: &[T]) {
            into.clear();
            into.reserve(from.len() + CLONE_SPARE_PLIES);
            into.extend_from_slice(from);
        }
        self.pos.clone_from(&source.pos);
        self.start.clone_from(&source.start);
        refill(&mut self.keys, &source.keys);
        self.seen_keys = source.seen_keys;
        refill(&mut self.checks, &source.checks);
        refill(&mut self.moves, &source.moves);
        self.rules = source.rules;
        self.declared = source.declared;
        self.twofold_after = source.twofold_after;
    }
}

impl ShogiGame {
    /// A game from a position.
    pub fn new(pos: Position, rules: GameRules) -> ShogiGame {
        ShogiGame {
            keys: vec![pos.key()],
            seen_keys: key_filter_of(pos.key()),
            checks: vec![pos.in_check()],
            start: pos.clone(),
            pos,
            moves: Vec::new(),
            rules,
            declared: None,
            twofold_after: None,
        }
    }

    /// Scores repetitions as a search should where a position's second occurrence
    /// already ends the game (tournament runners such as shogiarena draw there by
    /// default; lc0 calls it two-fold draws): every position more than `ply` plies into
    /// the game ends at its second occurrence with the repetition rule's verdict, a
    /// draw or, after checks with every move since the first occurrence, a loss for the
    /// checker (連続王手の千日手). Positions up to `ply` (the game as played so far)
    /// keep the fourfold rule, so a search's root is never over by it. A side that
    /// values its position above a draw then avoids repeating, and a side below seeks
    /// it.
    pub fn set_twofold_after(&mut self, ply: u32) {
        self.twofold_after = Some(ply);
    }

    /// A game from the variant's start position with default rules.
    pub fn startpos(variant: Variant) -> ShogiGame {
        ShogiGame::new(Position::startpos(variant), GameRules::default())
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// The start position.
    pub fn start_position(&self) -> &Position {
        &self.start
    }

    /// The moves played so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The rules.
    pub fn rules(&self) -> GameRules {
        self.rules
    }

    fn record(&mut self, mv: Move) {
        self.keys.push(self.pos.key());
        let (word, mask) = key_bit(self.pos.key());
        self.seen_keys[word] |= mask;
        self.checks.push(self.pos.in_check());
        self.moves.push(mv);
    }

    /// Whether the side to move may declare a win under the 27-point rule (入玉宣言):
    /// its king is in the enemy camp (the promotion zone), at least 10 other own pieces
    /// are in the camp, it is not in check, and the points of its pieces in the camp plus
    /// its hand (rook/bishop 5, others 1) reach 28 (Black) or 27 (White).
    ///
    /// Minishogi adaptation: the camp is the farthest rank and a side has at most 11
    /// non-king pieces, so the declaration is never available there (returns false).
    pub fn can_declare_win(&self) -> bool {
        declaration_allowed(&self.pos)
    }

    /// Declares a win for the side to move (USI `bestmove win`); `false` (and nothing
    /// changes) if the conditions are not met.
    pub fn declare_win(&mut self) -> bool {
        if self.can_declare_win() {
            self.declared = Some(self.pos.side_to_move());
            true
        } else {
            false
        }
    }

    /// How many times the current position (board, hands, side to move) occurred earlier
    /// in this game: 0 the first time, 3 when this occurrence is the fourth (千日手).
    pub fn repetitions(&self) -> u32 {
        let Some(&cur) = self.keys.last() else {
            return 0;
        };
        let n = self.keys.len() - 1;
        // Only positions with the same side to move can repeat: every second key back.
        self.keys[..n]
            .iter()
            .rev()
            .skip(1)
            .step_by(2)
            .filter(|&&k| k == cur)
            .count() as u32
    }

    /// Repetition (千日手) verdict for the current position, if it occurs for the fourth
    /// time (the second, past [`ShogiGame::set_twofold_after`]'s ply): a draw, or a
    /// loss for the side that gave check with every one of its moves since the position
    /// first occurred (連続王手の千日手).
    pub fn repetition(&self) -> Option<Outcome> {
        let cur = *self.keys.last()?;
        let count = self.keys.iter().filter(|&&k| k == cur).count();
        let needed = match self.twofold_after {
            Some(ply) if self.moves.len() as u32 > ply => 2,
            _ => 4,
        };
        if count < needed {
            return None;
        }
        let first = self.keys.iter().position(|&k| k == cur)?;
        let now = self.keys.len() - 1;
        // Position j (> first) was reached by a move of the side not to move at j.
        let side_at_now = self.pos.side_to_move();
        for checker in Color::ALL {
            let all_checks = (first + 1..=now)
                .filter(|&j| {
                    let mover_is_side_at_now = (now - j) % 2 == 1;
                    let mover = if mover_is_side_at_now {
                        side_at_now
                    } else {
                        side_at_now.flip()
                    };
                    mover == checker
                })
                .all(|j| self.checks[j]);
            if all_checks {
                return Some(Outcome::win(checker.flip(), EndReason::PerpetualCheck));
            }
        }
        Some(Outcome::draw(EndReason::Repetition))
    }

    /// The rules' verdict on `pos`, this game's position or one a move further
    /// ([`Game::outcome_after`]), `ply` plies into the game; `repetition` gives its
    /// repetition verdict, asked only when the side to move has a legal move.
    fn end_by_rules(
        &self,
        pos: &Position,
        ply: u32,
        repetition: impl FnOnce() -> Option<Outcome>,
    ) -> Option<Outcome> {
        let side = pos.side_to_move();
        if !pos.has_legal_move() {
            let reason = if pos.in_check() {
                EndReason::Checkmate
            } else {
                EndReason::NoLegalMoves
            };
            return Some(Outcome::win(side.flip(), reason));
        }
        if let Some(o) = repetition() {
            return Some(o);
        }
        match self.rules.impasse {
            ImpasseRule::None => {}
            ImpasseRule::Declaration27 => {
                if declaration_allowed(pos) {
                    return Some(Outcome::win(side, EndReason::ImpasseDeclaration));
                }
            }
            ImpasseRule::Points24 => {
                if let Some(o) = impasse24(pos) {
                    return Some(o);
                }
            }
        }
        if self.rules.max_plies > 0 && ply >= self.rules.max_plies {
            return Some(Outcome::draw(EndReason::MaxPlies));
        }
        None
    }
}

/// Whether the side to move in `p` may declare a win under the 27-point rule
/// ([`ShogiGame::can_declare_win`]).
fn declaration_allowed(p: &Position) -> bool {
    if p.variant() != Variant::Shogi || p.in_check() {
        return false;
    }
    let c = p.side_to_move();
    let zone = p.zone(c);
    if !zone.contains(p.king_square(c)) {
        return false;
    }
    let (pts, pieces) = p.points(c, zone);
    let need = if c == Color::Black { 28 } else { 27 };
    pieces >= 10 && pts >= need
}

/// The 24-point impasse rule's verdict (持将棋) once both kings have entered.
fn impasse24(p: &Position) -> Option<Outcome> {
    if p.variant() != Variant::Shogi {
        return None;
    }
    let entered = Color::ALL
        .iter()
        .all(|&c| p.zone(c).contains(p.king_square(c)));
    if !entered {
        return None;
    }
    let all = p.board_mask();
    let b = p.points(Color::Black, all).0;
    let w = p.points(Color::White, all).0;
    Some(if b < 24 {
        Outcome::win(Color::White, EndReason::Impasse24)
    } else if w < 24 {
        Outcome::win(Color::Black, EndReason::Impasse24)
    } else {
        Outcome::draw(EndReason::Impasse24)
    })
}

impl ShogiGame {
    /// Whether the other side can drop a piece on any empty square (so keeps a legal move
    /// after any move that gives no check), or `None` when no move's outcome follows from
    /// the position alone: the other side's king in its camp under an impasse rule.
    fn them_can_drop(&self) -> Option<bool> {
        let pos = &self.pos;
        let them = pos.side_to_move().flip();
        // Pieces in hand that drop on any empty square: every hand kind but the pawn,
        // lance and knight too on the 9x9 board (at most 40 pieces on its 72 and 63
        // squares they may drop on).
        let anywhere = &PieceKind::HAND[1..];
        let king_in_camp = pos.zone(them).contains(pos.king_square(them));
        if king_in_camp && self.rules.impasse != ImpasseRule::None {
            return None;
        }
        let hand = pos.hand(them);
        Some(anywhere.iter().any(|&k| hand[k as usize] > 0))
    }

    /// [`Game::outcome_after`] when it follows from this position alone (see there):
    /// `Some(outcome)` when settled, `None` when the move must be made to tell.
    #[inline]
    fn outcome_after_quiet(&self, mv: Move) -> Option<Option<Outcome>> {
        let them_can_move = self.them_can_drop()?;
        self.outcome_after_quiet_with(them_can_move, self.pos.gives_check(mv), mv)
    }

    /// [`ShogiGame::outcome_after_quiet`] told whether the other side keeps a move after
    /// any quiet move (`them_can_move`) and whether `mv` gives check.
    #[inline]
    fn outcome_after_quiet_with(
        &self,
        them_can_move: bool,
        gives_check: bool,
        mv: Move,
    ) -> Option<Option<Outcome>> {
        let pos = &self.pos;
        if gives_check {
            return None;
        }
        if !(them_can_move || pos.other_side_can_move_after(mv))
            || self.seen_after(pos.key_after(mv))
        {
            return None;
        }
        let ply = self.ply() + 1;
        Some(
            (self.rules.max_plies > 0 && ply >= self.rules.max_plies)
                .then(|| Outcome::draw(EndReason::MaxPlies)),
        )
    }

    /// The outcome after `mv`: the one settled without making the move (checked against
    /// the made move in debug builds), else the made move's.
    #[inline]
    fn settled_or_made(&self, settled: Option<Option<Outcome>>, mv: Move) -> Option<Outcome> {
        match settled {
            Some(settled) => {
                debug_assert_eq!(settled, self.outcome_after_made(mv), "{mv} in {}", self.pos);
                settled
            }
            None => self.outcome_after_made(mv),
        }
    }

    /// Whether a position of the game so far has `key`, the key of a position one ply
    /// after this one: only positions with the same side to move can (the key holds the
    /// side to move), every other one from the last.
    #[inline]
    fn seen_after(&self, key: u64) -> bool {
        let (word, mask) = key_bit(key);
        self.seen_keys[word] & mask != 0
            && self.keys.iter().rev().skip(1).step_by(2).any(|&k| k == key)
    }

    /// [`Game::outcome_after`] by making the move on a copy of the position.
    fn outcome_after_made(&self, mv: Move) -> Option<Outcome> {
        let mut pos = self.pos.clone();
        pos.play_unchecked(mv);
        let key = pos.key();
        self.end_by_rules(&pos, self.ply() + 1, || {
            if !self.keys.contains(&key) {
                return None;
            }
            let mut next = self.clone();
            next.play_unchecked(mv);
            next.repetition()
        })
    }

    /// The df-pn mate search from this position within `limits`, never past the ply cap
    /// (under a cap a mate beyond it is a draw, not a mate) and never through a position
    /// of the game so far (a repetition could end the game there: see
    /// [`crate::mate::search_mate_after`]).
    pub fn search_mate(&self, limits: &MateLimits) -> (MateResult, MateStats) {
        let cap = self.rules.max_plies;
        let left = cap.saturating_sub(self.moves.len() as u32);
        let limits = MateLimits {
            max_plies: if cap > 0 {
                limits.max_plies.min(left)
            } else {
                limits.max_plies
            },
            ..limits.clone()
        };
        search_mate_after(&self.pos, &self.keys, &limits)
    }
}

impl Game for ShogiGame {
    type Move = Move;

    fn variant_name(&self) -> &'static str {
        self.pos.variant().name()
    }

    fn side_to_move(&self) -> Color {
        self.pos.side_to_move()
    }

    fn ply(&self) -> u32 {
        self.moves.len() as u32
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        let mut l = MoveList::new();
        self.pos.generate(&mut l);
        out.extend_from_slice(l.as_slice());
    }

    fn play_unchecked(&mut self, mv: Move) {
        debug_assert!(self.pos.is_legal(mv), "illegal move {mv} in {}", self.pos);
        self.pos.play_unchecked(mv);
        self.record(mv);
    }

    /// The position's perft: counts the tree of positions, as perft tables do (the
    /// game's end rules, repetition and the ply cap, do not cut it).
    fn perft(&self, depth: u32, bulk: bool) -> u64 {
        crate::perft::perft(&self.pos, depth, bulk)
    }

    /// The position's own legality test (no move generation).
    fn play(&mut self, mv: Move) -> Result<(), String> {
        self.pos.play(mv).map_err(|e| e.to_string())?;
        self.record(mv);
        Ok(())
    }

    fn outcome(&self) -> Option<Outcome> {
        if let Some(c) = self.declared {
            return Some(Outcome::win(c, EndReason::ImpasseDeclaration));
        }
        self.end_by_rules(&self.pos, self.ply(), || self.repetition())
    }

    /// Most moves are settled without making them: a move that gives no check cannot
    /// mate, and when the side to move next has a free step
    /// ([`Position::other_side_can_move_after`]) or holds a piece it may drop on any empty
    /// square (anything but a pawn: shogi's boards always have such squares free) it
    /// cannot be stalemated either; the repetition rule asks only whether the key after
    /// the move was seen before, and the impasse rules need that side's king in its
    /// enemy camp. The rest (checks, positions seen before, kings in the camp, empty
    /// hands) copies the position only: a clone would copy the game's three histories
    /// and grow them by one (six allocations a child). A position seen before takes the
    /// whole repetition rule on a game that played `mv`.
    fn outcome_after(&self, mv: Move) -> Option<Outcome> {
        self.settled_or_made(self.outcome_after_quiet(mv), mv)
    }

    /// [`ShogiGame::outcome_after`] of every move, the position's part of the test
    /// (the checks it can give, whether the other side keeps a move) done once.
    fn outcomes_after(&self, moves: &[Move], mut ended: impl FnMut(usize, Outcome)) {
        // The position's part, once: the checks this side can give, and whether the
        // other side keeps a move whatever quiet move is played.
        let facts = self.them_can_drop().map(|can_drop| {
            let them_can_move = can_drop || self.pos.other_side_has_two_free_steps();
            (self.pos.check_info(), them_can_move)
        });
        for (k, &mv) in moves.iter().enumerate() {
            let settled = facts.as_ref().and_then(|(checks, them_can_move)| {
                let gives_check = self.pos.gives_check_with(checks, mv);
                self.outcome_after_quiet_with(*them_can_move, gives_check, mv)
            });
            if let Some(o) = self.settled_or_made(settled, mv) {
                ended(k, o);
            }
        }
    }

    fn key(&self) -> u64 {
        self.pos.key()
    }

    /// The impasse count's units: rook and bishop 5, every other piece but the king 1.
    fn material_points(&self, c: Color) -> Option<u32> {
        Some(self.pos.material_points(c))
    }

    /// Impasse points, or [`crate::MOBILITY_VALUE`]s.
    fn material_on(&self, c: Color, scale: MaterialScale) -> Option<u32> {
        Some(match scale {
            MaterialScale::Impasse => self.pos.material_points(c),
            MaterialScale::Mobility => self.pos.mobility_points(c),
        })
    }

    /// [`Position::exchange_gain`] above 0 on the mobility values ([`crate::MOBILITY_VALUE`]).
    fn wins_material(&self, mv: Move) -> bool {
        self.pos.exchange_gain(mv, &crate::MOBILITY_VALUE) > 0
    }

    /// [`Position::static_loss_after`] on the mobility values.
    fn static_loss_after(&self, mv: Move) -> i32 {
        self.pos.static_loss_after(mv, &crate::MOBILITY_VALUE)
    }

    /// [`Position::best_exchange_gain`] on the scale's values.
    fn exchange_gain(&self, scale: MaterialScale) -> Option<u32> {
        Some(self.pos.best_exchange_gain(match scale {
            MaterialScale::Impasse => &crate::IMPASSE_VALUE,
            MaterialScale::Mobility => &crate::MOBILITY_VALUE,
        }))
    }

    fn in_check(&self) -> bool {
        self.pos.in_check()
    }

    fn find_mate(&self, max_nodes: usize, max_plies: u32) -> Option<Vec<Move>> {
        let limits = MateLimits {
            max_nodes,
            max_plies,
            ..MateLimits::default()
        };
        match self.search_mate(&limits).0 {
            MateResult::Mate(line) => Some(line),
            _ => None,
        }
    }

    fn parse_move(&self, text: &str) -> Option<Move> {
        self.pos.parse_usi_move(text).ok()
    }
}
