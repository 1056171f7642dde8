//! One training run in one process: self-play actors with the best network, the learner
//! on the freshest replay window, and the gate promoting candidates, side by side. They
//! coordinate only through the run directory ([`RunDir`]), exactly as separate
//! `selfplay`, `learn` and `gate` processes on several machines would.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use shogi_arena::{GateConfig, GateReport, gate_pending};
use shogi_features::NetLayout;
use shogi_learner::{
    Learner, LearnerConfig, LrSchedule, ReplayAccount, ReplayWindow, SampleConfig,
};
use shogi_mcts::SearchConfig;
use shogi_mcts::batch::{BatchConfig, BatchStats};
use shogi_model::{
    CheckpointMeta, Expected, Losses, Model, ModelConfig, NetService, OptimizerKind,
    OptimizerSettings, SelfplayThreads, Serving, ThreadCount, load_checkpoint,
    model_config_for_layout, parse_device, set_num_threads,
};
use shogi_registry::RecordGame;
use shogi_registry::{FromSpec, GameSpec, NetGame, with_game_type};
use shogi_rundir::{RoleLock, RunClock, RunDir, checkpoint_name, newest_that_loads};
use shogi_selfplay::actors::{ActorConfig, ActorStats, GameSeeds, run_actors};
use shogi_selfplay::play::PlayConfig;
use tracing::{error, info, warn};

use crate::config::{OptimizerName, RunConfig, ScheduleName};

mod prepare;
mod roles;
mod settings;

pub use prepare::prepare;
use prepare::{learner_network, learner_start, tried_list, warn_passed_over};
pub use roles::{GENERATION_FILE, generation_seed};
use roles::{gate_loop, learner_loop, selfplay_loop};
use settings::layout_of;
pub use settings::{
    batch_config, game_spec, gate_config, model_config, optimizer_settings, plain_root,
    play_config, play_root, sample_config, search_config, selfplay_threads,
};

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
    /// The process's CPU time when the invocation began (`None`: the system does not
    /// say): the status line's cores busy count from it.
    cpu_at_start: Option<Duration>,
    /// Replay chunks the learner skipped as unreadable (each named in the log).
    chunks_skipped: AtomicU64,
    /// Learner steps skipped for a non-finite loss or gradient.
    steps_skipped: AtomicU64,
    /// Candidates the gate moved to `rejected/` because they would not load.
    candidates_set_aside: AtomicU64,
    /// The replay window's size where it grows (`learner.window_growth`); 0 otherwise.
    window: AtomicU64,
    /// The run's clock, kept by the learner's process (`None` in a process without the
    /// learner): every candidate records its reading.
    clock: Option<RunClock>,
}

impl Progress {
    /// The counters of an invocation that starts now: the process's CPU time so far, and
    /// the run's clock going on from its earlier invocations' (kept where its networks
    /// are written: by the learner's process).
    fn starting(run: &RunDir, roles: Roles) -> Progress {
        let clock = roles.learn.then(|| {
            RunClock::resume(run).unwrap_or_else(|e| {
                warn!("{e}: the run's clock counts from 0 in this invocation");
                RunClock::starting_at(0.0)
            })
        });
        Progress {
            cpu_at_start: shogi_model::process_cpu_time(),
            clock,
            ..Progress::default()
        }
    }

    /// Records the run's clock for the next invocation (a failure is said, not fatal:
    /// the clock is a figure, not the run's state).
    fn record_clock(&self, run: &RunDir) {
        if let Some(clock) = &self.clock
            && let Err(e) = clock.record(run)
        {
            warn!("the run's clock was not recorded: {e}");
        }
    }

