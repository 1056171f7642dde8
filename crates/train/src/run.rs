//! One training run in one process: self-play actors with the best network, the learner
//! on the freshest replay window, and the gate promoting candidates, side by side. They
//! coordinate only through the run directory ([`RunDir`]), exactly as separate
//! `selfplay`, `learn` and `gate` processes on several machines would.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use shogi_arena::{GateConfig, GateReport, gate_pending};
use shogi_features::{FEATURE_VERSION, POLICY_VERSION};
use shogi_features::{FromSpec, GameSpec, NetGame, NetLayout, with_game_type};
use shogi_learner::{Learner, LearnerConfig, LrSchedule, ReplayWindow, SampleConfig};
use shogi_mcts::batch::{BatchConfig, BatchStats};
use shogi_mcts::{PlayoutCap, SearchConfig};
use shogi_model::{
    CheckpointMeta, Expected, Losses, Model, ModelConfig, NetService, OptimizerKind, TrainConfig,
    load_checkpoint, model_config_for_layout, parse_device, set_num_threads,
};
use shogi_rundir::{RoleLock, RunDir, checkpoint_name};
use shogi_selfplay::actors::{ActorConfig, ActorStats, run_actors};
use shogi_selfplay::play::PlayConfig;
use shogi_selfplay::play::RecordGame;
use tracing::{info, warn};

use crate::config::{OptimizerName, RunConfig, ScheduleName};

/// Why the run loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// The wall-clock budget (`run.minutes`) ran out.
    TimeBudget,
    /// The learner reached `run.max_steps`.
    StepBudget,
    /// Ctrl-C / SIGTERM (or the caller's stop flag).
    Interrupted,
}

/// Which parts of a run this process plays. `train` plays all three; on several machines
/// sharing the run directory, one process runs the learner (and usually the gate) and
/// any number run self-play (`shogi-zero selfplay --follow RUN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Roles {
    /// Self-play actors with the current best network, writing replay chunks.
    pub selfplay: bool,
    /// The learner, exporting candidates. At most one per run directory.
    pub learn: bool,
    /// The gate, promoting or rejecting candidates. At most one per run directory.
    pub gate: bool,
}

impl Roles {
    /// All three in one process.
    pub const ALL: Roles = Roles {
        selfplay: true,
        learn: true,
        gate: true,
    };
    /// None (the start of [`Roles::parse`]).
    const NONE: Roles = Roles {
        selfplay: false,
        learn: false,
        gate: false,
    };
    /// Self-play only (`selfplay --follow`).
    pub const SELFPLAY: Roles = Roles {
        selfplay: true,
        ..Roles::NONE
    };
    /// The learner only (`learn --follow`).
    pub const LEARN: Roles = Roles {
        learn: true,
        ..Roles::NONE
    };
    /// The gate only (`gate --follow`).
    pub const GATE: Roles = Roles {
        gate: true,
        ..Roles::NONE
    };

    /// Parses a comma-separated list of `selfplay`, `learn`, `gate` (or `all`).
    pub fn parse(text: &str) -> Result<Roles> {
        let mut roles = Roles::NONE;
        for word in text.split(',').map(str::trim) {
            match word {
                "all" => roles = Roles::ALL,
                "selfplay" => roles.selfplay = true,
                "learn" => roles.learn = true,
                "gate" => roles.gate = true,
                _ => bail!("unknown role {word:?}: expected selfplay, learn, gate or all"),
            }
        }
        if roles == Roles::NONE {
            bail!("no role given: expected selfplay, learn, gate or all");
        }
        Ok(roles)
    }

    /// Whether this process plays every part (and so owns the run directory).
    pub fn is_all(self) -> bool {
        self == Roles::ALL
    }

    /// `selfplay+learn+gate` style text for logs.
    pub fn describe(self) -> String {
        let mut v = Vec::new();
        if self.selfplay {
            v.push("selfplay");
        }
        if self.learn {
            v.push("learn");
        }
        if self.gate {
            v.push("gate");
        }
        v.join("+")
    }
}

/// What a run (or a resumed part of one) did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Why it stopped.
    pub cause: StopCause,
    /// Self-play games finished in this invocation.
    pub games: u64,
    /// Self-play positions (plies) in this invocation.
    pub positions: u64,
    /// Learner step at the end (total over the run).
    pub learner_step: u64,
    /// Gate results of this invocation, in order.
    pub gate_reports: Vec<GateReport>,
    /// The best network at the end.
    pub best: PathBuf,
    /// Wall time of this invocation.
    pub elapsed: Duration,
}

