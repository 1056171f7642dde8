//! `shogi-zero learn`: train on a replay directory and export candidate checkpoints.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use shogi_features::{FeatureSet, NetLayout};
use shogi_learner::{Learner, LearnerConfig, LrSchedule, ReplayWindow, SampleConfig};
use shogi_model::{
    DEFAULT_BLOCKS, DEFAULT_CHANNELS, Expected, Model, OptimizerSettings, ThreadCount,
    available_cores, checkpoint_layout, parse_device,
};

use shogi_game::GameKind;

/// `learn`'s default steps; a candidate is exported at the last one (a run exports every
/// [`LearnerConfig::DEFAULT_EXPORT_EVERY`] steps because its gate takes them as they come).
const LEARN_STEPS: u64 = 1000;

/// Arguments of `learn`. The learner's defaults are a training run's ([`OptimizerSettings`],
/// [`LearnerConfig`], [`ReplayWindow`], the network size of `shogi_model`).
#[derive(Debug, Args)]
pub struct LearnArgs {
    /// Replay directory of record chunks.
    #[arg(long, required_unless_present_any = ["follow", "records"])]
    pub replay: Option<PathBuf>,
    /// Game records to import and train on in one command (files, or directories
    /// searched for them, as `import` reads them): imported into RUN/replay with
    /// `import`'s defaults, then trained on as `--replay RUN/replay`. The same command
    /// again resumes the import where it ended.
    #[arg(long, num_args = 1.., conflicts_with_all = ["replay", "follow"], requires = "run")]
    pub records: Vec<PathBuf>,
    /// Run directory (TensorBoard logs, candidates).
    #[arg(long, required_unless_present = "follow")]
    pub run: Option<PathBuf>,
    #[command(flatten)]
    pub follow: super::train::FollowArgs,
    /// Checkpoint directory to continue from (default: the newest network in the run's
    /// candidates/ that loads, so learning again into a run goes on from where it
    /// stopped; a fresh network in a new run).
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// Variant (default: the replay's, read from its chunks; given, it must be theirs).
    #[arg(long, value_enum)]
    pub variant: Option<GameKind>,
    /// Optimiser steps.
    #[arg(long, default_value_t = LEARN_STEPS)]
    pub steps: u64,
    /// Minibatch size.
    #[arg(long, default_value_t = LearnerConfig::DEFAULT_BATCH, value_parser = super::at_least_one)]
    pub batch: usize,
    /// Constant learning rate.
    #[arg(long, default_value_t = OptimizerSettings::default().lr, value_parser = super::learning_rate)]
    pub lr: f64,
    /// Positions kept in the replay window.
    #[arg(long, default_value_t = ReplayWindow::DEFAULT_CAPACITY)]
    pub window: usize,
    /// Export a candidate every this many steps.
    #[arg(long, default_value_t = LEARN_STEPS)]
    pub export_every: u64,
    /// Device: auto, cpu, cuda, cuda:N.
    #[arg(long, default_value = shogi_model::DEFAULT_DEVICE)]
    pub device: String,
    /// libtorch's CPU threads for the steps: a number, or auto (the cores the process
    /// may use: its affinity mask and container quota count). Beside other work give
    /// fewer: libtorch's waiting threads spin and take the other work's cores.
    #[arg(long, default_value_t = ThreadCount::Auto, value_name = "N|auto")]
    pub torch_threads: ThreadCount,
    /// Residual blocks of a fresh network.
    #[arg(long, default_value_t = DEFAULT_BLOCKS)]
    pub blocks: usize,
    /// Channels of a fresh network.
    #[arg(long, default_value_t = DEFAULT_CHANNELS)]
    pub channels: usize,
    /// Hold one game in this many out of training (chosen by a hash of its moves, so the
    /// same games every time) and report the network on their positions after every
    /// epoch: policy top-1 (the move played, for imported records), policy and value
    /// losses, in the output and TensorBoard (`heldout/*`). 0 = none.
    #[arg(long, default_value_t = 0)]
    pub holdout_every: u64,
    /// Input planes of a fresh network: pieces | attacks | exchanges (a checkpoint's are its own;
    /// given with --checkpoint, they must be the checkpoint's).
    #[arg(long)]
    pub features: Option<FeatureSet>,
}