    /// The faults survived so far, for the status line: empty when there were none.
    fn faults(&self) -> String {
        let counts = [
            (
                self.actors.failed_evaluations.load(Ordering::Relaxed),
                "network calls retried",
            ),
            (
                self.chunks_skipped.load(Ordering::Relaxed),
                "chunks skipped",
            ),
            (
                self.steps_skipped.load(Ordering::Relaxed),
                "non-finite steps skipped",
            ),
            (
                self.candidates_set_aside.load(Ordering::Relaxed),
                "candidates set aside",
            ),
        ];
        let said: Vec<String> = counts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{what} {n}"))
            .collect();
        if said.is_empty() {
            String::new()
        } else {
            format!(" | faults: {}", said.join(", "))
        }
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
    let device = parse_device(&config.run.device)?;
    let threads = selfplay_threads(config, device);
    set_num_threads(threads.torch_threads);
    log_threads(config, roles, &threads);
    let layout = layout_of(config);

    let deadline = deadline_of(config, began);
    let finish = AtomicBool::new(false);
    let stop_work = || interrupt.load(Ordering::Relaxed) || finish.load(Ordering::Relaxed);
    let progress = Progress::starting(&run, roles);
    let (mut cause, mut ended_early) = (StopCause::TimeBudget, None);

    log_precision(config, roles, device);

    let (start_step, learner_start) = learner_network(&run, &layout, roles, device)?;
    progress.learner_step.store(start_step, Ordering::Relaxed);

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
                    roles.learn,
                    move |_| G::from_spec(&spec),
                ))
            })
        });
        let learner = learner_start.map(|start| {
            let (run, progress, stop_work) = (&run, &progress, &stop_work);
            scope.spawn(move || learner_loop(config, run, start, progress, stop_work, interrupt))
        });
        let gate = roles
            .gate
            .then(|| scope.spawn(|| gate_loop(config, &run, &progress, &gate_stop, interrupt)));
        let finished = |h: &Option<std::thread::ScopedJoinHandle<'_, Result<()>>>| {
            h.as_ref().is_some_and(|h| h.is_finished())
        };
        let ended = || {
            [
                (finished(&selfplay), "self-play"),
                (finished(&learner), "learner"),
                (finished(&gate), "gate"),
            ]
            .into_iter()
            .find_map(|(done, role)| done.then_some(role))
        };
        (cause, ended_early) = watch(
            config, roles, &run, &progress, began, deadline, interrupt, &ended,
        );
        finish.store(true, Ordering::Relaxed);
        let selfplay_result = join_role(selfplay, "self-play", ended_early);
        let learner_result = join_role(learner, "learner", ended_early);
        // The gate finishes the candidates the learner left, unless interrupted.
        gate_stop.store(true, Ordering::Relaxed);
        let gate_result = join_role(gate, "gate", ended_early);
        // The role that ended the run first names the cause.
        let mut results = [
            ("self-play", selfplay_result),
            ("learner", learner_result),
            ("gate", gate_result),
        ];
        results.sort_by_key(|(role, _)| ended_early != Some(*role));
        results.into_iter().try_for_each(|(_, result)| result)
    });
    progress.record_clock(&run);
    if let Err(e) = &result {
        // The log's last line says which role stopped the run and why; the process
        // exits non-zero with the same words.
        info!("{}", status_line(&progress, began));
        error!("run stopped: {e:#}");
    }
    result?;
    info!("{}", status_line(&progress, began));
    summary_of(&run, &progress, cause, began)
}

/// What a run that ended well did: why it ended, its counts, and its best network.
fn summary_of(
    run: &RunDir,
    progress: &Progress,
    cause: StopCause,
    began: Instant,
) -> Result<RunSummary> {
    let best = run
        .best()?
        .map(|(_, path)| path)
        .context("no accepted network")?;
    Ok(RunSummary {
        cause,
        games: progress.actors.games.load(Ordering::Relaxed),
        positions: progress.actors.plies.load(Ordering::Relaxed),
        learner_step: progress.learner_step.load(Ordering::Relaxed),
        gate_reports: progress.gate.lock().unwrap().clone(),
        best,
        elapsed: began.elapsed(),
    })
}

