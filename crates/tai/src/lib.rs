//! Tai shogi (泰将棋), the 25x25 historical variant: 177 pieces a side of 93 kinds, no
//! drops, promotion by capture, lion-type multi-step moves, hook movers, an emperor that
//! goes anywhere, and victory by capturing every royal piece.
//!
//! The specification is the Wikipedia article on tai shogi in Russian, with Betza
//! notation for every piece (docs/TAI.md); the setup (`data/setup.txt`) is the one two
//! independent machine-readable definitions agree on cell for cell.
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
//! - [`betza`]: the seed's Betza strings compiled into move tables.
//! - [`movegen`] and [`game`]: move generation, promotion, contagion, the game end and
//!   [`TaiGame`], which implements [`shogi_game::Game`] so search, self-play and the
//!   arena play tai shogi without special cases.
//! - [`material`]: mobility-based piece values, for adjudicating games stopped at a
//!   ply cap (the seed gives no values).
//!
//! # Rule choices
//!
//! The seed's readings are the defaults; the contested ones are options in [`TaiRules`].
//!
//! - **Promotion** ([`PromotionTrigger`]): compulsory at the end of a piece's first
//!   capturing move, after the whole move (an unpromoted lion still captures twice).
//!   A promoted piece never promotes again. Option: only when capturing a promoted piece.
//! - **Contagion**: whatever captures a deva or teaching king becomes a teaching king;
//!   a dark spirit or buddhist spirit, a buddhist spirit. If one move captures both
//!   kinds, the last capture decides. The emperor and prince stay as they are; a drunk
//!   elephant becomes a prince.
//! - **The emperor** ([`EmperorCaptures`]): jumps to any empty square and captures any
//!   non-royal anywhere; it captures a royal only if the opponent could not recapture on
//!   that square. Options: only undefended pieces, or no captures.
//! - **The lion dog** ([`LionDog`]): three steps along one line, capturing or jumping on
//!   each; igui on the first square; out two and back one. Option: a plain `Q3` rider.
//!   Without the great elephant (`great_elephant = false`) it does not promote.
//! - **The great elephant** has no Betza in the seed: read from its words as `RbBfB2`
//!   plus the lion dog's power along the orthogonals and backward diagonals.
//! - **Hook movers** (HM, Ca, LGn, PC): one 90° turn at most, through empty squares,
//!   capturing only at the end. The unmodified `aR`/`aB` continuations are read as 90°
//!   turns, as the words say.
//! - **Pass**: the lion-type pieces (Ln, LD, FF, HF, SE, TK, BSp, GE) may step out to an
//!   empty square and back. Not right after a pass: «два последовательных паса
//!   невозможны».
//! - **No check rule**: moves that leave a royal attacked are legal. A side with no
//!   emperor and no prince left has lost; a side with no move at all loses (the Chess
//!   Variant Pages' ruling).
//! - **Repetition** ([`Repetition`]): the seed is silent on which rule applies. Default:
//!   the same position with the same side to move for the fourth time is a draw. Option:
//!   the strict historical rule that forbids any move recreating an earlier position.
//! - **Length**: a configurable ply cap ends the game in a draw (`max_plies`).
//! - **No lion-trading rules**: the seed has none.

mod attacks;
pub mod betza;
pub mod exchange;
pub mod game;
pub mod material;
pub mod movegen;
pub mod net;
pub mod pieces;
pub mod position;
pub mod rules;

pub use game::{TaiGame, promoted_piece};
pub use movegen::TaiMove;
pub use pieces::{Catalogue, KindInfo, PIECES_PER_SIDE, PieceKind, SETUP_KINDS};
pub use position::{Piece, Position, SIZE, SQUARES, SfenError, Square};
pub use rules::{EmperorCaptures, LionDog, PromotionTrigger, Repetition, TaiRules};