/// Shared counters the status line reads.
#[derive(Debug, Default)]
struct Progress {
    actors: ActorStats,
    batches: Mutex<BatchStats>,
    learner_step: AtomicU64,
    /// Samples trained in this invocation (learner throughput).
    learner_samples: AtomicU64,
    learner_loss: Mutex<Option<Losses>>,
    gate: Mutex<Vec<GateReport>>,
    best_name: Mutex<String>,
}

/// The network layout of the config's game and input planes (checked by
/// [`RunConfig::validate`]).
fn layout_of(config: &RunConfig) -> NetLayout {
    NetLayout::with_features(game_spec(config).kind, config.network.features)
        .expect("a validated config's feature set fits its game")
}

/// The game and rules the config asks for.
pub fn game_spec(config: &RunConfig) -> GameSpec {
    let g = &config.game;
    GameSpec {
        kind: g.variant,
        max_plies: g.max_plies,
        impasse: g.impasse,
        tai: g.tai.rules(g.max_plies),
    }
}

/// The network architecture a config asks for.
pub fn model_config(config: &RunConfig) -> ModelConfig {
    let mut arch = model_config_for_layout(
        &layout_of(config),
        config.network.blocks,
        config.network.channels,
    );
    arch.se = config.network.se;
    arch.material_head = config.learner.material_weight > 0.0;
    arch
}

/// Prepares the run directory: a fresh run writes the config snapshot and the initial
/// network `accepted/step-00000000`; a resumed run checks the snapshot exists. Stale
/// temporaries of a killed process are removed. Returns the locks of the one-per-run
/// roles this process plays (learner, gate), held until they drop.
pub fn prepare(
    run: &RunDir,
    config: &RunConfig,
    resume: bool,
    roles: Roles,
) -> Result<Vec<RoleLock>> {
    let snapshot = run.config_file();
    if snapshot.exists() && !resume {
        bail!(
            "{} already holds a run; continue it with --resume, or choose another run.dir",
            run.root().display()
        );
    }
    run.create()
        .with_context(|| format!("creating run directory {}", run.root().display()))?;
    let mut locks = Vec::new();
    for (plays, role) in [(roles.learn, "learner"), (roles.gate, "gate")] {
        if plays {
            locks.push(run.lock_role(role)?);
        }
    }
    if roles.is_all() {
        // Only a process that plays every role owns the directory: anyone else's
        // temporaries may be writes in progress on another machine.
        remove_stale_temporaries(run)?;
    }
    check_config_fits_run(run, config)?;
    if roles.learn || !snapshot.exists() {
        shogi_rundir::write_atomic(&snapshot, config.to_toml().as_bytes())
            .with_context(|| format!("writing {}", snapshot.display()))?;
    }
    if let Some((_, best)) = run.best()?
        && roles.gate
    {
        // Heals a BEST left one promotion behind by a kill between rename and rewrite.
        let name = best.file_name().unwrap_or_default().to_string_lossy();
        run.write_best_pointer(&name)?;
    }
    if run.best()?.is_none() {
        let device = parse_device(&config.run.device)?;
        tch_seed(config.run.seed);
        let model = Model::new(&model_config(config), device);
        let meta = CheckpointMeta {
            architecture: model.config().clone(),
            variant: layout_of(config).variant.to_string(),
            feature_version: FEATURE_VERSION,
            features: config.network.features,
            policy_version: POLICY_VERSION,
            training_step: 0,
            samples_seen: 0,
            parent: None,
        };
        shogi_model::publish_checkpoint(
            &run.accepted().join(checkpoint_name(0)),
            &model.vs,
            &meta,
            |_| Ok(()),
        )?;
        run.write_best_pointer(&checkpoint_name(0))?;
        info!("initial network written to accepted/{}", checkpoint_name(0));
    }
    Ok(locks)
}

/// Refuses a config whose networks would differ from the run's (input planes or
/// architecture), naming each difference and the key that sets it. Called before
/// anything is written, so a refused resume leaves the run as it was.
fn check_config_fits_run(run: &RunDir, config: &RunConfig) -> Result<()> {
    let Ok((_, newest)) = learner_start(run) else {
        return Ok(()); // no network yet: a fresh run
    };
    let manifest = shogi_model::read_manifest(&newest)
        .with_context(|| format!("reading the manifest of {}", newest.display()))?;
    let layout = layout_of(config);
    if manifest.meta.features != layout.features {
        bail!(
            "the run's networks read the {} input planes but the config asks for {} \
             (network.features): a run keeps one feature set",
            manifest.meta.features,
            layout.features
        );
    }
    let arch = model_config(config);
    let differences = manifest.meta.architecture.diff(&arch);
    if !differences.is_empty() {
        // Each field as `name: the run's vs the config's`, with the key that sets it.
        let named: Vec<String> = differences
            .iter()
            .map(|d| match d.split(':').next().unwrap_or("") {
                "blocks" => format!("{d} (network.blocks)"),
                "channels" => format!("{d} (network.channels)"),
                "se" => format!("{d} (network.se)"),
                "material_head" => format!("{d} (learner.material_weight > 0)"),
                _ => d.clone(),
            })
            .collect();
        bail!(
            "the run's networks differ from what the config asks for: {} (the run's vs the \
             config's): a run keeps one architecture",
            named.join(", ")
        );
    }
    Ok(())
}

