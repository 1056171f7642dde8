use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use shogi_game::{Color, Game};
use shogi_mcts::toy::{Idx, MateIn, Nim, TicTacToe};
use shogi_mcts::*;

/// One search of the empty tic-tac-toe board with uniform priors.
fn search_tictactoe(config: SearchConfig, seed: u64) -> SearchResult<Idx> {
    Search::new(config, seed)
        .search(
            &TicTacToe::new(),
            &UniformEvaluator::default(),
            &SearchLimits::default(),
        )
        .unwrap()
}

/// A proven win for `winner` in `plies`.
fn win_for(winner: Color, plies: u32) -> Proven {
    Proven::Win { winner, plies }
}

fn cfg(sims: u32, batch: usize) -> SearchConfig {
    SearchConfig {
        simulations: sims,
        tree_batch: batch,
        ..SearchConfig::for_play()
    }
}

#[test]
fn visits_add_up_fresh_and_reused() {
    for batch in [1, 4, 16] {
        let mut s = Search::new(cfg(300, batch), 1);
        let g = TicTacToe::new();
        let r = s.search_uniform(&g);
        assert_eq!(r.simulations, 300);
        // Fresh tree: children visits == simulations; the root also counts its own evaluation.
        assert_eq!(r.visits.iter().sum::<u32>(), 300, "batch {batch}");
        assert_eq!(r.root_visits, 301);
        assert_eq!(r.stop_reason, StopReason::Simulations);
        // Reuse: advance to the played child; its visits carry over.
        let mv = r.best_move.unwrap();
        let k = r.moves.iter().position(|&m| m == mv).unwrap();
        let carried = r.visits[k];
        s.advance(mv);
        let mut g2 = g.clone();
        g2.play_unchecked(mv);
        assert_eq!(s.root_visits(), carried);
        let r2 = s
            .search(
                &g2,
                &UniformEvaluator::default(),
                &SearchLimits::simulations(100),
            )
            .unwrap();
        assert_eq!(r2.simulations, 100);
        assert_eq!(r2.root_visits, carried + 100);
        assert_eq!(r2.visits.iter().sum::<u32>(), carried + 100 - 1);
    }
}

#[test]
fn mismatched_position_starts_fresh() {
    let mut s = Search::new(cfg(50, 4), 1);
    let ev = UniformEvaluator::default();
    s.search(&TicTacToe::new(), &ev, &SearchLimits::default())
        .unwrap();
    let g = TicTacToe::from_moves(&[4, 0]);
    let r = s.search(&g, &ev, &SearchLimits::default()).unwrap();
    assert_eq!(r.root_visits, 51);
    assert_eq!(r.moves.len(), 7);
}

#[test]
fn fixed_seed_is_reproducible() {
    let run = |seed| {
        let c = SearchConfig {
            simulations: 200,
            ..SearchConfig::alphazero()
        };
        let mut s = Search::new(c, seed);
        let ev = RolloutEvaluator::new(2, 20, 7);
        let r = s
            .search(&TicTacToe::new(), &ev, &SearchLimits::default())
            .unwrap();
        (r.best_move, r.visits, r.priors)
    };
    assert_eq!(run(42), run(42));
    let a = run(42);
    let b = run(43);
    assert!(a.2 != b.2, "different seeds give different noise");
}

#[test]
fn temperature_zero_plays_most_visited() {
    for seed in 0..10 {
        let c = SearchConfig {
            dirichlet_weight: 0.25,
            ..cfg(100, 4)
        };
        let mut s = Search::new(c, seed);
        let ev = RolloutEvaluator::new(1, 20, seed);
        let r = s
            .search(&TicTacToe::from_moves(&[0]), &ev, &SearchLimits::default())
            .unwrap();
        let max = *r.visits.iter().max().unwrap();
        let k = r
            .moves
            .iter()
            .position(|&m| Some(m) == r.best_move)
            .unwrap();
        assert_eq!(r.visits[k], max);
    }
}

#[test]
fn temperature_one_samples_proportionally() {
    // With no noise and one leaf a step the search is the same for every seed: only the
    // move drawn from it differs, and at temperature 1 each move comes up in proportion
    // to its visits.
    let c = SearchConfig {
        simulations: 60,
        tree_batch: 1,
        dirichlet_weight: 0.0,
        ..SearchConfig::alphazero()
    };
    assert_eq!(c.temperature_at(0), 1.0);
    let first = search_tictactoe(c.clone(), 0);
    let total: u32 = first.visits.iter().sum();
    let draws = 3000u64;
    let mut counts = vec![0u64; first.moves.len()];
    for seed in 0..draws {
        let r = search_tictactoe(c.clone(), seed);
        assert_eq!(
            r.visits, first.visits,
            "seed {seed}: the search depends on the seed"
        );
        let k = r
            .moves
            .iter()
            .position(|&m| Some(m) == r.best_move)
            .unwrap();
        counts[k] += 1;
    }
    for (k, &n) in counts.iter().enumerate() {
        let p = f64::from(first.visits[k]) / f64::from(total);
        let expected = draws as f64 * p;
        let sd = (expected * (1.0 - p)).sqrt();
        assert!(
            (n as f64 - expected).abs() <= 4.0 * sd + 1.0,
            "move {k}: drawn {n} times of {draws}, {expected:.0} expected from visits {:?}",
            first.visits
        );
    }
    assert!(counts.iter().filter(|&&n| n > 0).count() > 2, "{counts:?}");
}

