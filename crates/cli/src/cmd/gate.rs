//! `shogi-zero gate`: gate a run directory's newest pending candidate once against its
//! best network (promote at the threshold score or on SPRT H1); the older pending ones
//! are passed over into rejected/ unplayed (`shogi_arena::gate_pending`). The match
//! shows its progress as `match` does, and Ctrl-C leaves the candidate pending.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use shogi_arena::{ArenaError, GateConfig, gate_pending_reporting};
use shogi_mcts::RootSettings;
use shogi_registry::GameSpec;
use shogi_rundir::RunDir;

use super::match_cmd::{PlyLimitArgs, SprtArgs};

/// Arguments of `shogi-zero gate`. Defaults are [`GateConfig::default`]'s.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// The run directory (candidates/, accepted/, rejected/, games/, ratings.*): gate its
    /// newest pending candidate once with the settings below (passing over the older
    /// ones) and exit.
    #[arg(long, required_unless_present = "follow", conflicts_with = "follow")]
    pub run: Option<PathBuf>,
    /// Keep gating the run's candidates as they come, with the run's [gate] settings.
    #[command(flatten)]
    pub follow: super::train::FollowArgs,
    /// Games per candidate.
    #[arg(long, default_value_t = GateConfig::default().games, value_parser = clap::value_parser!(u32).range(1..))]
    pub games: u32,
    /// Score a candidate needs to be promoted.
    #[arg(long, default_value_t = GateConfig::default().threshold)]
    pub threshold: f64,
    #[command(flatten)]
    pub sprt: SprtArgs,
    /// MCTS simulations per move.
    #[arg(long, default_value_t = GateConfig::default().simulations)]
    pub simulations: u32,
    #[command(flatten)]
    pub limit: PlyLimitArgs,
    /// Games played at once.
    #[arg(long, default_value_t = GateConfig::default().parallel_games)]
    pub parallel: usize,
    #[command(flatten)]
    pub net: super::DeviceArgs,
    /// Random plies of the openings (the first is the start position).
    #[arg(long, default_value_t = GateConfig::default().opening_plies)]
    pub opening_plies: u32,
    /// Seed.
    #[arg(long, default_value_t = GateConfig::default().seed)]
    pub seed: u64,
    /// A fixed opponent every accepted network also plays (e.g. `alphabeta:depth=2`): a
    /// rating line on a scale that does not move with the run (ratings.csv/png).
    #[arg(long)]
    pub fixed_opponent: Option<String>,
    /// Games against `--fixed-opponent`.
    #[arg(long, default_value_t = GateConfig::default().fixed_games, value_parser = clap::value_parser!(u32).range(2..))]
    pub fixed_games: u32,
}

impl GateArgs {
    /// The gate these flags ask for, playing `rules` (the run's game) with a PUCT root
    /// ([`GateArgs::run_gate_config`] gives a run its own play search).
    pub(crate) fn gate_config(&self, rules: Option<GameSpec>) -> Result<GateConfig> {
        Ok(GateConfig {
            games: self.games,
            threshold: self.threshold,
            sprt: self.sprt.config()?,
            simulations: self.simulations.max(1),
            root: RootSettings::default(),
            max_plies: self.limit.max_plies,
            adjudicate_margin: self.limit.adjudicate,
            parallel_games: self.parallel.max(1),
            device: self.net.device.clone(),
            torch_threads: self.net.torch_threads,
            opening_plies: self.opening_plies,
            seed: self.seed,
            fixed_opponent: self.fixed_opponent.clone(),
            fixed_games: self.fixed_games,
            rules,
        })
    }

    /// The gate of `run`: these flags, with the run's game, rule options and play search
    /// from its config snapshot (a directory without one gates the checkpoints' game as
    /// tournaments play it, with a PUCT root).
    pub(crate) fn run_gate_config(&self, run: &RunDir) -> Result<GateConfig> {
        let snapshot = run.config_file();
        if !snapshot.is_file() {
            return self.gate_config(None);
        }
        let run_config = shogi_run::RunConfig::load(&snapshot, &[])?;
        Ok(GateConfig {
            root: shogi_run::play_root(&run_config),
            ..self.gate_config(Some(shogi_run::game_spec(&run_config)))?
        })
    }
}

/// Runs the subcommand.
pub fn run(args: &GateArgs) -> Result<()> {
    if let Some(run_dir) = &args.follow.follow {
        return super::train::follow(run_dir, &args.follow.overrides, shogi_run::Roles::GATE);
    }
    let Some(run_dir) = &args.run else {
        anyhow::bail!("--run RUN_DIR (or --follow RUN_DIR) is required");
    };
    let run = RunDir::new(run_dir);
    let config = args.run_gate_config(&run)?;
    if !run.root().is_dir() {
        anyhow::bail!("{} is not a run directory", run.root().display());
    }
    // One gate per run, whether standalone or inside `train`.
    let _lock = run.lock_role("gate")?;
    let stop = super::progress::stop_on_interrupt(super::progress::InterruptMessages {
        first: "finishing the moves in progress",
        second: "the candidate stays pending, and the same command gates it again",
    })?;
    let progress = super::progress::MatchReporter::new("gate", config.games);
    let gated = gate_pending_reporting(&run, &config, &stop, &|p| progress.report(p));
    progress.finish();
    let reports = match gated {
        Ok(reports) => reports,
        Err(ArenaError::Interrupted { games, planned }) => {
            println!(
                "gate: interrupted after {games} of {planned} games; the candidate stays pending in {}, and the same command gates it again",
                run.candidates().display()
            );
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    if reports.is_empty() {
        println!(
            "gate: no pending candidates in {}",
            run.candidates().display()
        );
    }
    for r in &reports {
        if let Some(why) = &r.refused {
            println!(
                "{}: does not load, set aside in rejected/: {why}",
                r.candidate
            );
            continue;
        }
        if let Some(newer) = &r.passed_over_for {
            println!(
                "{}: passed over for the newer {newer}, in rejected/ without a game",
                r.candidate
            );
            continue;
        }
        println!(
            "{} vs {}: +{} ={} -{} score {:.1}% Elo {:+.1} [{:+.1}, {:+.1}] LOS {:.1}% -> {} (Elo vs first {:+.1})",
            r.candidate,
            r.best,
            r.result.wins,
            r.result.draws,
            r.result.losses,
            100.0 * r.rating.score,
            r.rating.elo,
            r.rating.low,
            r.rating.high,
            100.0 * r.los,
            if r.accepted { "accepted" } else { "rejected" },
            r.elo_vs_first
        );
        if let Some(f) = &r.fixed {
            println!(
                "  vs {}: {} games, score {:.1}%, Elo {:+.1} [{:+.1}, {:+.1}]",
                f.opponent,
                f.games,
                100.0 * f.rating.score,
                f.rating.elo,
                f.rating.low,
                f.rating.high
            );
        }
    }
    if !reports.is_empty() {
        println!(
            "ratings: {} {}",
            run.ratings_csv().display(),
            run.ratings_png().display()
        );
    }
    Ok(())
}
