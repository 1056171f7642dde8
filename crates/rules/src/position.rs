//! [`Position`]: board, hands, side to move; SFEN; legal move generation; making moves.

use std::fmt;
use std::mem::MaybeUninit;

use thiserror::Error;

use crate::tables::{
    BETWEEN, FILES, LINE, STEPS, attacks, bishop_attacks, lance_attacks, rook_attacks,
};
use crate::types::{Bitboard, Color, Hand, Move, MoveList, Piece, PieceKind, Square, Variant};

/// Board geometry of a variant, as masks over the 9x9 index space.
#[derive(Debug)]
pub(crate) struct Geometry {
    pub(crate) variant: Variant,
    pub(crate) size: u8,
    /// Squares on the board.
    pub(crate) mask: u128,
    /// Promotion zone (敵陣) per colour.
    pub(crate) zone: [u128; 2],
    /// Last rank per colour (pawn and lance are dead there).
    pub(crate) last1: [u128; 2],
    /// Last two ranks per colour (knight is dead there).
    pub(crate) last2: [u128; 2],
    /// Maximum count of each unpromoted kind (index by `PieceKind`, 0..8) in a position.
    pub(crate) max_count: [u8; 8],
}

const fn ranks_mask(size: u8, lo: u8, hi: u8) -> u128 {
    let mut m = 0u128;
    let mut f = 0;
    while f < size {
        let mut r = lo;
        while r < hi {
            m |= 1u128 << (f as u32 * 9 + r as u32);
            r += 1;
        }
        f += 1;
    }
    m
}

const fn geometry(variant: Variant) -> Geometry {
    let n = match variant {
        Variant::Shogi => 9,
        Variant::Minishogi => 5,
    };
    let z = if n == 9 { 3 } else { 1 };
    Geometry {
        variant,
        size: n,
        mask: ranks_mask(n, 0, n),
        zone: [ranks_mask(n, 0, z), ranks_mask(n, n - z, n)],
        last1: [ranks_mask(n, 0, 1), ranks_mask(n, n - 1, n)],
        last2: [ranks_mask(n, 0, 2), ranks_mask(n, n - 2, n)],
        max_count: if n == 9 {
            [18, 4, 4, 4, 2, 2, 4, 2]
        } else {
            [2, 0, 0, 2, 2, 2, 2, 2]
        },
    }
}

static SHOGI_GEO: Geometry = geometry(Variant::Shogi);
static MINI_GEO: Geometry = geometry(Variant::Minishogi);

const fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

struct Zobrist {
    psq: [[u64; 81]; 29],
    /// hand[color][kind][count]: XOR-ed in for the current count (count 0 maps to 0).
    hand: [[[u64; 19]; 7]; 2],
    side: u64,
}

const fn build_zobrist() -> Zobrist {
    let mut s = 0x5348_4F47_495F_5A45u64;
    let mut psq = [[0u64; 81]; 29];
    let mut p = 1;
    while p < 29 {
        let mut sq = 0;
        while sq < 81 {
            psq[p][sq] = splitmix(&mut s);
            sq += 1;
        }
        p += 1;
    }
    let mut hand = [[[0u64; 19]; 7]; 2];
    let mut c = 0;
    while c < 2 {
        let mut k = 0;
        while k < 7 {
            let mut n = 1;
            while n < 19 {
                hand[c][k][n] = splitmix(&mut s);
                n += 1;
            }
            k += 1;
        }
        c += 1;
    }
    Zobrist {
        psq,
        hand,
        side: splitmix(&mut s),
    }
}

static ZOBRIST: Zobrist = build_zobrist();