/// A NaN or infinite alpha (or weight) once reached `Gamma::new(..).expect` and panicked
/// an actor thread: now such noise is no noise, and the bare sample is uniform.
#[test]
fn dirichlet_with_a_non_finite_alpha_or_weight_adds_no_noise() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let p0 = vec![0.5f32, 0.25, 0.125, 0.125];
    for (alpha, weight) in [
        (f32::NAN, 0.25),
        (f32::INFINITY, 0.25),
        (-1.0, 0.25),
        (0.15, f32::NAN),
        (0.15, f32::INFINITY),
    ] {
        let mut p = p0.clone();
        noise::apply_dirichlet(&mut p, alpha, weight, &mut rng);
        assert_eq!(p, p0, "alpha {alpha} weight {weight}");
    }
    for alpha in [f32::NAN, f32::INFINITY, 0.0, -1.0] {
        assert_eq!(noise::dirichlet(4, alpha, &mut rng), vec![0.25f32; 4]);
    }
}

#[test]
fn dirichlet_weight_zero_and_one() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let p0 = vec![0.5f32, 0.25, 0.125, 0.125];
    let mut p = p0.clone();
    noise::apply_dirichlet(&mut p, 0.15, 0.0, &mut rng);
    assert_eq!(p, p0);
    // Weight 1: pure Dirichlet samples. Estimate alpha from the variance of one
    // component: Var = (1/K)(1 - 1/K) / (K alpha + 1).
    let k = 10usize;
    for alpha in [0.15f32, 1.0] {
        let n = 20_000;
        let mut xs = Vec::with_capacity(n);
        for _ in 0..n {
            let mut p = vec![1.0 / k as f32; k];
            noise::apply_dirichlet(&mut p, alpha, 1.0, &mut rng);
            let s: f32 = p.iter().sum();
            assert!((s - 1.0).abs() < 1e-4);
            xs.push(p[3] as f64);
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let m = 1.0 / k as f64;
        let alpha_hat = (m * (1.0 - m) / var - 1.0) / k as f64;
        assert!((mean - m).abs() < 0.01, "mean {mean}");
        assert!(
            (alpha_hat / alpha as f64 - 1.0).abs() < 0.2,
            "alpha {alpha} estimated {alpha_hat}"
        );
    }
}