fn tch_seed(seed: u64) {
    shogi_model::tch::manual_seed(seed as i64);
}

/// Temporaries ([`shogi_rundir::is_temporary_name`]) are only ever left by a killed
/// process; `train` owns its run directory, so it clears them on start.
fn remove_stale_temporaries(run: &RunDir) -> Result<()> {
    for dir in [
        run.candidates(),
        run.accepted(),
        run.rejected(),
        run.replay(),
    ] {
        for path in shogi_rundir::remove_temporaries(&dir)
            .with_context(|| format!("clearing temporaries in {}", dir.display()))?
        {
            warn!("removed {} left by an interrupted process", path.display());
        }
    }
    Ok(())
}

/// The newest network the learner produced (candidates, accepted or rejected): a
/// resumed learner continues from it, losing only the steps since that export.
fn learner_start(run: &RunDir) -> Result<(u64, PathBuf)> {
    let mut all = Vec::new();
    for dir in [run.candidates(), run.accepted(), run.rejected()] {
        all.extend(RunDir::checkpoints_in(&dir)?);
    }
    all.sort();
    all.pop()
        .context("the run directory has no network at all (accepted/ is empty)")
}

/// The self-play search of a config.
pub fn search_config(config: &RunConfig) -> SearchConfig {
    let s = &config.selfplay;
    SearchConfig {
        simulations: s.simulations,
        batch_size: s.tree_batch,
        root_selection: s.root,
        gumbel_considered: s.gumbel_considered,
        dirichlet_alpha: s.dirichlet_alpha,
        dirichlet_weight: s.dirichlet_weight,
        temperature_plies: s.temperature_plies,
        expand_check_terminal: s.terminal_check,
        root_mate_nodes: s.mate_search_nodes,
        leaf_mate_nodes: s.leaf_mate_nodes,
        playout_cap: (s.full_search_prob < 1.0).then_some(PlayoutCap {
            full_search_prob: s.full_search_prob,
            cheap_simulations: s.cheap_simulations,
        }),
        ..SearchConfig::default()
    }
}

fn schedule(config: &RunConfig) -> LrSchedule {
    let l = &config.learner;
    match l.schedule {
        ScheduleName::Steps => LrSchedule::Steps {
            initial: l.lr,
            factor: l.lr_factor,
            boundaries: l.lr_boundaries.clone(),
        },
        ScheduleName::Cosine => LrSchedule::Cosine {
            peak: l.lr,
            min: l.lr_min,
            warmup: l.lr_warmup,
            total: l.lr_total,
        },
        ScheduleName::Constant => LrSchedule::Constant(l.lr),
    }
}

/// The self-play settings of a config besides the search's.
pub fn play_config(config: &RunConfig) -> PlayConfig {
    let s = &config.selfplay;
    PlayConfig {
        resign_threshold: s.resign_threshold,
        resign_disabled_fraction: s.resign_disabled_fraction,
        random_opening_plies: s.random_opening_plies,
        adjudicate_margin: s.adjudicate_margin,
        ..PlayConfig::default()
    }
}

/// The self-play inference service's batching of a config.
pub fn batch_config(config: &RunConfig) -> BatchConfig {
    BatchConfig {
        max_batch: config.selfplay.max_batch,
        max_wait: Duration::from_millis(config.selfplay.max_wait_ms),
    }
}

/// How the learner turns a config's replay into samples.
pub fn sample_config(config: &RunConfig) -> SampleConfig {
    let l = &config.learner;
    SampleConfig {
        q_blend: l.q_blend,
        features: config.network.features,
        material_plies: l.material_plies,
        material_value: l.material_value,
    }
}

/// The optimiser settings of a config.
pub fn train_config(config: &RunConfig) -> TrainConfig {
    let l = &config.learner;
    TrainConfig {
        optimizer: match l.optimizer {
            OptimizerName::Adamw => OptimizerKind::AdamW {
                beta1: 0.9,
                beta2: 0.999,
            },
            OptimizerName::Sgd => OptimizerKind::Sgd {
                momentum: l.momentum,
                nesterov: true,
            },
        },
        lr: l.lr,
        weight_decay: l.weight_decay,
        grad_clip: (l.grad_clip > 0.0).then_some(l.grad_clip),
        value_weight: l.value_weight,
        material_weight: l.material_weight,
        mixed_precision: l.mixed_precision,
    }
}

