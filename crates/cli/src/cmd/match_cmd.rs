//! `shogi-zero match`: a match between two players (checkpoints searched with MCTS, a
//! network-free search, a random mover, or external USI engines), paired games from an
//! opening set, every game saved, a results table and `summary.json`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use shogi_arena::openings::read_openings_file;
use shogi_arena::player::checkpoint_game;
use shogi_arena::{
    MATCH_OPENING_PLIES, MATCH_TEMPERATURE_PLIES, MatchConfig, Openings, PlayerSettings,
    PlayerSpec, UsiTimeControl, parse_usi_option, run_match_reporting,
};
use shogi_ratings::SprtConfig;
use shogi_registry::{GameSpec, TOURNAMENT_MAX_PLIES};

use shogi_game::GameKind;

/// Arguments of `shogi-zero match`. Defaults are [`MatchConfig::default`]'s, its
/// players' [`PlayerSettings::default`] (strength play) and [`UsiTimeControl::default`].
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// Player A: `checkpoint:DIR`, `uniform`, `rollout`, `random`, `alphabeta:depth=N`,
    /// `alphabeta:nodes=N`, `alphabeta:movetime=MS` (the classical baseline; shogi and
    /// minishogi; limits combine with commas, whichever comes first) or
    /// `usi:"COMMAND ARGS"`.
    #[arg(long)]
    pub a: PlayerSpec,
    /// Player B (same forms as A).
    #[arg(long)]
    pub b: PlayerSpec,
    /// Games to play (paired: each opening twice, colours swapped).
    #[arg(long, default_value_t = MatchConfig::default().games, value_parser = clap::value_parser!(u32).range(1..))]
    pub games: u32,
    /// Variant; default: the checkpoints' (from their manifests), else shogi.
    #[arg(long, value_enum)]
    pub variant: Option<GameKind>,
    /// MCTS simulations per move of checkpoint/uniform/rollout players; with
    /// `--movetime`, no limit but the time unless given.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..),
          help = format!("MCTS simulations per move of checkpoint/uniform/rollout players [default: {}; with --movetime, no limit but the time unless given]", PlayerSettings::default().simulations))]
    pub simulations: Option<u32>,
    /// Time per move of checkpoint/uniform/rollout players, ms: they search until it has
    /// passed (or `--simulations`, if given, are spent), so that a network can play
    /// `alphabeta:movetime=MS` at equal time. Such games depend on the machine and its
    /// load: play them with `--parallel 1` on a quiet machine. `--byoyomi` times `usi:`
    /// players; `alphabeta:` players take their own `movetime=MS`.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub movetime: Option<u64>,
    /// Opening plies played with temperature 1 by the searching players (0 after).
    #[arg(long, default_value_t = MATCH_TEMPERATURE_PLIES)]
    pub temperature_plies: u32,
    /// Nodes of the searching players' mate search from every root (df-pn; a proven
    /// mate is played at once); 0 = off.
    #[arg(long, default_value_t = PlayerSettings::default().root_mate_nodes, value_name = "NODES")]
    pub root_mate_nodes: usize,
    /// Leaves the searching players evaluate together per tree (virtual loss between
    /// them): larger batches fill the network's batch sooner, smaller ones spend each
    /// simulation where the previous ones pointed (the USI engine's `TreeBatch`).
    #[arg(long, default_value_t = PlayerSettings::default().tree_batch as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub tree_batch: u64,
    #[command(flatten)]
    pub root: super::RootArgs,
    /// File of start positions (one SFEN, `startpos` or `handicap:NAME` per line); without
    /// it: the start position plus random openings of `--opening-plies` plies.
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Random plies of the generated openings.
    #[arg(long, default_value_t = MATCH_OPENING_PLIES)]
    pub opening_plies: u32,
    #[command(flatten)]
    pub parallel: super::ParallelArgs,
    #[command(flatten)]
    pub sprt: SprtArgs,
    #[command(flatten)]
    pub limit: PlyLimitArgs,
    /// USI engines: byoyomi per move, ms.
    #[arg(long, default_value_t = UsiTimeControl::default().byoyomi_ms)]
    pub byoyomi: u64,
    /// USI engines: increment per move, ms (replaces byoyomi when set).
    #[arg(long, default_value_t = UsiTimeControl::default().increment_ms)]
    pub increment: u64,
    /// USI engines: main time per side, ms.
    #[arg(long, default_value_t = UsiTimeControl::default().main_time_ms)]
    pub main_time: u64,
    /// USI engines: grace beyond their time before they forfeit, ms.
    #[arg(long, default_value_t = UsiTimeControl::default().margin_ms)]
    pub usi_margin: u64,
    /// USI engines: fixed work per move, `go nodes N` (no clock is sent; `--byoyomi` +
    /// `--usi-margin` still bound the wall time of a move).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub usi_nodes: Option<u64>,
    /// USI engines: fixed work per move, `go depth N` (with `--usi-nodes`, both).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub usi_depth: Option<u32>,
    /// Player A's USI engine: `setoption name NAME value VALUE`, sent after `usiok` and
    /// before `isready` (repeatable, in order). For minishogi the engine's variant
    /// option (`USI_Variant` or `UCI_Variant`, whichever it advertises) is set
    /// automatically; an engine with neither is refused before the first game.
    #[arg(long = "a-option", value_name = "NAME=VALUE")]
    pub a_options: Vec<String>,
    /// Player B's USI engine options (as `--a-option`).
    #[arg(long = "b-option", value_name = "NAME=VALUE")]
    pub b_options: Vec<String>,
    #[command(flatten)]
    pub net: super::DeviceArgs,
    /// Seed of the openings and searches.
    #[arg(long, default_value_t = MatchConfig::default().seed)]
    pub seed: u64,
    /// Output directory: every game (`game-NNNN.usi`, `.csa`, `.kif`), each result as it
    /// comes (`results.jsonl`) and `summary.json`. The same command again resumes a
    /// stopped match there, playing only the games it lacks; another match is refused.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Parses `ELO0,ELO1`.
