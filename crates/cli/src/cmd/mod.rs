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

use clap::ValueEnum;
use shogi_rules::Variant;

/// Variants the rules core plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VariantArg {
    /// Standard shogi, 9x9.
    Shogi,
    /// Minishogi, 5x5.
    Minishogi,
    /// Tai shogi, 25x25.
    Tai,
}

impl VariantArg {
    /// The shogi-family variant (commands handle tai shogi before asking), or an error
    /// naming the command.
    pub fn shogi(self, command: &str) -> anyhow::Result<Variant> {
        match self {
            VariantArg::Shogi => Ok(Variant::Shogi),
            VariantArg::Minishogi => Ok(Variant::Minishogi),
            VariantArg::Tai => anyhow::bail!("`{command}` has no tai shogi mode"),
        }
    }
}