/// The end of this invocation's time budget (`run.minutes` from `began`), if it has one.
/// Checked arithmetic: a budget too long for the clock is no deadline (the config refuses
/// such values; a library caller may not have validated). The step budget is the whole
/// run's, counted by the learner.
fn deadline_of(config: &RunConfig, began: Instant) -> Option<Instant> {
    (config.run.minutes > 0.0)
        .then(|| Duration::try_from_secs_f64(config.run.minutes * 60.0).ok())
        .flatten()
        .and_then(|budget| began.checked_add(budget))
}

/// Watches the run until it must stop: an interrupt, the time budget, the step budget,
/// or a role that ended (`ended` names the first); says the status line every
/// `run.status_every_secs` meanwhile. Returns why, and the role that ended first when
/// that was not the learner reaching the step budget.
#[allow(clippy::too_many_arguments)]
fn watch(
    config: &RunConfig,
    roles: Roles,
    run: &RunDir,
    progress: &Progress,
    began: Instant,
    deadline: Option<Instant>,
    interrupt: &AtomicBool,
    ended: &dyn Fn() -> Option<&'static str>,
) -> (StopCause, Option<&'static str>) {
    let max_steps = config.run.max_steps;
    let steps_done = || max_steps > 0 && progress.learner_step.load(Ordering::Relaxed) >= max_steps;
    let status_every = Duration::from_secs(config.run.status_every_secs);
    let mut last_status = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        if interrupt.load(Ordering::Relaxed) {
            return (StopCause::Interrupted, None);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return (StopCause::TimeBudget, None);
        }
        if steps_done() {
            return (StopCause::StepBudget, None);
        }
        if let Some(role) = ended() {
            // The learner ends itself at `run.max_steps`; any other role that ends
            // first has failed (its error follows) or stopped for no reason.
            return match role == "learner" && steps_done() {
                true => (StopCause::StepBudget, None),
                false => (StopCause::TimeBudget, Some(role)),
            };
        }
        if last_status.elapsed() >= status_every {
            last_status = Instant::now();
            if !roles.learn {
                // The learner is elsewhere: its step is the newest network on disk.
                if let Ok((step, _)) = learner_start(run) {
                    progress.learner_step.store(step, Ordering::Relaxed);
                }
            }
            info!("{}", status_line(progress, began));
            progress.record_clock(run);
        }
    }
}

/// A role's thread joined: its error, or its panic as one, said as the role's
/// (`the learner stopped: ...`); a role that returned while the run was not stopping
/// (`ended_early`) is an error too.
fn join_role(
    handle: Option<std::thread::ScopedJoinHandle<'_, Result<()>>>,
    role: &str,
    ended_early: Option<&str>,
) -> Result<()> {
    let result = handle.map_or(Ok(()), |h| {
        h.join()
            .unwrap_or_else(|panic| Err(anyhow::anyhow!("panicked: {}", panic_message(&panic))))
    });
    match result {
        Err(e) => Err(e.context(format!("the {role} stopped"))),
        Ok(()) if ended_early == Some(role) => Err(anyhow::anyhow!(
            "the {role} stopped on its own before the run's budget was spent"
        )),
        Ok(()) => Ok(()),
    }
}

/// A thread's panic payload as text.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Says how the run spreads over the machine: the cores it may use and each thread
/// count, with where an `auto` one came from.
fn log_threads(config: &RunConfig, roles: Roles, threads: &SelfplayThreads) {
    let how = |count: ThreadCount| match count {
        ThreadCount::Auto => "auto",
        ThreadCount::Fixed(_) => "set",
    };
    let (s, r) = (&config.selfplay, &config.run);
    let selfplay = if roles.selfplay {
        format!(
            "selfplay.actor_threads {} ({}), selfplay.inference_threads {} ({}), ",
            threads.actor_threads,
            how(s.actor_threads),
            threads.inference_threads,
            how(s.inference_threads),
        )
    } else {
        String::new()
    };
    info!(
        "threads: {} cores available to this process; {selfplay}run.torch_threads {} ({})",
        shogi_model::available_cores(),
        threads.torch_threads,
        how(r.torch_threads),
    );
}

