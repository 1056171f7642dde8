//! One tree searched by several threads (`Search::search_parallel`): the tree's
//! invariants hold whatever the threads' timing, one evaluator is the plain search, the
//! threads' network calls overlap, and an evaluator's failure stops every thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use proptest::prelude::*;
use shogi_game::Game;
use shogi_mcts::toy::{Idx, TicTacToe};
use shogi_mcts::*;

/// An evaluator that sleeps `pause` a call and counts how many calls run at once.
struct Overlapping {
    inner: RolloutEvaluator,
    pause: Duration,
    running: AtomicUsize,
    most: AtomicUsize,
}

impl Overlapping {
    fn new(seed: u64, pause: Duration) -> Self {
        Overlapping {
            inner: RolloutEvaluator::new(1, 9, seed),
            pause,
            running: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
        }
    }
}

impl Evaluator<TicTacToe> for Overlapping {
    fn evaluate(&self, requests: &mut [EvalRequest<'_, TicTacToe>]) -> Result<(), EvalError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(self.pause);
        let answer = self.inner.evaluate(requests);
        self.running.fetch_sub(1, Ordering::SeqCst);
        answer
    }
}

fn config(sims: u32, tree_batch: usize, gumbel: bool) -> SearchConfig {
    SearchConfig {
        simulations: sims,
        tree_batch,
        stop_when_proven: false,
        root_selection: if gumbel {
            RootSelection::Gumbel
        } else {
            RootSelection::Puct
        },
        ..SearchConfig::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// Whatever the threads' timing, every simulation is backed up once, nothing is left
    /// in flight, and a reused tree stays whole.
    #[test]
    fn shared_tree_invariants_hold(
        threads in 2usize..5,
        batch in 1usize..9,
        sims in 1u32..400,
        gumbel in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let evaluators: Vec<RolloutEvaluator> =
            (0..threads).map(|t| RolloutEvaluator::new(1, 9, seed + t as u64)).collect();
        let mut search = Search::new(config(sims, batch, gumbel), seed);
        let mut game = TicTacToe::new();
        let r = search.search_parallel(&game, &evaluators, &SearchLimits::default()).unwrap();
        prop_assert!(search.check_invariants().is_ok(), "{:?}", search.check_invariants());
        if r.stop_reason != StopReason::Terminal {
            prop_assert_eq!(r.simulations, sims);
            prop_assert_eq!(r.visits.iter().sum::<u32>(), sims);
            prop_assert_eq!(search.root_visits(), sims + 1);
            prop_assert!((r.policy_target.iter().sum::<f32>() - 1.0).abs() < 1e-3);
            let mv = r.best_move.unwrap();
            search.advance(mv);
            game.play_unchecked(mv);
            search
                .search_parallel(&game, &evaluators, &SearchLimits::simulations(50))
                .unwrap();
            prop_assert!(search.check_invariants().is_ok(), "{:?}", search.check_invariants());
        }
    }
}

/// One evaluator is `search` itself: the same tree, visit for visit.
#[test]
fn one_thread_is_the_deterministic_search() {
    for gumbel in [false, true] {
        let game = TicTacToe::new();
        let limits = SearchLimits::default();
        let evaluator = RolloutEvaluator::new(2, 9, 7);
        let alone = Search::new(config(200, 4, gumbel), 3)
            .search(&game, &evaluator, &limits)
            .unwrap();
        let evaluator = RolloutEvaluator::new(2, 9, 7);
        let shared = Search::new(config(200, 4, gumbel), 3)
            .search_parallel(&game, std::slice::from_ref(&evaluator), &limits)
            .unwrap();
        assert_eq!(alone.visits, shared.visits);
        assert_eq!(alone.best_move, shared.best_move);
    }
}

/// The threads' network calls run side by side: while one thread's evaluator works, the
/// other selects and evaluates its own leaves.
#[test]
fn the_threads_evaluate_side_by_side() {
    let shared = Overlapping::new(1, Duration::from_millis(5));
    let evaluators = [&shared, &shared];
    let mut search = Search::new(config(256, 4, false), 1);
    let r = search
        .search_parallel(&TicTacToe::new(), &evaluators, &SearchLimits::default())
        .unwrap();
    assert_eq!(r.simulations, 256);
    search.check_invariants().unwrap();
    assert_eq!(
        shared.most.load(Ordering::SeqCst),
        2,
        "the calls never overlapped"
    );
    assert_eq!(shared.running.load(Ordering::SeqCst), 0);
}

/// An evaluator that fails ends the search with its error on every thread, and the tree
/// is cleared (its marks in flight are stale); the searcher searches again afterwards.
#[test]
fn a_failing_evaluator_stops_every_thread() {
    let uniform = FnEvaluator::new(|_: &TicTacToe, moves: &[Idx]| {
        (vec![1.0 / moves.len() as f32; moves.len()], Wdl::DRAW)
    });
    struct Fails<E>(E, usize);
    impl<E: Evaluator<TicTacToe>> Evaluator<TicTacToe> for Fails<E> {
        fn evaluate(&self, requests: &mut [EvalRequest<'_, TicTacToe>]) -> Result<(), EvalError> {
            if self.1 == 1 {
                std::thread::sleep(Duration::from_millis(2));
                return Err(EvalError::ModelFailed("broken".into()));
            }
            self.0.evaluate(requests)
        }
    }
    let evaluators = [Fails(&uniform, 0), Fails(&uniform, 1), Fails(&uniform, 0)];
    let mut search = Search::new(config(100_000, 2, false), 1);
    let err = search
        .search_parallel(&TicTacToe::new(), &evaluators, &SearchLimits::default())
        .unwrap_err();
    assert!(err.to_string().contains("broken"), "{err}");
    assert_eq!(search.tree_size(), 0, "the tree is cleared");
    let r = search
        .search_parallel(
            &TicTacToe::new(),
            &evaluators[..1],
            &SearchLimits::simulations(50),
        )
        .unwrap();
    assert_eq!(r.simulations, 50);
    search.check_invariants().unwrap();
}