/// The gate settings of a config.
pub fn gate_config(config: &RunConfig) -> GateConfig {
    let g = &config.gate;
    GateConfig {
        games: g.games,
        threshold: g.threshold,
        simulations: g.simulations,
        max_plies: config.game.max_plies,
        adjudicate_margin: g.adjudicate_margin,
        parallel_games: g.parallel_games,
        device: config.run.device.clone(),
        torch_threads: config.run.torch_threads,
        opening_plies: g.opening_plies,
        seed: config.run.seed,
        fixed_opponent: Some(g.fixed_opponent.trim().to_string()).filter(|s| !s.is_empty()),
        fixed_games: g.fixed_games,
        rules: Some(game_spec(config)),
        sprt: g.sprt.then_some(shogi_arena::SprtConfig {
            elo0: g.sprt_elo0,
            elo1: g.sprt_elo1,
            alpha: g.sprt_error,
            beta: g.sprt_error,
        }),
    }
}

/// Runs (or resumes) the run described by `config` until its budget is spent or
/// `interrupt` is raised. Everything on disk stays consistent at every instant.
pub fn run(
    config: &RunConfig,
    resume: bool,
    roles: Roles,
    interrupt: &AtomicBool,
) -> Result<RunSummary> {
    let began = Instant::now();
    let run = RunDir::new(&config.run.dir);
    let _locks = prepare(&run, config, resume, roles)?;
    set_num_threads(config.run.torch_threads);
    let device = parse_device(&config.run.device)?;
    let layout = layout_of(config);

    // Budgets: wall time of this invocation, learner steps over the whole run.
    let deadline = (config.run.minutes > 0.0)
        .then(|| began + Duration::from_secs_f64(config.run.minutes * 60.0));
    let finish = AtomicBool::new(false);
    let stop_work = || interrupt.load(Ordering::Relaxed) || finish.load(Ordering::Relaxed);
    let progress = Progress::default();
    let mut cause = StopCause::TimeBudget;

    log_precision(config, roles, device);

    let (start_step, start_dir) = learner_start(&run)?;
    progress.learner_step.store(start_step, Ordering::Relaxed);
    let learner_model = if roles.learn {
        let expected = Expected::for_layout(&layout).any_features();
        let (model, manifest) = load_checkpoint(&start_dir, &expected, device)
            .with_context(|| format!("loading {}", start_dir.display()))?;
        info!(
            "run {} ({}): learner {} {} at step {}",
            run.root().display(),
            layout.variant,
            if start_step == 0 {
                "starts from"
            } else {
                "resumes from"
            },
            manifest.name,
            start_step
        );
        Some((model, manifest))
    } else {
        info!(
            "run {} ({}): playing {} beside the run's learner (newest network: step {})",
            run.root().display(),
            layout.variant,
            roles.describe(),
            start_step
        );
        None
    };

    let gate_stop = AtomicBool::new(false);
    let result: Result<()> = std::thread::scope(|scope| {
        let selfplay = roles.selfplay.then(|| {
            scope.spawn(|| {
                let spec = game_spec(config);
                with_game_type!(spec.kind, G => selfplay_loop(
                    config,
                    &run,
                    &progress,
                    &stop_work,
                    move |_| G::from_spec(&spec),
                ))
            })
        });
        let learner = learner_model.map(|(model, manifest)| {
            let (run, progress, stop_work, start_dir) = (&run, &progress, &stop_work, &start_dir);
            scope.spawn(move || {
                learner_loop(
                    config, run, model, &manifest, start_dir, progress, stop_work, interrupt,
                )
            })
        });
        let gate = roles
            .gate
            .then(|| scope.spawn(|| gate_loop(config, &run, &progress, &gate_stop, interrupt)));
        let finished = |h: &Option<std::thread::ScopedJoinHandle<'_, Result<()>>>| {
            h.as_ref().is_some_and(|h| h.is_finished())
        };

        let status_every = Duration::from_secs(config.run.status_every_secs);
        let mut last_status = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(100));
            if interrupt.load(Ordering::Relaxed) {
                cause = StopCause::Interrupted;
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                cause = StopCause::TimeBudget;
                break;
            }
            if config.run.max_steps > 0
                && progress.learner_step.load(Ordering::Relaxed) >= config.run.max_steps
            {
                cause = StopCause::StepBudget;
                break;
            }
            if finished(&selfplay) || finished(&learner) || finished(&gate) {
                break;
            }
            if last_status.elapsed() >= status_every {
                last_status = Instant::now();
                if !roles.learn {
                    // The learner is elsewhere: its step is the newest network on disk.
                    if let Ok((step, _)) = learner_start(&run) {
                        progress.learner_step.store(step, Ordering::Relaxed);
                    }
                }
                info!("{}", status_line(&progress, began));
            }
        }
        finish.store(true, Ordering::Relaxed);
        let join = |h: Option<std::thread::ScopedJoinHandle<'_, Result<()>>>, what: &str| {
            h.map(|h| {
                h.join()
                    .unwrap_or_else(|_| panic!("{what} thread panicked"))
            })
            .unwrap_or(Ok(()))
        };
        let selfplay_result = join(selfplay, "self-play");
        let learner_result = join(learner, "learner");
        // The gate finishes the candidates the learner left, unless interrupted.
        gate_stop.store(true, Ordering::Relaxed);
        let gate_result = join(gate, "gate");
        selfplay_result.context("self-play")?;
        learner_result.context("learner")?;
        gate_result.context("gate")?;
        Ok(())
    });
    result?;
    info!("{}", status_line(&progress, began));
    let best = run
        .best()?
        .map(|(_, path)| path)
        .context("no accepted network")?;
    let summary = RunSummary {
        cause,
        games: progress.actors.games.load(Ordering::Relaxed),
        positions: progress.actors.plies.load(Ordering::Relaxed),
        learner_step: progress.learner_step.load(Ordering::Relaxed),
        gate_reports: progress.gate.lock().unwrap().clone(),
        best,
        elapsed: began.elapsed(),
    };
    Ok(summary)
}