/// Says which precision the learner and self-play networks run in: the learner's mixed
/// precision is f16 autocast on CUDA and bf16 convolutions on a CPU that computes bf16
/// natively (f32 elsewhere), and self-play's half precision is f16 on CUDA, bf16 on such
/// a CPU and f32 elsewhere; what an option does not change is stated, not hidden.
fn log_precision(config: &RunConfig, roles: Roles, device: shogi_model::tch::Device) {
    use shogi_model::tch::Kind;
    if roles.learn {
        let on = config.learner.mixed_precision;
        match (on, device.is_cuda(), shogi_model::half_kind(device)) {
            (true, true, _) => {
                info!("learner.mixed_precision = true: learner steps in f16 on {device:?}")
            }
            (true, false, Kind::BFloat16) => info!(
                "learner.mixed_precision = true: learner convolutions in bf16 on this CPU (AVX-512 BF16), weights and batch norms f32"
            ),
            (true, false, _) => info!(
                "learner.mixed_precision = true has no effect on this CPU (no native bf16): learner steps in f32"
            ),
            (false, _, _) => info!("learner.mixed_precision = false: learner steps in f32"),
        }
    }
    if roles.selfplay {
        match (
            config.selfplay.half_inference,
            shogi_model::half_kind(device),
        ) {
            (false, _) => info!("selfplay.half_inference = false: self-play inference in f32"),
            (true, Kind::Float) => info!(
                "selfplay.half_inference = true is ignored on this CPU (no AVX-512 BF16): \
                 self-play inference in f32"
            ),
            (true, Kind::BFloat16) => {
                info!("selfplay.half_inference = true: self-play inference in bf16 on the CPU")
            }
            (true, kind) => info!(
                "selfplay.half_inference = true: self-play inference in {kind:?} on {device:?}"
            ),
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
                r.rating.score * 100.0,
                if r.accepted { "accepted" } else { "rejected" },
                r.elo_vs_first
            )
        })
        .unwrap_or_else(|| "no gate yet".into());
    let decisive = progress.actors.black_wins.load(Ordering::Relaxed)
        + progress.actors.white_wins.load(Ordering::Relaxed);
    // Games the rules did not decide: given to the side ahead in material at the cap.
    let adjudicated = match progress.actors.adjudications.load(Ordering::Relaxed) {
        0 => String::new(),
        n => format!(
            ", {:.0}% adjudicated",
            n as f64 * 100.0 / games.max(1) as f64
        ),
    };
    let simulations = progress.actors.simulations_run.load(Ordering::Relaxed);
    let samples = progress.learner_samples.load(Ordering::Relaxed);
    // CPU time over wall time since the invocation began: the cores the run keeps busy.
    let cores_busy = match (progress.cpu_at_start, shogi_model::process_cpu_time()) {
        (Some(start), Some(now)) => format!(
            " cores busy {:.2}/{}",
            now.saturating_sub(start).as_secs_f64() / secs,
            shogi_model::available_cores()
        ),
        _ => String::new(),
    };
    let window = match progress.window.load(Ordering::Relaxed) {
        0 => String::new(),
        size => format!(" window {size}"),
    };
    // Plies are positions played (and stored); simulations are network evaluations
    // (`shogi-zero selfplay` reports those as positions/s); samples are learner rows.
    format!(
        "[{:>5.0}s] games {} ({:.1}/min, {:.0}% decisive{}, {} in flight) plies {} ({:.0}/s, {:.0} simulations/s) batch fill {:.0}%{} | step {} ({:.0} samples/s){} {} | best {} | {}{}",
        secs,
        games,
        games as f64 / secs * 60.0,
        decisive as f64 * 100.0 / games.max(1) as f64,
        adjudicated,
        progress.actors.in_flight.load(Ordering::Relaxed),
        plies,
        plies as f64 / secs,
        simulations as f64 / secs,
        batches.avg_fill * 100.0,
        cores_busy,
        progress.learner_step.load(Ordering::Relaxed),
        samples as f64 / secs,
        window,
        loss,
        progress.best_name.lock().unwrap(),
        last_gate,
        progress.faults(),
    )
}

