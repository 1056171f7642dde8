//! Simulations per second per thread with the uniform evaluator on toy games.
//! `cargo bench -p shogi-mcts --bench search`; throughput is reported in elements =
//! simulations, so criterion prints simulations/second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shogi_mcts::toy::{MateIn, TicTacToe};
use shogi_mcts::{RootSelection, Search, SearchConfig, SearchLimits, UniformEvaluator};

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
            batch_size: batch,
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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
