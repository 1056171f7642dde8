//! Export to dlshogi's `hcpe3` training format, so self-play games from shogi-zero can
//! feed existing shogi trainers (dlshogi, and anything reading cshogi's dtypes).
//!
//! Per game: `HuffmanCodedPosAndEval3` = the start position as a 32-byte
//! `HuffmanCodedPos` (Apery's code, also cshogi's), `u16` move count, `u8` result
//! (bits 0-1: 0 draw, 1 Black wins, 2 White wins; bit 2 repetition, bit 3 impasse
//! declaration, bit 4 max plies) and `u8` opponent (0 = self-play). Then per move:
//! `MoveInfo` = `u16` move16, `i16` eval (centipawns from the root value, dlshogi's
//! logistic scale 756.0864962951762), `u16` candidate count, followed by that many
//! `MoveVisits` = `u16` move16 + `u16` visits. Little-endian throughout.
//!
//! Moves that were not full searches (random opening plies, playout-cap cheap searches)
//! get zero candidates, which dlshogi's reader takes as "no policy target here".
//! Standard shogi only: the format has no minishogi form.

use std::io::Write;

use shogi_game::{Color, EndReason};
use shogi_rules::{Move, Piece, PieceKind, Position, Square, Variant};

use crate::record::{GameRecord, variant_from_name};

/// Why a game cannot be written as hcpe3.
#[derive(Debug, thiserror::Error)]
pub enum Hcpe3Error {
    /// Only standard shogi has an hcpe3 form.
    #[error("hcpe3 holds standard shogi only, not {0}")]
    Variant(String),
    /// The start position is not valid SFEN.
    #[error("bad start position {sfen:?}: {reason}")]
    Start {
        /// The SFEN.
        sfen: String,
        /// What was wrong.
        reason: String,
    },
    /// A Huffman-coded position needs both kings.
    #[error("a HuffmanCodedPos needs both kings on the board")]
    MissingKing,
    /// A Huffman-coded position holds exactly the 40 pieces of a full set, so handicap
    /// (駒落ち) and composed positions have no hcpe3 form.
    #[error(
        "a HuffmanCodedPos holds the full set of 40 pieces; this position has {0} (handicap or composed)"
    )]
    PieceSet(u32),
    /// A recorded move code does not decode.
    #[error("move {index} (code {code}) is not a shogi move")]
    BadMove {
        /// Move index in the game.
        index: usize,
        /// The recorded code.
        code: u32,
    },
    /// More than 65535 moves.
    #[error("game of {0} moves is too long for hcpe3")]
    TooLong(usize),
    /// Writing failed.
    #[error("writing hcpe3: {0}")]
    Io(#[from] std::io::Error),
}

/// dlshogi's scale between a win probability and an evaluation in centipawns.
pub(crate) const EVAL_SCALE: f64 = 756.086_496_295_176_2;

/// Bits appended least significant first, as Apery's bit stream writes them.
struct BitWriter {
    bytes: [u8; 32],
    pos: usize,
}

impl BitWriter {
    fn put(&mut self, bit: bool) {
        // A full position is exactly 256 bits; `pos` never passes it for a legal piece set.
        if self.pos < 256 {
            if bit {
                self.bytes[self.pos / 8] |= 1 << (self.pos % 8);
            }
            self.pos += 1;
        }
    }
    fn put_bits(&mut self, value: u32, count: u32) {
        for i in 0..count {
            self.put(value >> i & 1 == 1);
        }
    }
}

/// The kind prefix of Apery's Huffman code (bits in writing order) for an unpromoted kind.
fn kind_code(kind: PieceKind) -> &'static [bool] {
    match kind {
        PieceKind::Pawn => &[false],
        PieceKind::Lance => &[true, false, false],
        PieceKind::Knight => &[true, true, false],
        PieceKind::Silver => &[true, false, true],
        PieceKind::Gold => &[true, true, true, false],
        PieceKind::Bishop => &[true, true, true, true, false],
        PieceKind::Rook => &[true, true, true, true, true],
        _ => &[],
    }
}

