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

mod bitboard;
mod board;
mod moves;
mod piece;

pub use bitboard::Bitboard;
pub use board::{Square, Variant};
pub use moves::{MAX_MOVES, Move, MoveList};
pub use piece::{Hand, Piece, PieceKind};
