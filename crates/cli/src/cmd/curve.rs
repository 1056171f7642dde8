//! `shogi-zero curve`: a run's learning curve on a fixed scale. Chosen accepted networks
//! of the run each play the same opponent with the same search and openings; the scores
//! go to `curve.json`, `curve.csv` and `curve.png`. Points already measured with the same
//! settings are kept, so the command can be rerun while the run goes on.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use clap::Args;
use shogi_arena::{
    MATCH_OPENING_PLIES, MatchConfig, Openings, PlayerSettings, PlayerSpec, run_match_reporting,
};
use shogi_mcts::RootSettings;
use shogi_model::{MANIFEST_FILE, read_manifest};
use shogi_ratings::Rating;
use shogi_ratings::curve::{CURVE_SIMULATIONS, Curve, CurvePoint, pick_at_steps, pick_checkpoints};
use shogi_registry::GameSpec;
use shogi_rundir::RunDir;

use super::match_cmd::{PlyLimitArgs, match_game};

/// Arguments of `shogi-zero curve`. Defaults are a match's ([`MatchConfig::default`]),
/// at [`CURVE_SIMULATIONS`].
#[derive(Debug, Args)]
pub struct CurveArgs {
    /// The run directory whose accepted networks are measured.
    pub run: PathBuf,
    /// The fixed opponent (`random`, `uniform`, `checkpoint:DIR`, `usi:COMMAND`, ...).
    #[arg(long, default_value = "random")]
    pub opponent: PlayerSpec,
    /// Networks to measure: the first, the last and the rest spread evenly between.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(2..))]
    pub points: u32,
    /// Measure instead the networks the run had at these learner steps (comma-separated,
    /// e.g. `2000,3700,9500`: at each, the last one accepted at or before it), so runs
    /// compare step for step whatever the machine's speed; a step the run has not reached
    /// is skipped and said.
    #[arg(long, value_delimiter = ',', conflicts_with = "points")]
    pub at_steps: Vec<u64>,
    /// Games per network (paired openings, colours swapped).
    #[arg(long, default_value_t = MatchConfig::default().games, value_parser = clap::value_parser!(u32).range(1..))]
    pub games: u32,
    /// MCTS simulations per move (the run's networks and any searching opponent).
    #[arg(long, default_value_t = CURVE_SIMULATIONS)]
    pub simulations: u32,
    #[command(flatten)]
    pub root: super::RootArgs,
    /// Random plies of the openings (the same openings for every network).
    #[arg(long, default_value_t = MATCH_OPENING_PLIES)]
    pub opening_plies: u32,
    #[command(flatten)]
    pub limit: PlyLimitArgs,
    #[command(flatten)]
    pub parallel: super::ParallelArgs,
    #[command(flatten)]
    pub net: super::DeviceArgs,
    /// Seed of the openings and searches (the same for every network).
    #[arg(long, default_value_t = MatchConfig::default().seed)]
    pub seed: u64,
    /// Output directory; default `RUN/proof/curve-OPPONENT` (`curve-OPPONENT-plain` with
    /// `--plain`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Play nothing: draw every curve measured for RUN so far (`RUN/proof/curve-*/`) in
    /// one picture, `RUN/proof/curves.png` (each opponent and search a line; score
    /// against the run's hours and against learner steps).
    #[arg(long, conflicts_with_all = ["at_steps", "out"])]
    pub combine: bool,
}

