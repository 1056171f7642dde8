//! Board vocabulary: squares, pieces, moves, hands and bitboards.
//!
//! Squares are indexed `file * 9 + rank` with `file` 0..9 (USI file 1..9) and `rank`
//! 0..9 (USI rank a..i). Minishogi uses the same 9x9 index space restricted to files
//! 0..5 and ranks 0..5, so one set of precomputed tables serves both variants.

use std::fmt;
use std::mem::MaybeUninit;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

pub use shogi_game::Color;
use shogi_game::GameKind;

/// Which game is played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Standard 9x9 shogi (本将棋).
    Shogi,
    /// 5x5 minishogi (五五将棋): K, G, S, B, R, P each side, the promotion zone is the
    /// farthest rank only.
    Minishogi,
}

impl Variant {
    /// Board width and height.
    #[inline]
    pub const fn size(self) -> u8 {
        match self {
            Variant::Shogi => 9,
            Variant::Minishogi => 5,
        }
    }

    /// Short name (`shogi`, `minishogi`): the [`GameKind`]'s.
    pub const fn name(self) -> &'static str {
        self.kind().name()
    }

    /// The game this variant is.
    pub const fn kind(self) -> GameKind {
        match self {
            Variant::Shogi => GameKind::Shogi,
            Variant::Minishogi => GameKind::Minishogi,
        }
    }

    /// The shogi-rules variant of `kind`: `None` for a game these rules do not play
    /// (tai shogi).
    pub const fn of(kind: GameKind) -> Option<Variant> {
        match kind {
            GameKind::Shogi => Some(Variant::Shogi),
            GameKind::Minishogi => Some(Variant::Minishogi),
            GameKind::Tai => None,
        }
    }
}

/// A board square (`file * 9 + rank`, both 0-based; file 0 is USI file 1, rank 0 is
/// rank `a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(pub(crate) u8);

impl Square {
    /// Number of square indices (9x9).
    pub const NUM: usize = 81;

    /// Square from 0-based file and rank (both below 9).
    #[inline]
    pub const fn new(file: u8, rank: u8) -> Square {
        debug_assert!(file < 9 && rank < 9);
        Square(file * 9 + rank)
    }

    /// Square from its index (below 81).
    #[inline]
    pub const fn from_index(i: usize) -> Square {
        debug_assert!(i < 81);
        Square(i as u8)
    }

    /// Index 0..81.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// 0-based file (0 = USI file 1).
    #[inline]
    pub const fn file(self) -> u8 {
        self.0 / 9
    }

    /// 0-based rank (0 = USI rank a).
    #[inline]
    pub const fn rank(self) -> u8 {
        self.0 % 9
    }

    /// Parses a USI square such as `7g`.
    pub fn from_usi(s: &str, variant: Variant) -> Option<Square> {
        let b = s.as_bytes();
        if b.len() != 2 {
            return None;
        }
        let n = variant.size();
        let file = b[0].wrapping_sub(b'1');
        let rank = b[1].wrapping_sub(b'a');
        (file < n && rank < n).then(|| Square::new(file, rank))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file() + 1, (b'a' + self.rank()) as char)
    }
}

/// Piece kinds, promoted kinds included. The first seven can be held in hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum PieceKind {
    /// 歩 fu.
    Pawn = 0,
    /// 香 kyo.
    Lance = 1,
    /// 桂 kei.
    Knight = 2,
    /// 銀 gin.
    Silver = 3,
    /// 角 kaku.
    Bishop = 4,
    /// 飛 hisha.
    Rook = 5,
    /// 金 kin.
    Gold = 6,
    /// 玉/王 gyoku.
    King = 7,
    /// と tokin.
    ProPawn = 8,
    /// 成香 narikyo.
    ProLance = 9,
    /// 成桂 narikei.
    ProKnight = 10,
    /// 成銀 narigin.
    ProSilver = 11,
    /// 馬 uma (promoted bishop).
    Horse = 12,
    /// 龍 ryu (promoted rook).
    Dragon = 13,
}