/// Says which precision the learner and self-play networks run in: f16 options are
/// CUDA-only and a CPU run ignores them, which the log states rather than hides.
fn log_precision(config: &RunConfig, roles: Roles, device: shogi_model::tch::Device) {
    let on_cuda = device.is_cuda();
    for (plays, key, on, what) in [
        (
            roles.learn,
            "learner.mixed_precision",
            config.learner.mixed_precision,
            "learner steps",
        ),
        (
            roles.selfplay,
            "selfplay.half_inference",
            config.selfplay.half_inference,
            "self-play inference",
        ),
    ] {
        match (plays, on, on_cuda) {
            (false, _, _) => {}
            (true, true, true) => info!("{key} = true: {what} in f16 on {device:?}"),
            (true, true, false) => info!("{key} = true is ignored on the CPU: {what} in f32"),
            (true, false, _) => info!("{key} = false: {what} in f32"),
        }
    }
}

fn status_line(progress: &Progress, began: Instant) -> String {
    let secs = began.elapsed().as_secs_f64().max(1e-9);
    let games = progress.actors.games.load(Ordering::Relaxed);
    // Counted move by move, games in progress included: a throughput, even in a window
    // shorter than a game.
    let plies = progress.actors.plies_played.load(Ordering::Relaxed);
    let batches = *progress.batches.lock().unwrap();
    let loss = progress
        .learner_loss
        .lock()
        .unwrap()
        .map(|l| {
            format!(
                "loss {:.3} (policy {:.3} value {:.3})",
                l.total, l.policy, l.value
            )
        })
        .unwrap_or_else(|| "waiting for data".into());
    let gate = progress.gate.lock().unwrap();
    let last_gate = gate
        .last()
        .map(|r| {
            if r.games == 0 {
                // gate.enabled = false: promoted without games, so no Elo either.
                return format!("gate off, newest {}", r.candidate);
            }
            format!(
                "last gate {} {:.0}% {} | Elo vs first {:+.0}",
                r.candidate,
                r.score * 100.0,
                if r.accepted { "accepted" } else { "rejected" },
                r.elo_vs_first
            )
        })
        .unwrap_or_else(|| "no gate yet".into());
    let decisive = progress.actors.black_wins.load(Ordering::Relaxed)
        + progress.actors.white_wins.load(Ordering::Relaxed);
    let simulations = progress.actors.simulations_run.load(Ordering::Relaxed);
    let samples = progress.learner_samples.load(Ordering::Relaxed);
    // Plies are positions played (and stored); simulations are network evaluations
    // (`shogi-zero selfplay` reports those as positions/s); samples are learner rows.
    format!(
        "[{:>5.0}s] games {} ({:.1}/min, {:.0}% decisive) plies {} ({:.0}/s, {:.0} simulations/s) batch fill {:.0}% | step {} ({:.0} samples/s) {} | best {} | {}",
        secs,
        games,
        games as f64 / secs * 60.0,
        decisive as f64 * 100.0 / games.max(1) as f64,
        plies,
        plies as f64 / secs,
        simulations as f64 / secs,
        batches.avg_fill * 100.0,
        progress.learner_step.load(Ordering::Relaxed),
        samples as f64 / secs,
        loss,
        progress.best_name.lock().unwrap(),
        last_gate
    )
}