/// A piece on the board after the "occupied" bit: kind, colour, and (except for gold,
/// which cannot promote) the promoted bit.
fn board_code(w: &mut BitWriter, kind: PieceKind, color: Color, promoted: bool) {
    for &b in kind_code(kind) {
        w.put(b);
    }
    w.put(color == Color::White);
    if kind != PieceKind::Gold {
        w.put(promoted);
    }
}

/// Hands are written Black's first, then White's, each in Apery's order.
pub(crate) const HAND_ORDER: [PieceKind; 7] = [
    PieceKind::Pawn,
    PieceKind::Lance,
    PieceKind::Knight,
    PieceKind::Silver,
    PieceKind::Gold,
    PieceKind::Bishop,
    PieceKind::Rook,
];

/// The kind codes of pieces on the board (before colour and the promoted bit): the
/// writer's table, which the reader decodes with.
pub(crate) fn board_kind_codes() -> Vec<(Vec<bool>, PieceKind)> {
    HAND_ORDER
        .iter()
        .map(|&k| (kind_code(k).to_vec(), k))
        .collect()
}

/// The codes of pieces in hand before their colour bit (Apery's hand table, checked
/// against cshogi): pawn, lance, knight and silver are their kind code and a 0; gold its
/// kind code; bishop and rook `11111`, then 0 (bishop) or 1 (rook).
pub(crate) fn hand_codes() -> Vec<(Vec<bool>, PieceKind)> {
    HAND_ORDER
        .iter()
        .map(|&k| {
            let code = match k {
                PieceKind::Bishop | PieceKind::Rook => {
                    let mut c = vec![true; 5];
                    c.push(k == PieceKind::Rook);
                    c
                }
                PieceKind::Gold => kind_code(k).to_vec(),
                _ => {
                    let mut c = kind_code(k).to_vec();
                    c.push(false);
                    c
                }
            };
            (code, k)
        })
        .collect()
}

/// The 32-byte `HuffmanCodedPos` of a standard-shogi position.
pub fn huffman_coded_pos(pos: &Position) -> Result<[u8; 32], Hcpe3Error> {
    if pos.variant() != Variant::Shogi {
        return Err(Hcpe3Error::Variant(pos.variant().name().to_string()));
    }
    let king = |c: Color| {
        (0..81)
            .map(Square::from_index)
            .find(|&sq| pos.piece_at(sq) == Some(Piece::new(c, PieceKind::King)))
            .ok_or(Hcpe3Error::MissingKing)
    };
    let (bk, wk) = (king(Color::Black)?, king(Color::White)?);
    let on_board = (0..81)
        .filter(|&i| pos.piece_at(Square::from_index(i)).is_some())
        .count() as u32;
    let in_hand: u32 = Color::ALL
        .iter()
        .map(|&c| pos.hand(c).iter().map(|&n| u32::from(n)).sum::<u32>())
        .sum();
    if on_board + in_hand != 40 {
        return Err(Hcpe3Error::PieceSet(on_board + in_hand));
    }
    let mut w = BitWriter {
        bytes: [0; 32],
        pos: 0,
    };
    w.put(pos.side_to_move() == Color::White);
    w.put_bits(bk.index() as u32, 7);
    w.put_bits(wk.index() as u32, 7);
    for i in 0..81 {
        let sq = Square::from_index(i);
        match pos.piece_at(sq) {
            None => w.put(false),
            Some(p) if p.kind == PieceKind::King => {}
            Some(p) => {
                w.put(true);
                board_code(&mut w, p.kind.unpromote(), p.color, p.kind.is_promoted());
            }
        }
    }
    let hand_codes = hand_codes();
    for c in Color::ALL {
        for (code, kind) in &hand_codes {
            for _ in 0..pos.hand(c)[*kind as usize] {
                for &b in code {
                    w.put(b);
                }
                w.put(c == Color::White);
            }
        }
    }
    Ok(w.bytes)
}

