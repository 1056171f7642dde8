//! Why a move is illegal, and USI move text.

use thiserror::Error;

use super::*;

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

impl Position {
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
}
