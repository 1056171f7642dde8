//! Actor threads: each advances many games side by side (one search tree per game) and
//! sends the leaves of all of them to its evaluator in one request, so a few threads fill
//! a network batch (an inference thread merges its actor threads' requests into
//! batches; on a CPU each actor thread has one of its own). Finished games are written as replay chunks. A slot whose game ends starts
//! the next game at once (its seed from [`GameSeeds`]), so every slot stays busy until
//! the seeds run out or the actors are stopped: nothing waits for a generation of games
//! to drain.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use shogi_game::EndReason;
use shogi_mcts::batch::BatchConfig;
use shogi_mcts::{EvalError, EvalRequest, Evaluator, SearchConfig, evaluate_retrying};

use crate::play::{GameProgress, PlayConfig, SelfPlayGame};
use shogi_records::record::{ChunkWriter, RecordError};
use shogi_registry::RecordGame;

/// The self-play inference service's batching unless a config says otherwise: at most 16
/// leaves a network call, waiting at most 2 ms for a batch to fill. Matches and the
/// engine batch by their own ([`BatchConfig::default`]).
pub const SELFPLAY_BATCH: BatchConfig = BatchConfig {
    max_batch: 16,
    max_wait: Duration::from_millis(2),
    callers: 0,
};

pub use shogi_mcts::MAX_FAILED_EVALUATIONS_IN_A_ROW;

/// Why self-play stopped before it was asked to.
#[derive(Debug, thiserror::Error)]
pub enum ActorError {
    /// A replay chunk could not be written.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The network failed every call of [`MAX_FAILED_EVALUATIONS_IN_A_ROW`].
    #[error("actor thread {actor}: {failures} network calls in a row failed, the last: {last}")]
    Evaluation {
        /// The actor thread.
        actor: usize,
        /// Failed calls in a row.
        failures: u32,
        /// The last call's error.
        last: EvalError,
    },
    /// The inference service shut down while the actors were still playing.
    #[error("actor thread {actor}: the inference service shut down while games were in progress")]
    ServiceGone {
        /// The actor thread.
        actor: usize,
    },
}

/// How many games, on how many threads, and where they go.
#[derive(Clone, Debug, PartialEq)]
pub struct ActorConfig {
    /// Actor threads. Each blocks while the network evaluates its request: with an
    /// inference thread of its own per actor thread, each pair keeps one core busy.
    pub threads: usize,
    /// Games each thread advances side by side; their pending leaves go to the evaluator
    /// in one request. `threads * games_per_thread` games are in flight.
    pub games_per_thread: usize,
    /// Games to play in all; `None` = until `stop` is raised.
    pub games: Option<u64>,
    /// Games per replay chunk file.
    pub games_per_chunk: usize,
    /// Base seed; game `i` uses `seed + i`, so a run is reproducible per game.
    pub seed: u64,
}

impl Default for ActorConfig {
    /// [`ActorConfig::DEFAULT_GAMES_IN_FLIGHT`] games on [`ActorConfig::DEFAULT_THREADS`]
    /// threads until stopped, 8 games a chunk, seed 1.
    fn default() -> Self {
        let (threads, games_per_thread) =
            ActorConfig::spread(Self::DEFAULT_GAMES_IN_FLIGHT, Self::DEFAULT_THREADS);
        ActorConfig {
            threads,
            games_per_thread,
            games: None,
            games_per_chunk: 8,
            seed: 1,
        }
    }
}

impl ActorConfig {
    /// Games in flight unless a config says otherwise.
    pub const DEFAULT_GAMES_IN_FLIGHT: usize = 16;
    /// Actor threads of [`ActorConfig::default`], for a caller that does not size them to
    /// the machine (the run and `shogi-zero selfplay` do: `shogi_model::selfplay_threads`).
    pub const DEFAULT_THREADS: usize = 2;

    /// `games_in_flight` concurrent games spread over `threads` threads (at least one
    /// game per thread; rounded up so no fewer than asked are in flight).
    pub fn spread(games_in_flight: usize, threads: usize) -> (usize, usize) {
        let threads = threads.clamp(1, games_in_flight.max(1));
        (threads, games_in_flight.max(1).div_ceil(threads))
    }
}

/// Where each new game's seed comes from. A thread asks whenever one of its slots frees
/// up; `None` starts no more games (the slot stays empty and the thread ends once its
/// other games have finished).
pub trait GameSeeds: Sync {
    /// The seed of the next game to start, or `None` for no more games.
    fn next_seed(&self) -> Option<u64>;
}

