//! Moves (16 bits each) and the fixed-capacity move list.

use super::*;

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
