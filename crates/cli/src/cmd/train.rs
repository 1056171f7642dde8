//! `shogi-zero train`: a training run from a TOML config — self-play, learner and gate
//! in one process, resumable from its run directory.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use shogi_run::{Roles, RunConfig, StopCause};

/// Arguments of `train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// A config file (configs/*.toml), or a run directory to resume (its config.toml).
    pub config: PathBuf,
    /// Continue the run in the config's run.dir if it exists (start it otherwise).
    #[arg(long)]
    pub resume: bool,
    /// Override a key: `--set section.key=value` (repeatable), e.g.
    /// `--set run.minutes=5 --set selfplay.actors=8`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// The parts of the run this process plays: `all`, or a comma list of `selfplay`,
    /// `learn`, `gate` (one learner and one gate per run directory; any number of
    /// self-play processes on other machines sharing it).
    #[arg(long, default_value = "all", value_parser = Roles::parse)]
    pub roles: Roles,
}

/// Arguments of `--follow`, shared by `selfplay`, `learn` and `gate`.
#[derive(Debug, Args)]
pub struct FollowArgs {
    /// Take part in the run at this directory (created by `shogi-zero train`) with its
    /// config.toml, playing only this subcommand's role until Ctrl-C or the budget.
    #[arg(long, value_name = "RUN_DIR")]
    pub follow: Option<PathBuf>,
    /// With --follow: override a key of the run's config, `--set section.key=value`.
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "follow")]
    pub overrides: Vec<String>,
}

/// `selfplay|learn|gate --follow RUN_DIR`: that one role of an existing run.
pub fn follow(run_dir: &std::path::Path, overrides: &[String], roles: Roles) -> Result<()> {
    if !run_dir.join("config.toml").is_file() {
        anyhow::bail!(
            "{} is not a run directory (no config.toml): create the run with `shogi-zero train CONFIG` first",
            run_dir.display()
        );
    }
    run(&TrainArgs {
        config: run_dir.to_path_buf(),
        resume: true,
        overrides: overrides.to_vec(),
        roles,
    })
}

/// Runs `train`.
pub fn run(args: &TrainArgs) -> Result<()> {
    let (config, resume) = config_and_resume(args)?;
    std::fs::create_dir_all(&config.run.dir)
        .with_context(|| format!("creating {}", config.run.dir.display()))?;
    // One log per role set, so processes sharing a run directory do not interleave.
    let log_name = if args.roles.is_all() {
        "train.log".to_string()
    } else {
        format!("{}.log", args.roles.describe())
    };
    init_logging(&config.run.dir.join(log_name))?;
    // The log's first line: where the networks run and why (a GPU config that silently
    // trains on the CPU is the failure this guards against).
    let device = shogi_model::DeviceReport::resolve(&config.run.device)
        .with_context(|| format!("run.device = {:?}", config.run.device))?;
    if device.fell_back_to_cpu() {
        tracing::warn!("{device}: the run trains on the CPU");
    } else {
        tracing::info!("{device}");
    }

    let interrupt = super::progress::stop_on_interrupt(super::progress::InterruptMessages {
        first: "flushing replay and exporting the learner",
        second: "the run resumes from its last snapshot with the same command",
    })?;
    tracing::info!(
        "{} run {} as {} ({} {}x{}, {} actors, {} simulations, budget {} min / {} steps)",
        if resume { "resuming" } else { "starting" },
        config.run.dir.display(),
        args.roles.describe(),
        config.game.variant,
        config.network.blocks,
        config.network.channels,
        config.selfplay.actors,
        config.selfplay.search.simulations,
        config.run.minutes,
        config.run.max_steps
    );
    let summary = shogi_run::run(&config, resume, args.roles, &interrupt)?;
    print_summary(&config, &summary);
    Ok(())
}

/// The run's config and whether the run resumes: a run directory resumes from its
/// snapshot (`config.toml`, the directory as given now), a config file starts its run,
/// or with `--resume` resumes it where its snapshot exists.
fn config_and_resume(args: &TrainArgs) -> Result<(RunConfig, bool)> {
    if args.config.is_dir() {
        let snapshot = args.config.join("config.toml");
        if !snapshot.is_file() {
            anyhow::bail!(
                "{} is a directory without config.toml: give a config file, or a run directory to resume",
                args.config.display()
            );
        }
        let mut overrides = args.overrides.clone();
        // The snapshot names the run directory as it was given at the start; the path
        // given now is where it is.
        overrides.push(format!("run.dir={:?}", args.config.display().to_string()));
        return Ok((RunConfig::load(&snapshot, &overrides)?, true));
    }
    let config = RunConfig::load(&args.config, &args.overrides)?;
    let snapshot = config.run.dir.join("config.toml");
    if args.resume && snapshot.is_file() {
        Ok((RunConfig::load(&snapshot, &args.overrides)?, true))
    } else {
        Ok((config, false))
    }
}

/// What the invocation did: why it stopped, its games and steps, the gate's verdicts.
fn print_summary(config: &RunConfig, summary: &shogi_run::RunSummary) {
    let secs = summary.elapsed.as_secs_f64().max(1e-9);
    println!(
        "run {}: {} after {:.0} s",
        config.run.dir.display(),
        match summary.cause {
            StopCause::TimeBudget => "time budget spent",
            StopCause::StepBudget => "step budget reached",
            StopCause::Interrupted => "interrupted (continue with --resume)",
        },
        secs
    );
    println!(
        "self-play: {} games, {} plies ({:.0} plies/s); learner at step {}",
        summary.games,
        summary.positions,
        summary.positions as f64 / secs,
        summary.learner_step
    );
    let gated: Vec<_> = summary
        .gate_reports
        .iter()
        .filter(|r| r.games > 0)
        .collect();
    let promoted_ungated = summary.gate_reports.len() - gated.len();
    if promoted_ungated > 0 {
        println!(
            "gate off: {promoted_ungated} networks promoted without games (measure them with `shogi-zero curve`)"
        );
    }
    if !gated.is_empty() {
        println!(
            "{:<16} {:>6} {:>10} {:>7} {:>9} {:>14}",
            "candidate", "games", "W-D-L", "score", "decision", "Elo vs first"
        );
        for r in gated {
            println!(
                "{:<16} {:>6} {:>10} {:>6.1}% {:>9} {:>+8.0} ±{:<4.0}",
                r.candidate,
                r.games,
                format!("{}-{}-{}", r.result.wins, r.result.draws, r.result.losses),
                r.rating.score * 100.0,
                if r.accepted { "accepted" } else { "rejected" },
                r.elo_vs_first,
                (r.elo_vs_first_high - r.elo_vs_first_low) / 2.0
            );
        }
    }
    println!("best network: {}", summary.best.display());
}

/// Logs to stderr and to `<run>/train.log` (appending, so a resumed run keeps history).
fn init_logging(path: &std::path::Path) -> Result<()> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_target(false),
        )
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_target(false)
                .with_writer(std::sync::Mutex::new(file)),
        )
        .try_init()
        .ok();
    Ok(())
}