/// Why an SFEN string was rejected; every variant names the field and the offending text.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SfenError {
    /// Not 3 or 4 whitespace-separated fields.
    #[error("sfen: expected 4 fields (board side hands move-number), got {0}")]
    FieldCount(usize),
    /// The board field is malformed.
    #[error("sfen board `{text}`: {reason}")]
    Board {
        /// The board field.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// The side-to-move field is not `b` or `w`.
    #[error("sfen side to move: expected `b` or `w`, got `{0}`")]
    Side(String),
    /// The hands field is malformed.
    #[error("sfen hands `{text}`: {reason}")]
    Hands {
        /// The hands field.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// The move number is not a positive integer.
    #[error("sfen move number: `{0}` is not a positive integer")]
    MoveNumber(String),
    /// Well-formed but not a legal position (counts, kings, dead pieces, nifu, check).
    #[error("sfen position: {0}")]
    Invalid(String),
    /// Unknown handicap name.
    #[error(
        "unknown handicap `{0}` (lance, bishop, rook, rook-lance, 2-piece, 4-piece, 6-piece, 8-piece, 10-piece)"
    )]
    UnknownHandicap(String),
}

/// Why a move is illegal in a position.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum IllegalMove {
    /// The square is off the variant's board.
    #[error("square {0} is off the board")]
    OffBoard(Square),
    /// Nothing on the origin square.
    #[error("no piece on {0}")]
    NoPiece(Square),
    /// The piece on the origin square belongs to the opponent.
    #[error("the piece on {0} is not yours")]
    NotYourPiece(Square),
    /// The destination holds one of your own pieces.
    #[error("{0} is occupied by your own piece")]
    CaptureOwn(Square),
    /// The piece does not move that way (or is blocked).
    #[error("the piece on {from} cannot reach {to}")]
    CannotReach {
        /// Origin.
        from: Square,
        /// Destination.
        to: Square,
    },
    /// Promotion asked for a piece that cannot promote or outside the zone.
    #[error("cannot promote here")]
    CannotPromote,
    /// 行き所のない駒: a pawn/lance on the last rank or a knight on the last two without
    /// promotion (by move or drop).
    #[error("dead piece: it would have no further move on {0}")]
    DeadPiece(Square),
    /// The kind is not in hand.
    #[error("no {0:?} in hand")]
    NotInHand(PieceKind),
    /// A drop onto an occupied square.
    #[error("cannot drop on occupied square {0}")]
    DropOnOccupied(Square),
    /// 二歩 nifu: a second unpromoted pawn on the file.
    #[error("nifu (二歩): an unpromoted pawn of yours is already on that file of {0}")]
    Nifu(Square),
    /// 打ち歩詰め uchifuzume: a pawn drop that mates.
    #[error("uchifuzume (打ち歩詰め): a pawn drop may not give checkmate")]
    Uchifuzume,
    /// The move leaves (or puts) the own king in check.
    #[error("the move leaves your king in check")]
    LeavesKingInCheck,
    /// The move is malformed for this variant (for example a drop of a king).
    #[error("malformed move")]
    Malformed,
}

/// Why a USI move string was rejected.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum MoveParseError {
    /// Not USI move syntax for this variant.
    #[error("`{0}` is not a USI move (expected like 7g7f, 8h2b+ or P*5e)")]
    Syntax(String),
    /// Well-formed but illegal here.
    #[error("illegal move `{text}`: {reason}")]
    Illegal {
        /// The move text.
        text: String,
        /// The rule it breaks.
        reason: IllegalMove,
    },
}

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

const START_SHOGI: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
const START_MINI: &str = "rbsgk/4p/5/P4/KGSBR b - 1";

