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
