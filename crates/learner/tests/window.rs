//! The replay window loads chunks, skips damaged ones, keeps the newest positions.

use rand::SeedableRng;
use shogi_learner::{ReplayWindow, SampleConfig};
use shogi_mcts::{SearchConfig, UniformEvaluator};
use shogi_rules::{GameRules, Position, ShogiGame, Variant};
use shogi_selfplay::play::{PlayConfig, play_game};
use shogi_selfplay::write_chunk;

fn game(seed: u64) -> shogi_selfplay::GameRecord {
    let start = ShogiGame::new(
        Position::startpos(Variant::Minishogi),
        GameRules {
            max_plies: 40,
            ..GameRules::default()
        },
    );
    let search = SearchConfig {
        simulations: 8,
        batch_size: 4,
        ..SearchConfig::default()
    };
    play_game(
        start,
        &search,
        &PlayConfig::default(),
        &UniformEvaluator::default(),
        seed,
    )
    .unwrap()
    .record
}

#[test]
fn loads_refreshes_and_trims() {
    let dir = tempfile::tempdir().unwrap();
    write_chunk(&dir.path().join("a-000.szgr"), &[game(1), game(2)]).unwrap();
    std::fs::write(dir.path().join("bad.szgr"), b"SZGR garbage").unwrap();
    let mut w = ReplayWindow::new(dir.path(), 1_000_000, SampleConfig::default());
    let first = w.refresh().unwrap();
    assert!(first > 0);
    assert_eq!(w.games(), 2);
    assert_eq!(w.chunks_skipped, 1);
    assert_eq!(w.refresh().unwrap(), 0);
    write_chunk(&dir.path().join("a-001.szgr"), &[game(3)]).unwrap();
    assert!(w.refresh().unwrap() > 0);
    assert_eq!(w.games(), 3);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let batch = w.sample_batch(16, &mut rng);
    assert_eq!(batch.len(), 16);

    // A small capacity keeps only the newest games.
    let mut small = ReplayWindow::new(dir.path(), 1, SampleConfig::default());
    small.refresh().unwrap();
    assert_eq!(small.games(), 1);
}
