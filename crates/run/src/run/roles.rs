//! The three roles of a run, each a loop over the run directory: self-play generations,
//! learner steps and the gate.

use super::prepare::LearnerStart;
use super::settings::schedule;
use super::*;

/// Self-play for the whole invocation: every slot of `selfplay.actors` busy from the
/// start to the stop, on `selfplay.actor_threads` threads whose network calls
/// `selfplay.inference_threads` inference threads batch ([`selfplay_threads`]). A newer
/// best network is looked for whenever a generation of `selfplay.games_per_generation`
/// games has been claimed and replaces the served one between two batches
/// ([`NetService::replace_checkpoint`]): the games in progress go on with it (KataGo and
/// lc0 swap networks the same way), so no slot idles while a generation drains. With
/// the learner in this process (`beside_learner`) and the network on the CPU, the
/// inference threads yield the cores to it first ([`Serving::background`]).
pub(super) fn selfplay_loop<G, S>(
    config: &RunConfig,
    run: &RunDir,
    progress: &Progress,
    stop_work: &(dyn Fn() -> bool + Sync),
    beside_learner: bool,
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
    let seeds = GenerationSeeds::claim(run.root(), config.run.seed, s.games_per_generation)?;
    // Several self-play processes may share replay/: each names its chunks with its own
    // tag, so no two writers ever pick the same file name; and its first generation, so
    // that a process never repeats a name even when its chunks are taken away as they
    // appear (the Ray launcher's actors upload and delete them).
    let chunk_prefix = format!("selfplay-{}-g{}", process_tag(), seeds.first_generation());
    let threads = selfplay_threads(config, device);
    let (actor_threads, games_per_thread) = ActorConfig::spread(s.actors, threads.actor_threads);
    let serving = Serving {
        inference_threads: threads.inference_threads,
        callers: actor_threads,
        background: beside_learner && !device.is_cuda(),
    };
    let (mut service, mut served_step, mut refused) = serve_first(
        run,
        layout,
        device,
        batch,
        s.half_inference,
        serving,
        progress,
    )?;
    let evaluators = service.evaluators::<G>(actor_threads);
    let actors = ActorConfig {
        threads: actor_threads,
        games_per_thread,
        games_per_chunk: s.games_per_chunk,
    };
    let stop_flag = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        // The watcher mirrors the run's stop conditions into the actors' flag, publishes
        // the batch counters as they grow and serves each newer network as it comes.
        let watcher = scope.spawn(|| {
            let mut published = Instant::now();
            while !stop_flag.load(Ordering::Relaxed) {
                if stop_work() || seeds.failed() {
                    stop_flag.store(true, Ordering::Relaxed);
                }
                if published.elapsed() >= Duration::from_millis(500) {
                    *progress.batches.lock().unwrap() = service.stats();
                    published = Instant::now();
                }
                if seeds.take_claimed() {
                    serve_newest(run, &mut service, &mut served_step, &mut refused, progress);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let result = run_actors(
            &actors,
            &seeds,
            &search,
            &play,
            &start,
            &evaluators,
            &run.replay(),
            &chunk_prefix,
            &stop_flag,
            &progress.actors,
        );
        stop_flag.store(true, Ordering::Relaxed);
        watcher.join().expect("watcher thread panicked");
        result
    });
    *progress.batches.lock().unwrap() = service.shutdown();
    result?;
    seeds.into_result()
}

/// The newest accepted network that loads, served: one damaged on disk must not stop
/// self-play on every resume while an older one can play. Returns the service, the
/// served network's step, and the newest network if it was passed over (not tried
/// again at every generation).
fn serve_first(
    run: &RunDir,
    layout: NetLayout,
    device: shogi_model::tch::Device,
    batch: BatchConfig,
    half_inference: bool,
    serving: Serving,
    progress: &Progress,
) -> Result<(NetService, u64, Option<CheckpointIdentity>)> {
    let mut accepted = run.accepted_checkpoints()?;
    accepted.reverse();
    if accepted.is_empty() {
        bail!("no accepted network in {}", run.accepted().display());
    }
    let newest_step = accepted[0].0;
    let found = newest_that_loads(accepted, |dir| {
        NetService::from_checkpoint(dir, layout, device, batch.clone(), half_inference, serving)
    })
    .map_err(|tried| {
        anyhow!(
            "self-play: no accepted network loads: {}",
            tried_list(&tried)
        )
    })?;
    warn_passed_over("self-play", &found.passed_over);
    let refused = found
        .passed_over
        .first()
        .and_then(|(dir, _)| checkpoint_identity(newest_step, dir));
    let service = found.loaded;
    if let Some(manifest) = service.manifest() {
        *progress.best_name.lock().unwrap() = manifest.name.clone();
    }
    Ok((service, found.step, refused))
}

/// The learner continuing `start`'s network, with its optimiser state where the network
/// has one.
fn start_learner(
    config: &RunConfig,
    run: &RunDir,
    start: LearnerStart,
    progress: &Progress,
) -> Result<Learner> {
    let LearnerStart {
        model,
        manifest,
        dir: start_dir,
    } = start;
    let l = &config.learner;
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
        play: Some(play_root(config)),
        clock: progress.clock,
    };
    let mut learner = Learner::new(model, optimizer_settings(config), learner_config)?;
    if manifest.meta.training_step > 0 {
        match learner.restore_optimizer(&start_dir) {
            Ok(()) => info!("learner: optimiser state restored from {}", manifest.name),
            Err(why) => warn!(
                "learner: optimiser state NOT restored, it starts afresh (momentum/moments lost): {why}"
            ),
        }
    }
    Ok(learner)
}

/// Brings the replay window up to date: its size grown with the data
/// (`learner.window_growth`), the chunks written since read, the chunks that left it
/// pruned from disk where `learner.prune_replay` says so.
fn follow_replay(window: &mut ReplayWindow, config: &RunConfig, progress: &Progress) -> Result<()> {
    let l = &config.learner;
    if l.window_growth > 0.0 {
        let size = shogi_learner::grown_window(
            l.window,
            l.window_growth,
            l.window_exponent,
            window.positions_counted(),
        );
        if size != window.capacity() {
            window.set_capacity(size);
            progress.window.store(size as u64, Ordering::Relaxed);
        }
    }
    window.refresh().context("reading replay/")?;
    progress
        .chunks_skipped
        .store(window.chunks_skipped, Ordering::Relaxed);
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
    Ok(())
}

/// Serves the run's best network if it is newer than `served_step`; a network that
/// cannot be loaded (damaged on disk, say) is reported once (`refused`) and the served
/// one kept.
fn serve_newest(
    run: &RunDir,
    service: &mut NetService,
    served_step: &mut u64,
    refused: &mut Option<CheckpointIdentity>,
    progress: &Progress,
) {
    let best = match run.best() {
        Ok(Some((step, path))) if step > *served_step => (step, path),
        Ok(_) => return,
        Err(e) => {
            warn!("self-play: looking for a newer network: {e}");
            return;
        }
    };
    let identity = checkpoint_identity(best.0, &best.1);
    if identity.is_some() && identity == *refused {
        return;
    }
    match service.replace_checkpoint(&best.1) {
        Ok(()) => {
            *served_step = best.0;
            let name = service
                .manifest()
                .map_or_else(|| best.1.display().to_string(), |m| m.name.clone());
            info!(
                "self-play: {name} from the next batch on ({} games in flight go on with it)",
                progress.actors.in_flight.load(Ordering::Relaxed)
            );
            *progress.best_name.lock().unwrap() = name;
        }
        Err(e) => {
            *refused = identity;
            warn!(
                "self-play: keeps step {}; {} does not load: {e}",
                *served_step,
                best.1.display()
            );
        }
    }
}

/// A checkpoint's step and its manifest's modification time: a network trained again
/// to the step of a damaged one (which it supersedes) is another checkpoint.
type CheckpointIdentity = (u64, std::time::SystemTime);

fn checkpoint_identity(step: u64, dir: &Path) -> Option<CheckpointIdentity> {
    let manifest = dir.join(shogi_rundir::MANIFEST_FILE);
    Some((step, std::fs::metadata(manifest).ok()?.modified().ok()?))
}

/// A self-play process's game seeds, one generation after another without a pause: the
/// first game of every `per_generation` claims the run's next generation number
/// ([`claim_generation`], written before any of its games starts), and game `i` of
/// generation `g` is seeded `generation_seed(run_seed, g) + i`. So two runs with one
/// seed play the same first games, and a resumed or a second process never replays a
/// generation's seeds.
pub(super) struct GenerationSeeds<'a> {
    run_root: &'a Path,
    run_seed: u64,
    per_generation: u64,
    first: u64,
    state: Mutex<GenerationState>,
    /// Raised by each claim after the first (the watcher then looks for a newer network).
    claimed: AtomicBool,
    failed: AtomicBool,
}