#[test]
fn noise_applied_at_root_only_in_full_search() {
    let c = SearchConfig {
        simulations: 10,
        dirichlet_weight: 0.25,
        ..SearchConfig::alphazero()
    };
    let r = search_tictactoe(c, 3);
    assert!(r.priors.iter().any(|&p| (p - 1.0 / 9.0).abs() > 1e-4));
    assert!((r.priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
}

#[test]
fn finds_win_in_one_and_three_with_uniform_evaluator() {
    for check in [false, true] {
        for batch in [1, 8] {
            // Win in 1 (ply 1 of 1): width 12 distractors.
            let g = MateIn::new(12, 1, 60);
            let c = SearchConfig {
                terminal_check: check,
                ..cfg(400, batch)
            };
            let mut s = Search::new(c.clone(), 1);
            let r = s.search_uniform(&g);
            assert_eq!(r.best_move, Some(g.attacking_move()));
            assert_eq!(r.proven, win_for(Color::Black, 1));
            // Win in 3 plies.
            let g = MateIn::new(8, 2, 60);
            let mut s = Search::new(
                SearchConfig {
                    simulations: 3000,
                    ..c
                },
                1,
            );
            let r = s.search_uniform(&g);
            assert_eq!(
                r.best_move,
                Some(g.attacking_move()),
                "check {check} batch {batch}"
            );
            assert_eq!(r.proven, win_for(Color::Black, 3));
            assert_eq!(r.stop_reason, StopReason::Proven);
            assert_eq!(r.pv.len(), 3);
            assert!(r.root_value() > 0.99);
        }
    }
}

#[test]
fn nim_proofs() {
    // Pile 5, take 1..3: winning move is take 1 (leaves 4), a win in 3 plies.
    let r = Search::new(cfg(2000, 4), 1).search_uniform(&Nim::new(5, 3));
    assert_eq!(r.best_move, Some(Idx(1)));
    assert_eq!(r.proven, win_for(Color::Black, 3));
    // Pile 4: every move loses: proven loss for the side to move.
    let r = Search::new(cfg(2000, 4), 1).search_uniform(&Nim::new(4, 3));
    assert_eq!(r.proven, win_for(Color::White, 2));
    assert!(r.root_value() < 0.01);
    // Pile 8 (loss) from White's point of view after one Black move: use tree reuse.
    let mut g = Nim::new(9, 3);
    let mut s = Search::new(cfg(4000, 4), 2);
    let r = s.search_uniform(&g);
    assert_eq!(r.best_move, Some(Idx(1)));
    s.advance(Idx(1));
    g.play_unchecked(Idx(1));
    let r = s.search_uniform(&g);
    assert!(matches!(
        r.proven,
        Proven::Win {
            winner: Color::Black,
            ..
        }
    ));
}

#[test]
fn terminal_root_returns_no_move() {
    let g = TicTacToe::from_moves(&[0, 3, 1, 4, 2]);
    let mut s = Search::new(cfg(10, 2), 1);
    let r = s.search_uniform(&g);
    assert_eq!(r.best_move, None);
    assert_eq!(r.stop_reason, StopReason::Terminal);
}

#[test]
fn tictactoe_blocks_and_wins() {
    // X: 0,1 ; O: 4 ; X to... build a position where O (White) must block at 2.
    let g = TicTacToe::from_moves(&[0, 4, 1]);
    let mut s = Search::new(cfg(800, 8), 1);
    let ev = RolloutEvaluator::new(4, 9, 1);
    let r = s.search(&g, &ev, &SearchLimits::default()).unwrap();
    assert_eq!(r.best_move, Some(Idx(2)));
}

#[test]
fn limits_deadline_stop_and_nodes() {
    // A long mate no search of these limits proves, with no simulation limit.
    let unbounded = |limits: SearchLimits| {
        Search::new(cfg(u32::MAX, 8), 1)
            .search(
                &MateIn::new(30, 50, 200),
                &UniformEvaluator::default(),
                &limits,
            )
            .unwrap()
    };
    let t = Instant::now();
    let r = unbounded(SearchLimits {
        deadline: Some(t + Duration::from_millis(50)),
        ..Default::default()
    });
    assert_eq!(r.stop_reason, StopReason::Deadline);
    assert!(t.elapsed() < Duration::from_millis(500));

    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let h = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        stop2.store(true, std::sync::atomic::Ordering::SeqCst);
        Instant::now()
    });
    let r = unbounded(SearchLimits {
        stop: Some(stop),
        ..Default::default()
    });
    let raised = h.join().unwrap();
    assert_eq!(r.stop_reason, StopReason::Stopped);
    assert!(
        raised.elapsed() < Duration::from_millis(100),
        "stop honoured late: {:?}",
        raised.elapsed()
    );

    let r = unbounded(SearchLimits {
        max_nodes: Some(5000),
        ..Default::default()
    });
    assert_eq!(r.stop_reason, StopReason::Nodes);
    assert!(r.nodes < 5000 + 8 * 30 + 30);
}

#[test]
fn batching_uses_few_batches_and_handles_collisions() {
    // Nim with 2 moves: a tiny tree forces collisions with a big batch.
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c2 = calls.clone();
    let ev = FnEvaluator::new(move |_g: &TicTacToe, m: &[Idx]| {
        c2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (vec![1.0 / m.len() as f32; m.len()], Wdl::DRAW)
    });
    let mut s = Search::new(cfg(400, 16), 1);
    let r = s
        .search(&TicTacToe::new(), &ev, &SearchLimits::default())
        .unwrap();
    assert_eq!(r.visits.iter().sum::<u32>(), 400);
    assert!(r.batches < 60, "batches {}", r.batches);
    let mut s = Search::new(cfg(200, 32), 1);
    let r = s
        .search(
            &Nim::new(6, 2),
            &UniformEvaluator::default(),
            &SearchLimits::default(),
        )
        .unwrap();
    assert!(r.simulations >= 1);
    assert_eq!(r.visits.iter().sum::<u32>() + 1, r.root_visits);
}

#[test]
fn playout_cap_randomization() {
    let c = SearchConfig {
        simulations: 200,
        full_search_prob: 0.25,
        cheap_simulations: 20,
        ..SearchConfig::alphazero()
    };
    let mut s = Search::new(c, 9);
    let (mut full, mut cheap) = (0, 0);
    for _ in 0..200 {
        s.clear();
        let r = s
            .search(
                &TicTacToe::new(),
                &UniformEvaluator::default(),
                &SearchLimits::default(),
            )
            .unwrap();
        if r.is_full_search {
            assert_eq!(r.simulations, 200);
            full += 1;
        } else {
            assert_eq!(r.simulations, 20);
            // No root noise in cheap searches.
            assert!(r.priors.iter().all(|&p| (p - 1.0 / 9.0).abs() < 1e-6));
            cheap += 1;
        }
    }
    assert!((25..=75).contains(&full), "full {full} cheap {cheap}");
}

