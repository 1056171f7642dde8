//! Actor threads: each plays games one after another with its own search tree, all
//! sharing one evaluator (a batched inference service in production, so many concurrent
//! games fill one network batch), and writes finished games as replay chunks.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use shogi_game::EndReason;
use shogi_mcts::{Evaluator, SearchConfig};
use shogi_rules::ShogiGame;

use crate::play::{PlayConfig, play_game};
use crate::record::{ChunkWriter, RecordError};

/// How many games, on how many threads, and where they go.
#[derive(Clone, Debug)]
pub struct ActorConfig {
    /// Actor threads (concurrent games). Each blocks while its evaluation is batched with
    /// the others', so on a CPU this is usually several times the core count.
    pub threads: usize,
    /// Games to play in all; `None` = until `stop` is raised.
    pub games: Option<u64>,
    /// Games per replay chunk file.
    pub games_per_chunk: usize,
    /// Base seed; game `i` uses `seed + i`, so a run is reproducible per game.
    pub seed: u64,
}

/// Counters of a self-play session.
#[derive(Debug, Default)]
pub struct ActorStats {
    /// Finished games.
    pub games: AtomicU64,
    /// Plies played.
    pub plies: AtomicU64,
    /// Simulations run.
    pub simulations: AtomicU64,
    /// Games won by Black / White / drawn.
    pub black_wins: AtomicU64,
    /// Games won by White.
    pub white_wins: AtomicU64,
    /// Drawn games.
    pub draws: AtomicU64,
    /// Games ended by resignation.
    pub resignations: AtomicU64,
    /// Resignation-disabled games in which a resignation would have been wrong.
    pub false_resignations: AtomicU64,
    /// Resignation-disabled games in which someone would have resigned.
    pub would_resign: AtomicU64,
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

/// Runs self-play until `config.games` are done or `stop` is raised, writing chunks
/// `PREFIX-NNNNNNNN.szgr` into `replay_dir`. Blocks the calling thread; returns after all
/// actors have flushed their chunks (a stop loses only the games in progress).
#[allow(clippy::too_many_arguments)]
pub fn run_actors<E, S>(
    config: &ActorConfig,
    search: &SearchConfig,
    play: &PlayConfig,
    start: S,
    evaluator: &E,
    replay_dir: &Path,
    prefix: &str,
    stop: &AtomicBool,
    stats: &ActorStats,
) -> Result<ActorSummary, RecordError>
where
    E: Evaluator<ShogiGame> + ?Sized,
    S: Fn(u64) -> ShogiGame + Sync,
{
    let began = Instant::now();
    let next_game = AtomicU64::new(0);
    let failed: Arc<std::sync::Mutex<Option<RecordError>>> = Arc::default();
    std::thread::scope(|scope| {
        for actor in 0..config.threads.max(1) {
            let next_game = &next_game;
            let start = &start;
            let failed = failed.clone();
            scope.spawn(move || {
                let mut writer = match ChunkWriter::new(
                    replay_dir,
                    &format!("{prefix}-a{actor:02}"),
                    config.games_per_chunk,
                ) {
                    Ok(w) => w,
                    Err(e) => {
                        *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        return;
                    }
                };
                while !stop.load(Ordering::Relaxed) {
                    let index = next_game.fetch_add(1, Ordering::Relaxed);
                    if config.games.is_some_and(|n| index >= n) {
                        break;
                    }
                    let seed = config.seed.wrapping_add(index);
                    let played = match play_game(start(seed), search, play, evaluator, seed) {
                        Ok(p) => p,
                        // The evaluator is gone (service shut down): stop this actor.
                        Err(err) => {
                            tracing::warn!("actor {actor}: game abandoned: {err}");
                            break;
                        }
                    };
                    record_stats(stats, &played);
                    if let Err(e) = writer.push(played.record) {
                        *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                        break;
                    }
                }
                if let Err(e) = writer.flush() {
                    *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
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
    if rec.outcome.reason == EndReason::Resignation {
        stats.resignations.fetch_add(1, Ordering::Relaxed);
    }
    if played.would_have_resigned.is_some() {
        stats.would_resign.fetch_add(1, Ordering::Relaxed);
        if played.false_resignation() {
            stats.false_resignations.fetch_add(1, Ordering::Relaxed);
        }
    }
}
