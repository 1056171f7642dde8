//! Tai shogi speed: legal moves generated per second (the setup and a midgame position
//! reached by random play) and plies per second in random playouts. No engine plays tai
//! shogi with these rules, so the same run measures standard shogi's move generator from
//! its start position as the reference the ratio is taken against. And the cost of a
//! network's input planes, with and without the exchange planes, and a search's end test
//! of every child it expands.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shogi_game::Game;
use shogi_tai::{TaiGame, TaiRules};
use shogi_testkit::pick;

/// Plays `plies` random plies (fewer if the game ends) and returns the plies played.
fn playout(game: &mut TaiGame, plies: u32, seed: u64) -> u32 {
    let mut rng = seed | 1;
    let mut moves = Vec::new();
    let mut played = 0;
    while played < plies && game.outcome().is_none() {
        moves.clear();
        game.legal_moves(&mut moves);
        let mv = pick(&mut rng, &moves);
        game.play_unchecked(mv);
        played += 1;
    }
    played
}

fn bench(c: &mut Criterion) {
    let start = TaiGame::startpos(TaiRules::default());
    let mut midgame = start.clone();
    let reached = playout(&mut midgame, 150, 7);
    assert_eq!(reached, 150, "the seed keeps the game going");
    let count = |g: &TaiGame| {
        let mut v = Vec::new();
        g.legal_moves(&mut v);
        v.len() as u64
    };

    let mut group = c.benchmark_group("tai_movegen");
    for (name, game) in [("setup", &start), ("midgame150", &midgame)] {
        group.throughput(Throughput::Elements(count(game)));
        let mut moves = Vec::with_capacity(4096);
        group.bench_function(name, |b| {
            b.iter(|| {
                moves.clear();
                black_box(game).legal_moves(&mut moves);
                moves.len()
            })
        });
    }
    let shogi = shogi_rules::ShogiGame::startpos(shogi_rules::Variant::Shogi);
    let mut shogi_moves = Vec::new();
    shogi.legal_moves(&mut shogi_moves);
    group.throughput(Throughput::Elements(shogi_moves.len() as u64));
    group.bench_function("reference_shogi_setup", |b| {
        b.iter(|| {
            shogi_moves.clear();
            black_box(&shogi).legal_moves(&mut shogi_moves);
            shogi_moves.len()
        })
    });
    group.finish();

    // A network's input planes for one position: the pieces alone, and with each square's
    // exchange (the attack map and the exchanges it leaves to play out).
    let mut group = c.benchmark_group("tai_encode");
    for (name, game) in [("setup", &start), ("midgame150", &midgame)] {
        for exchanges in [false, true] {
            let (mut entries, mut fills) = (Vec::new(), Vec::new());
            let label = format!("{name}/{}", if exchanges { "exchanges" } else { "pieces" });
            group.bench_function(label, |b| {
                b.iter(|| {
                    let game = black_box(game);
                    shogi_tai::net::encode_sparse(game, 0, exchanges, &mut entries, &mut fills);
                    entries.len()
                })
            });
        }
    }
    group.finish();

    // A search's check of every child it expands (`terminal_check`): the game's own end
    // test against playing each move on a copy and asking.
    let mut group = c.benchmark_group("tai_end_test");
    let mut moves = Vec::new();
    midgame.legal_moves(&mut moves);
    group.throughput(Throughput::Elements(moves.len() as u64));
    group.bench_function("outcomes_after", |b| {
        b.iter(|| {
            let mut ended = 0;
            black_box(&midgame).outcomes_after(&moves, |_, _| ended += 1);
            ended
        })
    });
    group.bench_function("play_on_a_copy", |b| {
        b.iter(|| {
            moves
                .iter()
                .filter(|&&mv| {
                    let mut next = black_box(&midgame).clone();
                    next.play_unchecked(mv);
                    next.outcome().is_some()
                })
                .count()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("tai_playout");
    group.sample_size(10);
    group.throughput(Throughput::Elements(300));
    group.bench_function("300_plies", |b| {
        let mut seed = 1;
        b.iter(|| {
            seed += 2;
            let mut game = start.clone();
            playout(&mut game, 300, seed)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
