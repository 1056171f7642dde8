//! [`TaiGame`]: a tai shogi game behind the shared [`Game`] seam.

use shogi_game::{Color, EndReason, Game, Outcome};

use crate::attacks::emperor_moves;
use crate::movegen::{TaiMove, is_emperor, piece_moves, spec};
use crate::pieces::{Catalogue, PieceKind};
use crate::position::{Piece, Position, SQUARES};
use crate::rules::{PromotionTrigger, Repetition, TaiRules};

/// The kinds promotion and contagion name.
struct Kinds {
    deva: PieceKind,
    teaching_king: PieceKind,
    dark_spirit: PieceKind,
    buddhist_spirit: PieceKind,
    drunk_elephant: PieceKind,
    prince: PieceKind,
    lion_dog: PieceKind,
}

fn kinds() -> Kinds {
    let cat = Catalogue::get();
    let k = |a: &str| cat.by_abbr(a).expect("catalogue kind");
    Kinds {
        deva: k("DV"),
        teaching_king: k("TK"),
        dark_spirit: k("DSp"),
        buddhist_spirit: k("BSp"),
        drunk_elephant: k("DE"),
        prince: k("CP"),
        lion_dog: k("LD"),
    }
}

static KINDS: std::sync::LazyLock<Kinds> = std::sync::LazyLock::new(kinds);

