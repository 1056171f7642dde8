//! The classical baselines: network-free players whose strength depends only on their
//! settings (a depth, a node budget), never on the machine, so they make a fixed scale
//! (`alphabeta:depth=1` = 0 Elo; docs/STRENGTH.md).
//!
//! * [`alphabeta`]: alpha-beta with quiescence for shogi and minishogi.
//! * [`alphabeta_tai`]: tai shogi's.
//! * [`limits`]: what one search of either may spend.

pub mod alphabeta;
pub mod alphabeta_tai;
pub mod limits;

pub use alphabeta::{AlphaBeta, AlphaBetaResult, BASELINE_VERSION};
pub use alphabeta_tai::{TAI_BASELINE_VERSION, TaiAlphaBeta};
pub use limits::AlphaBetaLimits;

use shogi_game::Game;
use shogi_rules::ShogiGame;
use shogi_tai::TaiGame;

/// A classical baseline for games `G`: what a match needs to play it, whatever the game.
/// Each game's searcher implements it here, and [`GameBaseline`] says which searcher is
/// the game's.
pub trait Baseline<G: Game>: Send {
    /// The version of the searcher's play, recorded with every match it plays (a cache
    /// of its games is keyed on it): bumped whenever a change alters its moves.
    fn version(&self) -> u32;

    /// Starts a game: forgets what the last one taught the searcher and takes a new
    /// tie-break noise seed (0 turns the noise off).
    fn new_game(&mut self, seed: u64);

    /// The move to play in `game` within `limits` (`None`: the side to move has none).
    fn best_move(&mut self, game: &G, limits: &AlphaBetaLimits) -> Option<G::Move>;
}

/// A game with a classical baseline: which searcher plays it. Every game type the
/// project plays has one (the `alphabeta:...` players and the fixed scale).
pub trait GameBaseline: Game {
    /// A fresh searcher of the game's baseline.
    fn baseline() -> Box<dyn Baseline<Self>>;
}

/// Each searcher is its game's baseline through its own `new_game` and `search`.
macro_rules! baseline_of {
    ($searcher:ty, $game:ty, $version:expr) => {
        impl GameBaseline for $game {
            fn baseline() -> Box<dyn Baseline<Self>> {
                Box::new(<$searcher>::new(1))
            }
        }

        impl Baseline<$game> for $searcher {
            fn version(&self) -> u32 {
                $version
            }
            fn new_game(&mut self, seed: u64) {
                <$searcher>::new_game(self, seed);
            }
            fn best_move(
                &mut self,
                game: &$game,
                limits: &AlphaBetaLimits,
            ) -> Option<<$game as Game>::Move> {
                self.search(game, limits).best_move
            }
        }
    };
}

baseline_of!(AlphaBeta, ShogiGame, BASELINE_VERSION);
baseline_of!(TaiAlphaBeta, TaiGame, TAI_BASELINE_VERSION);
