//! One module per subcommand: arguments, validation, run.

pub mod export;
pub mod gate;
pub mod info;
pub mod learn;
pub mod match_cmd;
pub mod perft;
pub mod selfplay;
pub mod train;
pub mod usi;

use clap::ValueEnum;
use shogi_rules::Variant;

/// Variants the rules core plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VariantArg {
    /// Standard shogi, 9x9.
    Shogi,
    /// Minishogi, 5x5.
    Minishogi,
    /// Tai shogi, 25x25 (every command but `usi`).
    Tai,
}

impl VariantArg {
    /// The shogi-family variant, or an error naming the command that does not play tai
    /// shogi yet.
    pub fn shogi(self, command: &str) -> anyhow::Result<Variant> {
        match self {
            VariantArg::Shogi => Ok(Variant::Shogi),
            VariantArg::Minishogi => Ok(Variant::Minishogi),
            VariantArg::Tai => anyhow::bail!(
                "`{command}` does not play tai shogi: USI has no tai shogi dialect; tai shogi runs in `perft`, `selfplay`, `learn`, `train`, `match` and `gate`"
            ),
        }
    }
}