struct GenerationState {
    generation: u64,
    /// Games of `generation` started.
    started: u64,
    error: Option<anyhow::Error>,
}

impl<'a> GenerationSeeds<'a> {
    /// Claims the first generation of this process.
    pub(super) fn claim(
        run_root: &'a Path,
        run_seed: u64,
        per_generation: u64,
    ) -> Result<GenerationSeeds<'a>> {
        let first = claim_generation(run_root)?;
        Ok(GenerationSeeds {
            run_root,
            run_seed,
            per_generation: per_generation.max(1),
            first,
            state: Mutex::new(GenerationState {
                generation: first,
                started: 0,
                error: None,
            }),
            claimed: AtomicBool::new(false),
            failed: AtomicBool::new(false),
        })
    }

    /// The generation claimed first.
    pub(super) fn first_generation(&self) -> u64 {
        self.first
    }

    /// Whether a generation was claimed since the last call.
    pub(super) fn take_claimed(&self) -> bool {
        self.claimed.swap(false, Ordering::Relaxed)
    }

    /// Whether a claim failed (no more seeds are given).
    pub(super) fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// The claim's error, if one failed.
    pub(super) fn into_result(self) -> Result<()> {
        match self.state.into_inner().unwrap().error {
            Some(e) => Err(e.context("claiming a self-play generation")),
            None => Ok(()),
        }
    }
}