/// Draws every curve measured for `run` into `run/proof/curves.png`; returns its path.
fn combine(run: &std::path::Path) -> Result<PathBuf> {
    let proof = run.join("proof");
    let mut found = Vec::new();
    let entries = std::fs::read_dir(&proof).with_context(|| {
        format!(
            "{} has no curves yet (reading {})",
            run.display(),
            proof.display()
        )
    })?;
    for entry in entries {
        let dir = entry
            .with_context(|| format!("reading {}", proof.display()))?
            .path();
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Some(label) = name.strip_prefix("curve-") else {
            continue;
        };
        if let Some(curve) = Curve::<RootSettings>::load(&dir)?
            && !curve.points.is_empty()
        {
            found.push((label.to_string(), curve));
        }
    }
    if found.is_empty() {
        bail!(
            "{} holds no measured curve (RUN/proof/curve-*/curve.json): measure some with `shogi-zero curve RUN --opponent ...`",
            proof.display()
        );
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let series: Vec<(&str, &Curve<RootSettings>)> =
        found.iter().map(|(l, c)| (l.as_str(), c)).collect();
    let path = proof.join("curves.png");
    let title = format!("{} on the fixed scale", run.display());
    shogi_ratings::curve::plot_curves(&title, &series, &path)?;
    Ok(path)
}

/// A file-name-safe form of a player spec.
/// `spec` as a directory name: ASCII letters and digits kept, the rest `-`. One over 80
/// characters keeps its first 63 and a hash of the whole spec, so two opponents never
/// share a directory by a cut (a checkpoint's path differs at its end).
fn slug(spec: &str) -> String {
    let s: String = spec
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let s = s.trim_matches('-').to_string();
    if s.len() <= 80 {
        return s;
    }
    // FNV-1a: stable across builds and platforms, unlike std's hasher.
    let hash = spec.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{}-{hash:016x}", &s[..63])
}

fn modified(dir: &std::path::Path) -> Result<SystemTime> {
    let manifest = dir.join(MANIFEST_FILE);
    std::fs::metadata(&manifest)
        .and_then(|m| m.modified())
        .with_context(|| format!("reading the time of {}", manifest.display()))
}

/// When a network was written, for the curve's time axis: the run's clock where its
/// manifest records it (the run's running time, pauses between invocations left out;
/// the initial network, written as the run begins, is its zero), else the manifest
/// file's time (pauses included).
#[derive(Clone, Copy)]
enum Written {
    RunClock(f64),
    Wall,
}

impl Written {
    fn of(dir: &std::path::Path) -> Result<Written> {
        let manifest = read_manifest(dir).with_context(|| format!("reading {}", dir.display()))?;
        match manifest.meta.run_seconds {
            Some(secs) => Ok(Written::RunClock(secs)),
            None if manifest.meta.training_step == 0 => Ok(Written::RunClock(0.0)),
            None => Ok(Written::Wall),
        }
    }

    /// Minutes from `first` to this: the run's clock if both have it, else wall time.
    fn minutes_since(
        self,
        first: Written,
        dir: &std::path::Path,
        first_dir: &std::path::Path,
    ) -> Result<f64> {
        Ok(match (self, first) {
            (Written::RunClock(at), Written::RunClock(from)) => (at - from).max(0.0) / 60.0,
            _ => {
                modified(dir)?
                    .duration_since(modified(first_dir)?)
                    .unwrap_or_default()
                    .as_secs_f64()
                    / 60.0
            }
        })
    }
}

impl CurveArgs {
    /// The networks' (and any searching opponent's) settings these flags ask for.
    pub(crate) fn player_settings(&self) -> Result<PlayerSettings> {
        self.root.apply(PlayerSettings {
            simulations: self.simulations.max(1),
            device: self.net.device.clone(),
            inference_threads: self.parallel.resolve().1,
            ..PlayerSettings::default()
        })
    }
}

/// Runs the subcommand.
pub fn run(args: &CurveArgs) -> Result<()> {
    if args.combine {
        println!("curves: {}", combine(&args.run)?.display());
        return Ok(());
    }
    let run = RunDir::new(&args.run);
    let all = run
        .accepted_checkpoints()
        .with_context(|| format!("listing {}", run.accepted().display()))?;
    if all.is_empty() {
        bail!(
            "{} has no accepted networks: is it a run directory?",
            run.accepted().display()
        );
    }
    let chosen = chosen_networks(args, &run, &all)?;
    let first_dir = all[0].1.clone();
    let first_time = Written::of(&first_dir)?;
    let players: Vec<PlayerSpec> = std::iter::once(args.opponent.clone())
        .chain(
            chosen
                .iter()
                .map(|(_, p)| PlayerSpec::Checkpoint(p.clone())),
        )
        .collect();
    let game = match_game(None, &players.iter().collect::<Vec<_>>())?;
    args.net.apply_threads();
    let out = args.out.clone().unwrap_or_else(|| {
        run.root().join("proof").join(format!(
            "curve-{}{}",
            slug(&args.opponent.to_string()),
            if args.root.plain { "-plain" } else { "" }
        ))
    });
    let mut curve = Curve {
        opponent: args.opponent.to_string(),
        games: args.games,
        simulations: args.simulations.max(1),
        seed: args.seed,
        root: args.root.settings()?,
        points: Vec::new(),
    };
    if let Some(old) = Curve::load(&out)?
        && old.same_settings(&curve)
    {
        curve = old;
    }
    eprintln!(
        "curve: {} networks of {} vs {}, {} games each, {} simulations -> {}",
        chosen.len(),
        args.run.display(),
        args.opponent,
        args.games,
        curve.simulations,
        out.display()
    );
    let stop = super::progress::stop_on_interrupt(super::progress::match_interrupt_messages())?;
    for (step, dir) in &chosen {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(p) = curve.points.iter().find(|p| p.checkpoint == name) {
            println!("{name}: {:.1}% (measured before)", p.rating.score * 100.0);
            continue;
        }
        let minutes = Written::of(dir)?.minutes_since(first_time, dir, &first_dir)?;
        let Some(point) = measure(args, game, *step, dir, minutes, &out, &stop)? else {
            eprintln!(
                "curve: interrupted during {name}: the points measured before it are kept in {}",
                out.display()
            );
            break;
        };
        curve.insert(point);
        // Saved after every point: a stopped command keeps what it measured.
        curve.save(&out)?;
    }
    curve.save(&out)?;
    print!("{}", curve.csv());
    println!("curve: {}", out.join("curve.png").display());
    Ok(())
}

/// The networks of `all` (the run's accepted ones, oldest first) the curve measures:
/// `--points` of them spread over the run, or those at `--at-steps` (a step the run has
/// not reached is said and skipped).
fn chosen_networks(
    args: &CurveArgs,
    run: &RunDir,
    all: &[(u64, PathBuf)],
) -> Result<Vec<(u64, PathBuf)>> {
    if args.at_steps.is_empty() {
        return Ok(pick_checkpoints(all, args.points as usize));
    }
    let reached = run
        .exported_through()
        .with_context(|| format!("listing the networks of {}", run.root().display()))?;
    let (chosen, not_reached) = pick_at_steps(all, &args.at_steps, reached);
    for step in not_reached {
        eprintln!(
            "curve: {} has not reached step {step} (its learner exported up to step {reached}): skipped",
            args.run.display()
        );
    }
    if chosen.is_empty() {
        bail!(
            "{} reached none of the steps {:?} (its learner exported up to step {reached})",
            args.run.display(),
            args.at_steps
        );
    }
    Ok(chosen)
}

/// One point of the curve: the network in `dir` (at `step`, `minutes` into the run)
/// against the opponent, its games kept under `out`; `None` when interrupted.
fn measure(
    args: &CurveArgs,
    game: shogi_game::GameKind,
    step: u64,
    dir: &Path,
    minutes: f64,
    out: &Path,
    stop: &AtomicBool,
) -> Result<Option<CurvePoint>> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let manifest = read_manifest(dir).with_context(|| format!("reading {}", dir.display()))?;
    let config = MatchConfig {
        games: args.games,
        game: GameSpec::standard(game, args.limit.max_plies),
        adjudicate_margin: args.limit.adjudicate,
        openings: Openings::Random {
            plies: args.opening_plies,
        },
        parallel: args.parallel.resolve().0,
        sprt: None,
        players: args.player_settings()?,
        seed: args.seed,
        games_dir: Some(out.join(&name)),
        resume: false,
    };
    let network = PlayerSpec::Checkpoint(dir.to_path_buf());
    let progress = super::progress::MatchReporter::new(&format!("curve {name}"), args.games);
    let summary = run_match_reporting(&network, &args.opponent, &config, stop, &|p| {
        progress.report(p)
    });
    progress.finish();
    let summary = summary?;
    if summary.interrupted {
        return Ok(None);
    }
    let t = &summary.total;
    println!(
        "{name} ({minutes:.1} min, {} samples): {}-{}-{} score {:.1}% Elo {:+.0} [{:+.0}, {:+.0}]",
        manifest.meta.samples_seen,
        t.wins,
        t.draws,
        t.losses,
        summary.score * 100.0,
        summary.elo.elo + 0.0,
        summary.elo.low + 0.0,
        summary.elo.high + 0.0
    );
    Ok(Some(CurvePoint {
        checkpoint: name,
        step,
        samples_seen: manifest.meta.samples_seen,
        minutes,
        result: *t,
        rating: Rating::new(summary.score, &summary.elo),
    }))
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("random"), "random");
        assert_eq!(slug("usi:/opt/eng --x"), "usi--opt-eng---x");
        assert_eq!(
            slug("checkpoint:runs/tai/accepted/step-00003500"),
            "checkpoint-runs-tai-accepted-step-00003500"
        );
        let long = |step: &str| {
            slug(&format!(
                "checkpoint:{}/accepted/step-{step}",
                "d".repeat(80)
            ))
        };
        let (a, b) = (long("00003500"), long("00003510"));
        assert_ne!(a, b, "two checkpoints of one long run directory");
        assert_eq!((a.len(), b.len()), (80, 80));
        assert_eq!(a, long("00003500"), "stable");
    }
}
