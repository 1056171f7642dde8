//! Tai shogi (泰将棋), the 25x25 historical variant: 177 pieces a side of 93 kinds, no
//! drops, promotion by capture, lion-type multi-step moves, hook movers, an emperor that
//! goes anywhere, and victory by capturing every royal piece.
//!
//! The specification is the seed document (`shared/seeds/001_0343258b74e037de.txt`, the
//! Wikipedia article in Russian, with Betza notation for every piece); the setup is
//! `shared/reference/tai/README.md`, where two independent definitions agree cell for
//! cell.
//!
//! # What is here
//!
//! - [`pieces`]: the catalogue of all 101 kinds (93 in the setup, 8 that appear only by
//!   promotion) in `data/pieces.toml`: abbreviation, names, the seed's Betza string
//!   verbatim, promotion, royalty, and notes on every doubtful reading. It is checked on
//!   load (unique abbreviations, promotions that resolve, 177 pieces of 93 kinds).
//! - [`position`]: squares (`13m`: file 1..=25 from Black's right, rank `a`..=`y` from
//!   White's side), pieces with a per-piece promoted flag, the setup, and the text form
//!   (SFEN with multi-letter codes in brackets: `[DE]` Black, `[de]` White, `+` for a
//!   piece that reached its kind by promotion; the hand field is always `-`).
//!
//! # Not yet here
//!
//! Move generation (steps, slides, leaps, lion and lion-dog multi-step moves with igui,
//! hook moves, the emperor), promotion and contagious promotion, the game end, and the
//! [`shogi_game::Game`] implementation that lets search, self-play and the arena play it.
//! The readings they will follow are recorded in `data/pieces.toml`'s `[rules]` table:
//! promotion compulsory at the end of a piece's first capturing move, contagion from the
//! deva and the dark spirit, no check rule, the game lost when a side has no emperor and
//! no prince left; the contested ones (the emperor's captures, the lion dog, the
//! promotion trigger, repetition) are to be switchable options.

pub mod pieces;
pub mod position;

pub use pieces::{Catalogue, KindInfo, PIECES_PER_SIDE, PieceKind, SETUP_KINDS};
pub use position::{Piece, Position, SIZE, SQUARES, SfenError, Square};
