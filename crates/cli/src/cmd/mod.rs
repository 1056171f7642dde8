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
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum VariantArg {
    /// Standard shogi, 9x9.
    Shogi,
    /// Minishogi, 5x5.
    Minishogi,
}

impl From<VariantArg> for Variant {
    fn from(v: VariantArg) -> Variant {
        match v {
            VariantArg::Shogi => Variant::Shogi,
            VariantArg::Minishogi => Variant::Minishogi,
        }
    }
}