#[test]
fn gumbel_improved_policy_hand_computed() {
    // Pure function: priors [0.5, 0.3, 0.2], q [0.8, 0.4, -], visits [2, 1, 0], v_pi 0.6.
    let pri = [0.5f32, 0.3, 0.2];
    let q = [Some(0.8f32), Some(0.4), None];
    let n = [2u32, 1, 0];
    // v_mix = (0.6 + 3 * (0.5*0.8 + 0.3*0.4)/0.8) / 4 = (0.6 + 3*0.65)/4 = 0.6375
    let cq = gumbel::completed_q(&pri, &q, &n, 0.6);
    assert!((cq[2] - 0.6375).abs() < 1e-6);
    // sigma = (50 + 2) * 1 * q
    let pi = gumbel::improved_policy(&pri, &q, &n, 0.6, 50.0, 1.0, false);
    let x = [
        0.5f64.ln() + 52.0 * 0.8,
        0.3f64.ln() + 52.0 * 0.4,
        0.2f64.ln() + 52.0 * 0.6375,
    ];
    let m = x.iter().cloned().fold(f64::MIN, f64::max);
    let z: f64 = x.iter().map(|v| (v - m).exp()).sum();
    for (p, xi) in pi.iter().zip(x) {
        assert!((*p as f64 - (xi - m).exp() / z).abs() < 1e-5, "{pi:?}");
    }
}

#[test]
fn gumbel_search_end_to_end_hand_computed() {
    // Root (Nim pile 10, take 1..2): priors [0.6, 0.4], root value 0.5 for the mover.
    // Child after taking k has value v_k for *its* mover: take1 -> 0.3, take2 -> 0.9.
    // m = 2, n = 2, no Gumbel noise: sim 1 visits the higher-logit move (take 1), sim 2 the
    // other. Q(take1) = 0.7, Q(take2) = 0.1 for the root mover; max N = 1.
    let ev = FnEvaluator::new(|g: &Nim, m: &[Idx]| {
        let v = match g.pile {
            10 => 0.5,
            9 => 0.3,
            8 => 0.9,
            _ => 0.5,
        };
        let p = if m.len() == 2 {
            vec![0.6, 0.4]
        } else {
            vec![1.0 / m.len() as f32; m.len()]
        };
        (p, Wdl::from_score(v))
    });
    let c = SearchConfig {
        root_selection: RootSelection::Gumbel,
        gumbel_noise: false,
        gumbel_considered: 2,
        simulations: 2,
        tree_batch: 1,
        ..SearchConfig::default()
    };
    let mut s = Search::new(c, 1);
    let r = s
        .search(&Nim::new(10, 2), &ev, &SearchLimits::default())
        .unwrap();
    assert_eq!(r.visits, vec![1, 1]);
    let x = [0.6f64.ln() + 51.0 * 0.7, 0.4f64.ln() + 51.0 * 0.1];
    let m = x[0].max(x[1]);
    let z: f64 = x.iter().map(|v| (v - m).exp()).sum();
    for (p, xi) in r.policy_target.iter().zip(x) {
        assert!(
            (*p as f64 - (xi - m).exp() / z).abs() < 1e-5,
            "{:?}",
            r.policy_target
        );
    }
    assert_eq!(r.best_move, Some(Idx(1)));
    // With a bigger budget and noise the search still finds forced wins.
    let c = SearchConfig {
        root_selection: RootSelection::Gumbel,
        simulations: 3000,
        tree_batch: 8,
        ..SearchConfig::default()
    };
    let g = MateIn::new(8, 2, 60);
    let mut s = Search::new(c, 4);
    let r = s.search_uniform(&g);
    assert_eq!(r.best_move, Some(g.attacking_move()));
    assert!((r.policy_target.iter().sum::<f32>() - 1.0).abs() < 1e-4);
}

#[test]
fn gumbel_visits_follow_sequential_halving() {
    let c = SearchConfig {
        root_selection: RootSelection::Gumbel,
        gumbel_considered: 4,
        simulations: 8,
        tree_batch: 1,
        gumbel_noise: false,
        ..SearchConfig::default()
    };
    let r = search_tictactoe(c, 1);
    let mut v = r.visits.clone();
    v.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(v, vec![3, 3, 1, 1, 0, 0, 0, 0, 0]);
}

