//! Piece kinds, coloured pieces, their board codes, and hands.

use super::*;

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

/// Pieces in hand (持ち駒) of one side, indexed by [`PieceKind::index`] (0..7).
pub type Hand = [u8; 7];