impl PieceKind {
    /// Number of kinds.
    pub const NUM: usize = 14;
    /// All kinds in index order.
    pub const ALL: [PieceKind; 14] = [
        PieceKind::Pawn,
        PieceKind::Lance,
        PieceKind::Knight,
        PieceKind::Silver,
        PieceKind::Bishop,
        PieceKind::Rook,
        PieceKind::Gold,
        PieceKind::King,
        PieceKind::ProPawn,
        PieceKind::ProLance,
        PieceKind::ProKnight,
        PieceKind::ProSilver,
        PieceKind::Horse,
        PieceKind::Dragon,
    ];
    /// The kinds that can be held in hand, in index order: the first seven (pawn to
    /// gold).
    pub const HAND: [PieceKind; 7] = {
        let mut hand = [PieceKind::Pawn; 7];
        let mut i = 0;
        while i < hand.len() {
            hand[i] = PieceKind::ALL[i];
            i += 1;
        }
        hand
    };

    /// Kind from its index (below 14).
    #[inline]
    pub const fn from_index(i: usize) -> PieceKind {
        PieceKind::ALL[i]
    }

    /// Index 0..14.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether this kind can promote (pawn, lance, knight, silver, bishop, rook).
    #[inline]
    pub const fn can_promote(self) -> bool {
        (self as u8) < 6
    }

    /// Whether this kind is already promoted.
    #[inline]
    pub const fn is_promoted(self) -> bool {
        (self as u8) >= 8
    }

    /// The promoted kind (self if it cannot promote).
    #[inline]
    pub const fn promote(self) -> PieceKind {
        if self.can_promote() {
            PieceKind::ALL[self as usize + 8]
        } else {
            self
        }
    }

    /// The unpromoted kind (what a captured piece becomes in hand).
    #[inline]
    pub const fn unpromote(self) -> PieceKind {
        if self.is_promoted() {
            PieceKind::ALL[self as usize - 8]
        } else {
            self
        }
    }

    /// Upper-case SFEN letter of the unpromoted base (`P`, `L`, ..., `K`).
    pub const fn base_letter(self) -> char {
        match self.unpromote() {
            PieceKind::Pawn => 'P',
            PieceKind::Lance => 'L',
            PieceKind::Knight => 'N',
            PieceKind::Silver => 'S',
            PieceKind::Bishop => 'B',
            PieceKind::Rook => 'R',
            PieceKind::Gold => 'G',
            _ => 'K',
        }
    }

    /// Kind from an SFEN letter (either case), unpromoted.
    pub const fn from_letter(c: char) -> Option<PieceKind> {
        Some(match c.to_ascii_uppercase() {
            'P' => PieceKind::Pawn,
            'L' => PieceKind::Lance,
            'N' => PieceKind::Knight,
            'S' => PieceKind::Silver,
            'B' => PieceKind::Bishop,
            'R' => PieceKind::Rook,
            'G' => PieceKind::Gold,
            'K' => PieceKind::King,
            _ => return None,
        })
    }
}

/// A coloured piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Owner.
    pub color: Color,
    /// Kind.
    pub kind: PieceKind,
}

impl Piece {
    /// A new piece.
    #[inline]
    pub const fn new(color: Color, kind: PieceKind) -> Piece {
        Piece { color, kind }
    }

    /// SFEN text (`+p`, `K`, ...).
    pub fn sfen(self) -> String {
        let mut s = String::new();
        if self.kind.is_promoted() {
            s.push('+');
        }
        let c = self.kind.base_letter();
        s.push(if self.color == Color::Black {
            c
        } else {
            c.to_ascii_lowercase()
        });
        s
    }

    /// Compact code 1..=28 used by the board array (0 = empty).
    #[inline]
    pub(crate) const fn code(self) -> u8 {
        1 + self.kind as u8 + 14 * self.color as u8
    }