#[test]
fn self_play_game_with_reuse_completes() {
    // A whole game with the tree kept between moves: each search starts from the subtree
    // of the move played, with its visits, adds its simulations to them, and plays a
    // legal move, until the game ends.
    let c = SearchConfig {
        simulations: 100,
        tree_batch: 4,
        temperature_plies: 4,
        ..SearchConfig::alphazero()
    };
    assert!(c.tree_reuse);
    let ev = RolloutEvaluator::new(1, 9, 3);
    let mut search = Search::new(c, 11);
    let mut game = TicTacToe::new();
    let (mut carried, mut reused, mut plies) = (0, 0, 0);
    while game.outcome().is_none() {
        assert_eq!(
            search.root_visits(),
            carried,
            "ply {plies}: the kept subtree"
        );
        let r = search.search(&game, &ev, &SearchLimits::default()).unwrap();
        // A kept root already proven needs no simulation.
        assert!(
            r.simulations >= 1 || r.stop_reason == StopReason::Proven,
            "ply {plies}: {:?} after {} simulations",
            r.stop_reason,
            r.simulations
        );
        let fresh_root = u32::from(carried == 0);
        assert_eq!(
            r.root_visits,
            carried + r.simulations + fresh_root,
            "ply {plies}"
        );
        let mv = r.best_move.unwrap();
        let mut legal = Vec::new();
        game.legal_moves(&mut legal);
        assert!(legal.contains(&mv), "ply {plies}: {mv} is not legal");
        reused += u32::from(carried > 0);
        carried = r.visits[r.moves.iter().position(|&m| m == mv).unwrap()];
        search.advance(mv);
        game.play_unchecked(mv);
        plies += 1;
    }
    assert!((5..=9).contains(&plies), "{plies} plies");
    assert!(
        reused >= 3,
        "the tree was kept at {reused} of {plies} plies"
    );
}

#[test]
fn config_deserializes_with_defaults() {
    let c: SearchConfig =
        toml::from_str("simulations = 64\nroot_selection = \"gumbel\"\ncheap_simulations = 16\n")
            .unwrap();
    assert_eq!(c.simulations, 64);
    assert_eq!(c.root_selection, RootSelection::Gumbel);
    assert_eq!(c.c_init, 1.25);
    assert_eq!(c.c_base, 19652.0);
    assert_eq!(c.dirichlet_alpha, 0.15);
    assert_eq!(c.cheap_simulations, 16);
    assert_eq!(c.full_search_prob, 1.0, "no playout cap unless asked");
}

/// A deterministic, non-uniform evaluator: priors and value derived from the position key.
fn keyed_evaluator() -> impl Evaluator<TicTacToe> {
    FnEvaluator::new(|g: &TicTacToe, moves: &[Idx]| {
        let k = g.key();
        let priors: Vec<f32> = moves
            .iter()
            .map(|m| 1.0 + ((k >> (m.0 % 60)) & 7) as f32)
            .collect();
        let s: f32 = priors.iter().sum();
        let win = (k % 97) as f32 / 97.0 * 0.6;
        (
            priors.into_iter().map(|p| p / s).collect(),
            Wdl::new(win, 0.3, 0.7 - win),
        )
    })
}

/// Chosen move, root visits and policy target of one search.
type MoveSummary = (Option<Idx>, Vec<u32>, Vec<f32>);

#[test]
fn interleaved_resumable_searches_match_blocking_searches() {
    // Several games, each with its own Search, advanced together with one evaluator call
    // per round over all their pending leaves (how a self-play thread runs many games),
    // give exactly the moves and statistics of the blocking `search`.
    for root in [RootSelection::Puct, RootSelection::Gumbel] {
        let config = SearchConfig {
            simulations: 64,
            tree_batch: 4,
            root_selection: root,
            ..SearchConfig::default()
        };
        let ev = keyed_evaluator();
        let plies = 5;
        let blocking: Vec<Vec<MoveSummary>> = (0..4u64)
            .map(|seed| {
                let mut s = Search::new(config.clone(), seed);
                let mut g = TicTacToe::new();
                let mut out = Vec::new();
                for _ in 0..plies {
                    let r = s.search(&g, &ev, &SearchLimits::default()).unwrap();
                    out.push((r.best_move, r.visits.clone(), r.policy_target.clone()));
                    let Some(mv) = r.best_move else { break };
                    g.play_unchecked(mv);
                    s.advance(mv);
                }
                out
            })
            .collect();

        let mut searches: Vec<Search<TicTacToe>> = (0..4u64)
            .map(|seed| Search::new(config.clone(), seed))
            .collect();
        let mut games = vec![TicTacToe::new(); 4];
        let mut results: Vec<Vec<MoveSummary>> = vec![Vec::new(); 4];
        let mut rounds_with_many = 0;
        loop {
            for (i, s) in searches.iter_mut().enumerate() {
                if !s.is_searching() && results[i].len() < plies && games[i].outcome().is_none() {
                    s.begin(&games[i], SearchLimits::default());
                }
            }
            let mut waiting = Vec::new();
            for (i, s) in searches.iter_mut().enumerate() {
                if !s.is_searching() {
                    continue;
                }
                match s.step() {
                    Progress::Evaluate => waiting.push(i),
                    Progress::Done(r) => {
                        results[i].push((r.best_move, r.visits.clone(), r.policy_target));
                        if let Some(mv) = r.best_move {
                            games[i].play_unchecked(mv);
                            s.advance(mv);
                        }
                    }
                }
            }
            if waiting.is_empty() {
                if searches.iter().all(|s| !s.is_searching())
                    && (0..4).all(|i| results[i].len() == plies || games[i].outcome().is_some())
                {
                    break;
                }
                continue;
            }
            if waiting.len() > 1 {
                rounds_with_many += 1;
            }
            // One evaluator call for every waiting search.
            let outputs: Vec<(Vec<f32>, Wdl)> = {
                let mut reqs: Vec<EvalRequest<'_, TicTacToe>> = waiting
                    .iter()
                    .flat_map(|&i| searches[i].pending_evaluations())
                    .map(|(g, m)| EvalRequest::new(g, m))
                    .collect();
                ev.evaluate(&mut reqs).unwrap();
                reqs.into_iter().map(|r| (r.priors, r.wdl)).collect()
            };
            let mut it = outputs.into_iter();
            for &i in &waiting {
                let n = searches[i].pending_evaluations().len();
                searches[i].provide(it.by_ref().take(n));
            }
            assert!(it.next().is_none());
        }
        assert!(
            rounds_with_many > 10,
            "evaluations were batched across games"
        );
        assert_eq!(results, blocking, "{root:?}");
        for s in &searches {
            s.check_invariants().unwrap();
        }
    }
}

