//! [`Position`]: board, hands, side to move; attacks, pins and making moves. SFEN
//! (`sfen`), move generation (`movegen`), why a move is illegal and USI move text
//! (`legality`) and the compile-time tables (`geometry`) are its submodules.

use std::fmt;

use crate::tables::{
    BETWEEN, FILES, LINE, STEPS, attacks, bishop_attacks, lance_attacks, rook_attacks,
};
use crate::types::{Bitboard, Color, Hand, Move, MoveList, Piece, PieceKind, Square, Variant};

mod exchange;
mod geometry;
mod legality;
mod movegen;
mod sfen;

pub use exchange::{ExchangeValues, IMPASSE_VALUE};
pub(crate) use geometry::Geometry;
use geometry::{MINI_GEO, SHOGI_GEO, ZOBRIST};
pub use legality::{IllegalMove, MoveParseError};
pub(crate) use sfen::write_sfen;
pub use sfen::{HANDICAPS, SfenError};
use sfen::{START_MINI, START_SHOGI};

/// A piece's value by its mobility, by [`PieceKind`] index (pawn .. dragon): the squares
/// it attacks from the centre (5e) of an empty 9x9 board. Pawn 1, lance 4, knight 2,
/// silver 5, bishop 16, rook 16, gold 6, king 0 (not material), the promoted minors 6 (a
/// gold's), horse and dragon 20. Only the move rules define it, so a learning target
/// valued with it ([`shogi_game::MaterialScale::Mobility`]) uses no outside knowledge.
pub const MOBILITY_VALUE: [u32; 14] = [1, 4, 2, 5, 16, 16, 6, 0, 6, 6, 6, 6, 20, 20];

/// A shogi or minishogi position: board, hands (持ち駒), side to move, move number.
#[derive(Clone)]
pub struct Position {
    board: [u8; 81],
    by_color: [u128; 2],
    by_kind: [u128; 14],
    hands: [Hand; 2],
    kings: [u8; 2],
    side: Color,
    move_number: u32,
    key: u64,
    checkers: u128,
    geo: &'static Geometry,
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.to_sfen())
    }
}

impl PartialEq for Position {
    fn eq(&self, o: &Position) -> bool {
        self.geo.variant == o.geo.variant
            && self.board == o.board
            && self.hands == o.hands
            && self.side == o.side
            && self.move_number == o.move_number
    }
}
impl Eq for Position {}

#[inline(always)]
fn bit(sq: usize) -> u128 {
    1u128 << sq
}

const fn square_bbs() -> [u128; 81] {
    let mut t = [0u128; 81];
    let mut i = 0;
    while i < 81 {
        t[i] = 1u128 << i;
        i += 1;
    }
    t
}

/// Single-square masks from a table: with `1 << sq` LLVM narrows the read-modify-write
/// of a u128 to a 32-bit store, and the following full-width load stalls on store
/// forwarding.
static SQUARE_BB: [u128; 81] = square_bbs();

impl Position {
    fn empty(variant: Variant) -> Position {
        Position {
            board: [0; 81],
            by_color: [0; 2],
            by_kind: [0; 14],
            hands: [[0; 7]; 2],
            kings: [0; 2],
            side: Color::Black,
            move_number: 1,
            key: 0,
            checkers: 0,
            geo: match variant {
                Variant::Shogi => &SHOGI_GEO,
                Variant::Minishogi => &MINI_GEO,
            },
        }
    }

    /// The standard start position of a variant (平手).
    pub fn startpos(variant: Variant) -> Position {
        let s = match variant {
            Variant::Shogi => START_SHOGI,
            Variant::Minishogi => START_MINI,
        };
        Position::from_sfen(variant, s).expect("start position is valid")
    }

