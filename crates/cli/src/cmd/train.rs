//! `shogi-zero train` (being built).

use anyhow::{Result, bail};
use clap::Args;

/// Arguments (being built).
#[derive(Debug, Args)]
pub struct TrainArgs {}

/// Runs the subcommand.
pub fn run(_args: &TrainArgs) -> Result<()> {
    bail!("not built yet")
}
