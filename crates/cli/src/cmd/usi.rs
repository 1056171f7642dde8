//! `shogi-zero usi` (being built).

use anyhow::{Result, bail};
use clap::Args;

/// Arguments (being built).
#[derive(Debug, Default, Args)]
pub struct UsiArgs {}

/// Runs the subcommand.
pub fn run(_args: &UsiArgs) -> Result<()> {
    bail!("not built yet")
}