/// `games` games (endless with `None`), game `i` seeded `base + i` in the order they
/// start: [`ActorConfig`]'s own seeds.
#[derive(Debug)]
pub struct SeedRange {
    base: u64,
    games: Option<u64>,
    next: AtomicU64,
}

impl SeedRange {
    /// Seeds `base`, `base + 1`, ... for `games` games (`None`: without end).
    pub fn new(base: u64, games: Option<u64>) -> SeedRange {
        SeedRange {
            base,
            games,
            next: AtomicU64::new(0),
        }
    }
}

impl GameSeeds for SeedRange {
    fn next_seed(&self) -> Option<u64> {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        if self.games.is_some_and(|n| index >= n) {
            return None;
        }
        Some(self.base.wrapping_add(index))
    }
}

/// Counters of a self-play session.
#[derive(Debug, Default)]
pub struct ActorStats {
    /// Games in progress now (started and neither finished nor dropped by a stop).
    pub in_flight: AtomicU64,
    /// Finished games.
    pub games: AtomicU64,
    /// Plies of finished games.
    pub plies: AtomicU64,
    /// Simulations of finished games.
    pub simulations: AtomicU64,
    /// Plies played so far, games in progress included: counted move by move, so a rate
    /// over a short window is the throughput even when games last longer than the window
    /// (800 simulations a move on 512 boards: each game takes many minutes).
    pub plies_played: AtomicU64,
    /// Simulations run so far, games in progress included (as `plies_played`).
    pub simulations_run: AtomicU64,
    /// Games won by Black / White / drawn.
    pub black_wins: AtomicU64,
    /// Games won by White.
    pub white_wins: AtomicU64,
    /// Drawn games.
    pub draws: AtomicU64,
    /// Games ended by resignation.
    pub resignations: AtomicU64,
    /// Games reaching the ply cap that material adjudication gave to one side.
    pub adjudications: AtomicU64,
    /// Resignation-disabled games in which a resignation would have been wrong.
    pub false_resignations: AtomicU64,
    /// Resignation-disabled games in which someone would have resigned.
    pub would_resign: AtomicU64,
    /// Network calls that failed and were tried again.
    pub failed_evaluations: AtomicU64,
    /// `u64::MAX - shortest game length` (0 until a game finishes), so a zeroed counter
    /// means "none" and `fetch_max` keeps the minimum; read it with
    /// [`ActorStats::shortest_game`].
    shortest_inverted: AtomicU64,
    /// Longest finished game, in plies.
    pub max_game_plies: AtomicU64,
    /// Game lengths: bucket `i` counts games of `i * LENGTH_BUCKET_PLIES ..
    /// (i + 1) * LENGTH_BUCKET_PLIES` plies; the last bucket also holds all longer games.
    pub game_lengths: [AtomicU64; LENGTH_BUCKETS],
}

/// Width of an [`ActorStats::game_lengths`] bucket, in plies.
pub const LENGTH_BUCKET_PLIES: u64 = 16;
/// Number of [`ActorStats::game_lengths`] buckets.
pub const LENGTH_BUCKETS: usize = 32;

impl ActorStats {
    /// Counters at zero.
    pub fn new() -> Self {
        ActorStats::default()
    }

    /// Mean game length in plies (0 before any game).
    pub fn mean_game_plies(&self) -> f64 {
        let games = self.games.load(Ordering::Relaxed);
        if games == 0 {
            0.0
        } else {
            self.plies.load(Ordering::Relaxed) as f64 / games as f64
        }
    }

    /// Shortest finished game in plies, `None` before any game.
    pub fn shortest_game(&self) -> Option<u64> {
        let v = self.shortest_inverted.load(Ordering::Relaxed);
        (v > 0).then(|| u64::MAX - v)
    }

