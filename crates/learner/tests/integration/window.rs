//! The replay window loads chunks, skips damaged ones, keeps the newest positions.

use crate::common;

use rand::SeedableRng;
use shogi_learner::{ReplayWindow, SampleConfig};
use shogi_records::write_chunk;

fn game(seed: u64) -> shogi_records::GameRecord {
    common::minishogi_game(seed, 40, 8)
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

#[test]
fn a_long_history_is_read_newest_first_and_old_chunks_retire() {
    let dir = tempfile::tempdir().unwrap();
    let games: Vec<_> = (0..6).map(game).collect();
    let per_game: Vec<usize> = games.iter().map(|g| g.moves.len()).collect();
    for (i, g) in games.iter().enumerate() {
        write_chunk(
            &dir.path().join(format!("c-{i:03}.szgr")),
            std::slice::from_ref(g),
        )
        .unwrap();
        // Distinct modification times order the chunks even on coarse clocks.
        let t =
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i as u64);
        std::fs::File::options()
            .write(true)
            .open(dir.path().join(format!("c-{i:03}.szgr")))
            .unwrap()
            .set_modified(t)
            .unwrap();
    }
    // Room for the newest two games only: a resume reads those two and retires the rest
    // unread.
    let capacity = per_game[4] + per_game[5];
    let mut w = ReplayWindow::new(dir.path(), capacity, SampleConfig::default());
    assert_eq!(w.refresh().unwrap(), capacity);
    assert_eq!(w.games(), 2);
    assert_eq!(w.chunks_read, 2);
    let mut retired: Vec<String> = w
        .take_retired()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    retired.sort();
    assert_eq!(
        retired,
        ["c-000.szgr", "c-001.szgr", "c-002.szgr", "c-003.szgr"]
    );
    assert!(w.take_retired().is_empty());
    // A new game pushes the oldest kept ones out, and their chunks retire.
    let newest = (6..)
        .map(game)
        .find(|g| g.moves.len() >= per_game[4])
        .unwrap();
    let mut kept = vec![(4, per_game[4]), (5, per_game[5]), (6, newest.moves.len())];
    write_chunk(&dir.path().join("c-006.szgr"), &[newest]).unwrap();
    assert!(w.refresh().unwrap() > 0);
    let mut expected = Vec::new();
    let mut positions: usize = kept.iter().map(|k| k.1).sum();
    while positions - kept[0].1 >= capacity {
        let (i, len) = kept.remove(0);
        positions -= len;
        expected.push(dir.path().join(format!("c-{i:03}.szgr")));
    }
    assert!(!expected.is_empty());
    assert_eq!(w.take_retired(), expected);
    assert_eq!(w.games(), kept.len());
    assert_eq!(w.chunks_read, 3);
}
