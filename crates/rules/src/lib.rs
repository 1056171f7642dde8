//! Rules core of shogi-zero: standard shogi (本将棋, 9x9) and minishogi (五五将棋, 5x5).
//!
//! - [`Position`]: SFEN in and out with full validation, legal move generation
//!   (二歩 nifu, 打ち歩詰め uchifuzume, 行き所のない駒 dead pieces), incremental zobrist key.
//! - [`Move`]: a 16-bit move that prints as USI (`7g7f`, `8h2b+`, `P*5e`).
//! - [`ShogiGame`]: a [`shogi_game::Game`] with 千日手 sennichite, perpetual check,
//!   入玉宣言 impasse declaration and a ply cap.
//! - [`perft`]: tree counting; [`kifu`]: CSA and KIF game records (棋譜); [`mate`]: the df-pn
//!   mate solver (詰将棋) the searches and the USI engine probe with.

#![allow(clippy::needless_range_loop)]

mod game;
mod position;
mod tables;
mod types;

pub mod kifu;
pub mod mate;
pub mod perft;

pub use game::{GameRules, ImpasseRule, ShogiGame};
pub use position::{
    CheckInfo, ExchangeValues, HANDICAPS, IMPASSE_VALUE, IllegalMove, MOBILITY_VALUE,
    MoveParseError, Position, SfenError,
};
pub use tables::piece_attacks;
pub use types::{
    Bitboard, Color, Hand, MAX_MOVES, Move, MoveList, Piece, PieceKind, Square, Variant,
};