    /// A handicap (駒落ち) start for standard shogi by name: `lance`, `bishop`, `rook`,
    /// `rook-lance`, `2-piece`, `4-piece`, `6-piece`, `8-piece`, `10-piece`. White
    /// (上手, the handicap giver) moves first.
    pub fn handicap(name: &str) -> Result<Position, SfenError> {
        let (_, top) = HANDICAPS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| SfenError::UnknownHandicap(name.to_string()))?;
        let s = format!("{top}/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1");
        Position::from_sfen(Variant::Shogi, &s)
    }

    /// The variant.
    #[inline]
    pub fn variant(&self) -> Variant {
        self.geo.variant
    }

    /// The side to move.
    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// The SFEN move number (1 at the start, incremented by every move).
    #[inline]
    pub fn move_number(&self) -> u32 {
        self.move_number
    }

    /// The zobrist key of board, hands and side to move (not the move number).
    #[inline]
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The piece on a square.
    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        Piece::from_code(self.board[sq.index()])
    }

    /// The hand of a colour, indexed by [`PieceKind::index`] (pawn..gold).
    #[inline]
    pub fn hand(&self, c: Color) -> &Hand {
        &self.hands[c.index()]
    }

    /// Squares holding pieces of a colour.
    #[inline]
    pub fn pieces(&self, c: Color) -> Bitboard {
        Bitboard(self.by_color[c.index()])
    }

    /// Squares holding pieces of a colour and kind.
    #[inline]
    pub fn pieces_of(&self, c: Color, k: PieceKind) -> Bitboard {
        Bitboard(self.by_color[c.index()] & self.by_kind[k.index()])
    }

    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        Bitboard(self.occ())
    }

    #[inline(always)]
    fn occ(&self) -> u128 {
        self.by_color[0] | self.by_color[1]
    }

    /// The king square of a colour.
    #[inline]
    pub fn king_square(&self, c: Color) -> Square {
        Square(self.kings[c.index()])
    }

    /// The pieces giving check to the side to move.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        Bitboard(self.checkers)
    }

    /// Whether the side to move is in check (王手).
    #[inline]
    pub fn in_check(&self) -> bool {
        self.checkers != 0
    }

    /// Whether `sq` is inside the promotion zone of `c`.
    #[inline]
    pub fn in_zone(&self, c: Color, sq: Square) -> bool {
        self.geo.zone[c.index()] >> sq.0 & 1 != 0
    }

    /// Whether `sq` is on this variant's board.
    #[inline]
    pub fn on_board(&self, sq: Square) -> bool {
        sq.index() < 81 && self.geo.mask >> sq.0 & 1 != 0
    }

    // ----- low-level board edits -----

    #[inline(always)]
    fn put(&mut self, sq: usize, p: Piece) {
        let code = p.code();
        self.board[sq] = code;
        let b = SQUARE_BB[sq];
        self.by_color[p.color as usize] |= b;
        self.by_kind[p.kind as usize] |= b;
        self.key ^= ZOBRIST.psq[code as usize][sq];
    }

    #[inline(always)]
    fn remove(&mut self, sq: usize) -> Piece {
        let code = self.board[sq];
        let p = match Piece::from_code(code) {
            Some(p) => p,
            None => unreachable!("remove from empty square"),
        };
        self.board[sq] = 0;
        let b = SQUARE_BB[sq];
        self.by_color[p.color as usize] ^= b;
        self.by_kind[p.kind as usize] ^= b;
        self.key ^= ZOBRIST.psq[code as usize][sq];
        p
    }

    fn compute_key(&self) -> u64 {
        let mut k = 0u64;
        for sq in 0..81 {
            let c = self.board[sq];
            if c != 0 {
                k ^= ZOBRIST.psq[c as usize][sq];
            }
        }
        for c in 0..2 {
            for kind in 0..7 {
                k ^= ZOBRIST.hand[c][kind][self.hands[c][kind] as usize];
            }
        }
        if self.side == Color::White {
            k ^= ZOBRIST.side;
        }
        k
    }

    /// Recomputes the key from scratch (for checking the incremental key).
    pub fn key_from_scratch(&self) -> u64 {
        self.compute_key()
    }

    // ----- attacks -----

    /// Pieces of `c` attacking `sq` with occupancy `occ`.
    #[inline(always)]
    fn attackers_raw(&self, c: Color, sq: usize, occ: u128) -> u128 {
        let o = c.flip() as usize;
        let k = &self.by_kind;
        let golds = k[6] | k[8] | k[9] | k[10] | k[11];
        ((STEPS[o][0][sq] & k[0])
            | (STEPS[o][2][sq] & k[2])
            | (STEPS[o][3][sq] & k[3])
            | (STEPS[o][6][sq] & golds)
            | (STEPS[0][7][sq] & (k[7] | k[12] | k[13]))
            | (lance_attacks(c.flip(), sq, occ) & k[1])
            | (bishop_attacks(sq, occ) & (k[4] | k[12]))
            | (rook_attacks(sq, occ) & (k[5] | k[13])))
            & self.by_color[c as usize]
    }

    /// Pieces of colour `c` attacking `sq` in the current position.
    pub fn attackers_to(&self, sq: Square, c: Color) -> Bitboard {
        Bitboard(self.attackers_raw(c, sq.index(), self.occ()))
    }

    /// Sliders of `c` attacking `sq` with occupancy `occ`.
    #[inline(always)]
    fn slider_attackers(&self, c: Color, sq: usize, occ: u128) -> u128 {
        let k = &self.by_kind;
        ((lance_attacks(c.flip(), sq, occ) & k[1])
            | (bishop_attacks(sq, occ) & (k[4] | k[12]))
            | (rook_attacks(sq, occ) & (k[5] | k[13])))
            & self.by_color[c as usize]
    }

    /// Own pieces of `us` pinned to their king.
    #[inline]
    fn pinned(&self, us: Color) -> u128 {
        self.blockers(us, us.flip()) & self.by_color[us as usize]
    }

    /// The pieces (of either colour) that are alone between `king`'s king and a slider of
    /// `sniper` aimed at it: pinned when they are the king's own, a discovered check
    /// when they are the sniper's side's and step off the line.
    #[inline]
    fn blockers(&self, king: Color, sniper: Color) -> u128 {
        let ksq = self.kings[king as usize] as usize;
        let k = &self.by_kind;
        let mut snipers = ((lance_attacks(king, ksq, 0) & k[1])
            | (bishop_attacks(ksq, 0) & (k[4] | k[12]))
            | (rook_attacks(ksq, 0) & (k[5] | k[13])))
            & self.by_color[sniper as usize];
        let occ = self.occ();
        let mut blockers = 0;
        while snipers != 0 {
            let s = snipers.trailing_zeros() as usize;
            snipers &= snipers - 1;
            let b = BETWEEN[ksq][s] & occ;
            if b != 0 && b & (b - 1) == 0 {
                blockers |= b;
            }
        }
        blockers
    }

    /// What tells each move's check at a glance ([`Position::gives_check_with`]), for
    /// a caller that asks it of many moves of this position (the mate search's
    /// attacker, which keeps only its checks).
    pub fn check_info(&self) -> CheckInfo {
        let us = self.side;
        let them = us.flip();
        let king = self.kings[them as usize] as usize;
        let occ = self.occ();
        // A piece of ours of kind k on a square attacks their king exactly when a piece
        // of theirs of kind k on the king's square attacks that square.
        let direct = std::array::from_fn(|k| attacks(them, PieceKind::ALL[k], king, occ));
        CheckInfo {
            king,
            direct,
            discoverers: self.blockers(them, us) & self.by_color[us as usize],
        }
    }

    /// [`Position::gives_check`] from this position's [`CheckInfo`]: two bit tests. A
    /// slider never checks from a square beyond the one it left on a line from the king
    /// (it would have been checking already), so the squares read on the board as it is
    /// are the squares after the move.
    #[inline]
    pub fn gives_check_with(&self, info: &CheckInfo, mv: Move) -> bool {
        let to = mv.to().index();
        let direct = info.direct[self.kind_after(mv) as usize] & bit(to) != 0;
        let gives = direct
            || mv.drop_kind().is_none() && {
                let from = mv.raw_from();
                info.discoverers & bit(from) != 0 && LINE[info.king][from] & bit(to) == 0
            };
        debug_assert_eq!(gives, self.gives_check(mv), "{mv} in {self}");
        gives
    }

    // ----- making moves -----

    /// Plays a move known to be legal (from [`Position::legal_moves`]). Other moves
    /// corrupt the position (never memory-unsafe).
    #[inline]
    pub fn play_unchecked(&mut self, mv: Move) {
        let us = self.side;
        let u = us as usize;
        let to = mv.to().index();
        let moved_kind;
        let mut from_bit = 0u128;
        // Occupancy kept in a register: re-reading the u128s just written piecewise
        // would stall on store forwarding.
        let mut occ = self.occ();
        if let Some(k) = mv.drop_kind() {
            let n = self.hands[u][k as usize] as usize;
            self.hands[u][k as usize] -= 1;
            self.key ^= ZOBRIST.hand[u][k as usize][n] ^ ZOBRIST.hand[u][k as usize][n - 1];
            self.put(to, Piece::new(us, k));
            occ |= SQUARE_BB[to];
            moved_kind = k;
        } else {
            let from = mv.raw_from();
            from_bit = bit(from);
            let p = self.remove(from);
            occ = (occ ^ SQUARE_BB[from]) | SQUARE_BB[to];
            if self.board[to] != 0 {
                let cap = self.remove(to);
                let hk = cap.kind.unpromote() as usize;
                let n = self.hands[u][hk] as usize;
                self.hands[u][hk] += 1;
                self.key ^= ZOBRIST.hand[u][hk][n] ^ ZOBRIST.hand[u][hk][n + 1];
            }
            let kind = if mv.is_promotion() {
                p.kind.promote()
            } else {
                p.kind
            };
            self.put(to, Piece::new(us, kind));
            if kind == PieceKind::King {
                self.kings[u] = to as u8;
            }
            moved_kind = kind;
        }
        self.side = us.flip();
        self.key ^= ZOBRIST.side;
        self.move_number += 1;
        // Checks: direct from the moved piece, discovered along the line king-origin.
        let ksq = self.kings[us.flip() as usize] as usize;
        let mut checkers = 0;
        if attacks(us, moved_kind, to, occ) & bit(ksq) != 0 {
            checkers = bit(to);
        }
        if from_bit != 0 {
            let line = LINE[ksq][from_bit.trailing_zeros() as usize];
            if line != 0 {
                checkers |= self.slider_attackers(us, ksq, occ) & line & !bit(to);
            }
        }
        self.checkers = checkers;
        debug_assert_eq!(self.checkers, self.attackers_raw(us, ksq, occ));
    }

    /// The position after a legal move (copy-make).
    #[inline]
    pub fn after(&self, mv: Move) -> Position {
        let mut p = self.clone();
        p.play_unchecked(mv);
        p
    }

    /// Whether `mv` is legal here.
    pub fn is_legal(&self, mv: Move) -> bool {
        self.legal_moves().contains(mv)
    }

    /// Plays `mv` if legal; otherwise names the rule it breaks.
    pub fn play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        if self.is_legal(mv) {
            self.play_unchecked(mv);
            Ok(())
        } else {
            Err(self.why_illegal(mv))
        }
    }

    /// Whether a legal move gives check, read off this position without making the
    /// move: a direct check from the moved (or dropped, or promoted) piece on its new
    /// square, or a discovered one along the line from the king through the square it
    /// left (the same two tests `play_unchecked` makes for the position it leaves).
    #[inline]
    pub fn gives_check(&self, mv: Move) -> bool {
        let us = self.side;
        let ksq = self.kings[us.flip() as usize] as usize;
        let to = mv.to().index();
        let (occ, kind, from_bit) = self.moved(mv);
        if attacks(us, kind, to, occ) & bit(ksq) != 0 {
            return true;
        }
        if from_bit != 0 {
            let line = LINE[ksq][from_bit.trailing_zeros() as usize];
            // The mover's own bits (its old square, its new one) are not sliders behind
            // the square it left: it was tested above.
            if line != 0 && self.slider_attackers(us, ksq, occ) & line & !(from_bit | bit(to)) != 0
            {
                return true;
            }
        }
        false
    }

    /// The occupancy after a legal move, the kind on its new square and the bit of the
    /// square it left (0 for a drop).
    #[inline(always)]
    fn moved(&self, mv: Move) -> (u128, PieceKind, u128) {
        let to = mv.to().index();
        let occ = self.occ();
        let kind = self.kind_after(mv);
        match mv.drop_kind() {
            Some(_) => (occ | SQUARE_BB[to], kind, 0),
            None => {
                let from = mv.raw_from();
                ((occ ^ SQUARE_BB[from]) | SQUARE_BB[to], kind, bit(from))
            }
        }
    }

    /// The kind on a legal move's destination after it: the dropped kind, or the moved
    /// piece's, promoted when the move promotes.
    #[inline(always)]
    fn kind_after(&self, mv: Move) -> PieceKind {
        match mv.drop_kind() {
            Some(kind) => kind,
            None => {
                let Some(p) = Piece::from_code(self.board[mv.raw_from()]) else {
                    unreachable!("a move from an empty square")
                };
                if mv.is_promotion() {
                    p.kind.promote()
                } else {
                    p.kind
                }
            }
        }
    }

    /// Whether, after a legal move that gives no check, the other side has a legal move
    /// that needs no search to find: a step of a pawn, silver, gold or promoted minor
    /// that is on no line through its king (so no pin can hold it) to an empty square,
    /// or a safe king step ([`Position::king_can_step_after`]). Then that side is not
    /// stalemated, told without making `mv`; `false` says nothing more.
    #[inline]
    pub fn other_side_can_move_after(&self, mv: Move) -> bool {
        let to = mv.to().index();
        let (occ, _, _) = self.moved(mv);
        // A captured piece leaves.
        self.any_free_step(occ, bit(to), |targets| targets != 0) || self.king_can_step_after(mv)
    }

    /// Whether the side not to move has two steps of pawns, silvers or gold-movers by two
    /// different pieces to two different empty squares, neither piece on a line from its
    /// king (so never pinned, whatever is played). Then after every legal move of the side
    /// to move that gives no check, [`Position::other_side_can_move_after`] holds: a move
    /// fills one square (`to`) or takes the piece on it, and the piece of one option sits
    /// on an occupied square while the target of the other is empty, so one of the two
    /// steps survives. A search asks it once for all the children it expands.
    pub fn other_side_has_two_free_steps(&self) -> bool {
        let mut first_targets = 0u128;
        self.any_free_step(self.occ(), 0, |targets| {
            if targets == 0 {
                return false;
            }
            if first_targets == 0 {
                first_targets = targets;
                return false;
            }
            // Two pieces with two different targets between them.
            (first_targets | targets).count_ones() >= 2
        })
    }

    /// Calls `found` with the empty squares (under occupancy `occ`) each pawn, silver and
    /// gold-mover of the side not to move steps to, for each such piece not on a line from
    /// its king (never pinned) nor on `gone`; true as soon as `found` is.
    #[inline]
    fn any_free_step(&self, occ: u128, gone: u128, mut found: impl FnMut(u128) -> bool) -> bool {
        let t = self.side.flip() as usize;
        let ksq = self.kings[t] as usize;
        let k = &self.by_kind;
        let aligned = bishop_attacks(ksq, 0) | rook_attacks(ksq, 0);
        let free = self.by_color[t] & !aligned & !gone;
        let empty = !occ & self.geo.mask;
        for (kinds, step_kind) in [
            (k[0], PieceKind::Pawn),
            (k[3], PieceKind::Silver),
            (k[6] | k[8] | k[9] | k[10] | k[11], PieceKind::Gold),
        ] {
            let mut pieces = kinds & free;
            while pieces != 0 {
                let sq = pieces.trailing_zeros() as usize;
                pieces &= pieces - 1;
                if found(STEPS[t][step_kind as usize][sq] & empty) {
                    return true;
                }
            }
        }
        false
    }

    /// Whether, after a legal move that gives no check, the other side's king has a
    /// legal step: to an empty square, or onto one of this side's pieces, that nothing of
    /// this side attacks after the move. Then that side has a legal move (it is not
    /// stalemated), told without making `mv`. `false` says nothing more (another of its
    /// pieces may move). With the king not in check no slider of this side sees its
    /// square, so none attacks a step through it.
    #[inline]
    pub fn king_can_step_after(&self, mv: Move) -> bool {
        let us = self.side;
        let them = us.flip();
        let ksq = self.kings[them as usize] as usize;
        let to = mv.to().index();
        let (occ, kind, from_bit) = self.moved(mv);
        // A piece of theirs on `to` is captured and leaves; the mover's old square is
        // empty and the mover attacks from its new one.
        let theirs = self.by_color[them as usize] & !bit(to);
        let mover = attacks(us, kind, to, occ);
        let mut steps = STEPS[0][PieceKind::King as usize][ksq] & self.geo.mask & !theirs;
        while steps != 0 {
            let step = steps.trailing_zeros() as usize;
            steps &= steps - 1;
            if mover & bit(step) == 0 && self.attackers_raw(us, step, occ) & !from_bit == 0 {
                return true;
            }
        }
        false
    }

    /// The key ([`Position::key`]) of the position after a legal move, without making it.
    #[inline]
    pub fn key_after(&self, mv: Move) -> u64 {
        let u = self.side as usize;
        let to = mv.to().index();
        let mut key = self.key ^ ZOBRIST.side;
        match mv.drop_kind() {
            Some(k) => {
                let n = self.hands[u][k as usize] as usize;
                key ^= ZOBRIST.hand[u][k as usize][n] ^ ZOBRIST.hand[u][k as usize][n - 1];
            }
            None => {
                let from = mv.raw_from();
                key ^= ZOBRIST.psq[self.board[from] as usize][from];
                let captured = self.board[to];
                if let Some(cap) = Piece::from_code(captured) {
                    key ^= ZOBRIST.psq[captured as usize][to];
                    let hk = cap.kind.unpromote() as usize;
                    let n = self.hands[u][hk] as usize;
                    key ^= ZOBRIST.hand[u][hk][n] ^ ZOBRIST.hand[u][hk][n + 1];
                }
            }
        }
        let placed = Piece::new(self.side, self.kind_after(mv));
        key ^ ZOBRIST.psq[placed.code() as usize][to]
    }

    /// Whether the side to move is checkmated (詰み).
    pub fn is_checkmate(&self) -> bool {
        self.in_check() && !self.has_legal_move()
    }

    /// A move that checkmates at once (一手詰), if any.
    pub fn mate_in_one(&self) -> Option<Move> {
        self.legal_moves().into_iter().find(|&mv| {
            let p = self.after(mv);
            p.in_check() && !p.has_legal_move()
        })
    }

    /// Points for the 27-point declaration / 24-point rule: rook and bishop (promoted or
    /// not) 5, other non-king pieces 1, counting pieces on squares in `area` plus hand.
    pub(crate) fn points(&self, c: Color, area: Bitboard) -> (u32, u32) {
        let u = c as usize;
        let own = self.by_color[u] & area.0 & !self.by_kind[7];
        let big = own & (self.by_kind[4] | self.by_kind[5] | self.by_kind[12] | self.by_kind[13]);
        let pieces = own.count_ones();
        let mut pts = pieces + 4 * big.count_ones();
        let h = &self.hands[u];
        pts += h[0] as u32 + h[1] as u32 + h[2] as u32 + h[3] as u32 + h[6] as u32;
        pts += 5 * (h[4] as u32 + h[5] as u32);
        (pts, pieces)
    }

    /// Material of `c` in the impasse count's units (rook and bishop, promoted or not, 5;
    /// every other piece but the king 1), over the whole board plus the hand. The arena
    /// uses it to adjudicate games stopped at the ply limit.
    pub fn material_points(&self, c: Color) -> u32 {
        self.points(c, Bitboard(self.geo.mask)).0
    }

    /// Material of `c` with each piece worth its mobility ([`MOBILITY_VALUE`]), over
    /// the whole board plus the hand (a hand piece at its unpromoted value).
    pub fn mobility_points(&self, c: Color) -> u32 {
        let u = c.index();
        let board: u32 = PieceKind::ALL
            .iter()
            .map(|&k| {
                let n = (self.by_color[u] & self.by_kind[k.index()] & self.geo.mask).count_ones();
                n * MOBILITY_VALUE[k.index()]
            })
            .sum();
        let hand: u32 = PieceKind::HAND
            .iter()
            .zip(&self.hands[u])
            .map(|(&k, &n)| u32::from(n) * MOBILITY_VALUE[k.index()])
            .sum();
        board + hand
    }

    /// The promotion zone of `c` (the enemy camp, 敵陣).
    pub fn zone(&self, c: Color) -> Bitboard {
        Bitboard(self.geo.zone[c as usize])
    }

    /// The squares of the board.
    pub fn board_mask(&self) -> Bitboard {
        Bitboard(self.geo.mask)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_sfen())
    }
}

/// A position's checks at a glance ([`Position::check_info`]): for each piece kind, the
/// squares from which a piece of the side to move of that kind attacks the other king,
/// and the side to move's pieces whose stepping off their line uncovers a check.
#[derive(Clone, Debug)]
pub struct CheckInfo {
    king: usize,
    direct: [u128; 14],
    discoverers: u128,
}

impl CheckInfo {
    /// No check from anywhere (the generator's placeholder when it generates every move).
    pub(crate) const NONE: CheckInfo = CheckInfo {
        king: 0,
        direct: [0; 14],
        discoverers: 0,
    };
}