#[cfg(test)]
mod tests {
    use super::roles::claim_generation;
    use super::{Roles, generation_seed, model_config, optimizer_settings, sample_config};
    use crate::config::RunConfig;

    #[test]
    fn the_status_line_says_how_many_games_the_cap_decided() {
        use std::sync::atomic::Ordering;
        let progress = super::Progress::default();
        let began = std::time::Instant::now();
        assert!(!super::status_line(&progress, began).contains("adjudicated"));
        progress.actors.games.store(4, Ordering::Relaxed);
        progress.actors.black_wins.store(4, Ordering::Relaxed);
        progress.actors.adjudications.store(3, Ordering::Relaxed);
        let line = super::status_line(&progress, began);
        assert!(line.contains("100% decisive, 75% adjudicated,"), "{line}");
    }

    #[test]
    fn a_material_weight_gives_the_network_its_material_head() {
        let mut config = RunConfig::default();
        assert!(!model_config(&config).material_head);
        config.learner.material_weight = 0.5;
        let arch = model_config(&config);
        assert!(arch.material_head);
        assert!(arch.parameter_shapes().contains_key("material.fc.weight"));
    }

    /// An opponent-policy weight gives the network that head and the samples its
    /// targets; without one neither is built.
    #[test]
    fn an_opponent_policy_weight_gives_the_network_its_head_and_the_samples_their_replies() {
        let mut config = RunConfig::default();
        assert!(!model_config(&config).opponent_policy);
        assert!(!sample_config(&config).opponent_policy);
        config.learner.opponent_policy_weight = 0.15;
        let arch = model_config(&config);
        assert!(arch.opponent_policy && !arch.material_head);
        assert!(
            arch.parameter_shapes()
                .contains_key("policy.opponent.weight")
        );
        assert!(sample_config(&config).opponent_policy);
        assert_eq!(optimizer_settings(&config).opponent_policy_weight, 0.15);
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

    /// Claimers at the same instant (each with its own open file, as separate processes
    /// have) never get the same number.
    #[test]
    fn concurrent_claims_get_each_generation_once() {
        let dir = tempfile::tempdir().unwrap();
        let (claimers, each) = (8, 40);
        let mut all: Vec<u64> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..claimers)
                .map(|_| {
                    scope.spawn(|| {
                        (0..each)
                            .map(|_| claim_generation(dir.path()).unwrap())
                            .collect::<Vec<u64>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        all.sort_unstable();
        assert_eq!(all, (0..claimers * each).collect::<Vec<u64>>());
    }

    /// Self-play's seeds run from one generation into the next without a pause: the
    /// first game past each `per_generation` claims the next number (the file is written
    /// before that game starts), seeds follow `generation_seed(run, g) + i`, and a second
    /// process (or a resume) on the same run goes on with fresh generations, so no game
    /// is played twice.
    #[test]
    fn generation_seeds_flow_from_one_generation_into_the_next() {
        use super::roles::GenerationSeeds;
        use shogi_selfplay::actors::GameSeeds;
        let dir = tempfile::tempdir().unwrap();
        let seeds = GenerationSeeds::claim(dir.path(), 5, 3).unwrap();
        assert_eq!(seeds.first_generation(), 0);
        let first: Vec<u64> = (0..7).map(|_| seeds.next_seed().unwrap()).collect();
        let expect = |g: u64, i: u64| generation_seed(5, g) + i;
        assert_eq!(
            first,
            [
                expect(0, 0),
                expect(0, 1),
                expect(0, 2),
                expect(1, 0),
                expect(1, 1),
                expect(1, 2),
                expect(2, 0)
            ]
        );
        // Claims after the first are announced once (the watcher looks for a network).
        assert!(seeds.take_claimed());
        assert!(!seeds.take_claimed());
        let file = dir.path().join(super::GENERATION_FILE);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "3\n");
        // Another process on the same run starts at the next generation.
        let other = GenerationSeeds::claim(dir.path(), 5, 3).unwrap();
        assert_eq!(other.first_generation(), 3);
        assert_eq!(other.next_seed(), Some(expect(3, 0)));
        // A claim that fails stops the seeds and is reported by name.
        std::fs::write(&file, "x").unwrap();
        for _ in 0..2 {
            seeds.next_seed();
        }
        assert_eq!(seeds.next_seed(), None);
        assert!(seeds.failed());
        let err = format!("{:#}", seeds.into_result().unwrap_err());
        assert!(err.contains("not a generation number"), "{err}");
    }

    #[test]
    fn selfplay_search_keys_reach_the_search() {
        let c = RunConfig::parse("", "x.toml", &[]).unwrap();
        let s = super::search_config(&c);
        assert!(!s.terminal_check);
        assert_eq!(s.root_mate_nodes, 0);
        assert_eq!(
            s.full_search_prob, 1.0,
            "full_search_prob = 1 is every move in full"
        );
        let c = RunConfig::parse(
            "[selfplay]\nterminal_check = true\nroot_mate_nodes = 3000\nfull_search_prob = 0.25\ncheap_simulations = 6\n",
            "x.toml",
            &[],
        )
        .unwrap();
        let s = super::search_config(&c);
        assert!(s.terminal_check);
        assert_eq!(s.root_mate_nodes, 3000);
        assert_eq!((s.full_search_prob, s.cheap_simulations), (0.25, 6));
        // A run directory written before the mate-search keys were renamed resumes.
        let old_names = RunConfig::parse(
            "[selfplay]\nmate_search_nodes = 3000\ncheap_mate_search_nodes = 500\n",
            "x.toml",
            &[],
        )
        .unwrap();
        let s = super::search_config(&old_names);
        assert_eq!((s.root_mate_nodes, s.cheap_root_mate_nodes), (3000, 500));
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

    /// Every key of the run config reaches what it configures: changing any one of them
    /// changes a setting the run hands a library (search, self-play, samples, optimiser,
    /// schedule, gate, network, game), or the key is one the run loop reads itself
    /// (listed). A key added to a section but never mapped fails here.
    #[test]
    fn every_config_key_reaches_the_settings_it_names() {
        use super::settings::{play_config, play_root, schedule};
        use super::{
            batch_config, game_spec, gate_config, optimizer_settings, sample_config, search_config,
        };
        // Keys the run loop reads directly (budgets, actors, the learner's pace).
        const RUN_LOOP: [&str; 18] = [
            "run.dir",
            "run.init",
            "run.minutes",
            "run.max_steps",
            "run.status_every_secs",
            "selfplay.actors",
            "selfplay.games_per_chunk",
            "selfplay.games_per_generation",
            "selfplay.half_inference",
            "learner.batch",
            "learner.window",
            "learner.window_growth",
            "learner.window_exponent",
            "learner.min_positions",
            "learner.replay_ratio",
            "learner.steps_per_candidate",
            "learner.prune_replay",
            "gate.enabled",
        ];
        let settings = |c: &RunConfig| {
            format!(
                "{:?}",
                (
                    search_config(c),
                    play_config(c),
                    batch_config(c),
                    sample_config(c),
                    optimizer_settings(c),
                    schedule(c),
                    gate_config(c),
                    model_config(c),
                    game_spec(c),
                    play_root(c),
                    super::selfplay_threads(c, shogi_model::tch::Device::Cpu),
                )
            )
        };
        // Keys that matter only under another key's value.
        let context = |key: &str| -> Vec<String> {
            let set: &[&str] = match key {
                "learner.lr_boundaries" | "learner.lr_factor" => &["learner.schedule=\"steps\""],
                "learner.lr_warmup" | "learner.lr_total" | "learner.lr_min" => {
                    &["learner.schedule=\"cosine\""]
                }
                "gate.sprt_elo0" | "gate.sprt_elo1" | "gate.sprt_error" => &["gate.sprt=true"],
                "gate.fixed_games" => &["gate.fixed_opponent=\"random\""],
                "selfplay.cheap_simulations" => &["selfplay.full_search_prob=0.5"],
                k if k.starts_with("game.tai.") => &["game.variant=\"tai\""],
                _ => &[],
            };
            set.iter().map(|s| s.to_string()).collect()
        };
        let other_value = |key: &str, value: &toml::Value| -> String {
            match (key, value) {
                ("selfplay.root", _) => "\"puct\"".into(),
                ("learner.optimizer", _) => "\"adamw\"".into(),
                ("learner.schedule", _) => "\"cosine\"".into(),
                ("network.features", _) => "\"attacks\"".into(),
                ("learner.material_scale", _) => "\"mobility\"".into(),
                ("game.variant", _) => "\"shogi\"".into(),
                ("game.impasse", _) => "\"declaration27\"".into(),
                ("game.tai.emperor", _) => "\"never\"".into(),
                ("game.tai.promotion", _) => "\"capturing_promoted\"".into(),
                ("game.tai.lion_dog", _) => "\"q3\"".into(),
                ("game.tai.repetition", _) => "\"forbidden\"".into(),
                ("run.device", _) => "\"cpu\"".into(),
                // Not what `auto` gives on this machine's cores (on a CPU: one actor and
                // one inference thread a core, one intra-op thread).
                ("run.torch_threads", _) => "2".into(),
                ("selfplay.actor_threads" | "selfplay.inference_threads", _) => {
                    if shogi_model::available_cores() >= 2 {
                        "1"
                    } else {
                        "2"
                    }
                    .into()
                }
                ("gate.fixed_opponent", _) => "\"random\"".into(),
                (_, toml::Value::String(_)) => "\"elsewhere\"".into(),
                (_, toml::Value::Boolean(b)) => (!b).to_string(),
                (_, toml::Value::Integer(i)) => (i + 2).to_string(),
                (_, toml::Value::Float(f)) if *f == 0.0 => "0.5".into(),
                (_, toml::Value::Float(f)) => format!("{:?}", f * 0.5),
                (_, toml::Value::Array(_)) => "[10, 20]".into(),
                (_, other) => panic!("{key}: no other value for {other}"),
            }
        };
        let defaults: toml::Table = RunConfig::default().to_toml().parse().unwrap();
        let mut keys = Vec::new();
        for (section, table) in &defaults {
            for (key, value) in table.as_table().unwrap() {
                match value.as_table() {
                    Some(inner) => keys.extend(
                        inner
                            .iter()
                            .map(|(k, v)| (format!("{section}.{key}.{k}"), v.clone())),
                    ),
                    None => keys.push((format!("{section}.{key}"), value.clone())),
                }
            }
        }
        assert!(keys.len() > 70, "{} keys", keys.len());
        for (key, value) in keys {
            let base = RunConfig::parse("", "base", &context(&key)).unwrap();
            let mut changed = context(&key);
            changed.push(format!("{key}={}", other_value(&key, &value)));
            let config =
                RunConfig::parse("", "changed", &changed).unwrap_or_else(|e| panic!("{key}: {e}"));
            let reaches = settings(&config) != settings(&base);
            if RUN_LOOP.contains(&key.as_str()) {
                assert!(!reaches, "{key} is mapped: take it off the run-loop list");
            } else {
                assert!(
                    reaches,
                    "{key} changes none of the settings the run hands out"
                );
            }
        }
    }
}