fn selfplay_loop<G, S>(
    config: &RunConfig,
    run: &RunDir,
    progress: &Progress,
    stop_work: &(dyn Fn() -> bool + Sync),
    start: S,
) -> Result<()>
where
    G: NetGame + RecordGame,
    S: Fn(u64) -> G + Sync,
{
    let layout = layout_of(config);
    let device = parse_device(&config.run.device)?;
    let s = &config.selfplay;
    let search = search_config(config);
    let play = play_config(config);
    let batch = batch_config(config);
    // Several self-play processes may share replay/: each names its chunks with its own
    // tag, so no two writers ever pick the same file name; and the generation, so that a
    // process never repeats a name even when its chunks are taken away as they appear
    // (the Ray launcher's actors upload and delete them).
    let process_prefix = format!("selfplay-{}", process_tag());
    let stop_flag = AtomicBool::new(false);
    let mut total_batches = BatchStats::default();
    while !stop_work() {
        let generation = claim_generation(run.root())?;
        let chunk_prefix = format!("{process_prefix}-g{generation}");
        let (_, best) = run.best()?.context("no accepted network")?;
        let service =
            NetService::from_checkpoint(&best, layout, device, batch.clone(), s.half_inference)?;
        if let Some(manifest) = service.manifest() {
            *progress.best_name.lock().unwrap() = manifest.name.clone();
        }
        let evaluator = service.evaluator::<G>();
        let (threads, games_per_thread) = ActorConfig::spread(s.actors, s.actor_threads);
        let actors = ActorConfig {
            threads,
            games_per_thread,
            games: Some(s.games_per_generation),
            games_per_chunk: s.games_per_chunk,
            seed: generation_seed(config.run.seed, generation),
        };
        // run_actors watches one flag; mirror the run's stop conditions into it.
        // The watcher also publishes the batch counters as they grow: a generation can
        // last an hour on a GPU (thousands of games), and the status line must not show
        // the last generation's fill (or 0%) all that time.
        let result = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                let mut published = Instant::now();
                while !stop_flag.load(Ordering::Relaxed) {
                    if stop_work() {
                        stop_flag.store(true, Ordering::Relaxed);
                    }
                    if published.elapsed() >= Duration::from_millis(500) {
                        *progress.batches.lock().unwrap() = merge(total_batches, service.stats());
                        published = Instant::now();
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
            let result = run_actors(
                &actors,
                &search,
                &play,
                &start,
                &evaluator,
                &run.replay(),
                &chunk_prefix,
                &stop_flag,
                &progress.actors,
            );
            stop_flag.store(true, Ordering::Relaxed);
            watcher.join().expect("watcher thread panicked");
            result
        });
        stop_flag.store(false, Ordering::Relaxed);
        let stats = service.shutdown();
        total_batches = merge(total_batches, stats);
        *progress.batches.lock().unwrap() = total_batches;
        result.context("writing replay chunks")?;
    }
    Ok(())
}