    /// The non-empty game-length buckets as (first ply of the bucket, games).
    pub fn length_histogram(&self) -> Vec<(u64, u64)> {
        self.game_lengths
            .iter()
            .enumerate()
            .map(|(i, c)| (i as u64 * LENGTH_BUCKET_PLIES, c.load(Ordering::Relaxed)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }
}

/// A summary returned when the actors stop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActorSummary {
    /// Finished games.
    pub games: u64,
    /// Plies played.
    pub plies: u64,
    /// Simulations run.
    pub simulations: u64,
    /// Wall time.
    pub elapsed: Duration,
}

/// Runs self-play on `config.threads` threads of `config.games_per_thread` slots each
/// (thread `t` evaluating with `evaluators[t % evaluators.len()]`, so each thread may
/// have an inference thread of its own) until `seeds` gives no more (and the games in progress have finished) or `stop` is
/// raised, writing chunks `PREFIX-aTT-NNNNNNNN.szgr` into `replay_dir` (TT = actor
/// thread). A slot whose game ends starts the next one at once, so the slots stay full
/// while there are seeds. Blocks the calling thread; returns after all actors have
/// flushed their chunks (a stop loses only the games in progress). An actor thread that
/// fails raises `stop`, so the others stop too and its error is returned. `config.games` and
/// `config.seed` are not read: `seeds` decides (`SeedRange::new(config.seed,
/// config.games)` plays game `i` with seed `config.seed + i`).
#[allow(clippy::too_many_arguments)]
pub fn run_actors<G, E, S>(
    config: &ActorConfig,
    seeds: &dyn GameSeeds,
    search: &SearchConfig,
    play: &PlayConfig,
    start: S,
    evaluators: &[E],
    replay_dir: &Path,
    prefix: &str,
    stop: &AtomicBool,
    stats: &ActorStats,
) -> Result<ActorSummary, ActorError>
where
    G: RecordGame,
    E: Evaluator<G>,
    S: Fn(u64) -> G + Sync,
{
    assert!(!evaluators.is_empty(), "run_actors needs an evaluator");
    let began = Instant::now();
    let failed: Arc<std::sync::Mutex<Option<ActorError>>> = Arc::default();
    std::thread::scope(|scope| {
        for actor in 0..config.threads.max(1) {
            let start = &start;
            let failed = failed.clone();
            // A failing actor thread stops the others too: its error is the run's, and
            // the rest must not play on as if nothing happened.
            let fail = move |e: ActorError| {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                stop.store(true, Ordering::Relaxed);
            };
            let evaluator = &evaluators[actor % evaluators.len()];
            scope.spawn(move || {
                let mut writer = match ChunkWriter::new(
                    replay_dir,
                    &format!("{prefix}-a{actor:02}"),
                    config.games_per_chunk,
                ) {
                    Ok(w) => w,
                    Err(e) => {
                        fail(e.into());
                        return;
                    }
                };
                let next = || -> Option<SelfPlayGame<G>> {
                    if stop.load(Ordering::Relaxed) {
                        return None;
                    }
                    let seed = seeds.next_seed()?;
                    Some(SelfPlayGame::new(start(seed), search, play, seed))
                };
                let mut slots: Vec<Option<SelfPlayGame<G>>> = (0..config.games_per_thread.max(1))
                    .map(|_| next())
                    .collect();
                // Counted per slot, a finished game's slot until it is refilled, so the
                // count never dips while a game is replaced.
                let filled = slots.iter().filter(|s| s.is_some()).count() as u64;
                stats.in_flight.fetch_add(filled, Ordering::Relaxed);
                let mut waiting: Vec<usize> = Vec::with_capacity(slots.len());
                // Per slot, the (plies, simulations) of its game already counted live.
                let mut counted = vec![(0u64, 0u64); slots.len()];
                'play: loop {
                    waiting.clear();
                    for (i, slot) in slots.iter_mut().enumerate() {
                        while let Some(game) = slot {
                            let progress = game.step();
                            let now = (game.plies() as u64, game.simulations());
                            stats
                                .plies_played
                                .fetch_add(now.0 - counted[i].0, Ordering::Relaxed);
                            stats
                                .simulations_run
                                .fetch_add(now.1 - counted[i].1, Ordering::Relaxed);
                            counted[i] = now;
                            match progress {
                                GameProgress::Evaluate => {
                                    waiting.push(i);
                                    break;
                                }
                                GameProgress::Finished => {
                                    counted[i] = (0, 0);
                                    let played = slot.take().expect("slot holds a game").finish();
                                    record_stats(stats, &played);
                                    let pushed = writer.push(played.record);
                                    if pushed.is_ok() {
                                        *slot = next();
                                    }
                                    if slot.is_none() {
                                        stats.in_flight.fetch_sub(1, Ordering::Relaxed);
                                    }
                                    if let Err(e) = pushed {
                                        fail(e.into());
                                        break 'play;
                                    }
                                }
                            }
                        }
                    }
                    // Nothing waits: every game is finished and no new one may start.
                    // On a stop the games in progress are dropped.
                    if waiting.is_empty() || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let outputs =
                        match evaluate_waiting(evaluator, &slots, &waiting, actor, stop, stats) {
                            Ok(Some(outputs)) => outputs,
                            // Stopped while the network failed: the games are dropped.
                            Ok(None) => break,
                            Err(e) => {
                                fail(e);
                                break;
                            }
                        };
                    let mut outputs = outputs.into_iter();
                    for &i in &waiting {
                        let game = slots[i].as_mut().expect("waiting");
                        let n = game.pending_evaluations().len();
                        game.provide(outputs.by_ref().take(n));
                    }
                }
                // Games still in progress are dropped (a stop or a failure).
                let dropped = slots.iter().filter(|s| s.is_some()).count() as u64;
                stats.in_flight.fetch_sub(dropped, Ordering::Relaxed);
                if let Err(e) = writer.flush() {
                    fail(e.into());
                }
            });
        }
    });
    if let Some(err) = failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(err);
    }
    Ok(ActorSummary {
        games: stats.games.load(Ordering::Relaxed),
        plies: stats.plies.load(Ordering::Relaxed),
        simulations: stats.simulations.load(Ordering::Relaxed),
        elapsed: began.elapsed(),
    })
}

