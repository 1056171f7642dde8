//! The variant played and the squares of its board.

use super::*;

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
