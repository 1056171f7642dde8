//! `shogi-zero match` (being built).

use anyhow::{Result, bail};
use clap::Args;

/// Arguments (being built).
#[derive(Debug, Args)]
pub struct MatchArgs {}

/// Runs the subcommand.
pub fn run(_args: &MatchArgs) -> Result<()> {
    bail!("not built yet")
}