impl LearnArgs {
    /// The optimiser settings these flags ask for.
    pub(crate) fn optimizer_settings(&self) -> OptimizerSettings {
        OptimizerSettings {
            lr: self.lr,
            ..OptimizerSettings::default()
        }
    }
}

/// The run's newest network that loads (a learn into this run before, gated since or
/// not: candidates, accepted and rejected alike), named on the terminal with the newer
/// ones that did not load; `None` for a run without networks. None of them loading is
/// an error: a fresh network would take their names.
fn newest_network<T, E: std::fmt::Display>(
    run_dir: &std::path::Path,
    load: impl FnMut(&std::path::Path) -> Result<T, E>,
) -> Result<Option<(T, std::path::PathBuf)>> {
    let run = shogi_rundir::RunDir::new(run_dir);
    let networks = run
        .networks_newest_first()
        .with_context(|| format!("listing the networks of {}", run_dir.display()))?;
    if networks.is_empty() {
        return Ok(None);
    }
    match shogi_rundir::newest_that_loads(networks, load) {
        Ok(found) => {
            for (dir, why) in &found.passed_over {
                eprintln!("learn: {} does not load, passed over: {why}", dir.display());
            }
            println!(
                "learn: continuing from {} (the newest network of this run; --checkpoint picks another)",
                found.dir.display()
            );
            Ok(Some((found.loaded, found.dir)))
        }
        Err(tried) => {
            let tried: Vec<String> = tried
                .iter()
                .map(|(dir, why)| format!("{}: {why}", dir.display()))
                .collect();
            bail!(
                "{} holds networks of an earlier learn, and none loads ({}): give --checkpoint, or another --run",
                run_dir.display(),
                tried.join("; ")
            )
        }
    }
}

/// Where `learn` starts: the network, the directory it was loaded from (none for a fresh
/// one), its name as the parent of what follows, its layout and the step and samples it
/// goes on from.
struct Start {
    model: Model,
    dir: Option<std::path::PathBuf>,
    parent: Option<String>,
    layout: NetLayout,
    step: u64,
    samples: u64,
}

/// The network `learn` starts from: `--checkpoint`, else the run's newest network that
/// loads, else a fresh one. A start older than the run's newest network is refused: its
/// exports would write over the run's.
fn starting_network(
    args: &LearnArgs,
    run_dir: &std::path::Path,
    game: &NetLayout,
    layout: NetLayout,
    device: shogi_model::tch::Device,
) -> Result<Start> {
    let expected = match args.features {
        Some(_) => Expected::for_layout(&layout),
        None => Expected::for_layout(game).any_features(),
    };
    let load = |dir: &std::path::Path| shogi_model::load_checkpoint(dir, &expected, device);
    let loaded = match &args.checkpoint {
        Some(dir) => Some((load(dir)?, dir.clone())),
        None => newest_network(run_dir, load)?,
    };
    // The steps go on from the checkpoint's, so candidates of a continued chain never
    // take the names of the ones before them; a checkpoint older than the run's newest
    // network would export over the run's own.
    let start = match loaded {
        Some(((model, manifest), dir)) => Start {
            layout: checkpoint_layout(game, &manifest)?,
            model,
            dir: Some(dir),
            parent: Some(manifest.name),
            step: manifest.meta.training_step,
            samples: manifest.meta.samples_seen,
        },
        None => Start {
            model: Model::new(
                &super::fresh_model_config(&layout, args.blocks, args.channels)?,
                device,
            ),
            dir: None,
            parent: None,
            layout,
            step: 0,
            samples: 0,
        },
    };
    if let Some((newest, dir)) = shogi_rundir::RunDir::new(run_dir)
        .networks_newest_first()?
        .into_iter()
        .next()
        && newest > start.step
    {
        bail!(
            "{} is at step {newest}, past the step {} learning would start from: its exports would write over the run's networks; give another --run",
            dir.display(),
            start.step
        );
    }
    Ok(start)
}