/// Handicap (駒落ち) names accepted by [`Position::handicap`], with their boards.
pub const HANDICAPS: [(&str, &str); 9] = [
    ("lance", "lnsgkgsn1/1r5b1"),
    ("bishop", "lnsgkgsnl/1r7"),
    ("rook", "lnsgkgsnl/7b1"),
    ("rook-lance", "lnsgkgsn1/7b1"),
    ("2-piece", "lnsgkgsnl/9"),
    ("4-piece", "1nsgkgsn1/9"),
    ("6-piece", "2sgkgs2/9"),
    ("8-piece", "3gkg3/9"),
    ("10-piece", "4k4/9"),
];

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
        let them = us.flip() as usize;
        let ksq = self.kings[us as usize] as usize;
        let k = &self.by_kind;
        let mut snipers = ((lance_attacks(us, ksq, 0) & k[1])
            | (bishop_attacks(ksq, 0) & (k[4] | k[12]))
            | (rook_attacks(ksq, 0) & (k[5] | k[13])))
            & self.by_color[them];
        let occ = self.occ();
        let mut pinned = 0;
        while snipers != 0 {
            let s = snipers.trailing_zeros() as usize;
            snipers &= snipers - 1;
            let b = BETWEEN[ksq][s] & occ;
            if b != 0 && b & (b - 1) == 0 {
                pinned |= b & self.by_color[us as usize];
            }
        }
        pinned
    }

    // ----- SFEN -----

    /// Parses an SFEN (`board side hands [move-number]`) for a variant, with full
    /// validation: piece counts, one king per side, no dead pieces (行き所のない駒), no
    /// nifu (二歩), the side not to move not in check.
    pub fn from_sfen(variant: Variant, sfen: &str) -> Result<Position, SfenError> {
        let fields: Vec<&str> = sfen.split_whitespace().collect();
        if fields.len() != 3 && fields.len() != 4 {
            return Err(SfenError::FieldCount(fields.len()));
        }
        let mut pos = Position::empty(variant);
        let n = pos.geo.size as usize;
        let board_err = |reason: String| SfenError::Board {
            text: fields[0].to_string(),
            reason,
        };
        // Board.
        let rows: Vec<&str> = fields[0].split('/').collect();
        if rows.len() != n {
            return Err(board_err(format!("expected {n} ranks, got {}", rows.len())));
        }
        for (rank, row) in rows.iter().enumerate() {
            let mut col = 0usize;
            let mut promoted = false;
            for ch in row.chars() {
                if let Some(d) = ch.to_digit(10) {
                    if promoted || d == 0 {
                        return Err(board_err(format!("bad `{ch}` in rank {}", rank + 1)));
                    }
                    col += d as usize;
                    if col > n {
                        return Err(board_err(format!("rank {} is longer than {n}", rank + 1)));
                    }
                    continue;
                }
                if ch == '+' {
                    if promoted {
                        return Err(board_err(format!("double `+` in rank {}", rank + 1)));
                    }
                    promoted = true;
                    continue;
                }
                let kind = PieceKind::from_letter(ch)
                    .ok_or_else(|| board_err(format!("unknown piece `{ch}`")))?;
                if col >= n {
                    return Err(board_err(format!("rank {} is longer than {n}", rank + 1)));
                }
                if promoted && !kind.can_promote() {
                    return Err(board_err(format!("`+{ch}` cannot be promoted")));
                }
                let kind = if promoted { kind.promote() } else { kind };
                promoted = false;
                let color = if ch.is_ascii_uppercase() {
                    Color::Black
                } else {
                    Color::White
                };
                let sq = Square::new((n - 1 - col) as u8, rank as u8);
                pos.put(sq.index(), Piece::new(color, kind));
                col += 1;
            }
            if promoted {
                return Err(board_err(format!("dangling `+` in rank {}", rank + 1)));
            }
            if col != n {
                return Err(board_err(format!(
                    "rank {} has {col} squares, expected {n}",
                    rank + 1
                )));
            }
        }
        // Side.
        pos.side = match fields[1] {
            "b" => Color::Black,
            "w" => Color::White,
            s => return Err(SfenError::Side(s.to_string())),
        };
        // Hands.
        let htext = fields[2];
        let hand_err = |reason: String| SfenError::Hands {
            text: htext.to_string(),
            reason,
        };
        if htext != "-" {
            let mut count: u32 = 0;
            let mut have_count = false;
            for ch in htext.chars() {
                if let Some(d) = ch.to_digit(10) {
                    count = count * 10 + d;
                    have_count = true;
                    if count > 99 {
                        return Err(hand_err("count too large".into()));
                    }
                    continue;
                }
                let kind = PieceKind::from_letter(ch)
                    .filter(|k| *k != PieceKind::King)
                    .ok_or_else(|| hand_err(format!("`{ch}` cannot be in hand")))?;
                let c = if have_count { count } else { 1 };
                if c == 0 {
                    return Err(hand_err(format!("zero count for `{ch}`")));
                }
                let color = if ch.is_ascii_uppercase() {
                    Color::Black
                } else {
                    Color::White
                };
                let h = &mut pos.hands[color as usize][kind as usize];
                *h = h.saturating_add(c as u8);
                count = 0;
                have_count = false;
            }
            if have_count {
                return Err(hand_err("count without a piece letter".into()));
            }
        }
        // Move number.
        if let Some(m) = fields.get(3) {
            pos.move_number = match m.parse::<u32>() {
                Ok(v) if v >= 1 => v,
                _ => return Err(SfenError::MoveNumber(m.to_string())),
            };
        }
        pos.validate()?;
        pos.key = pos.compute_key();
        let us = pos.side;
        pos.checkers = pos.attackers_raw(us.flip(), pos.kings[us as usize] as usize, pos.occ());
        Ok(pos)
    }

    fn validate(&mut self) -> Result<(), SfenError> {
        let inv = |s: String| Err(SfenError::Invalid(s));
        let mut counts = [0u32; 8];
        for sq in 0..81 {
            if let Some(p) = Piece::from_code(self.board[sq]) {
                counts[p.kind.unpromote() as usize] += 1;
            }
        }
        for c in 0..2 {
            for k in 0..7 {
                counts[k] += self.hands[c][k] as u32;
            }
        }
        for k in 0..8 {
            let max = self.geo.max_count[k] as u32;
            if counts[k] > max {
                let kind = PieceKind::from_index(k);
                return inv(format!(
                    "too many {kind:?} pieces: {} (at most {max} in {})",
                    counts[k],
                    self.geo.variant.name()
                ));
            }
        }
        for c in Color::ALL {
            let kings = self.by_color[c as usize] & self.by_kind[PieceKind::King as usize];
            if kings.count_ones() != 1 {
                return inv(format!(
                    "{c:?} must have exactly one king, has {}",
                    kings.count_ones()
                ));
            }
            self.kings[c as usize] = kings.trailing_zeros() as u8;
            let own = self.by_color[c as usize];
            let dead = (own & self.by_kind[0] & self.geo.last1[c as usize])
                | (own & self.by_kind[1] & self.geo.last1[c as usize])
                | (own & self.by_kind[2] & self.geo.last2[c as usize]);
            if dead != 0 {
                return inv(format!(
                    "dead piece (行き所のない駒) on {}",
                    Bitboard(dead).lsb()
                ));
            }
            let pawns = own & self.by_kind[0];
            for (f, file) in FILES.iter().enumerate() {
                if (pawns & file).count_ones() > 1 {
                    return inv(format!("nifu (二歩): two {c:?} pawns on file {}", f + 1));
                }
            }
        }
        let them = self.side.flip();
        let ksq = self.kings[them as usize] as usize;
        if self.attackers_raw(self.side, ksq, self.occ()) != 0 {
            return inv(format!("the side not to move ({them:?}) is in check"));
        }
        Ok(())
    }

    /// The SFEN of the position (hands in the order R B G S N L P, Black first).
    pub fn to_sfen(&self) -> String {
        let n = self.geo.size;
        let mut s = String::with_capacity(96);
        for rank in 0..n {
            if rank > 0 {
                s.push('/');
            }
            let mut empty = 0;
            for file in (0..n).rev() {
                match self.piece_at(Square::new(file, rank)) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            s.push_str(&empty.to_string());
                            empty = 0;
                        }
                        s.push_str(&p.sfen());
                    }
                }
            }
            if empty > 0 {
                s.push_str(&empty.to_string());
            }
        }
        s.push_str(if self.side == Color::Black {
            " b "
        } else {
            " w "
        });
        let order = [5usize, 4, 6, 3, 2, 1, 0];
        let mut any = false;
        for c in Color::ALL {
            for &k in &order {
                let cnt = self.hands[c as usize][k];
                if cnt == 0 {
                    continue;
                }
                any = true;
                if cnt > 1 {
                    s.push_str(&cnt.to_string());
                }
                let l = PieceKind::from_index(k).base_letter();
                s.push(if c == Color::Black {
                    l
                } else {
                    l.to_ascii_lowercase()
                });
            }
        }
        if !any {
            s.push('-');
        }
        s.push(' ');
        s.push_str(&self.move_number.to_string());
        s
    }

    // ----- move generation -----

    /// All legal moves (promotion and non-promotion both where allowed).
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate(&mut list);
        list
    }

    /// Appends all legal moves to `list`.
    pub fn generate(&self, list: &mut MoveList) {
        let mut n = list.len;
        self.generate_into(&mut list.moves, &mut n);
        list.len = n;
    }

    #[inline(always)]
    fn generate_into(
        &self,
        buf: &mut [MaybeUninit<Move>; crate::types::MAX_MOVES],
        len: &mut usize,
    ) {
        let mut n = *len;
        macro_rules! push {
            ($m:expr) => {{
                buf[n] = MaybeUninit::new($m);
                n += 1;
            }};
        }
        let us = self.side;
        let them = us.flip();
        let u = us as usize;
        let ksq = self.kings[u] as usize;
        let occ = self.occ();
        let own = self.by_color[u];
        let mask = self.geo.mask;

        // King moves.
        let mut kt = STEPS[0][7][ksq] & !own & mask;
        let occ_nok = occ ^ bit(ksq);
        while kt != 0 {
            let to = kt.trailing_zeros() as usize;
            kt &= kt - 1;
            if self.attackers_raw(them, to, occ_nok) == 0 {
                push!(Move::normal(Square(ksq as u8), Square(to as u8), false));
            }
        }
        if self.checkers & self.checkers.wrapping_sub(1) != 0 {
            *len = n;
            return;
        }
        let (target, drop_target) = if self.checkers == 0 {
            (!own & mask, !occ & mask)
        } else {
            let c = self.checkers.trailing_zeros() as usize;
            let b = BETWEEN[ksq][c];
            (b | self.checkers, b)
        };
        let pinned = self.pinned(us);
        let zone = self.geo.zone[u];
        let last1 = self.geo.last1[u];
        let last2 = self.geo.last2[u];

        // Piece by kind group, so that the attack dispatch is predictable; the gold-moving
        // kinds (gold, tokin, promoted lance/knight/silver) share one group.
        let k = &self.by_kind;
        let groups = [
            (k[0], PieceKind::Pawn),
            (k[1], PieceKind::Lance),
            (k[2], PieceKind::Knight),
            (k[3], PieceKind::Silver),
            (k[4], PieceKind::Bishop),
            (k[5], PieceKind::Rook),
            (k[6] | k[8] | k[9] | k[10] | k[11], PieceKind::Gold),
            (k[12], PieceKind::Horse),
            (k[13], PieceKind::Dragon),
        ];
        for (group, kind) in groups {
            let mut pieces = own & group;
            while pieces != 0 {
                let from = pieces.trailing_zeros() as usize;
                pieces &= pieces - 1;
                let mut att = attacks(us, kind, from, occ) & target;
                if pinned & bit(from) != 0 {
                    att &= LINE[ksq][from];
                }
                if att == 0 {
                    continue;
                }
                let fsq = Square(from as u8);
                if !kind.can_promote() {
                    while att != 0 {
                        let to = att.trailing_zeros() as u8;
                        att &= att - 1;
                        push!(Move::normal(fsq, Square(to), false));
                    }
                    continue;
                }
                let from_zone = zone & bit(from) != 0;
                let forced = match kind {
                    PieceKind::Pawn | PieceKind::Lance => last1,
                    PieceKind::Knight => last2,
                    _ => 0,
                };
                while att != 0 {
                    let to = att.trailing_zeros() as usize;
                    att &= att - 1;
                    let tsq = Square(to as u8);
                    if from_zone || zone & bit(to) != 0 {
                        push!(Move::normal(fsq, tsq, true));
                    }
                    if forced & bit(to) == 0 {
                        push!(Move::normal(fsq, tsq, false));
                    }
                }
            }
        }
        // Drops.
        if drop_target == 0 {
            *len = n;
            return;
        }
        let hand = &self.hands[u];
        if hand[0] > 0 {
            let mut pawn_files = 0u128;
            let mut p = own & self.by_kind[0];
            while p != 0 {
                let s = p.trailing_zeros() as usize;
                p &= p - 1;
                pawn_files |= FILES[s / 9];
            }
            let mut t = drop_target & !last1 & !pawn_files;
            let their_k = self.kings[them as usize] as usize;
            let mate_sq = STEPS[them as usize][0][their_k] & t;
            if mate_sq != 0 && self.is_uchifuzume(mate_sq.trailing_zeros() as usize) {
                t ^= mate_sq;
            }
            while t != 0 {
                let to = t.trailing_zeros() as u8;
                t &= t - 1;
                push!(Move::drop(PieceKind::Pawn, Square(to)));
            }
        }
        for k in 1..7 {
            if hand[k] == 0 {
                continue;
            }
            let kind = PieceKind::from_index(k);
            let mut t = match kind {
                PieceKind::Lance => drop_target & !last1,
                PieceKind::Knight => drop_target & !last2,
                _ => drop_target,
            };
            while t != 0 {
                let to = t.trailing_zeros() as u8;
                t &= t - 1;
                push!(Move::drop(kind, Square(to)));
            }
        }
        *len = n;
    }

    /// Whether dropping a pawn of the side to move on `to` (directly in front of the
    /// enemy king) would be checkmate: 打ち歩詰め.
    fn is_uchifuzume(&self, to: usize) -> bool {
        let us = self.side;
        let them = us.flip();
        let ksq = self.kings[them as usize] as usize;
        let occ2 = self.occ() | bit(to);
        // Capture by a non-king piece that is not pinned.
        let mut caps = self.attackers_raw(them, to, occ2) & !bit(ksq);
        while caps != 0 {
            let c = caps.trailing_zeros() as usize;
            caps &= caps - 1;
            let occ3 = occ2 ^ bit(c);
            if self.slider_attackers(us, ksq, occ3) == 0 {
                return false;
            }
        }
        // King escapes (including capturing the pawn when it is undefended).
        let mut esc = STEPS[0][7][ksq] & !self.by_color[them as usize] & self.geo.mask;
        let occ_nok = occ2 ^ bit(ksq);
        while esc != 0 {
            let e = esc.trailing_zeros() as usize;
            esc &= esc - 1;
            if self.attackers_raw(us, e, occ_nok) == 0 {
                return false;
            }
        }
        true
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

    /// The rule an illegal move breaks (meaningless for a legal move).
    pub fn why_illegal(&self, mv: Move) -> IllegalMove {
        let us = self.side;
        let u = us as usize;
        let to = mv.to();
        if !self.on_board(to) {
            return IllegalMove::OffBoard(to);
        }
        let occ = self.occ();
        if let Some(k) = mv.drop_kind() {
            if self.hands[u][k as usize] == 0 {
                return IllegalMove::NotInHand(k);
            }
            if occ & bit(to.index()) != 0 {
                return IllegalMove::DropOnOccupied(to);
            }
            let dead = match k {
                PieceKind::Pawn | PieceKind::Lance => self.geo.last1[u],
                PieceKind::Knight => self.geo.last2[u],
                _ => 0,
            };
            if dead & bit(to.index()) != 0 {
                return IllegalMove::DeadPiece(to);
            }
            if k == PieceKind::Pawn
                && self.by_color[u] & self.by_kind[0] & FILES[to.file() as usize] != 0
            {
                return IllegalMove::Nifu(to);
            }
            if k == PieceKind::Pawn {
                let their_k = self.kings[us.flip() as usize] as usize;
                if STEPS[us.flip() as usize][0][their_k] & bit(to.index()) != 0
                    && !self.in_check()
                    && self.is_uchifuzume(to.index())
                {
                    return IllegalMove::Uchifuzume;
                }
            }
            return IllegalMove::LeavesKingInCheck;
        }
        let Some(from) = mv.from() else {
            return IllegalMove::Malformed;
        };
        if !self.on_board(from) {
            return IllegalMove::OffBoard(from);
        }
        let Some(p) = self.piece_at(from) else {
            return IllegalMove::NoPiece(from);
        };
        if p.color != us {
            return IllegalMove::NotYourPiece(from);
        }
        if self.by_color[u] & bit(to.index()) != 0 {
            return IllegalMove::CaptureOwn(to);
        }
        if attacks(us, p.kind, from.index(), occ) & bit(to.index()) == 0 {
            return IllegalMove::CannotReach { from, to };
        }
        if mv.is_promotion()
            && (!p.kind.can_promote() || (!self.in_zone(us, from) && !self.in_zone(us, to)))
        {
            return IllegalMove::CannotPromote;
        }
        if !mv.is_promotion() {
            let dead = match p.kind {
                PieceKind::Pawn | PieceKind::Lance => self.geo.last1[u],
                PieceKind::Knight => self.geo.last2[u],
                _ => 0,
            };
            if dead & bit(to.index()) != 0 {
                return IllegalMove::DeadPiece(to);
            }
        }
        IllegalMove::LeavesKingInCheck
    }

    /// Whether a legal move gives check.
    pub fn gives_check(&self, mv: Move) -> bool {
        self.after(mv).in_check()
    }

    /// Whether the side to move is checkmated (詰み).
    pub fn is_checkmate(&self) -> bool {
        self.in_check() && self.legal_moves().is_empty()
    }

    /// A move that checkmates at once (一手詰), if any.
    pub fn mate_in_one(&self) -> Option<Move> {
        self.legal_moves().into_iter().find(|&mv| {
            let p = self.after(mv);
            p.in_check() && p.legal_moves().is_empty()
        })
    }

    /// Parses USI move text (`7g7f`, `8h2b+`, `P*5e`) and checks it is legal here.
    pub fn parse_usi_move(&self, text: &str) -> Result<Move, MoveParseError> {
        let mv = self
            .parse_usi_syntax(text)
            .ok_or_else(|| MoveParseError::Syntax(text.into()))?;
        if self.is_legal(mv) {
            Ok(mv)
        } else {
            Err(MoveParseError::Illegal {
                text: text.into(),
                reason: self.why_illegal(mv),
            })
        }
    }

    /// Parses USI move syntax without checking legality.
    pub fn parse_usi_syntax(&self, text: &str) -> Option<Move> {
        let v = self.geo.variant;
        if !text.is_ascii() {
            return None;
        }
        let b = text.as_bytes();
        if b.len() == 4 && b[1] == b'*' {
            let kind = PieceKind::from_letter(b[0] as char)
                .filter(|k| *k != PieceKind::King && b[0].is_ascii_uppercase())?;
            let to = Square::from_usi(&text[2..4], v)?;
            return Some(Move::drop(kind, to));
        }
        let promote = match b.len() {
            4 => false,
            5 if b[4] == b'+' => true,
            _ => return None,
        };
        let from = Square::from_usi(&text[0..2], v)?;
        let to = Square::from_usi(&text[2..4], v)?;
        if from == to {
            return None;
        }
        Some(Move::normal(from, to, promote))
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