#[test]
fn aborted_resumable_search_leaves_a_clean_tree() {
    let mut s = Search::new(cfg(64, 4), 3);
    let g = TicTacToe::new();
    s.begin(&g, SearchLimits::default());
    assert!(matches!(s.step(), Progress::Evaluate));
    assert_eq!(s.pending_evaluations().len(), 1, "the root first");
    s.abort();
    assert!(!s.is_searching());
    assert_eq!(s.pending_evaluations().len(), 0);
    // A fresh search afterwards behaves like one on a new searcher.
    let r = s.search_uniform(&g);
    assert_eq!(r.root_visits, 65);
    s.check_invariants().unwrap();
}

#[test]
fn capped_leaves_are_adjudicated_like_the_recorded_game() {
    use shogi_rules::{GameRules, Position, ShogiGame, Variant};
    // Minishogi start, one ply before the cap: only 1e1b (the rook takes the pawn) gains
    // material, 14 points to 12.
    let game = ShogiGame::new(
        Position::startpos(Variant::Minishogi),
        GameRules {
            max_plies: 1,
            ..GameRules::default()
        },
    );
    let search = |margin| {
        let c = SearchConfig {
            adjudicate_margin: margin,
            ..cfg(400, 4)
        };
        Search::new(c, 1).search_uniform(&game)
    };
    let r = search(2);
    assert_eq!(r.best_move.map(|m| m.to_string()), Some("1e1b".into()));
    assert_eq!(r.proven, win_for(Color::Black, 1));
    // Off, or a margin the capture does not reach: every move draws at the cap.
    for margin in [0, 3] {
        assert!(
            matches!(search(margin).proven, Proven::Draw { .. }),
            "margin {margin}"
        );
    }
}

/// A search of `game` with `config`'s root made a noise-free Gumbel root of
/// `considered` moves (with uniform priors, the first generated unless an option adds
/// others) and the uniform evaluator.
fn gumbel_root(
    game: &shogi_rules::ShogiGame,
    considered: usize,
    config: SearchConfig,
) -> SearchResult<shogi_rules::Move> {
    let c = SearchConfig {
        root_selection: RootSelection::Gumbel,
        gumbel_considered: considered,
        gumbel_noise: false,
        ..config
    };
    Search::new(c, 1).search_uniform(game)
}

/// [`gumbel_root`] keeping two moves, 16 simulations, the config changed by `tweak`.
fn top_two_root(
    game: &shogi_rules::ShogiGame,
    tweak: impl FnOnce(&mut SearchConfig),
) -> SearchResult<shogi_rules::Move> {
    let mut config = cfg(16, 1);
    tweak(&mut config);
    gumbel_root(game, 2, config)
}

/// A standard-shogi game from `sfen` under the default rules.
fn shogi(sfen: &str) -> shogi_rules::ShogiGame {
    use shogi_rules::{GameRules, Position, ShogiGame, Variant};
    ShogiGame::new(
        Position::from_sfen(Variant::Shogi, sfen).unwrap(),
        GameRules::default(),
    )
}

/// The move `result` chose in `game` loses nothing by static exchange one ply later.
fn assert_plays_safe(game: &shogi_rules::ShogiGame, result: &SearchResult<shogi_rules::Move>) {
    use shogi_game::Game;
    let best = result.best_move.unwrap();
    let loss = game.static_loss_after(best);
    assert!(loss <= 0, "{best} loses {loss}");
}

/// White's pawn on 5d attacks Black's rook on 5e and nothing retakes there; Black's king
/// and golds have moves that ignore it (the safety options' test position).
const ROOK_ATTACKED: &str = "4k4/9/9/4p4/4R4/9/9/9/3GKG3 b - 1";