/// cshogi's / dlshogi's 16-bit move: `to | from << 7 | promote << 14`, squares as
/// `file * 9 + rank`; a drop has `from = 81 + piece type - 1` with pawn, lance, knight,
/// silver, bishop, rook, gold = 1..=7.
pub fn move16(mv: Move) -> u16 {
    let to = mv.to().index() as u16;
    match (mv.from(), mv.drop_kind()) {
        (Some(from), _) => to | (from.index() as u16) << 7 | u16::from(mv.is_promotion()) << 14,
        // `PieceKind` numbers the hand kinds in cshogi's order: pawn 0 to rook 5, gold 6.
        (None, Some(kind)) => to | (81 + kind.index() as u16) << 7,
        (None, None) => to,
    }
}

/// A root expected score (0..1, side to move) as dlshogi's evaluation in centipawns.
pub fn eval_from_score(score: f32) -> i16 {
    let p = f64::from(score).clamp(1e-6, 1.0 - 1e-6);
    (-EVAL_SCALE * (1.0 / p - 1.0).ln())
        .round()
        .clamp(-30000.0, 30000.0) as i16
}

fn result_byte(record: &GameRecord) -> u8 {
    let winner = match record.outcome.winner {
        None => 0,
        Some(Color::Black) => 1,
        Some(Color::White) => 2,
    };
    let flags = match record.outcome.reason {
        EndReason::Repetition | EndReason::PerpetualCheck => 4,
        EndReason::ImpasseDeclaration | EndReason::Impasse24 => 8,
        EndReason::MaxPlies => 16,
        _ => 0,
    };
    winner | flags
}

/// Appends `record` to `out` in hcpe3 form.
pub fn write_game(record: &GameRecord, out: &mut impl Write) -> Result<(), Hcpe3Error> {
    let variant = variant_from_name(&record.variant)
        .filter(|&v| v == Variant::Shogi)
        .ok_or_else(|| Hcpe3Error::Variant(record.variant.clone()))?;
    let start =
        Position::from_sfen(variant, &record.start_sfen).map_err(|e| Hcpe3Error::Start {
            sfen: record.start_sfen.clone(),
            reason: e.to_string(),
        })?;
    let moves =
        u16::try_from(record.moves.len()).map_err(|_| Hcpe3Error::TooLong(record.moves.len()))?;
    let mut buf = Vec::with_capacity(36 + record.moves.len() * 40);
    buf.extend_from_slice(&huffman_coded_pos(&start)?);
    buf.extend_from_slice(&moves.to_le_bytes());
    buf.push(result_byte(record));
    buf.push(0); // opponent: self-play
    let decode = |index: usize, code: u32| {
        u16::try_from(code)
            .ok()
            .and_then(Move::from_u16)
            .map(move16)
            .ok_or(Hcpe3Error::BadMove { index, code })
    };
    for (i, m) in record.moves.iter().enumerate() {
        let candidates: Vec<(u16, u16)> = if m.full_search {
            m.searched
                .iter()
                .filter(|s| s.visits > 0)
                .map(|s| Ok((decode(i, s.mv)?, s.visits.min(u32::from(u16::MAX)) as u16)))
                .collect::<Result<_, Hcpe3Error>>()?
        } else {
            Vec::new()
        };
        buf.extend_from_slice(&decode(i, m.mv)?.to_le_bytes());
        buf.extend_from_slice(&eval_from_score(m.root_value).to_le_bytes());
        buf.extend_from_slice(&(candidates.len() as u16).to_le_bytes());
        for (mv, visits) in candidates {
            buf.extend_from_slice(&mv.to_le_bytes());
            buf.extend_from_slice(&visits.to_le_bytes());
        }
    }
    out.write_all(&buf)?;
    Ok(())
}