/// The network's answers for the pending leaves of the `waiting` games, in order, a
/// failed call tried again ([`evaluate_retrying`]); `Ok(None)` when `stop` is raised
/// meanwhile. A service that shut down before the stop is an error: nobody asked the
/// actors to stop.
#[allow(clippy::type_complexity)]
fn evaluate_waiting<G: RecordGame, E: Evaluator<G>>(
    evaluator: &E,
    slots: &[Option<SelfPlayGame<G>>],
    waiting: &[usize],
    actor: usize,
    stop: &AtomicBool,
    stats: &ActorStats,
) -> Result<Option<Vec<(Vec<f32>, shogi_mcts::Wdl)>>, ActorError> {
    let make = || {
        waiting
            .iter()
            .flat_map(|&i| slots[i].as_ref().expect("waiting").pending_evaluations())
            .map(|(g, m)| EvalRequest::new(g, m))
            .collect()
    };
    let mut failures = 0;
    let answered = evaluate_retrying(evaluator, make, |n, err| {
        failures = n;
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        if err.is_transient() {
            stats.failed_evaluations.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                "actor thread {actor}: a network call failed ({n} in a row), trying again: {err}"
            );
        }
        true
    });
    match answered {
        Ok(outputs) => Ok(Some(outputs)),
        Err(_) if stop.load(Ordering::Relaxed) => Ok(None),
        Err(err) if !err.is_transient() => Err(ActorError::ServiceGone { actor }),
        Err(last) => Err(ActorError::Evaluation {
            actor,
            failures,
            last,
        }),
    }
}

fn record_stats(stats: &ActorStats, played: &crate::play::PlayedGame) {
    let rec = &played.record;
    stats.games.fetch_add(1, Ordering::Relaxed);
    stats
        .plies
        .fetch_add(rec.moves.len() as u64, Ordering::Relaxed);
    stats
        .simulations
        .fetch_add(played.simulations, Ordering::Relaxed);
    let len = rec.moves.len() as u64;
    stats.max_game_plies.fetch_max(len, Ordering::Relaxed);
    stats
        .shortest_inverted
        .fetch_max(u64::MAX - len, Ordering::Relaxed);
    let bucket = ((len / LENGTH_BUCKET_PLIES) as usize).min(LENGTH_BUCKETS - 1);
    stats.game_lengths[bucket].fetch_add(1, Ordering::Relaxed);
    let counter = match rec.outcome.winner {
        Some(shogi_game::Color::Black) => &stats.black_wins,
        Some(shogi_game::Color::White) => &stats.white_wins,
        None => &stats.draws,
    };
    counter.fetch_add(1, Ordering::Relaxed);
    match rec.outcome.reason {
        EndReason::Resignation => stats.resignations.fetch_add(1, Ordering::Relaxed),
        EndReason::Adjudication => stats.adjudications.fetch_add(1, Ordering::Relaxed),
        _ => 0,
    };
    if played.would_have_resigned.is_some() {
        stats.would_resign.fetch_add(1, Ordering::Relaxed);
        if played.false_resignation() {
            stats.false_resignations.fetch_add(1, Ordering::Relaxed);
        }
    }
}