/// The game of the replay in `dir`: `asked` where a chunk holds its games (the learner
/// passes over games of another), else the game of the first chunk that reads; `asked`
/// with no chunk of it is refused naming both.
fn replay_variant(dir: &std::path::Path, asked: Option<GameKind>) -> Result<GameKind> {
    let mut chunks: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == shogi_records::record::CHUNK_EXTENSION)
        })
        .collect();
    chunks.sort();
    let mut first: Option<String> = None;
    for path in &chunks {
        let Some(name) = shogi_records::record::read_chunk(path)
            .ok()
            .and_then(|games| games.first().map(|g| g.variant.clone()))
        else {
            continue;
        };
        match asked {
            Some(asked) if name == asked.name() => return Ok(asked),
            Some(_) => {
                first.get_or_insert(name);
            }
            None => {
                first = Some(name);
                break;
            }
        }
    }
    let Some(name) = first else {
        return asked.ok_or_else(|| {
            anyhow::anyhow!("{} holds no readable replay chunk (*.szgr)", dir.display())
        });
    };
    let variant: GameKind = name
        .parse()
        .map_err(|_| anyhow::anyhow!("{}: chunks of an unknown game {name:?}", dir.display()))?;
    match asked {
        Some(asked) => bail!(
            "--variant {asked} but the replay in {} is {variant}: leave --variant out, or give the replay of a {asked} run",
            dir.display()
        ),
        None => Ok(variant),
    }
}

/// `learn --records`: imports `records` into `<run_dir>/replay` as `import` would with
/// its defaults (the same command line, so the defaults are `import`'s own) and returns
/// that directory.
fn import_records(records: &[PathBuf], run_dir: &std::path::Path) -> Result<PathBuf> {
    #[derive(clap::Parser)]
    struct Import {
        #[command(flatten)]
        args: super::import::ImportArgs,
    }
    let out = run_dir.join("replay");
    let mut command_line = vec![std::ffi::OsString::from("import")];
    command_line.extend(records.iter().map(|p| p.as_os_str().to_owned()));
    command_line.push("--out".into());
    command_line.push(out.as_os_str().to_owned());
    let import = <Import as clap::Parser>::try_parse_from(command_line)?;
    println!("learn: importing the records into {}", out.display());
    super::import::run(&import.args)
        .with_context(|| format!("importing the records into {}", out.display()))?;
    Ok(out)
}

/// `args.steps` steps in epochs (as many samples as the window holds positions), the
/// held-out games' policy and value measured before the first and after each.
fn train_by_epochs(
    learner: &mut Learner,
    window: &ReplayWindow,
    args: &LearnArgs,
) -> Result<shogi_learner::Summary> {
    let held_out = window.held_out().to_vec();
    let epoch = (window.len() as u64)
        .div_ceil(args.batch.max(1) as u64)
        .max(1);
    println!(
        "held out: {} positions (one game in {}); an epoch is {epoch} steps",
        held_out.len(),
        args.holdout_every
    );
    let report = |learner: &mut Learner, epoch_no: u64| {
        let e = learner.evaluate(&held_out);
        println!(
            "epoch {epoch_no} (step {}): held-out policy top-1 {:.1}%, policy loss {:.4}, value loss {:.4}, value accuracy {:.1}%",
            learner.step_count(),
            100.0 * e.policy_top1,
            e.policy,
            e.value,
            100.0 * e.value_accuracy
        );
    };
    report(learner, 0);
    let mut done = 0;
    let mut summary = shogi_learner::Summary::default();
    while done < args.steps {
        let n = epoch.min(args.steps - done);
        let part = learner.run(window, n)?;
        done += n;
        summary.steps = part.steps;
        summary.samples_seen += part.samples_seen;
        summary.samples_per_sec = part.samples_per_sec;
        summary.outside_share = part.outside_share;
        summary.last = part.last;
        summary.candidates.extend(part.candidates);
        report(learner, done.div_ceil(epoch));
    }
    Ok(summary)
}