impl GameSeeds for GenerationSeeds<'_> {
    fn next_seed(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap();
        if state.error.is_some() {
            return None;
        }
        if state.started >= self.per_generation {
            match claim_generation(self.run_root) {
                Ok(generation) => {
                    state.generation = generation;
                    state.started = 0;
                    self.claimed.store(true, Ordering::Relaxed);
                }
                Err(e) => {
                    state.error = Some(e);
                    self.failed.store(true, Ordering::Relaxed);
                    return None;
                }
            }
        }
        let seed = generation_seed(self.run_seed, state.generation).wrapping_add(state.started);
        state.started += 1;
        Some(seed)
    }
}

/// Eight hex digits that differ between processes (pid and start time).
pub(super) fn process_tag() -> String {
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
/// stopped; a generation killed half-way is not replayed with the same seeds. The read
/// and the write hold an exclusive lock on `selfplay-generation.lock`, so any number of
/// self-play processes on one run directory claim each number once.
pub(super) fn claim_generation(run_root: &Path) -> Result<u64> {
    let lock_path = run_root.join(format!("{GENERATION_FILE}.lock"));
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("locking {}", lock_path.display()))?;
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
/// generation number (game `i` of the generation uses `base + i`, as a
/// [`shogi_selfplay::actors::SeedRange`] seeds them), so two runs with one `run.seed`
/// play the same games.
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

pub(super) fn learner_loop(
    config: &RunConfig,
    run: &RunDir,
    start: LearnerStart,
    progress: &Progress,
    stop_work: &(dyn Fn() -> bool + Sync),
    interrupt: &AtomicBool,
) -> Result<()> {
    let l = &config.learner;
    let mut window = ReplayWindow::new(run.replay(), l.window, sample_config(config));
    // The replay-ratio budget goes on where the candidate left it: its positions counted
    // and samples trained over the run's life, whatever number of invocations.
    resume_replay_account(&mut window, &start.manifest, &start.dir)?;
    let mut learner = start_learner(config, run, start, progress)?;
    let mut last_export = learner.step_count();
    const STEPS_PER_CALL: u64 = 5;
    while !stop_work() {
        follow_replay(&mut window, config, progress)?;
        let allowed = l.replay_ratio * window.positions_counted() as f64;
        let trained = learner
            .samples_seen()
            .saturating_sub(window.samples_before_account());
        if window.len() < l.min_positions || (trained + l.batch as u64) as f64 > allowed {
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
        progress
            .steps_skipped
            .store(learner.non_finite_steps(), Ordering::Relaxed);
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

/// Sets `window` to go on with the replay account saved in the learner's start
/// checkpoint. A candidate exported before accounts were saved counts the chunks already
/// in `replay/` as trained on, and the samples it trained as outside the budget: the
/// learner waits for new positions rather than train the whole window again, and owes
/// nothing for the invocations before.
fn resume_replay_account(
    window: &mut ReplayWindow,
    manifest: &shogi_model::Manifest,
    start_dir: &Path,
) -> Result<()> {
    let trained = manifest.meta.samples_seen;
    if manifest.meta.training_step == 0 {
        // Nothing trained in this run yet: every chunk is new (a network from
        // `run.init` may bring samples of another run, outside this one's budget).
        window.resume_account(&ReplayAccount {
            samples_before: trained,
            ..ReplayAccount::default()
        });
        return Ok(());
    }
    match shogi_learner::read_replay_account(start_dir)? {
        Some(account) => {
            info!(
                "learner: replay account restored from {}: {} positions counted, {} samples trained since it began ({:.2} a position)",
                manifest.name,
                account.positions,
                trained.saturating_sub(account.samples_before),
                trained.saturating_sub(account.samples_before) as f64
                    / account.positions.max(1) as f64
            );
            window.resume_account(&account);
        }
        None => {
            warn!(
                "learner: {} has no replay account; the chunks now in replay/ count as trained on",
                manifest.name
            );
            window
                .count_present_chunks(trained)
                .context("reading replay/")?;
        }
    }
    Ok(())
}

pub(super) fn gate_loop(
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
            if let Some(why) = &report.refused {
                warn!(
                    "gate: {} does not load; set aside in rejected/ without a game: {why}",
                    report.candidate
                );
                progress
                    .candidates_set_aside
                    .fetch_add(1, Ordering::Relaxed);
                continue;
            }
            if let Some(newer) = &report.passed_over_for {
                info!(
                    "gate: {} passed over for the newer {} (in rejected/, no game)",
                    report.candidate, newer
                );
                continue;
            }
            for why in &report.best_passed_over {
                warn!(
                    "gate: an accepted network does not load, {} played {} instead: {why}",
                    report.candidate, report.best
                );
            }
            if report.games == 0 {
                info!("gate off: {} promoted", report.candidate);
                progress.gate.lock().unwrap().push(report);
                continue;
            }
            info!(
                "gate: {} scored {:.1}% ({}-{}-{}) vs {}: {} (Elo vs first {:+.0})",
                report.candidate,
                report.rating.score * 100.0,
                report.result.wins,
                report.result.draws,
                report.result.losses,
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
pub(super) fn accept_all(run: &RunDir) -> Result<Vec<GateReport>> {
    let mut reports = Vec::new();
    let best = run
        .best()?
        .map(|(_, p)| p.file_name().unwrap().to_string_lossy().into_owned())
        .unwrap_or_default();
    let best_dir = run.best()?.map(|(_, p)| p);
    for (step, path) in run.pending_candidates()? {
        if let Some(why) = best_dir
            .as_deref()
            .and_then(|best| shogi_arena::unloadable(&path, best))
        {
            reports.push(shogi_arena::set_aside(run, &path, &why)?);
            continue;
        }
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