/// `gumbel_captures`: a capture that wins material is searched even when the Gumbel
/// top-k (here the first two moves, with uniform priors and no noise) leaves it out.
#[test]
fn gumbel_captures_puts_a_free_piece_among_the_considered() {
    // Black's rook takes a gold nothing defends (5h5e); about twenty legal moves.
    let game = shogi("4k4/9/9/9/4g4/9/9/4R4/4K4 b - 1");
    let visits_of_capture = |captures| {
        let r = top_two_root(&game, |c| c.gumbel_captures = captures);
        let i = r
            .moves
            .iter()
            .position(|m| m.to_string() == "5h5e")
            .unwrap();
        (r.visits[i], r.visits.iter().filter(|&&v| v > 0).count())
    };
    assert_eq!(
        visits_of_capture(false).0,
        0,
        "the top-2 leaves the capture out"
    );
    let (visits, searched) = visits_of_capture(true);
    assert!(visits > 0, "the capture is searched");
    assert_eq!(searched, 2, "still two considered moves");
}

/// `gumbel_safety`: with a rook attacked by a pawn and a uniform evaluator (whose values
/// cannot tell the moves apart), the penalty makes the root play a move that loses
/// nothing and its improved policy (the policy target) puts its mass on such moves;
/// off, that target spreads over every move, most of which leave the rook hanging.
#[test]
fn gumbel_safety_steers_the_choice_and_the_policy_target_off_hanging_pieces() {
    use shogi_game::Game;
    let game = shogi(ROOK_ATTACKED);
    let off = gumbel_root(&game, 8, cfg(32, 1));
    let safety = SearchConfig {
        gumbel_safety: 0.5,
        ..cfg(32, 1)
    };
    let on = gumbel_root(&game, 8, safety);
    assert_plays_safe(&game, &on);
    // The policy target's mass on moves that leave the rook (32 points of swing) hanging.
    let mass_on_losing = |r: &SearchResult<shogi_rules::Move>| -> f32 {
        r.moves
            .iter()
            .zip(&r.policy_target)
            .filter(|&(&mv, _)| game.static_loss_after(mv) > 0)
            .map(|(_, &p)| p)
            .sum()
    };
    assert!(mass_on_losing(&on) < 0.01, "{}", mass_on_losing(&on));
    assert!(mass_on_losing(&off) > 0.3, "{}", mass_on_losing(&off));
    // The penalty moves only the root's logits: the priors the result reports are the
    // network's.
    assert_eq!(on.priors, off.priors);
}

/// `gumbel_gain`, the mirror of `gumbel_safety`: with a gold nothing defends in reach of
/// Black's rook and a uniform evaluator (whose values cannot tell the moves apart), the
/// bonus makes the root take the gold and its improved policy put its mass there; off,
/// the capture is one move among twenty.
#[test]
fn gumbel_gain_steers_the_choice_and_the_policy_target_to_a_free_piece() {
    use shogi_game::Game;
    let game = shogi("4k4/9/9/9/4g4/9/9/4R4/4K4 b - 1");
    let mass_on_winning = |r: &SearchResult<shogi_rules::Move>| -> f32 {
        r.moves
            .iter()
            .zip(&r.policy_target)
            .filter(|&(&mv, _)| game.static_loss_after(mv) < 0)
            .map(|(_, &p)| p)
            .sum()
    };
    let off = gumbel_root(&game, 8, cfg(32, 1));
    let gain = SearchConfig {
        gumbel_gain: 0.5,
        ..cfg(32, 1)
    };
    let on = gumbel_root(&game, 8, gain.clone());
    assert_eq!(on.best_move.unwrap().to_string(), "5h5e");
    assert!(mass_on_winning(&on) > 0.9, "{}", mass_on_winning(&on));
    assert!(mass_on_winning(&off) < 0.2, "{}", mass_on_winning(&off));
    assert_eq!(on.priors, off.priors);
    // A quiet move that leaves nothing en prise gains nothing: with no capture and no
    // promotion on the board (the pawn blocks the rook's file) the bonus changes no
    // logit, and the search is the one without it.
    let quiet = shogi("4k4/9/9/9/4P4/9/9/4R4/4K4 b - 1");
    let (quiet_off, quiet_on) = (
        gumbel_root(&quiet, 8, cfg(32, 1)),
        gumbel_root(&quiet, 8, gain),
    );
    assert_eq!(quiet_on.policy_target, quiet_off.policy_target);
    assert_eq!(quiet_on.best_move, quiet_off.best_move);
}

