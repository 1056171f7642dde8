//! Criterion benches: perft(5) from the start position (bulk and making every leaf
//! move), movegen + play over random playouts, and the `haitaka` crate as an anchor
//! measured in the same run.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use shogi_rules::{Position, Variant, perft::perft};

#[path = "common/haitaka.rs"]
mod anchor;
use anchor::haitaka_perft;
use shogi_testkit::pick;

fn playouts(seed: u64, games: usize) -> u64 {
    let mut rng = seed | 1;
    let mut n = 0;
    for _ in 0..games {
        let mut pos = Position::startpos(Variant::Shogi);
        for _ in 0..200 {
            let ms = pos.legal_moves();
            if ms.is_empty() {
                break;
            }
            pos.play_unchecked(pick(&mut rng, &ms));
            n += 1;
        }
    }
    n
}

fn benches(c: &mut Criterion) {
    let pos = Position::startpos(Variant::Shogi);
    let hb = haitaka::Board::startpos();
    assert_eq!(haitaka_perft(&hb, 4, true), 719_731);
    let mut g = c.benchmark_group("perft5");
    g.sample_size(10);
    g.bench_function("shogi_rules_bulk", |b| {
        b.iter(|| perft(black_box(&pos), 5, true))
    });
    g.bench_function("haitaka_bulk", |b| {
        b.iter(|| haitaka_perft(black_box(&hb), 5, true))
    });
    g.bench_function("shogi_rules_full", |b| {
        b.iter(|| perft(black_box(&pos), 5, false))
    });
    g.bench_function("haitaka_full", |b| {
        b.iter(|| haitaka_perft(black_box(&hb), 5, false))
    });
    g.finish();
    let mut g = c.benchmark_group("playout");
    g.sample_size(20);
    g.bench_function("movegen_play_10x200", |b| {
        b.iter(|| playouts(black_box(7), 10))
    });
    g.finish();
}

criterion_group!(perft_benches, benches);
criterion_main!(perft_benches);
