//! One module per subcommand: arguments, validation, run.

pub mod curve;
pub mod export;
pub mod gate;
pub mod info;
pub mod learn;
pub mod match_cmd;
pub mod perft;
pub mod selfplay;
pub mod train;
pub mod usi;

use shogi_game::GameKind;
use shogi_rules::Variant;

/// The shogi-rules variant of `game`, for a command without a tai shogi mode (an error
/// naming the command).
pub fn shogi_variant(game: GameKind, command: &str) -> anyhow::Result<Variant> {
    Variant::of(game).ok_or_else(|| anyhow::anyhow!("`{command}` has no tai shogi mode"))
}
