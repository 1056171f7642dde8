//! SFEN: parsing with full validation, writing, and the named start positions.

use thiserror::Error;

use super::*;

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
        "unknown handicap `{0}` (lance, right-lance, bishop, rook, rook-lance, 2-piece, 3-piece, 4-piece, 5-piece, left-5-piece, 6-piece, left-7-piece, right-7-piece, 8-piece, 10-piece)"
    )]
    UnknownHandicap(String),
}

pub(super) const START_SHOGI: &str =
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
pub(super) const START_MINI: &str = "rbsgk/4p/5/P4/KGSBR b - 1";

/// Handicap (駒落ち) names accepted by [`Position::handicap`], with their boards.
pub const HANDICAPS: [(&str, &str); 15] = [
    ("lance", "lnsgkgsn1/1r5b1"),
    ("right-lance", "1nsgkgsnl/1r5b1"),
    ("bishop", "lnsgkgsnl/1r7"),
    ("rook", "lnsgkgsnl/7b1"),
    ("rook-lance", "lnsgkgsn1/7b1"),
    ("2-piece", "lnsgkgsnl/9"),
    ("3-piece", "lnsgkgsn1/9"),
    ("4-piece", "1nsgkgsn1/9"),
    ("5-piece", "2sgkgsn1/9"),
    ("left-5-piece", "1nsgkgs2/9"),
    ("6-piece", "2sgkgs2/9"),
    ("left-7-piece", "2sgkg3/9"),
    ("right-7-piece", "3gkgs2/9"),
    ("8-piece", "3gkg3/9"),
    ("10-piece", "4k4/9"),
];

impl Position {
    /// The standard-shogi position with `piece_at` on each square, `hands` (indexed by
    /// colour, then unpromoted kind) and `side` to move, validated as
    /// [`Position::from_sfen`] validates: how record readers (CSA and KIF boards,
    /// Huffman-coded positions) build the positions they decode.
    pub fn from_placement(
        piece_at: impl Fn(Square) -> Option<Piece>,
        hands: &[Hand; 2],
        side: Color,
    ) -> Result<Position, SfenError> {
        Position::from_sfen(Variant::Shogi, &write_sfen(9, piece_at, side, hands, 1))
    }

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
        write_sfen(
            self.geo.size,
            |sq| self.piece_at(sq),
            self.side,
            &self.hands,
            self.move_number,
        )
    }
}

/// The SFEN of a `size` x `size` board holding `piece_at` on each square, `side` to
/// move, `hands` (written in the order R B G S N L P, Black first) and `move_number`.
pub(crate) fn write_sfen(
    size: u8,
    piece_at: impl Fn(Square) -> Option<Piece>,
    side: Color,
    hands: &[Hand; 2],
    move_number: u32,
) -> String {
    let mut s = String::with_capacity(96);
    for rank in 0..size {
        if rank > 0 {
            s.push('/');
        }
        shogi_game::push_sfen_rank(
            &mut s,
            (0..size)
                .rev()
                .map(|file| piece_at(Square::new(file, rank)).map(|p| p.sfen())),
        );
    }
    s.push_str(if side == Color::Black { " b " } else { " w " });
    let mut any = false;
    for c in Color::ALL {
        for k in [5usize, 4, 6, 3, 2, 1, 0] {
            let count = hands[c as usize][k];
            if count == 0 {
                continue;
            }
            any = true;
            if count > 1 {
                s.push_str(&count.to_string());
            }
            let letter = PieceKind::from_index(k).base_letter();
            s.push(if c == Color::Black {
                letter
            } else {
                letter.to_ascii_lowercase()
            });
        }
    }
    if !any {
        s.push('-');
    }
    s.push(' ');
    s.push_str(&move_number.to_string());
    s
}
