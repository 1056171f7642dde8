//! The replay window loads chunks, skips damaged ones, keeps the newest positions.

use crate::common;

use rand::SeedableRng;
use shogi_learner::{ReplayAccount, ReplayWindow, SampleConfig};
use shogi_records::write_chunk;

fn game(seed: u64) -> shogi_records::GameRecord {
    common::minishogi_game(seed, 40, 8)
}

#[test]
fn loads_refreshes_and_trims() {
    let dir = tempfile::tempdir().unwrap();
    write_chunk(&dir.path().join("a-000.szgr"), &[game(1), game(2)]).unwrap();
    std::fs::write(dir.path().join("bad.szgr"), b"SZGR garbage").unwrap();
    let mut w = ReplayWindow::new(dir.path(), 1_000_000, SampleConfig::default())
        .with_unreadable_grace(std::time::Duration::ZERO);
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

#[test]
fn a_chunk_read_while_it_is_written_is_read_again_once_whole() {
    let dir = tempfile::tempdir().unwrap();
    let whole_path = dir.path().join("whole.szgr");
    write_chunk(&whole_path, &[game(1), game(2)]).unwrap();
    let whole = std::fs::read(&whole_path).unwrap();
    let path = dir.path().join("copied.szgr");
    // Half of it: a copy in progress.
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    std::fs::remove_file(&whole_path).unwrap();
    let mut w = ReplayWindow::new(dir.path(), 1_000_000, SampleConfig::default());
    assert_eq!(w.refresh().unwrap(), 0);
    assert_eq!(w.chunks_skipped, 0, "not given up while within its grace");
    std::fs::write(&path, &whole).unwrap();
    let counted = w.refresh().unwrap();
    assert!(counted > 0);
    assert_eq!(w.games(), 2);
    assert_eq!(w.positions_counted(), counted as u64);
    assert_eq!(w.chunks_skipped, 0);
}

#[test]
fn an_unreadable_chunk_is_skipped_once_unchanged_for_its_grace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.szgr"), b"SZGR truncated").unwrap();
    let grace = std::time::Duration::from_millis(100);
    let mut w =
        ReplayWindow::new(dir.path(), 1_000, SampleConfig::default()).with_unreadable_grace(grace);
    w.refresh().unwrap();
    w.refresh().unwrap();
    assert_eq!(w.chunks_skipped, 0);
    std::thread::sleep(grace);
    w.refresh().unwrap();
    assert_eq!(w.chunks_skipped, 1);
    let reads = w.chunks_read;
    w.refresh().unwrap();
    assert_eq!(w.chunks_read, reads, "a skipped chunk is not read again");
}

#[test]
fn a_resumed_account_counts_only_the_chunks_new_since_it_was_saved() {
    let dir = tempfile::tempdir().unwrap();
    write_chunk(&dir.path().join("a-000.szgr"), &[game(1), game(2)]).unwrap();
    write_chunk(&dir.path().join("a-001.szgr"), &[game(3)]).unwrap();
    let mut first = ReplayWindow::new(dir.path(), 1_000_000, SampleConfig::default());
    let counted = first.refresh().unwrap() as u64;
    let account = first.account();
    assert_eq!(account.positions, counted);
    assert_eq!(account.chunks.len(), 2);
    let json = serde_json::to_string(&account).unwrap();

    // A new invocation reads the same chunks into its window without counting them.
    let mut resumed = ReplayWindow::new(dir.path(), 1_000_000, SampleConfig::default());
    resumed.resume_account(&serde_json::from_str(&json).unwrap());
    assert_eq!(resumed.refresh().unwrap(), 0);
    assert_eq!(resumed.games(), 3);
    assert_eq!(resumed.positions_counted(), counted);
    write_chunk(&dir.path().join("a-002.szgr"), &[game(4)]).unwrap();
    let new = resumed.refresh().unwrap() as u64;
    assert_eq!(new, game(4).moves.len() as u64);
    assert_eq!(resumed.positions_counted(), counted + new);

    // Without an account, the chunks present are taken as counted, and the samples
    // trained so far as outside the budget: the account saved next carries them, so the
    // invocation after it weighs only what was trained since against what was counted.
    let mut guessed = ReplayWindow::new(dir.path(), 1_000_000, SampleConfig::default());
    guessed.count_present_chunks(1_000_000).unwrap();
    assert_eq!(guessed.refresh().unwrap(), 0);
    assert_eq!(guessed.games(), 4);
    write_chunk(&dir.path().join("a-003.szgr"), &[game(5)]).unwrap();
    let new = guessed.refresh().unwrap() as u64;
    let account = guessed.account();
    assert_eq!(
        (account.positions, account.samples_before),
        (new, 1_000_000)
    );
    let mut next = ReplayWindow::new(dir.path(), 1_000_000, SampleConfig::default());
    next.resume_account(&serde_json::from_str(&serde_json::to_string(&account).unwrap()).unwrap());
    assert_eq!(next.samples_before_account(), 1_000_000);
    assert_eq!(next.positions_counted(), new);
    // An account written before `samples_before` existed reads as 0.
    let old: ReplayAccount = serde_json::from_str(r#"{"positions": 5, "chunks": []}"#).unwrap();
    assert_eq!(old.samples_before, 0);
}

/// A chunk of another game in the replay directory (copied there by hand) is passed
/// over game by game, not turned into rows of another size for the network.
#[test]
fn games_of_another_game_than_the_network_s_are_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    write_chunk(&dir.path().join("a-000.szgr"), &[game(1), game(2)]).unwrap();
    let config = |game| SampleConfig {
        game: Some(game),
        ..SampleConfig::default()
    };
    let mut shogi = ReplayWindow::new(dir.path(), 1_000_000, config(shogi_game::GameKind::Shogi));
    assert_eq!(shogi.refresh().unwrap(), 0);
    assert_eq!(shogi.games(), 0);
    let err = shogi_learner::samples_from_record(&game(1), &config(shogi_game::GameKind::Shogi))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a minishogi game, where the network plays shogi"
    );
    let mut minishogi = ReplayWindow::new(
        dir.path(),
        1_000_000,
        config(shogi_game::GameKind::Minishogi),
    );
    assert!(minishogi.refresh().unwrap() > 0);
    assert_eq!(minishogi.games(), 2);
}