/// The SPRT flags shared by `match` and `gate`.
#[derive(Debug, clap::Args)]
pub struct SprtArgs {
    /// SPRT bounds `ELO0,ELO1`: stop early when H0 or H1 is accepted (in a gate H1
    /// promotes, H0 rejects and undecided falls back to the threshold).
    #[arg(long = "sprt")]
    pub bounds: Option<String>,
    /// SPRT false-positive rate.
    #[arg(long = "sprt-alpha", default_value_t = SprtConfig::default().alpha)]
    pub alpha: f64,
    /// SPRT false-negative rate.
    #[arg(long = "sprt-beta", default_value_t = SprtConfig::default().beta)]
    pub beta: f64,
}

impl SprtArgs {
    /// The SPRT, if `--sprt` was given.
    pub fn config(&self) -> Result<Option<SprtConfig>> {
        self.bounds
            .as_deref()
            .map(|s| parse_sprt(s, self.alpha, self.beta))
            .transpose()
    }
}

/// The game-length flags shared by `match` and `gate`.
#[derive(Debug, clap::Args)]
pub struct PlyLimitArgs {
    /// Stop a game at this many plies (a draw unless adjudicated).
    #[arg(long, default_value_t = TOURNAMENT_MAX_PLIES)]
    pub max_plies: u32,
    /// A game stopped at `--max-plies` goes to the side ahead by at least this many
    /// material points (rook and bishop 5, other pieces 1, board plus hand; tai shogi:
    /// mobility values, pawn 1 to hook mover 80); 0 = draw.
    #[arg(long, default_value_t = MatchConfig::default().adjudicate_margin)]
    pub adjudicate: u32,
}

fn parse_sprt(text: &str, alpha: f64, beta: f64) -> Result<SprtConfig> {
    let Some((a, b)) = text.split_once(',') else {
        bail!("--sprt wants ELO0,ELO1, got {text:?}");
    };
    let sprt = SprtConfig {
        elo0: a.trim().parse().context("--sprt ELO0")?,
        elo1: b.trim().parse().context("--sprt ELO1")?,
        alpha,
        beta,
    };
    sprt.validate().map_err(anyhow::Error::msg)?;
    Ok(sprt)
}

/// A match's game: `forced` (a `--variant` flag), else the checkpoints' among `players`
/// (from their manifests; they must agree), else shogi.
pub fn match_game(forced: Option<GameKind>, players: &[&PlayerSpec]) -> Result<GameKind> {
    let mut from_checkpoints: Option<GameKind> = None;
    for spec in players {
        if let PlayerSpec::Checkpoint(dir) = spec {
            let game = checkpoint_game(dir)?;
            if from_checkpoints.is_some_and(|other| other != game) {
                bail!("the two checkpoints are for different variants");
            }
            from_checkpoints = Some(game);
        }
    }
    Ok(forced.or(from_checkpoints).unwrap_or(GameKind::Shogi))
}