    #[inline]
    pub(crate) const fn from_code(c: u8) -> Option<Piece> {
        if c == 0 || c > 28 {
            return None;
        }
        Some(Piece {
            color: CODE_COLOR[c as usize],
            kind: CODE_KIND[c as usize],
        })
    }
}

const fn code_tables() -> ([PieceKind; 29], [Color; 29]) {
    let mut k = [PieceKind::Pawn; 29];
    let mut c = [Color::Black; 29];
    let mut i = 1;
    while i < 29 {
        k[i] = PieceKind::ALL[(i - 1) % 14];
        c[i] = if i > 14 { Color::White } else { Color::Black };
        i += 1;
    }
    (k, c)
}

/// Board code (1..=28) to kind.
pub(crate) static CODE_KIND: [PieceKind; 29] = code_tables().0;
static CODE_COLOR: [Color; 29] = code_tables().1;

/// A move in 16 bits: bits 0..7 destination, bits 7..14 origin square (or 81 + hand kind
/// for a drop), bit 14 promotion.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(pub(crate) u16);

impl Move {
    const DROP_BASE: u16 = 81;

    /// A board move.
    #[inline]
    pub const fn normal(from: Square, to: Square, promote: bool) -> Move {
        Move(to.0 as u16 | (from.0 as u16) << 7 | (promote as u16) << 14)
    }

    /// A drop (打) of a hand kind.
    #[inline]
    pub const fn drop(kind: PieceKind, to: Square) -> Move {
        debug_assert!((kind as u8) < 7);
        Move(to.0 as u16 | (Self::DROP_BASE + kind as u16) << 7)
    }

    /// Destination.
    #[inline]
    pub const fn to(self) -> Square {
        Square((self.0 & 0x7f) as u8)
    }

    /// Origin square, `None` for a drop.
    #[inline]
    pub const fn from(self) -> Option<Square> {
        let f = (self.0 >> 7) & 0x7f;
        if f >= Self::DROP_BASE {
            None
        } else {
            Some(Square(f as u8))
        }
    }

    /// Origin square of a board move (garbage for drops).
    #[inline]
    pub(crate) const fn raw_from(self) -> usize {
        ((self.0 >> 7) & 0x7f) as usize
    }

    /// Whether this is a drop.
    #[inline]
    pub const fn is_drop(self) -> bool {
        (self.0 >> 7) & 0x7f >= Self::DROP_BASE
    }

    /// The dropped kind, `None` for a board move.
    #[inline]
    pub const fn drop_kind(self) -> Option<PieceKind> {
        if self.is_drop() {
            Some(PieceKind::ALL[(((self.0 >> 7) & 0x7f) - Self::DROP_BASE) as usize])
        } else {
            None
        }
    }

    /// Whether the move promotes (成).
    #[inline]
    pub const fn is_promotion(self) -> bool {
        self.0 & (1 << 14) != 0
    }

    /// Raw 16-bit encoding.
    #[inline]
    pub const fn to_u16(self) -> u16 {
        self.0
    }

    /// From raw bits; `None` if they do not describe a well-formed move on the 9x9 index
    /// space (legality is not checked).
    pub const fn from_u16(v: u16) -> Option<Move> {
        let to = v & 0x7f;
        let from = (v >> 7) & 0x7f;
        if v >> 15 != 0 || to >= 81 || from >= Self::DROP_BASE + 7 {
            return None;
        }
        if from >= Self::DROP_BASE && v & (1 << 14) != 0 {
            return None;
        }
        Some(Move(v))
    }
}

impl fmt::Display for Move {
    /// USI text: `7g7f`, `8h2b+`, `P*5e`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.drop_kind() {
            Some(k) => write!(f, "{}*{}", k.base_letter(), self.to()),
            None => write!(
                f,
                "{}{}{}",
                Square(self.raw_from() as u8),
                self.to(),
                if self.is_promotion() { "+" } else { "" }
            ),
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Move({self})")
    }
}

/// Pieces in hand (持ち駒) of one side, indexed by [`PieceKind::index`] (0..7).
pub type Hand = [u8; 7];

