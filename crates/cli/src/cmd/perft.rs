//! `shogi-zero perft`: node counts of the legal-move tree, with nodes/s.

use std::io::Write;
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;
use shogi_game::GameKind;
use shogi_registry::ArenaGame;
use shogi_registry::{GameSpec, with_game_type};

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
    with_game_type!(args.variant, G => run_game::<G>(args))
}

/// Perft of the game `G` (`args.variant`'s type): shogi and minishogi count positions
/// with the rules crate's counter, tai shogi counts games that end inside the tree as
/// leaves (see `Game::perft`).
fn run_game<G: ArenaGame>(args: &PerftArgs) -> Result<()> {
    let line = args
        .sfen
        .as_ref()
        .map_or_else(|| "startpos".to_string(), |sfen| format!("sfen {sfen}"));
    let start = G::parse_start(args.variant, &line).map_err(|e| match &args.sfen {
        Some(sfen) => anyhow!(
            "--sfen {sfen:?} is not a valid {} position: {e}",
            args.variant
        ),
        None => anyhow!("{e}"),
    })?;
    let game = G::from_start(&GameSpec::new(args.variant, 0), &start);
    let bulk = !args.no_bulk;
    let mut out = std::io::stdout().lock();
    let began = Instant::now();
    let nodes = if args.divide {
        let mut moves = Vec::new();
        game.legal_moves(&mut moves);
        let mut total = 0;
        for mv in moves {
            let mut next = game.clone();
            next.play_unchecked(mv);
            let count = next.perft(args.depth - 1, bulk);
            writeln!(out, "{mv}: {count}")?;
            total += count;
        }
        total
    } else {
        game.perft(args.depth, bulk)
    };
    report(&mut out, nodes, began)
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
