//! Self-play games with test evaluators: they end by the rules, replay, are
//! reproducible, and resign (or record a would-be resignation) as configured.

use shogi_game::{Color, EndReason};
use shogi_mcts::{FnEvaluator, SearchConfig, UniformEvaluator, Wdl};
use shogi_registry::export::replay;
use shogi_rules::{GameRules, Position, ShogiGame, Variant};
use shogi_selfplay::actors::{
    ActorConfig, ActorError, ActorStats, ActorSummary, GameSeeds, SeedRange, run_actors,
};
use shogi_selfplay::play::{PlayConfig, PlayedGame, play_game};
use std::sync::atomic::AtomicBool;

fn small_search() -> SearchConfig {
    SearchConfig {
        simulations: 24,
        tree_batch: 4,
        ..SearchConfig::alphazero()
    }
}

/// One game of [`small_search`].
fn play_small<E: shogi_mcts::Evaluator<ShogiGame> + ?Sized>(
    game: ShogiGame,
    play: &PlayConfig,
    evaluator: &E,
    seed: u64,
) -> PlayedGame {
    play_game(game, &small_search(), play, evaluator, seed).unwrap()
}

fn minishogi(max_plies: u32) -> ShogiGame {
    ShogiGame::new(
        Position::startpos(Variant::Minishogi),
        GameRules {
            max_plies,
            ..GameRules::default()
        },
    )
}

/// What a batch of minishogi self-play games is: the actors, the games' seeds, how they
/// are played, and their length in plies.
struct MinishogiGames<'a> {
    config: &'a ActorConfig,
    seeds: &'a dyn GameSeeds,
    play: &'a PlayConfig,
    max_plies: u32,
}

/// `run_actors` with the small search on `games`: as many actors as their config asks,
/// their chunks in `dir`, until `stop` or the games are done.
fn minishogi_actors<E: shogi_mcts::Evaluator<ShogiGame>>(
    games: MinishogiGames<'_>,
    evaluator: &E,
    dir: &std::path::Path,
    stop: &AtomicBool,
    stats: &ActorStats,
) -> Result<ActorSummary, ActorError> {
    let start = |_| minishogi(games.max_plies);
    run_actors(
        games.config,
        games.seeds,
        &small_search(),
        games.play,
        start,
        std::slice::from_ref(evaluator),
        dir,
        "actor",
        stop,
        stats,
    )
}

#[test]
fn a_game_ends_by_the_rules_and_replays() {
    let played = play_game(
        minishogi(120),
        &small_search(),
        &PlayConfig {
            random_opening_plies: 2,
            ..PlayConfig::default()
        },
        &UniformEvaluator::default(),
        1,
    )
    .unwrap();
    let rec = &played.record;
    assert!(!rec.moves.is_empty());
    assert!(rec.moves.len() <= 120);
    let game = replay(rec).unwrap();
    assert_eq!(game.moves().len(), rec.moves.len());
    // The uniform evaluator's value is a flat draw: nobody resigns.
    assert_ne!(rec.outcome.reason, EndReason::Resignation);
    if rec.outcome.reason == EndReason::MaxPlies {
        assert_eq!(rec.moves.len(), 120);
    }
    // Opening plies are unsearched; searched moves carry visit counts that add up.
    assert!(
        rec.moves[..2]
            .iter()
            .all(|m| m.searched.is_empty() && !m.full_search)
    );
    for m in &rec.moves[2..] {
        let visits: u32 = m.searched.iter().map(|s| s.visits).sum();
        assert!(visits >= 1, "a searched move with no visits");
        let target: f32 = m.searched.iter().map(|s| s.target).sum();
        assert!(
            (target - 1.0).abs() < 1e-3,
            "policy target sums to {target}"
        );
        assert!(m.searched.iter().any(|s| s.mv == m.mv) || m.searched.len() == 1);
    }
}

#[test]
fn the_same_seed_gives_the_same_game() {
    let play = PlayConfig::default();
    let a = play_small(minishogi(60), &play, &UniformEvaluator::default(), 7);
    let b = play_small(minishogi(60), &play, &UniformEvaluator::default(), 7);
    assert_eq!(a.record, b.record);
    let c = play_small(minishogi(60), &play, &UniformEvaluator::default(), 8);
    assert_ne!(a.record.moves, c.record.moves);
}