/// Eight hex digits that differ between processes (pid and start time).
fn process_tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mixed = (nanos ^ (u64::from(std::process::id()) << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!("{:08x}", mixed >> 32)
}

/// The run directory's count of self-play generations started, continued across resumes.
pub const GENERATION_FILE: &str = "selfplay-generation";

/// Claims the next self-play generation number: reads `RUN/selfplay-generation` (0 when
/// absent), writes it back plus one (atomically) and returns the number read. A resumed
/// run so continues the generation numbers (and seeds) where the last invocation
/// stopped; a generation killed half-way is not replayed with the same seeds. Processes
/// started at the same instant on one run could claim the same number (their games
/// would repeat); give such self-play processes different `run.seed`s.
fn claim_generation(run_root: &Path) -> Result<u64> {
    let path = run_root.join(GENERATION_FILE);
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .with_context(|| format!("{}: not a generation number", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    shogi_rundir::write_atomic(&path, format!("{}\n", current + 1).as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(current)
}

/// The base seed of a self-play generation: a pure function of the run's seed and the
/// generation number (game `i` of the generation uses `base + i`, see
/// [`ActorConfig::seed`]), so two runs with one `run.seed` play the same games.
pub fn generation_seed(run_seed: u64, generation: u64) -> u64 {
    // splitmix64 of the pair: bases of neighbouring generations are far apart, so the
    // `base + i` ranges of two generations do not overlap in practice.
    let mut z = run_seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(generation.wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn merge(a: BatchStats, b: BatchStats) -> BatchStats {
    let batches = a.batches + b.batches;
    let inputs = a.inputs + b.inputs;
    let fill = if batches == 0 {
        0.0
    } else {
        (a.avg_fill * a.batches as f64 + b.avg_fill * b.batches as f64) / batches as f64
    };
    BatchStats {
        batches,
        inputs,
        requests: a.requests + b.requests,
        avg_batch: if batches == 0 {
            0.0
        } else {
            inputs as f64 / batches as f64
        },
        avg_fill: fill,
        max_batch_seen: a.max_batch_seen.max(b.max_batch_seen),
        model_time: a.model_time + b.model_time,
    }
}

#[allow(clippy::too_many_arguments)]
fn learner_loop(
    config: &RunConfig,
    run: &RunDir,
    model: Model,
    manifest: &shogi_model::Manifest,
    start_dir: &Path,
    progress: &Progress,
    stop_work: &(dyn Fn() -> bool + Sync),
    interrupt: &AtomicBool,
) -> Result<()> {
    let l = &config.learner;
    let mut window = ReplayWindow::new(run.replay(), l.window, sample_config(config));
    let learner_config = LearnerConfig {
        layout: layout_of(config),
        batch: l.batch,
        schedule: schedule(config),
        export_every: l.steps_per_candidate,
        run_dir: run.root().to_path_buf(),
        parent: Some(manifest.name.clone()),
        seed: config.run.seed ^ manifest.meta.training_step,
        start_step: manifest.meta.training_step,
        start_samples: manifest.meta.samples_seen,
    };
    let mut learner = Learner::new(model, train_config(config), learner_config)?;
    if manifest.meta.training_step > 0 {
        match learner.restore_optimizer(start_dir) {
            Ok(()) => info!("learner: optimiser state restored from {}", manifest.name),
            Err(why) => warn!(
                "learner: optimiser state NOT restored, it starts afresh (momentum/moments lost): {why}"
            ),
        }
    }
    let mut positions_seen: usize = 0;
    let mut samples_this_run: u64 = 0;
    let mut last_export = learner.step_count();
    const STEPS_PER_CALL: u64 = 5;
    while !stop_work() {
        positions_seen += window.refresh().context("reading replay/")?;
        let retired = window.take_retired();
        if l.prune_replay {
            for chunk in retired {
                // Another process may have pruned it already.
                if let Err(e) = std::fs::remove_file(&chunk)
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    warn!("pruning {}: {e}", chunk.display());
                }
            }
        }
        let allowed = l.replay_ratio * positions_seen as f64;
        if window.len() < l.min_positions || (samples_this_run + l.batch as u64) as f64 > allowed {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        }
        let mut steps = STEPS_PER_CALL;
        if config.run.max_steps > 0 {
            steps = steps.min(config.run.max_steps.saturating_sub(learner.step_count()));
            if steps == 0 {
                break;
            }
        }
        let summary = learner.run(&window, steps)?;
        samples_this_run += steps * l.batch as u64;
        progress
            .learner_samples
            .fetch_add(steps * l.batch as u64, Ordering::Relaxed);
        if !summary.candidates.is_empty() {
            last_export = learner.step_count();
            for c in &summary.candidates {
                info!("learner exported {}", c.display());
            }
        }
        progress
            .learner_step
            .store(learner.step_count(), Ordering::Relaxed);
        *progress.learner_loss.lock().unwrap() = summary.last;
    }
    // A graceful stop keeps every step: export what was trained since the last candidate.
    if learner.step_count() > last_export {
        let dir = learner.export()?;
        info!(
            "learner exported {} on stop{}",
            dir.display(),
            if interrupt.load(Ordering::Relaxed) {
                " (interrupted)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

fn gate_loop(
    config: &RunConfig,
    run: &RunDir,
    progress: &Progress,
    finishing: &AtomicBool,
    interrupt: &AtomicBool,
) -> Result<()> {
    let gate = gate_config(config);
    loop {
        // Read the flag before the pass, so the pass after the learner's last export
        // still runs.
        let last_pass = finishing.load(Ordering::Relaxed);
        if interrupt.load(Ordering::Relaxed) {
            return Ok(());
        }
        let reports = if config.gate.enabled {
            match gate_pending(run, &gate, interrupt) {
                // The candidate stays pending; a resumed run gates it again.
                Err(shogi_arena::ArenaError::Interrupted { .. }) => return Ok(()),
                other => other?,
            }
        } else {
            accept_all(run)?
        };
        for report in reports {
            if report.games == 0 {
                info!("gate off: {} promoted", report.candidate);
                progress.gate.lock().unwrap().push(report);
                continue;
            }
            info!(
                "gate: {} scored {:.1}% ({}-{}-{}) vs {}: {} (Elo vs first {:+.0})",
                report.candidate,
                report.score * 100.0,
                report.wins,
                report.draws,
                report.losses,
                report.best,
                if report.accepted {
                    "accepted"
                } else {
                    "rejected"
                },
                report.elo_vs_first
            );
            progress.gate.lock().unwrap().push(report);
        }
        if last_pass {
            return Ok(());
        }
        for _ in 0..10 {
            if finishing.load(Ordering::Relaxed) || interrupt.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Gating off: every candidate is promoted as it comes (AlphaZero's continual update).
fn accept_all(run: &RunDir) -> Result<Vec<GateReport>> {
    let mut reports = Vec::new();
    let best = run
        .best()?
        .map(|(_, p)| p.file_name().unwrap().to_string_lossy().into_owned())
        .unwrap_or_default();
    for (step, path) in run.pending_candidates()? {
        let report = GateReport {
            candidate: path.file_name().unwrap().to_string_lossy().into_owned(),
            best: best.clone(),
            step,
            accepted: true,
            ..GateReport::default()
        };
        let json = serde_json::to_vec_pretty(&report)?;
        run.promote(&path, &json)?;
        reports.push(report);
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::{Roles, claim_generation, generation_seed, model_config};
    use crate::config::RunConfig;

    #[test]
    fn a_material_weight_gives_the_network_its_material_head() {
        let mut config = RunConfig::default();
        assert!(!model_config(&config).material_head);
        config.learner.material_weight = 0.5;
        let arch = model_config(&config);
        assert!(arch.material_head);
        assert!(arch.parameter_shapes().contains_key("material.fc.weight"));
    }

    #[test]
    fn generation_seeds_depend_only_on_run_seed_and_generation() {
        // Pure: the same inputs give the same seed at any time (it once mixed in the
        // clock's nanoseconds).
        let first: Vec<u64> = (0..4).map(|g| generation_seed(1, g)).collect();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let again: Vec<u64> = (0..4).map(|g| generation_seed(1, g)).collect();
        assert_eq!(first, again);
        assert_eq!(generation_seed(7, 3), generation_seed(7, 3));
        // Different generations and run seeds give different, far-apart bases.
        let mut all: Vec<u64> = (0..64)
            .flat_map(|s| (0..64).map(move |g| generation_seed(s, g)))
            .collect();
        all.sort();
        assert!(all.windows(2).all(|w| w[1] - w[0] > 1 << 20));
    }

    #[test]
    fn generation_numbers_continue_across_invocations() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(claim_generation(dir.path()).unwrap(), 0);
        assert_eq!(claim_generation(dir.path()).unwrap(), 1);
        // A new process (resume) reads the file and goes on.
        assert_eq!(claim_generation(dir.path()).unwrap(), 2);
        let text = std::fs::read_to_string(dir.path().join(super::GENERATION_FILE)).unwrap();
        assert_eq!(text, "3\n");
        std::fs::write(dir.path().join(super::GENERATION_FILE), "x").unwrap();
        let err = format!("{:#}", claim_generation(dir.path()).unwrap_err());
        assert!(err.contains("not a generation number"), "{err}");
    }

    #[test]
    fn selfplay_search_keys_reach_the_search() {
        let c = RunConfig::parse("", "x.toml", &[]).unwrap();
        let s = super::search_config(&c);
        assert!(!s.expand_check_terminal);
        assert_eq!(s.root_mate_nodes, 0);
        assert_eq!(
            s.playout_cap, None,
            "full_search_prob = 1 is every move in full"
        );
        let c = RunConfig::parse(
            "[selfplay]\nterminal_check = true\nmate_search_nodes = 3000\nfull_search_prob = 0.25\ncheap_simulations = 6\n",
            "x.toml",
            &[],
        )
        .unwrap();
        let s = super::search_config(&c);
        assert!(s.expand_check_terminal);
        assert_eq!(s.root_mate_nodes, 3000);
        let cap = s.playout_cap.expect("a playout cap");
        assert_eq!(cap.full_search_prob, 0.25);
        assert_eq!(cap.cheap_simulations, 6);
        let err = RunConfig::parse("[selfplay]\nfull_search_prob = 1.5\n", "x.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("selfplay.full_search_prob"), "{err}");
    }

    #[test]
    fn roles_parse_and_refuse() {
        assert_eq!(Roles::parse("all").unwrap(), Roles::ALL);
        assert_eq!(Roles::parse("selfplay").unwrap(), Roles::SELFPLAY);
        let lg = Roles::parse("learn, gate").unwrap();
        assert!(lg.learn && lg.gate && !lg.selfplay);
        assert_eq!(lg.describe(), "learn+gate");
        assert!(!lg.is_all());
        let err = Roles::parse("selfplay,actor").unwrap_err().to_string();
        assert!(err.contains("unknown role \"actor\""), "{err}");
        assert!(Roles::parse("").is_err());
    }
}
