//! Alpha-beta's nodes per second (`cargo bench -p shogi-baseline --bench alphabeta`):
//! from each variant's start position, and over 20 random positions (up to 120 random
//! plies from the start). Criterion's throughput line reads as nodes per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shogi_baseline::{AlphaBeta, AlphaBetaLimits};
use shogi_game::Game;
use shogi_rules::{GameRules, Position, ShogiGame, Variant};

fn random_positions(variant: Variant, n: usize, seed: u64) -> Vec<ShogiGame> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let rules = GameRules {
            max_plies: 0,
            ..GameRules::default()
        };
        let mut g = ShogiGame::new(Position::startpos(variant), rules);
        let plies = rng.random_range(0..120);
        shogi_game::play_picked_moves(&mut g, plies, |n| rng.random_range(0..n));
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

/// The nodes `positions` take at `depth` (the search is deterministic for a seed).
fn nodes(positions: &[ShogiGame], depth: u32) -> u64 {
    let mut ab = AlphaBeta::new(1);
    positions
        .iter()
        .map(|g| {
            ab.new_game(1);
            ab.search(g, &AlphaBetaLimits::depth(depth)).nodes
        })
        .sum()
}

fn alphabeta(c: &mut Criterion) {
    let mut group = c.benchmark_group("alphabeta");
    group.sample_size(10);
    let cases = [
        ("shogi start", Variant::Shogi, 3, false),
        ("minishogi start", Variant::Minishogi, 5, false),
        ("shogi 20 random", Variant::Shogi, 3, true),
        ("minishogi 20 random", Variant::Minishogi, 4, true),
    ];
    for (name, variant, depth, random) in cases {
        let positions = if random {
            random_positions(variant, 20, 11)
        } else {
            vec![ShogiGame::startpos(variant)]
        };
        group.throughput(Throughput::Elements(nodes(&positions, depth)));
        group.bench_function(format!("{name}, depth {depth}"), |b| {
            b.iter(|| nodes(&positions, depth))
        });
    }
    group.finish();
}

criterion_group!(benches, alphabeta);
criterion_main!(benches);
