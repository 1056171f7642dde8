//! Self-play under a failing network: a failed call is tried again and the games go on
//! unchanged; a network that keeps failing, or a service that shuts down under the
//! actors, stops self-play with an error that says so (never a quiet success).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use shogi_mcts::{
    EvalError, EvalRequest, Evaluator, MAX_FAILED_EVALUATIONS_IN_A_ROW, SearchConfig,
    UniformEvaluator,
};
use shogi_rules::{GameRules, Position, ShogiGame, Variant};
use shogi_selfplay::actors::{
    ActorConfig, ActorError, ActorStats, ActorSummary, SeedRange, run_actors,
};
use shogi_selfplay::play::PlayConfig;

/// The uniform network, failing every `fail_every`-th call (0: never) with `error`.
struct Flaky {
    calls: AtomicU64,
    fail_every: u64,
    error: fn() -> EvalError,
}

impl Flaky {
    fn new(fail_every: u64, error: fn() -> EvalError) -> Self {
        Flaky {
            calls: AtomicU64::new(0),
            fail_every,
            error,
        }
    }
}

impl Evaluator<ShogiGame> for Flaky {
    fn evaluate(&self, requests: &mut [EvalRequest<'_, ShogiGame>]) -> Result<(), EvalError> {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if self.fail_every > 0 && call.is_multiple_of(self.fail_every) {
            return Err((self.error)());
        }
        UniformEvaluator::default().evaluate(requests)
    }
}

/// Self-play of minishogi games (30 plies at most, 16 simulations) with `config` and
/// one evaluator per actor thread: its result and the network calls retried.
fn play_with(
    config: &ActorConfig,
    seeds: &SeedRange,
    evaluators: &[Flaky],
    dir: &std::path::Path,
) -> (Result<ActorSummary, ActorError>, u64) {
    let search = SearchConfig {
        simulations: 16,
        tree_batch: 4,
        ..SearchConfig::alphazero()
    };
    let start = |_| {
        ShogiGame::new(
            Position::startpos(Variant::Minishogi),
            GameRules {
                max_plies: 30,
                ..GameRules::default()
            },
        )
    };
    let stats = ActorStats::new();
    let stop = AtomicBool::new(false);
    let result = run_actors(
        config,
        seeds,
        &search,
        &PlayConfig::default(),
        start,
        evaluators,
        dir,
        "actor",
        &stop,
        &stats,
    );
    (result, stats.failed_evaluations.load(Ordering::Relaxed))
}

/// Three games on one actor thread.
fn play(evaluator: &Flaky, dir: &std::path::Path) -> (Result<ActorSummary, ActorError>, u64) {
    let config = ActorConfig {
        threads: 1,
        games_per_thread: 3,
        games_per_chunk: 3,
    };
    let seeds = SeedRange::new(11, Some(3));
    play_with(&config, &seeds, std::slice::from_ref(evaluator), dir)
}

fn games_in(dir: &std::path::Path) -> Vec<String> {
    let (records, skipped) = shogi_records::read_chunk_dir(dir).unwrap();
    assert!(skipped.is_empty());
    records.iter().map(|r| format!("{r:?}")).collect()
}

#[test]
fn a_failed_network_call_is_tried_again_and_the_games_are_unchanged() {
    let (clean, flaky) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (result, failed) = play(&Flaky::new(0, || EvalError::Timeout), clean.path());
    assert_eq!(result.unwrap().games, 3);
    assert_eq!(failed, 0);
    let model_failed = || EvalError::ModelFailed("a test batch".into());
    let (result, failed) = play(&Flaky::new(3, model_failed), flaky.path());
    assert_eq!(result.unwrap().games, 3);
    assert!(failed > 0);
    assert_eq!(games_in(clean.path()), games_in(flaky.path()));
}

#[test]
fn a_network_that_keeps_failing_stops_self_play_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let model_failed = || EvalError::ModelFailed("out of memory".into());
    let (result, failed) = play(&Flaky::new(1, model_failed), dir.path());
    match result {
        Err(ActorError::Evaluation { failures, last, .. }) => {
            assert_eq!(failures, MAX_FAILED_EVALUATIONS_IN_A_ROW);
            assert!(last.to_string().contains("out of memory"), "{last}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(failed, u64::from(MAX_FAILED_EVALUATIONS_IN_A_ROW));
}

#[test]
fn a_service_gone_before_a_stop_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = play(&Flaky::new(2, || EvalError::ServiceShutDown), dir.path());
    let err = result.unwrap_err();
    assert!(
        matches!(err, ActorError::ServiceGone { actor: 0 }),
        "{err:?}"
    );
    assert!(err.to_string().contains("shut down"), "{err}");
}

/// One actor thread whose network keeps failing stops the others too: self-play does
/// not play on without it as if nothing happened (it did, until the run's end).
#[test]
fn one_failing_actor_thread_stops_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let path = dir.path().to_path_buf();
    std::thread::spawn(move || {
        let model_failed = || EvalError::ModelFailed("this thread's device is gone".into());
        let evaluators = [
            Flaky::new(0, || EvalError::Timeout),
            Flaky::new(1, model_failed),
        ];
        let config = ActorConfig {
            threads: 2,
            games_per_thread: 2,
            games_per_chunk: 2,
        };
        let seeds = SeedRange::new(3, None);
        let (result, _) = play_with(&config, &seeds, &evaluators, &path);
        let _ = tx.send(result.map(|_| ()).map_err(|e| e.to_string()));
    });
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("self-play played on after one of its threads failed");
    let err = result.unwrap_err();
    assert!(
        err.contains("actor thread 1") && err.contains("device is gone"),
        "{err}"
    );
}