/// A piece's zobrist key on a square (mixed on the fly: a table would be 2 MB).
#[inline]
fn zobrist(sq: usize, p: Piece) -> u64 {
    let code = (sq as u64) << 10
        | u64::from(p.kind.0) << 2
        | (p.color as u64) << 1
        | u64::from(p.promoted);
    let mut z = code.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const WHITE_TO_MOVE: u64 = 0x6A09_E667_F3BC_C908;

fn position_key(pos: &Position) -> u64 {
    let mut key = pos
        .pieces()
        .fold(0, |k, (sq, p)| k ^ zobrist(usize::from(sq.0), p));
    if pos.side_to_move() == Color::White {
        key ^= WHITE_TO_MOVE;
    }
    key
}

/// What the piece that moves becomes at the end of a move that captured `captured`
/// (in capture order).
pub fn promoted_piece(mover: Piece, captured: &[Piece], rules: &TaiRules) -> Piece {
    let k = &*KINDS;
    if captured.is_empty() {
        return mover;
    }
    // Contagion (the last contagious capture decides): the capturer becomes a teaching
    // king or buddhist spirit; royals take their normal promotion or stay as they are.
    let contagious = captured.iter().rev().find_map(|p| {
        if p.kind == k.deva || p.kind == k.teaching_king {
            Some(k.teaching_king)
        } else if p.kind == k.dark_spirit || p.kind == k.buddhist_spirit {
            Some(k.buddhist_spirit)
        } else {
            None
        }
    });
    if let Some(kind) = contagious {
        if mover.kind.is_royal() {
            return mover;
        }
        if mover.kind == k.drunk_elephant {
            return Piece {
                kind: k.prince,
                promoted: true,
                ..mover
            };
        }
        return Piece {
            kind,
            promoted: true,
            ..mover
        };
    }
    let triggered = match rules.promotion {
        PromotionTrigger::FirstCapture => true,
        PromotionTrigger::CapturingPromoted => captured.iter().any(|p| p.promoted),
    };
    match mover.kind.promotes_to() {
        Some(kind)
            if triggered
                && !mover.promoted
                && (rules.great_elephant || mover.kind != k.lion_dog) =>
        {
            Piece {
                kind,
                promoted: true,
                ..mover
            }
        }
        _ => mover,
    }
}

/// What the end test of a position's moves needs, found once: the opponent's emperor's
/// square, and the keys already seen three times (a fourth is a draw).
struct EndTest {
    emperor: Option<usize>,
    thrice: Vec<u64>,
}

/// A tai shogi game: the position, the keys of every position so far, and the state the
/// end rules need.
#[derive(Clone, Debug)]
pub struct TaiGame {
    pos: Position,
    rules: TaiRules,
    ply: u32,
    keys: Vec<u64>,
    royals: [u16; 2],
    last_was_pass: bool,
    outcome: Option<Outcome>,
}

impl TaiGame {
    /// A game from a position.
    pub fn new(pos: Position, rules: TaiRules) -> TaiGame {
        let mut royals = [0; 2];
        for (_, p) in pos.pieces() {
            if p.kind.is_royal() {
                royals[p.color.index()] += 1;
            }
        }
        let mut game = TaiGame {
            keys: vec![position_key(&pos)],
            pos,
            rules,
            ply: 0,
            royals,
            last_was_pass: false,
            outcome: None,
        };
        game.outcome = game.compute_outcome(None);
        game
    }

    /// A game from the initial setup.
    pub fn startpos(rules: TaiRules) -> TaiGame {
        TaiGame::new(Position::startpos(), rules)
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// The rule options.
    pub fn rules(&self) -> &TaiRules {
        &self.rules
    }

    /// How many times the current position occurred before (same side to move).
    pub fn repetitions(&self) -> u32 {
        let key = self.key();
        self.keys.iter().filter(|&&k| k == key).count() as u32 - 1
    }

    /// Royal pieces (emperor, princes) `c` has on the board.
    pub fn royal_count(&self, c: Color) -> u32 {
        u32::from(self.royals[c.index()])
    }

    /// The side to move's pieces and their squares.
    fn own_pieces(&self) -> impl Iterator<Item = (usize, Piece)> + '_ {
        let me = self.pos.side_to_move();
        let board = self.pos.board().iter().enumerate();
        board.filter_map(move |(sq, cell)| cell.filter(|p| p.color == me).map(|p| (sq, p)))
    }

    /// Appends the moves of `piece` on `sq` before the repetition and pass rules.
    fn moves_of(&self, sq: usize, piece: Piece, out: &mut Vec<TaiMove>) {
        let board = self.pos.board();
        if is_emperor(piece.kind) {
            emperor_moves(board, sq, piece, &self.rules, out);
        } else {
            piece_moves(board, sq, piece, spec(piece.kind, &self.rules), out);
        }
    }

    /// Every move of the side to move before the repetition and pass rules.
    fn pseudo_moves(&self, out: &mut Vec<TaiMove>) {
        for (sq, piece) in self.own_pieces() {
            self.moves_of(sq, piece, out);
        }
    }

    fn allowed(&self, mv: TaiMove) -> bool {
        if mv.is_pass() && self.last_was_pass {
            return false;
        }
        self.rules.repetition != Repetition::Forbidden || !self.keys.contains(&self.key_after(mv))
    }

    /// The pieces `mv` captures, in path order.
    ///
    /// The lion dog's "out two, back one" passes its end square first: by the JCSA
    /// ruling the seed quotes, it may not jump that piece and capture it on the way back,
    /// so a piece there is captured first (it matters for contagion, where the last
    /// capture decides).
    pub(crate) fn captures(&self, mv: TaiMove) -> Vec<(usize, Piece)> {
        let board = self.pos.board();
        let mut out: Vec<(usize, Piece)> = mv
            .vias()
            .filter_map(|v| board[usize::from(v.0)].map(|p| (usize::from(v.0), p)))
            .collect();
        if mv.to() != mv.from()
            && let Some(p) = board[usize::from(mv.to().0)]
        {
            let dist = |a: crate::Square, b: crate::Square| {
                (a.row() - b.row()).abs().max((a.col() - b.col()).abs())
            };
            let passed_first = mv
                .vias()
                .next()
                .is_some_and(|v| dist(mv.from(), mv.to()) < dist(mv.from(), v));
            let entry = (usize::from(mv.to().0), p);
            if passed_first {
                out.insert(0, entry);
            } else {
                out.push(entry);
            }
        }
        out
    }

    /// What `mv` takes: the material ([`crate::material::kind_value`]) of the pieces it
    /// captures and how many of them are royal (whose value is 0 there). A search orders
    /// and prunes by it without playing the move.
    pub fn capture_gain(&self, mv: TaiMove) -> (u32, u32) {
        let board = self.pos.board();
        let on = |sq: crate::Square| board[usize::from(sq.0)];
        let to = (mv.to() != mv.from()).then(|| on(mv.to())).flatten();
        mv.vias()
            .filter_map(on)
            .chain(to)
            .fold((0, 0), |(value, royals), p| {
                (
                    value + crate::material::kind_value(p.kind),
                    royals + u32::from(p.kind.is_royal()),
                )
            })
    }

    /// What [`TaiGame::end_after`] needs of this position, found once for all its moves.
    fn end_test(&self) -> EndTest {
        let them = !self.pos.side_to_move();
        let emperor = self
            .pos
            .board()
            .iter()
            .position(|cell| cell.is_some_and(|p| p.color == them && is_emperor(p.kind)));
        let mut keys = self.keys.clone();
        keys.sort_unstable();
        let mut thrice: Vec<u64> = keys
            .windows(3)
            .filter(|w| w[0] == w[2])
            .map(|w| w[0])
            .collect();
        thrice.dedup();
        EndTest { emperor, thrice }
    }

    /// [`Game::outcome_after`] of `mv` with `test` of this position.
    fn end_after(&self, mv: TaiMove, test: &EndTest) -> Option<Outcome> {
        let mover = self.pos.side_to_move();
        let (_, royals_taken) = self.capture_gain(mv);
        if royals_taken > 0 && royals_taken >= self.royal_count(!mover) {
            return Some(Outcome::win(mover, EndReason::RoyalsCaptured));
        }
        let strict = self.rules.repetition == Repetition::Forbidden;
        if !strict && !test.thrice.is_empty() && test.thrice.contains(&self.key_after(mv)) {
            return Some(Outcome::draw(EndReason::Repetition));
        }
        if self.rules.max_plies > 0 && self.ply + 1 >= self.rules.max_plies {
            return Some(Outcome::draw(EndReason::MaxPlies));
        }
        let emperor_stays = test.emperor.is_some_and(|sq| {
            sq != usize::from(mv.to().0) && !mv.vias().any(|v| usize::from(v.0) == sq)
        });
        if emperor_stays && !strict {
            return None;
        }
        let mut next = self.clone();
        next.play_unchecked(mv);
        next.outcome
    }

    /// The key of the position after `mv`.
    pub fn key_after(&self, mv: TaiMove) -> u64 {
        let from = usize::from(mv.from().0);
        let Some(mover) = self.pos.board()[from] else {
            return self.key();
        };
        let captured = self.captures(mv);
        let pieces: Vec<Piece> = captured.iter().map(|&(_, p)| p).collect();
        let after = promoted_piece(mover, &pieces, &self.rules);
        let mut key = self.key() ^ WHITE_TO_MOVE ^ zobrist(from, mover);
        for &(sq, p) in &captured {
            key ^= zobrist(sq, p);
        }
        key ^ zobrist(usize::from(mv.to().0), after)
    }

    fn has_any_move(&self) -> bool {
        let mut moves = Vec::new();
        for (sq, piece) in self.own_pieces() {
            moves.clear();
            self.moves_of(sq, piece, &mut moves);
            if moves.iter().any(|&m| self.allowed(m)) {
                return true;
            }
        }
        false
    }

    fn compute_outcome(&self, mover: Option<Color>) -> Option<Outcome> {
        let to_move = self.pos.side_to_move();
        if let Some(mover) = mover
            && self.royals[(!mover).index()] == 0
        {
            return Some(Outcome::win(mover, EndReason::RoyalsCaptured));
        }
        // A position set up without royals for one side: that side has already lost.
        if self.royals[to_move.index()] == 0 {
            return Some(Outcome::win(!to_move, EndReason::RoyalsCaptured));
        }
        if self.royals[(!to_move).index()] == 0 {
            return Some(Outcome::win(to_move, EndReason::RoyalsCaptured));
        }
        if self.rules.repetition == Repetition::FourfoldDraw {
            let key = self.key();
            if self.keys.iter().filter(|&&k| k == key).count() >= 4 {
                return Some(Outcome::draw(EndReason::Repetition));
            }
        }
        if self.rules.max_plies > 0 && self.ply >= self.rules.max_plies {
            return Some(Outcome::draw(EndReason::MaxPlies));
        }
        if !self.has_any_move() {
            // The Chess Variant Pages' convention: a side with no move loses.
            return Some(Outcome::win(!to_move, EndReason::NoLegalMoves));
        }
        None
    }
}

impl Game for TaiGame {
    type Move = TaiMove;

    fn variant_name(&self) -> &'static str {
        "tai"
    }

    fn side_to_move(&self) -> Color {
        self.pos.side_to_move()
    }

    fn ply(&self) -> u32 {
        self.ply
    }

    fn legal_moves(&self, out: &mut Vec<TaiMove>) {
        let start = out.len();
        self.pseudo_moves(out);
        if self.last_was_pass || self.rules.repetition == Repetition::Forbidden {
            let mut kept = start;
            for i in start..out.len() {
                if self.allowed(out[i]) {
                    out[kept] = out[i];
                    kept += 1;
                }
            }
            out.truncate(kept);
        }
    }

    fn play_unchecked(&mut self, mv: TaiMove) {
        let from = usize::from(mv.from().0);
        let to = usize::from(mv.to().0);
        let mover_color = self.pos.side_to_move();
        let key = self.key_after(mv);
        let captured = self.captures(mv);
        let pieces: Vec<Piece> = captured.iter().map(|&(_, p)| p).collect();
        let board = self.pos.board_mut();
        let Some(mover) = board[from].take() else {
            debug_assert!(false, "no piece on {}", mv.from());
            return;
        };
        for &(sq, p) in &captured {
            board[sq] = None;
            if p.kind.is_royal() {
                self.royals[p.color.index()] -= 1;
            }
        }
        let after = promoted_piece(mover, &pieces, &self.rules);
        if after.kind.is_royal() && !mover.kind.is_royal() {
            self.royals[mover_color.index()] += 1;
        }
        board[to] = Some(after);
        debug_assert!(to < SQUARES);
        self.pos.set_side_to_move(!mover_color);
        self.pos.set_move_number(self.pos.move_number() + 1);
        self.ply += 1;
        self.last_was_pass = mv.is_pass();
        self.keys.push(key);
        self.outcome = self.compute_outcome(Some(mover_color));
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// The game's end after `mv` ([`TaiGame::outcomes_after`] for one move).
    fn outcome_after(&self, mv: TaiMove) -> Option<Outcome> {
        self.end_after(mv, &self.end_test())
    }

    /// The game's end after each of `moves` without playing them on copies of the whole
    /// game (whose history a clone would copy) for each child a search expands: the last
    /// royal taken, a fourth repetition, the ply cap, in [`TaiGame::compute_outcome`]'s
    /// order; the opponent is left a move wherever it keeps its emperor, which jumps to
    /// any empty square (a move always leaves one). Only without that emperor, or under
    /// the strict repetition rule, is a move played on a copy to ask.
    fn outcomes_after(&self, moves: &[TaiMove], mut ended: impl FnMut(usize, Outcome)) {
        let test = self.end_test();
        for (k, &mv) in moves.iter().enumerate() {
            if let Some(o) = self.end_after(mv, &test) {
                ended(k, o);
            }
        }
    }

    fn key(&self) -> u64 {
        *self.keys.last().expect("the start key")
    }

    /// Mobility-based piece values ([`crate::material`]).
    fn material_points(&self, c: Color) -> Option<u32> {
        Some(crate::material::material_points(&self.pos, c))
    }

    /// Tai's material count is by mobility already: one count for both scales.
    fn material_on(&self, c: Color, _scale: shogi_game::MaterialScale) -> Option<u32> {
        self.material_points(c)
    }

    /// A capture that keeps something by the static exchange on its square
    /// ([`TaiGame::capture_exchange`]).
    fn wins_material(&self, mv: TaiMove) -> bool {
        self.capture_exchange(mv) > 0
    }

    /// The most the side to move wins by the exchange on one of its opponent's pieces
    /// ([`TaiGame::best_exchange`]), on tai's mobility values under either scale, a
    /// royal counting [`crate::exchange::ROYAL_VALUE`] (more than any material).
    fn exchange_gain(&self, _scale: shogi_game::MaterialScale) -> Option<u32> {
        Some(self.best_exchange().max(0) as u32)
    }

    /// Tai's static exchange one ply later ([`TaiGame::static_loss_after`]), on the
    /// exchange values (royals [`crate::exchange::ROYAL_VALUE`]).
    fn static_loss_after(&self, mv: TaiMove) -> i32 {
        TaiGame::static_loss_after(self, mv)
    }

    fn parse_move(&self, text: &str) -> Option<TaiMove> {
        let mv = TaiMove::parse(text)?;
        let mut moves = Vec::new();
        self.legal_moves(&mut moves);
        moves.contains(&mv).then_some(mv)
    }
}