/// Black's positions look lost, White's won: Black resigns after three low moves.
fn pessimistic_black() -> impl shogi_mcts::Evaluator<ShogiGame> {
    FnEvaluator::new(|game: &ShogiGame, moves: &[shogi_rules::Move]| {
        use shogi_game::Game;
        let wdl = if game.side_to_move() == Color::Black {
            Wdl::LOSS
        } else {
            Wdl::WIN
        };
        (vec![1.0 / moves.len() as f32; moves.len()], wdl)
    })
}

/// A minishogi game of [`pessimistic_black`] with resignation off in
/// `resign_disabled_fraction` of the games.
fn play_pessimistic(max_plies: u32, resign_disabled_fraction: f32) -> PlayedGame {
    let play = PlayConfig {
        resign_disabled_fraction,
        ..PlayConfig::default()
    };
    play_small(minishogi(max_plies), &play, &pessimistic_black(), 3)
}

#[test]
fn hopeless_side_resigns() {
    let played = play_pessimistic(200, 0.0);
    let rec = &played.record;
    assert_eq!(rec.outcome.reason, EndReason::Resignation);
    assert_eq!(rec.outcome.winner, Some(Color::White));
    // Resigned on Black's third move, before playing it: 2 Black + 2 White moves.
    assert_eq!(rec.moves.len(), 4);
    assert!(!rec.resignation_disabled);
}

#[test]
fn resignation_disabled_games_play_on_and_remember_who_would_have_resigned() {
    let played = play_pessimistic(40, 1.0);
    assert!(played.record.resignation_disabled);
    assert_ne!(played.record.outcome.reason, EndReason::Resignation);
    assert_eq!(played.would_have_resigned, Some(Color::Black));
    // A resignation would have been wrong unless the side that would have resigned lost.
    let false_resignation = |winner: Option<Color>, would_have_resigned: Option<Color>| {
        let mut game = played.clone();
        game.record.outcome.winner = winner;
        game.would_have_resigned = would_have_resigned;
        game.false_resignation()
    };
    let black = Some(Color::Black);
    assert!(
        !false_resignation(Some(Color::White), black),
        "Black lost: right"
    );
    assert!(
        false_resignation(Some(Color::Black), black),
        "Black won: wrong"
    );
    assert!(false_resignation(None, black), "a draw: wrong");
    assert!(!false_resignation(Some(Color::Black), Some(Color::White)));
    assert!(!false_resignation(None, None), "nobody would have resigned");
}

#[test]
fn actors_fill_a_replay_directory_through_a_batched_service() {
    use shogi_mcts::batch::{BatchConfig, BatchEvaluator, BatchService, uniform_batch};
    use std::sync::atomic::Ordering;

    let service = BatchService::start(
        BatchConfig {
            max_batch: 32,
            max_wait: std::time::Duration::from_millis(1),
            callers: 0,
        },
        uniform_batch::<ShogiGame>,
    );
    let evaluator = BatchEvaluator::new(service.handle());
    let dir = tempfile::tempdir().unwrap();
    let stats = ActorStats::default();
    let config = ActorConfig {
        threads: 2,
        games_per_thread: 3,
        games_per_chunk: 3,
    };
    let seeds = SeedRange::new(100, Some(10));
    let (play, stop) = (PlayConfig::default(), AtomicBool::new(false));
    let summary = minishogi_actors(
        MinishogiGames {
            config: &config,
            seeds: &seeds,
            play: &play,
            max_plies: 80,
        },
        &evaluator,
        dir.path(),
        &stop,
        &stats,
    )
    .unwrap();
    assert_eq!(summary.games, 10);
    let (games, skipped) = shogi_records::read_chunk_dir(dir.path()).unwrap();
    assert!(skipped.is_empty());
    assert_eq!(games.len(), 10);
    assert_eq!(
        games.iter().map(|g| g.moves.len() as u64).sum::<u64>(),
        summary.plies
    );
    let finished = stats.black_wins.load(Ordering::Relaxed)
        + stats.white_wins.load(Ordering::Relaxed)
        + stats.draws.load(Ordering::Relaxed);
    assert_eq!(finished, 10);
    // Game-length statistics agree with the records.
    let lengths: Vec<u64> = games.iter().map(|g| g.moves.len() as u64).collect();
    assert_eq!(stats.shortest_game(), lengths.iter().copied().min());
    assert_eq!(
        stats.max_game_plies.load(Ordering::Relaxed),
        lengths.iter().copied().max().unwrap()
    );
    assert_eq!(
        stats
            .length_histogram()
            .iter()
            .map(|&(_, n)| n)
            .sum::<u64>(),
        10
    );
    let mean = stats.mean_game_plies();
    assert!((mean - summary.plies as f64 / 10.0).abs() < 1e-9);
    // Every game finished, so the live counters equal the finished games' totals.
    assert_eq!(stats.plies_played.load(Ordering::Relaxed), summary.plies);
    assert_eq!(
        stats.simulations_run.load(Ordering::Relaxed),
        summary.simulations
    );
    // Several actors shared the service: some batches held more than one request.
    assert!(service.stats().max_batch_seen > 4, "{:?}", service.stats());
    service.shutdown();
}