/// A set of squares as a 128-bit mask (bit = square index).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Bitboard(pub u128);

impl fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Bitboard(")?;
        for rank in 0..9 {
            for file in (0..9).rev() {
                let on = self.contains(Square::new(file, rank));
                write!(f, "{}", if on { 'x' } else { '.' })?;
            }
            writeln!(f)?;
        }
        write!(f, ")")
    }
}

impl Bitboard {
    /// The empty set.
    pub const EMPTY: Bitboard = Bitboard(0);

    /// The single square.
    #[inline]
    pub const fn from_square(sq: Square) -> Bitboard {
        Bitboard(1u128 << sq.0)
    }

    /// Whether empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether non-empty.
    #[inline]
    pub const fn any(self) -> bool {
        self.0 != 0
    }

    /// Whether `sq` is in the set.
    #[inline]
    pub const fn contains(self, sq: Square) -> bool {
        self.0 >> sq.0 & 1 != 0
    }

    /// Number of squares.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether more than one square.
    #[inline]
    pub const fn more_than_one(self) -> bool {
        self.0 & self.0.wrapping_sub(1) != 0
    }

    /// The lowest square (the set must be non-empty).
    #[inline]
    pub const fn lsb(self) -> Square {
        Square(self.0.trailing_zeros() as u8)
    }

    /// Removes and returns the lowest square.
    #[inline]
    pub fn pop(&mut self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            let s = self.0.trailing_zeros() as u8;
            self.0 &= self.0 - 1;
            Some(Square(s))
        }
    }
}

impl Iterator for Bitboard {
    type Item = Square;
    #[inline]
    fn next(&mut self) -> Option<Square> {
        self.pop()
    }
}

macro_rules! bb_op {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:tt) => {
        impl $tr for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $f(self, o: Bitboard) -> Bitboard {
                Bitboard(self.0 $op o.0)
            }
        }
        impl $atr for Bitboard {
            #[inline]
            fn $af(&mut self, o: Bitboard) {
                self.0 = self.0 $op o.0;
            }
        }
    };
}
bb_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bb_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bb_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard(!self.0)
    }
}

/// Capacity of [`MoveList`]; the maximum number of legal moves in shogi is 593.
pub const MAX_MOVES: usize = 600;

/// A fixed-capacity list of moves on the stack (not zero-initialised: creating one is
/// free, which matters at perft leaves).
pub struct MoveList {
    pub(crate) moves: [MaybeUninit<Move>; MAX_MOVES],
    pub(crate) len: usize,
}

impl Clone for MoveList {
    fn clone(&self) -> Self {
        let mut l = MoveList::new();
        for &m in self.iter() {
            l.push(m);
        }
        l
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl Default for MoveList {
    fn default() -> Self {
        Self::new()
    }
}

impl MoveList {
    /// An empty list.
    #[inline]
    pub const fn new() -> MoveList {
        MoveList {
            moves: [MaybeUninit::uninit(); MAX_MOVES],
            len: 0,
        }
    }

    /// Appends a move.
    #[inline]
    pub fn push(&mut self, mv: Move) {
        // Bounds-checked: a full list panics instead of writing out of bounds.
        self.moves[self.len] = MaybeUninit::new(mv);
        self.len += 1;
    }

    /// Number of moves.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The moves.
    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        let init = &self.moves[..self.len];
        // SAFETY: the first `len` entries were written by `push`, and
        // `MaybeUninit<Move>` has the same layout as `Move`.
        unsafe { &*(init as *const [MaybeUninit<Move>] as *const [Move]) }
    }

    /// Iterates over the moves.
    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }

    /// Whether `mv` is in the list.
    #[inline]
    pub fn contains(&self, mv: Move) -> bool {
        self.as_slice().contains(&mv)
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    #[inline]
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for MoveList {
    type Item = Move;
    type IntoIter = std::vec::IntoIter<Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().to_vec().into_iter()
    }
}
