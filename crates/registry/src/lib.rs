//! Every game the project plays, registered in one place.
//!
//! A game is its rules crate (`shogi-rules` for standard shogi and minishogi,
//! `shogi-tai` for tai shogi: the position and the [`Game`](shogi_game::Game) impl),
//! its name in [`GameKind`](shogi_game::GameKind), and what this crate holds:
//!
//! * [`with_game_type!`]: the one fork from a [`GameKind`](shogi_game::GameKind) value
//!   to the game's type;
//! * [`GameSpec`]: what is played, with its rule options;
//! * [`layout`] / [`layout_with`]: which network layout each game has;
//! * the adapter traits, one per seam: [`FromSpec`] (a start from a spec), [`NetGame`]
//!   (input planes and policy indices), [`RecordGame`] (the replay record), [`ArenaGame`]
//!   (match starts and game files);
//! * one module per game holding every adapter impl of its type: [`shogi`] (standard
//!   shogi and minishogi, one type) and [`tai`].
//!
//! [`export`] prints shogi records as USI, CSA and KIF. The arena's USI client speaks
//! shogi's moves, so it plays shogi and minishogi only (the arena decides that). What the
//! players and the engine need of a game is theirs: each game's classical baseline is
//! named in `shogi-baseline` (`GameBaseline`), its USI adapter in `shogi-usi` (`UsiGame`).

pub mod arena_game;
#[doc(hidden)]
pub mod dispatch;
pub mod export;
pub mod layout;
pub mod net_game;
pub mod record_game;
pub mod shogi;
pub mod spec;
pub mod tai;

pub use arena_game::ArenaGame;
pub use layout::{layout, layout_with, relayout};
pub use net_game::NetGame;
pub use record_game::RecordGame;
pub use spec::{FromSpec, GameSpec, TOURNAMENT_MAX_PLIES, TRAINING_MAX_PLIES};