/// A service that shuts down under the actors (nobody raised `stop`) stops them, with
/// an error that says so: self-play never ends quietly as if it had finished.
#[test]
fn actors_stop_when_the_service_shuts_down() {
    use shogi_mcts::batch::{
        BatchConfig, BatchEvaluator, BatchService, EvalInput, EvalOutput, uniform_batch,
    };

    let service: BatchService<EvalInput<ShogiGame>, EvalOutput> =
        BatchService::start(BatchConfig::default(), uniform_batch::<ShogiGame>);
    let evaluator = BatchEvaluator::new(service.handle());
    service.shutdown();
    let dir = tempfile::tempdir().unwrap();
    let config = ActorConfig {
        threads: 3,
        games_per_thread: 2,
        games_per_chunk: 1,
    };
    let seeds = SeedRange::new(0, None);
    let (play, stop, stats) = (
        PlayConfig::default(),
        AtomicBool::new(false),
        ActorStats::default(),
    );
    let games = MinishogiGames {
        config: &config,
        seeds: &seeds,
        play: &play,
        max_plies: 80,
    };
    let err = minishogi_actors(games, &evaluator, dir.path(), &stop, &stats).unwrap_err();
    assert!(
        err.to_string().contains("inference service shut down"),
        "{err}"
    );
    assert_eq!(stats.games.load(std::sync::atomic::Ordering::Relaxed), 0);
}

#[test]
fn live_counters_include_the_games_still_in_progress() {
    // A status line over a window shorter than a game must still see the moves played:
    // stop while every game is in progress and the live counters hold its moves.
    use shogi_game::Game;
    use std::sync::atomic::{AtomicU64, Ordering};

    let stop = AtomicBool::new(false);
    let calls = AtomicU64::new(0);
    let evaluator = FnEvaluator::new(|_: &ShogiGame, moves: &[<ShogiGame as Game>::Move]| {
        if calls.fetch_add(1, Ordering::Relaxed) >= 300 {
            stop.store(true, Ordering::Relaxed);
        }
        (
            vec![1.0 / moves.len() as f32; moves.len()],
            Wdl::new(0.3, 0.4, 0.3),
        )
    });
    let stats = ActorStats::default();
    let config = ActorConfig {
        threads: 1,
        games_per_thread: 3,
        games_per_chunk: 1,
    };
    let seeds = SeedRange::new(5, None);
    let dir = tempfile::tempdir().unwrap();
    let play = PlayConfig {
        resign_threshold: 0.0,
        ..PlayConfig::default()
    };
    let summary = minishogi_actors(
        MinishogiGames {
            config: &config,
            seeds: &seeds,
            play: &play,
            max_plies: 400,
        },
        &evaluator,
        dir.path(),
        &stop,
        &stats,
    )
    .unwrap();
    let played = stats.plies_played.load(Ordering::Relaxed);
    let simulations = stats.simulations_run.load(Ordering::Relaxed);
    assert!(
        played > summary.plies,
        "{played} plies played, {} in finished games",
        summary.plies
    );
    assert!(simulations > summary.simulations);
    assert!(
        simulations >= played,
        "{simulations} simulations for {played} plies"
    );
}

