//! `shogi-zero perft`: node counts of the legal-move tree, with nodes/s.

use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use shogi_game::Game;
use shogi_rules::{Position, perft};
use shogi_tai::{TaiGame, TaiRules};

use shogi_game::GameKind;

#[derive(Debug, Args)]
pub struct PerftArgs {
    /// Which game's rules to use.
    #[arg(long, value_enum, default_value = "shogi")]
    variant: GameKind,
    /// Start from this SFEN instead of the variant's start position.
    #[arg(long)]
    sfen: Option<String>,
    /// Depth in plies (1 or more).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=20))]
    depth: u32,
    /// Print the count below each legal root move.
    #[arg(long)]
    divide: bool,
    /// Make every leaf move instead of counting the last ply's moves (what search does).
    #[arg(long)]
    no_bulk: bool,
}

pub fn run(args: &PerftArgs) -> Result<()> {
    if args.variant == GameKind::Tai {
        return run_tai(args);
    }
    let variant = super::shogi_variant(args.variant, "perft")?;
    let pos = match &args.sfen {
        Some(sfen) => Position::from_sfen(variant, sfen)
            .with_context(|| format!("--sfen {sfen:?} is not a valid position"))?,
        None => Position::startpos(variant),
    };
    let mut out = std::io::stdout().lock();
    let start = Instant::now();
    let nodes = if args.divide {
        let mut total = 0;
        for (mv, count) in perft::divide(&pos, args.depth) {
            writeln!(out, "{mv}: {count}")?;
            total += count;
        }
        total
    } else {
        perft::perft(&pos, args.depth, !args.no_bulk)
    };
    report(&mut out, nodes, start)
}

/// Tai shogi's perft: games that end inside the tree count as leaves; `--no-bulk` does
/// not apply (every node is made).
fn run_tai(args: &PerftArgs) -> Result<()> {
    let pos = match &args.sfen {
        Some(sfen) => shogi_tai::Position::from_sfen(sfen)
            .with_context(|| format!("--sfen {sfen:?} is not a valid tai shogi position"))?,
        None => shogi_tai::Position::startpos(),
    };
    let game = TaiGame::new(pos, TaiRules::default());
    let mut out = std::io::stdout().lock();
    let start = Instant::now();
    let nodes = if args.divide {
        let mut moves = Vec::new();
        game.legal_moves(&mut moves);
        let mut total = 0;
        for mv in moves {
            let mut next = game.clone();
            next.play(mv);
            let count = shogi_tai::perft(&next, args.depth - 1);
            writeln!(out, "{mv}: {count}")?;
            total += count;
        }
        total
    } else {
        shogi_tai::perft(&game, args.depth)
    };
    report(&mut out, nodes, start)
}

/// The `nodes` and `time` lines every perft ends with.
fn report(out: &mut impl Write, nodes: u64, start: Instant) -> Result<()> {
    let secs = start.elapsed().as_secs_f64();
    writeln!(out, "nodes {nodes}")?;
    writeln!(
        out,
        "time {:.3} s, {:.1} M nodes/s",
        secs,
        nodes as f64 / secs.max(1e-9) / 1e6
    )?;
    Ok(())
}