/// `raise_by_exchange`: a side to move that can take a hanging rook is nearly won
/// whatever the network said; one with no capture that pays keeps the network's score.
#[test]
fn leaf_exchange_raises_the_score_by_what_the_mover_wins() {
    // White to move: its pawn on 5d takes the rook on 5e, which nothing retakes.
    let rook_hangs = shogi(&ROOK_ATTACKED.replace(" b ", " w "));
    let raised = raise_by_exchange(&rook_hangs, 0.4, 1.0);
    assert!(raised > 0.95, "{raised}");
    let half = raise_by_exchange(&rook_hangs, 0.4, 0.5);
    assert!((half - (0.4 + (raised - 0.4) / 2.0)).abs() < 1e-6, "{half}");
    assert_eq!(raise_by_exchange(&rook_hangs, 0.4, 0.0), 0.4);
    // A pawn for a pawn: the gold retakes, so the exchange wins nothing.
    let even = shogi("4k4/9/9/4p4/4P4/4G4/9/9/4K4 w - 1");
    assert_eq!(raise_by_exchange(&even, 0.4, 1.0), 0.4);
    // Black to move: the rook takes the pawn for free, a small gain.
    let pawn = raise_by_exchange(&shogi(ROOK_ATTACKED), 0.4, 1.0);
    assert!(pawn > 0.4 && pawn < raised, "{pawn}");
    // Nothing to capture: unchanged.
    let quiet = shogi("4k4/9/9/9/4R4/9/9/9/3GKG3 w - 1");
    assert_eq!(raise_by_exchange(&quiet, 0.4, 1.0), 0.4);
}

/// `leaf_exchange`: with a rook attacked by a pawn and a uniform evaluator, the leaves'
/// static exchange makes the moves that leave the rook hanging search worse than those
/// that save it, and the root plays one that saves it; off, the values cannot tell the
/// moves apart.
#[test]
fn leaf_exchange_makes_the_search_see_a_hanging_piece() {
    use shogi_game::Game;
    let game = shogi(ROOK_ATTACKED);
    // The root's Q of each searched move that loses something by static exchange, or of
    // each that does not.
    let searched = |r: &SearchResult<shogi_rules::Move>, losing: bool| -> Vec<f32> {
        r.moves
            .iter()
            .zip(&r.q)
            .filter(|&(&mv, _)| (game.static_loss_after(mv) > 0) == losing)
            .filter_map(|(_, &q)| q)
            .collect()
    };
    let exchange = SearchConfig {
        leaf_exchange: 1.0,
        ..cfg(64, 1)
    };
    let on = gumbel_root(&game, 8, exchange);
    assert_plays_safe(&game, &on);
    let (losing, safe) = (searched(&on, true), searched(&on, false));
    assert!(
        !losing.is_empty() && !safe.is_empty(),
        "{losing:?} {safe:?}"
    );
    let worst_safe = safe.iter().copied().fold(f32::INFINITY, f32::min);
    assert!(
        losing.iter().all(|&q| q < worst_safe - 0.05),
        "{losing:?} against {safe:?}"
    );
    let off = gumbel_root(&game, 8, cfg(64, 1));
    let flat = searched(&off, true);
    assert!(flat.iter().all(|&q| (q - 0.5).abs() < 1e-3), "{flat:?}");
}

/// `evaluations` counts the positions the evaluator was given, not the simulations that
/// ended at an exact value; a Gumbel root's speed is measured in them, so a search of a
/// decided position (nearly every simulation exact) does not plan the next one for the
/// speed of exact values.
#[test]
fn evaluations_count_the_evaluators_positions_and_measure_the_speed() {
    let seen = std::sync::atomic::AtomicU32::new(0);
    let counting = FnEvaluator::new(|_: &Nim, moves: &[Idx]| {
        seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (vec![1.0 / moves.len() as f32; moves.len()], Wdl::DRAW)
    });
    let config = SearchConfig {
        stop_when_proven: false,
        ..cfg(2000, 4)
    };
    let mut r = Search::new(config, 1)
        .search(&Nim::new(5, 3), &counting, &SearchLimits::default())
        .unwrap();
    assert_eq!(r.simulations, 2000);
    assert_eq!(
        r.evaluations,
        seen.load(std::sync::atomic::Ordering::Relaxed)
    );
    assert!(
        r.evaluations * 10 < r.simulations,
        "{} evaluations",
        r.evaluations
    );

    let mut speed = SearchSpeed::default();
    assert_eq!(speed.budget(Duration::from_secs(1), u32::MAX), None);
    r.elapsed = Duration::from_secs(1);
    speed.observe(&r);
    let planned = speed.budget(Duration::from_secs(1), u32::MAX).unwrap();
    let fits = (f64::from(r.evaluations) * GUMBEL_TIME_SHARE) as u32;
    assert_eq!(planned, fits.max(1));
    assert_eq!(
        speed.budget(Duration::from_secs(1), 3),
        Some(3.min(fits.max(1)))
    );
    // A search stopped early says nothing of the speed.
    let mut stopped = r.clone();
    stopped.stop_reason = StopReason::Stopped;
    stopped.elapsed = Duration::from_millis(1);
    speed.observe(&stopped);
    assert_eq!(
        speed.budget(Duration::from_secs(1), u32::MAX),
        Some(planned)
    );
    // A second measure weighs half.
    r.elapsed = Duration::from_millis(500);
    speed.observe(&r);
    let blended = f64::from(r.evaluations) * 1.5 * GUMBEL_TIME_SHARE;
    assert_eq!(
        speed.budget(Duration::from_secs(1), u32::MAX),
        Some(blended as u32)
    );
}