/// An evaluator whose outputs depend only on the position, so games are reproducible
/// whatever order the actors evaluate them in.
fn keyed_evaluator() -> impl shogi_mcts::Evaluator<ShogiGame> {
    use shogi_game::Game;
    FnEvaluator::new(|g: &ShogiGame, moves: &[<ShogiGame as Game>::Move]| {
        let k = g.key();
        let priors: Vec<f32> = (0..moves.len())
            .map(|i| 1.0 + ((k >> (i % 61)) & 3) as f32)
            .collect();
        let s: f32 = priors.iter().sum();
        let win = (k % 89) as f32 / 89.0 * 0.5 + 0.1;
        (
            priors.into_iter().map(|p| p / s).collect(),
            Wdl::new(win, 0.2, 0.8 - win),
        )
    })
}

#[test]
fn actors_advancing_many_games_per_thread_play_the_same_games_as_play_game() {
    // Many games per thread evaluated in one request each round must not change any
    // game: the records equal those of `play_game` with the same seeds.

    let evaluator = keyed_evaluator();
    let play = PlayConfig {
        random_opening_plies: 2,
        ..PlayConfig::default()
    };
    let seed = 40;
    let games = 7u64;
    // Records compared by their Debug text, sorted (chunks come back in any order).
    let mut expected: Vec<String> = (0..games)
        .map(|i| {
            let p = play_game(minishogi(60), &small_search(), &play, &evaluator, seed + i).unwrap();
            format!("{:?}", p.record)
        })
        .collect();
    for (threads, games_per_thread) in [(1, 4), (2, 3)] {
        let dir = tempfile::tempdir().unwrap();
        let config = ActorConfig {
            threads,
            games_per_thread,
            games_per_chunk: 2,
        };
        let seeds = SeedRange::new(seed, Some(games));
        let (stop, stats) = (AtomicBool::new(false), ActorStats::default());
        let summary = minishogi_actors(
            MinishogiGames {
                config: &config,
                seeds: &seeds,
                play: &play,
                max_plies: 60,
            },
            &evaluator,
            dir.path(),
            &stop,
            &stats,
        )
        .unwrap();
        assert_eq!(summary.games, games);
        let (records, skipped) = shogi_records::read_chunk_dir(dir.path()).unwrap();
        assert!(skipped.is_empty());
        let mut got: Vec<String> = records.iter().map(|r| format!("{r:?}")).collect();
        got.sort();
        expected.sort();
        assert_eq!(
            got, expected,
            "threads {threads} x {games_per_thread} games"
        );
    }
}

#[test]
fn games_at_the_ply_cap_are_adjudicated_by_material_when_asked() {
    // White has lost its rook and bishop: Black leads 13 points to 3.
    let start = || {
        ShogiGame::new(
            Position::from_sfen(Variant::Minishogi, "2sgk/4p/5/P4/KGSBR b - 1").unwrap(),
            GameRules {
                max_plies: 2,
                ..GameRules::default()
            },
        )
    };
    let outcome = |margin| {
        let play = PlayConfig {
            adjudicate_margin: margin,
            ..PlayConfig::default()
        };
        let played = play_small(start(), &play, &UniformEvaluator::default(), 3);
        assert_eq!(played.record.moves.len(), 2);
        replay(&played.record).unwrap();
        played.record.outcome
    };
    let won = outcome(5);
    assert_eq!(won.winner, Some(Color::Black));
    assert_eq!(won.reason, EndReason::Adjudication);
    // Off, or a lead under the margin: the rules' draw.
    for margin in [0, 11] {
        let drawn = outcome(margin);
        assert_eq!(drawn.winner, None, "margin {margin}");
        assert_eq!(drawn.reason, EndReason::MaxPlies, "margin {margin}");
    }
}