/// Parses `--a-option`/`--b-option` values; options for a player that is not a USI
/// engine are refused (they would be silently ignored).
fn usi_options(texts: &[String], spec: &PlayerSpec, flag: &str) -> Result<Vec<(String, String)>> {
    if !texts.is_empty() && !matches!(spec, PlayerSpec::Usi(_)) {
        bail!("{flag} is for a usi: player, not {spec}");
    }
    texts
        .iter()
        .map(|t| parse_usi_option(t).map_err(|e| anyhow::anyhow!("{flag}: {e}")))
        .collect()
}

impl MatchArgs {
    /// The players' settings these flags ask for.
    pub(crate) fn player_settings(&self) -> Result<PlayerSettings> {
        self.root.apply(PlayerSettings {
            simulations: match (self.simulations, self.movetime) {
                (Some(n), _) => n,
                (None, Some(_)) => u32::MAX,
                (None, None) => PlayerSettings::default().simulations,
            },
            movetime_ms: self.movetime,
            temperature_plies: self.temperature_plies,
            root_mate_nodes: self.root_mate_nodes,
            tree_batch: self.tree_batch as usize,
            device: self.net.device.clone(),
            usi: UsiTimeControl {
                byoyomi_ms: self.byoyomi,
                increment_ms: self.increment,
                main_time_ms: self.main_time,
                margin_ms: self.usi_margin,
                nodes: self.usi_nodes,
                depth: self.usi_depth,
                options: usi_options(&self.a_options, &self.a, "--a-option")?,
                ..UsiTimeControl::default()
            },
            usi_options_b: usi_options(&self.b_options, &self.b, "--b-option")?,
            inference_threads: self.parallel.resolve().1,
            ..PlayerSettings::default()
        })
    }
}

/// Runs the subcommand.
pub fn run(args: &MatchArgs) -> Result<()> {
    let game = match_game(args.variant, &[&args.a, &args.b])?;
    args.net.apply_threads();
    let openings = match &args.openings {
        Some(file) => Openings::List(read_openings_file(file, game)?),
        None => Openings::Random {
            plies: args.opening_plies,
        },
    };
    let config = MatchConfig {
        games: args.games,
        game: GameSpec::standard(game, args.limit.max_plies),
        adjudicate_margin: args.limit.adjudicate,
        openings,
        parallel: args.parallel.resolve().0,
        sprt: args.sprt.config()?,
        players: args.player_settings()?,
        seed: args.seed,
        games_dir: args.out.clone(),
        // The same command again plays only the games --out lacks.
        resume: true,
    };
    eprintln!(
        "match: {} vs {}, {} {} games, {} at once",
        args.a, args.b, args.games, game, config.parallel
    );
    let timed = args.movetime.is_some()
        || [&args.a, &args.b]
            .iter()
            .any(|s| matches!(s, PlayerSpec::AlphaBeta(l) if l.movetime.is_some()));
    if timed && config.parallel > 1 {
        eprintln!(
            "match: note: players limited by time share the CPU with {} games at once; \
             --parallel 1 gives each its time alone",
            config.parallel
        );
    }
    let stop = super::progress::stop_on_interrupt(super::progress::match_interrupt_messages())?;
    let progress = super::progress::MatchReporter::new("match", config.games);
    let summary = run_match_reporting(&args.a, &args.b, &config, &stop, &|p| progress.report(p));
    progress.finish();
    let summary = summary?;
    print!("{}", summary.table());
    println!(
        "{} games in {:.1} s",
        summary.total.games() - summary.resumed,
        summary.seconds
    );
    if summary.resumed > 0 {
        println!(
            "{} more read back from an earlier start of this match (--out's {})",
            summary.resumed,
            shogi_arena::matchplay::RESULTS_FILE
        );
    }
    if let Some(out) = &args.out {
        let path = out.join("summary.json");
        summary.save_json(&path)?;
        println!("games and summary: {}", out.display());
    }
    if summary.interrupted {
        match &args.out {
            Some(out) => eprintln!(
                "match: interrupted: the {} games played are kept in {}; the same command plays the rest",
                summary.total.games(),
                out.display()
            ),
            None => eprintln!(
                "match: interrupted after {} games (without --out nothing is kept to resume from)",
                summary.total.games()
            ),
        }
    }
    Ok(())
}
