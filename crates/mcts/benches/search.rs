//! Simulations per second per thread with the uniform evaluator (the cost of search
//! itself: selection, move generation, expansion, backup) on shogi, minishogi and tai
//! shogi from their start positions, and on toy games.
//! `cargo bench -p shogi-mcts --bench search`; throughput is reported in elements =
//! simulations, so criterion prints simulations/second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shogi_game::Game;
use shogi_mcts::toy::{MateIn, TicTacToe};
use shogi_mcts::{RootSelection, Search, SearchConfig, SearchLimits, UniformEvaluator};
use shogi_rules::{GameRules, Position, ShogiGame, Variant};

const SIMS: u32 = 2000;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("search");
    group.throughput(Throughput::Elements(SIMS as u64));
    let ev = UniformEvaluator::default();
    for (name, root, batch) in [
        ("puct_b1", RootSelection::Puct, 1),
        ("puct_b16", RootSelection::Puct, 16),
        ("gumbel_b16", RootSelection::Gumbel, 16),
    ] {
        let cfg = SearchConfig {
            simulations: SIMS,
            tree_batch: batch,
            root_selection: root,
            stop_when_proven: false,
            ..SearchConfig::default()
        };
        group.bench_function(format!("tictactoe/{name}"), |b| {
            let g = TicTacToe::new();
            b.iter(|| {
                let mut s = Search::new(cfg.clone(), 1);
                s.search(&g, &ev, &SearchLimits::default()).unwrap()
            })
        });
        // A wide (40 moves), deep game: closer to shogi's branching.
        group.bench_function(format!("wide40/{name}"), |b| {
            let g = MateIn::new(40, 200, 400);
            b.iter(|| {
                let mut s = Search::new(cfg.clone(), 1);
                s.search(&g, &ev, &SearchLimits::default()).unwrap()
            })
        });
    }
    // The self-play settings: 4 leaves per tree per round, from the start position.
    for variant in [Variant::Shogi, Variant::Minishogi] {
        let game = ShogiGame::new(Position::startpos(variant), GameRules::default());
        bench_start(&mut group, variant.name(), &game, &ev);
    }
    // Tai shogi from its setup: 479 root moves, 625 squares.
    let tai = shogi_tai::TaiGame::startpos(shogi_tai::TaiRules::default());
    bench_start(&mut group, "tai", &tai, &ev);
    group.finish();
}

/// PUCT and Gumbel searches of `SIMS` simulations from `game`, 4 leaves per round.
fn bench_start<G: Game>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    label: &str,
    game: &G,
    ev: &UniformEvaluator,
) {
    for (name, root) in [
        ("puct_b4", RootSelection::Puct),
        ("gumbel_b4", RootSelection::Gumbel),
    ] {
        let cfg = SearchConfig {
            simulations: SIMS,
            tree_batch: 4,
            root_selection: root,
            stop_when_proven: false,
            ..SearchConfig::default()
        };
        group.bench_function(format!("{label}/{name}"), |b| {
            b.iter(|| {
                let mut s = Search::new(cfg.clone(), 1);
                s.search(game, ev, &SearchLimits::default()).unwrap()
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