/// A slot whose game ends starts the next one at once: with one thread of four slots,
/// every seed asked for after the first four is asked while all four slots are counted
/// in flight (the finished game's until it is replaced: the count never dips, and no
/// slot waits for the others to drain), the games are played with exactly the seeds
/// given, and nothing is left in flight at the end.
#[test]
fn a_finished_games_slot_starts_the_next_game_at_once() {
    use std::sync::Mutex;
    use std::sync::atomic::Ordering;

    struct Watched<'a> {
        seeds: Mutex<Vec<u64>>,
        stats: &'a ActorStats,
        in_flight_at_ask: Mutex<Vec<u64>>,
    }
    impl GameSeeds for Watched<'_> {
        fn next_seed(&self) -> Option<u64> {
            let seed = self.seeds.lock().unwrap().pop()?;
            self.in_flight_at_ask
                .lock()
                .unwrap()
                .push(self.stats.in_flight.load(Ordering::Relaxed));
            Some(seed)
        }
    }
    let given: Vec<u64> = (0..10).map(|i| 1000 + 7 * i).collect();
    let stats = ActorStats::default();
    let seeds = Watched {
        seeds: Mutex::new(given.iter().rev().copied().collect()),
        stats: &stats,
        in_flight_at_ask: Mutex::default(),
    };
    let config = ActorConfig {
        threads: 1,
        games_per_thread: 4,
        games_per_chunk: 3,
    };
    let evaluator = keyed_evaluator();
    let play = PlayConfig::default();
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let games = MinishogiGames {
        config: &config,
        seeds: &seeds,
        play: &play,
        max_plies: 40,
    };
    let summary = minishogi_actors(games, &evaluator, dir.path(), &stop, &stats).unwrap();
    assert_eq!(summary.games, 10);
    assert_eq!(stats.in_flight.load(Ordering::Relaxed), 0);
    let asked = seeds.in_flight_at_ask.into_inner().unwrap();
    assert_eq!(asked[..4], [0, 0, 0, 0], "the slots are being filled");
    assert!(
        asked[4..].iter().all(|&n| n == 4),
        "in flight at each ask: {asked:?}"
    );
    // The games are those of `play_game` with the seeds given.
    let (records, _) = shogi_records::read_chunk_dir(dir.path()).unwrap();
    let mut got: Vec<String> = records.iter().map(|r| format!("{r:?}")).collect();
    let mut expected: Vec<String> = given
        .iter()
        .map(|&seed| {
            let p = play_game(minishogi(40), &small_search(), &play, &evaluator, seed).unwrap();
            format!("{:?}", p.record)
        })
        .collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
}

/// Each actor thread evaluates with its own evaluator (thread `t` with evaluator
/// `t % n`), so each may have an inference thread of its own: with three threads and two
/// evaluators, the first evaluator serves two threads' games and the second one's.
#[test]
fn each_actor_thread_evaluates_with_its_own_evaluator() {
    use shogi_game::Game;
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::thread::ThreadId;

    let seen: [Mutex<HashSet<ThreadId>>; 2] = Default::default();
    let evaluator = |seen: &'static Mutex<HashSet<ThreadId>>| {
        FnEvaluator::new(move |_: &ShogiGame, moves: &[<ShogiGame as Game>::Move]| {
            seen.lock().unwrap().insert(std::thread::current().id());
            (vec![1.0 / moves.len() as f32; moves.len()], Wdl::DRAW)
        })
    };
    // 'static for the closures: the sets live for the test's process.
    let seen: &'static [Mutex<HashSet<ThreadId>>; 2] = Box::leak(Box::new(seen));
    let evaluators = [evaluator(&seen[0]), evaluator(&seen[1])];
    let config = ActorConfig {
        threads: 3,
        games_per_thread: 1,
        games_per_chunk: 2,
    };
    let seeds = SeedRange::new(3, Some(6));
    let dir = tempfile::tempdir().unwrap();
    let (stop, stats) = (AtomicBool::new(false), ActorStats::default());
    let summary = run_actors(
        &config,
        &seeds,
        &small_search(),
        &PlayConfig::default(),
        |_| minishogi(30),
        &evaluators,
        dir.path(),
        "actor",
        &stop,
        &stats,
    )
    .unwrap();
    assert_eq!(summary.games, 6);
    let threads: Vec<usize> = seen.iter().map(|s| s.lock().unwrap().len()).collect();
    assert_eq!(threads, [2, 1], "actor threads per evaluator");
}
