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

/// Why self-play stopped before it was asked to.
#[derive(Debug, thiserror::Error)]
pub enum ActorError {
    /// A replay chunk could not be written.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The network failed every call of [`shogi_mcts::MAX_FAILED_EVALUATIONS_IN_A_ROW`].
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

/// How many games in flight, on how many threads, and how many a chunk (which games and
/// how many in all: the [`GameSeeds`] given to [`run_actors`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ActorConfig {
    /// Actor threads. Each blocks while the network evaluates its request: with an
    /// inference thread of its own per actor thread, each pair keeps one core busy.
    pub threads: usize,
    /// Games each thread advances side by side; their pending leaves go to the evaluator
    /// in one request. `threads * games_per_thread` games are in flight.
    pub games_per_thread: usize,
    /// Games per replay chunk file.
    pub games_per_chunk: usize,
}

impl Default for ActorConfig {
    /// [`ActorConfig::DEFAULT_GAMES_IN_FLIGHT`] games on [`ActorConfig::DEFAULT_THREADS`]
    /// threads, 8 games a chunk.
    fn default() -> Self {
        let (threads, games_per_thread) =
            ActorConfig::spread(Self::DEFAULT_GAMES_IN_FLIGHT, Self::DEFAULT_THREADS);
        ActorConfig {
            threads,
            games_per_thread,
            games_per_chunk: 8,
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
/// start.
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
/// fails raises `stop`, so the others stop too and its error is returned. `seeds` decides
/// which games are played and how many (`SeedRange::new(seed, games)` plays game `i`
/// with seed `seed + i`).
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
    let shared = Shared {
        seeds,
        search,
        play,
        start: &start,
        stop,
        stats,
    };
    let failed: Arc<std::sync::Mutex<Option<ActorError>>> = Arc::default();
    std::thread::scope(|scope| {
        for index in 0..config.threads.max(1) {
            let (shared, failed) = (&shared, failed.clone());
            let evaluator = &evaluators[index % evaluators.len()];
            scope.spawn(move || {
                let name = format!("{prefix}-a{index:02}");
                let played =
                    Actor::start(index, shared, config, replay_dir, &name).and_then(|mut actor| {
                        let played = actor.play(evaluator);
                        played.and(actor.close())
                    });
                // A failing actor thread stops the others too: its error is the run's,
                // and the rest must not play on as if nothing happened.
                if let Err(e) = played {
                    *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    stop.store(true, Ordering::Relaxed);
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

/// What the actor threads of one [`run_actors`] share.
struct Shared<'a, S> {
    seeds: &'a dyn GameSeeds,
    search: &'a SearchConfig,
    play: &'a PlayConfig,
    start: &'a S,
    stop: &'a AtomicBool,
    stats: &'a ActorStats,
}

/// One actor thread: its slots of games side by side, the chunk file it writes, and
/// what of its games the live counters have counted.
struct Actor<'a, G: RecordGame, S> {
    index: usize,
    shared: &'a Shared<'a, S>,
    writer: ChunkWriter,
    slots: Vec<Option<SelfPlayGame<G>>>,
    /// Per slot, the (plies, simulations) of its game already counted live.
    counted: Vec<(u64, u64)>,
    /// The slots whose game waits for the network, in the order their leaves are sent.
    waiting: Vec<usize>,
}

impl<'a, G: RecordGame, S: Fn(u64) -> G> Actor<'a, G, S> {
    /// An actor writing chunks named `name` into `replay_dir`, its slots filled.
    fn start(
        index: usize,
        shared: &'a Shared<'a, S>,
        config: &ActorConfig,
        replay_dir: &Path,
        name: &str,
    ) -> Result<Self, ActorError> {
        let writer = ChunkWriter::new(replay_dir, name, config.games_per_chunk)?;
        let slots: Vec<_> = (0..config.games_per_thread.max(1))
            .map(|_| next_game(shared))
            .collect();
        // Counted per slot, a finished game's slot until it is refilled, so the count
        // never dips while a game is replaced.
        let filled = slots.iter().filter(|s| s.is_some()).count() as u64;
        shared.stats.in_flight.fetch_add(filled, Ordering::Relaxed);
        Ok(Actor {
            index,
            shared,
            writer,
            counted: vec![(0, 0); slots.len()],
            waiting: Vec::with_capacity(slots.len()),
            slots,
        })
    }

    /// Plays until every game is finished and no new one may start, or the run stops.
    fn play<E: Evaluator<G>>(&mut self, evaluator: &E) -> Result<(), ActorError> {
        let Shared { stop, stats, .. } = *self.shared;
        loop {
            self.advance()?;
            // Nothing waits: every game is finished and no new one may start. On a stop
            // the games in progress are dropped.
            if self.waiting.is_empty() || stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let waiting = &self.waiting;
            match evaluate_waiting(evaluator, &self.slots, waiting, self.index, stop, stats)? {
                Some(outputs) => self.provide(outputs),
                // Stopped while the network failed: the games are dropped.
                None => return Ok(()),
            }
        }
    }

    /// Steps every game until it waits for the network; a finished game is written and
    /// its slot given the next game.
    fn advance(&mut self) -> Result<(), ActorError> {
        self.waiting.clear();
        for i in 0..self.slots.len() {
            while let Some(game) = &mut self.slots[i] {
                let progress = game.step();
                self.count_live(i);
                match progress {
                    GameProgress::Evaluate => {
                        self.waiting.push(i);
                        break;
                    }
                    GameProgress::Finished => self.finished(i)?,
                }
            }
        }
        Ok(())
    }

    /// Adds what slot `i`'s game played since it was last counted to the live counters.
    fn count_live(&mut self, i: usize) {
        let game = self.slots[i].as_ref().expect("a game to count");
        let stats = self.shared.stats;
        let now = (game.plies() as u64, game.simulations());
        let (plies, simulations) = self.counted[i];
        stats
            .plies_played
            .fetch_add(now.0 - plies, Ordering::Relaxed);
        stats
            .simulations_run
            .fetch_add(now.1 - simulations, Ordering::Relaxed);
        self.counted[i] = now;
    }

    /// Slot `i`'s game has ended: its record goes to the chunk, the slot to a new game.
    fn finished(&mut self, i: usize) -> Result<(), ActorError> {
        let stats = self.shared.stats;
        self.counted[i] = (0, 0);
        let played = self.slots[i].take().expect("slot holds a game").finish();
        record_stats(stats, &played);
        let pushed = self.writer.push(played.record);
        if pushed.is_ok() {
            self.slots[i] = next_game(self.shared);
        }
        if self.slots[i].is_none() {
            stats.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
        pushed?;
        Ok(())
    }

    /// The network's answers, in the order of `waiting`, to the games that wait.
    fn provide(&mut self, outputs: Vec<(Vec<f32>, shogi_mcts::Wdl)>) {
        let mut outputs = outputs.into_iter();
        for &i in &self.waiting {
            let game = self.slots[i].as_mut().expect("waiting");
            let n = game.pending_evaluations().len();
            game.provide(outputs.by_ref().take(n));
        }
    }

    /// Drops the games still in progress (a stop or a failure) and writes out the last
    /// chunk.
    fn close(mut self) -> Result<(), ActorError> {
        let dropped = self.slots.iter().filter(|s| s.is_some()).count() as u64;
        self.shared
            .stats
            .in_flight
            .fetch_sub(dropped, Ordering::Relaxed);
        self.writer.flush()?;
        Ok(())
    }
}

/// The next game, unless the run stops or the seeds are spent.
fn next_game<G: RecordGame, S: Fn(u64) -> G>(shared: &Shared<'_, S>) -> Option<SelfPlayGame<G>> {
    if shared.stop.load(Ordering::Relaxed) {
        return None;
    }
    let seed = shared.seeds.next_seed()?;
    Some(SelfPlayGame::new(
        (shared.start)(seed),
        shared.search,
        shared.play,
        seed,
    ))
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
