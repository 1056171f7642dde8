//! `shogi-zero gate` (being built).

use anyhow::{Result, bail};
use clap::Args;

/// Arguments (being built).
#[derive(Debug, Args)]
pub struct GateArgs {}

/// Runs the subcommand.
pub fn run(_args: &GateArgs) -> Result<()> {
    bail!("not built yet")
}