/// Sets libtorch's CPU threads to `given` (auto: the cores the process may use) and says
/// how many.
fn apply_torch_threads(given: ThreadCount) {
    let threads = given.resolve(available_cores);
    shogi_model::set_num_threads(threads);
    println!(
        "learn: {threads} libtorch CPU threads (--torch-threads {given}; {} cores available to this process)",
        available_cores()
    );
}

/// Runs `learn`.
pub fn run(args: &LearnArgs) -> Result<()> {
    if let Some(run_dir) = &args.follow.follow {
        return super::train::follow(run_dir, &args.follow.overrides, shogi_run::Roles::LEARN);
    }
    let Some(run_dir) = &args.run else {
        bail!("--run DIR (with --replay DIR or --records FILES), or --follow RUN_DIR, is required");
    };
    let replay = match &args.replay {
        Some(replay) => replay.clone(),
        None if !args.records.is_empty() => import_records(&args.records, run_dir)?,
        None => bail!("--replay DIR or --records FILES... is required"),
    };
    let replay = &replay;
    let variant = replay_variant(replay, args.variant)?;
    let game = shogi_registry::layout(variant);
    let layout = shogi_registry::layout_with(variant, args.features.unwrap_or_default())
        .map_err(anyhow::Error::msg)?;
    let device = parse_device(&args.device)?;
    apply_torch_threads(args.torch_threads);
    let start = starting_network(args, run_dir, &game, layout, device)?;
    let layout = start.layout;
    let samples = SampleConfig {
        features: layout.features,
        game: Some(variant),
        ..SampleConfig::default()
    };
    let mut window =
        ReplayWindow::new(replay, args.window, samples).with_holdout(args.holdout_every);
    window
        .refresh()
        .with_context(|| format!("reading {}", replay.display()))?;
    let train = args.optimizer_settings();
    let config = LearnerConfig {
        layout,
        batch: args.batch,
        schedule: LrSchedule::Constant(args.lr),
        export_every: args.export_every,
        run_dir: run_dir.clone(),
        parent: start.parent,
        seed: 0,
        start_step: start.step,
        start_samples: start.samples,
        play: None,
        clock: None,
    };
    let mut learner = Learner::new(start.model, train, config)?;
    // A continued chain goes on with its momentum, as a run's learner does.
    if let Some(dir) = start.dir.as_deref().filter(|_| start.step > 0) {
        match learner.restore_optimizer(dir) {
            Ok(()) => println!("learn: optimiser state restored from {}", dir.display()),
            Err(why) => println!(
                "learn: optimiser state NOT restored, it starts afresh (momentum lost): {why}"
            ),
        }
    }
    let summary = if window.held_out().is_empty() {
        learner.run(&window, args.steps)?
    } else {
        train_by_epochs(&mut learner, &window, args)?
    };
    let mut summary = summary;
    // The steps after the last export are kept: the last step is always a candidate.
    let exported_last =
        args.export_every > 0 && learner.step_count().is_multiple_of(args.export_every);
    if learner.step_count() > start.step && !exported_last {
        summary.candidates.push(learner.export()?);
    }
    println!(
        "window: {} positions from {} games",
        window.len(),
        window.games()
    );
    // This invocation's steps; a continued chain says where it stands.
    let taken = summary.steps.saturating_sub(start.step);
    if start.step > 0 {
        println!(
            "steps: {taken} (from step {} to {})",
            start.step, summary.steps
        );
    } else {
        println!("steps: {taken}");
    }
    println!("samples/s: {:.1}", summary.samples_per_sec);
    if let Some(l) = summary.last {
        println!(
            "final losses: policy {:.4} value {:.4} total {:.4}",
            l.policy, l.value, l.total
        );
    }
    println!(
        "time outside forward/backward: {:.1}%",
        100.0 * summary.outside_share
    );
    for c in &summary.candidates {
        println!("candidate: {}", c.display());
    }
    Ok(())
}
