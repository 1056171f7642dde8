//! Records round-trip, damaged chunks are reported (never half-read, never a panic), and
//! recorded games replay through the rules.

use std::path::Path;

use proptest::prelude::*;
use shogi_game::{Color, EndReason, Game, Outcome};
use shogi_records::record::{decode_chunk, encode_chunk};
use shogi_records::*;
use shogi_registry::RecordGame;
use shogi_registry::{export::replay, export::to_usi_position};
use shogi_rules::{ShogiGame, Variant};

/// A game of `plies` moves, always the first legal move, with made-up search data.
fn sample_game(variant: Variant, plies: usize, seed: u32) -> GameRecord {
    let mut game = ShogiGame::startpos(variant);
    let start_sfen = game.position().to_sfen();
    let mut moves = Vec::new();
    let mut legal = Vec::new();
    for ply in 0..plies {
        legal.clear();
        game.legal_moves(&mut legal);
        if legal.is_empty() || game.outcome().is_some() {
            break;
        }
        let pick = legal[(seed as usize + ply * 7) % legal.len()];
        let searched = legal
            .iter()
            .take(5)
            .enumerate()
            .map(|(i, &mv)| SearchedMove {
                mv: ShogiGame::move_code(mv),
                visits: i as u32 * 3,
                target: 0.2,
            })
            .collect();
        moves.push(MoveRecord {
            mv: ShogiGame::move_code(pick),
            root_value: 0.25 + ply as f32 / 1000.0,
            full_search: ply % 3 != 0,
            searched,
        });
        game.play_unchecked(pick);
    }
    GameRecord {
        variant: variant.name().to_string(),
        start_sfen,
        max_plies: 320,
        impasse: 1,
        outcome: Outcome::win(Color::White, EndReason::Resignation),
        resignation_disabled: seed.is_multiple_of(2),
        moves,
    }
}

#[test]
fn chunks_round_trip_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let games: Vec<GameRecord> = (0..6)
        .map(|i| {
            sample_game(
                if i % 2 == 0 {
                    Variant::Shogi
                } else {
                    Variant::Minishogi
                },
                40,
                i,
            )
        })
        .collect();
    let path = dir.path().join("a.szgr");
    write_chunk(&path, &games).unwrap();
    assert_eq!(read_chunk(&path).unwrap(), games);
    for g in &games {
        let replayed = replay(g).unwrap();
        assert_eq!(replayed.moves().len(), g.moves.len());
        let line = to_usi_position(g).unwrap();
        assert!(
            line.starts_with(&format!("position sfen {} moves ", g.start_sfen)),
            "{line}"
        );
        assert_eq!(line.split(' ').count(), 2 + 4 + 1 + g.moves.len());
    }
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn every_truncation_is_detected() {
    let games = vec![
        sample_game(Variant::Minishogi, 12, 1),
        sample_game(Variant::Shogi, 8, 2),
    ];
    let bytes = encode_chunk(&games).unwrap();
    let path = Path::new("cut.szgr");
    for cut in 0..bytes.len() {
        let err = decode_chunk(&bytes[..cut], path).expect_err("a cut chunk must not parse");
        assert!(
            matches!(
                err,
                RecordError::Truncated { .. } | RecordError::BadMagic { .. }
            ),
            "{err}"
        );
    }
    assert_eq!(decode_chunk(&bytes, path).unwrap(), games);
}

#[test]
fn corruption_fails_the_checksum() {
    let games = vec![sample_game(Variant::Shogi, 10, 3)];
    let mut bytes = encode_chunk(&games).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    let err = decode_chunk(&bytes, Path::new("x.szgr")).unwrap_err();
    assert!(
        matches!(err, RecordError::Checksum { game: 0, .. }),
        "{err}"
    );
}

#[test]
fn other_versions_are_refused_by_name() {
    let mut bytes = encode_chunk(&[sample_game(Variant::Shogi, 2, 0)]).unwrap();
    bytes[4] = 9;
    let err = decode_chunk(&bytes, Path::new("v.szgr")).unwrap_err();
    assert!(err.to_string().contains("version 9"), "{err}");
}

#[test]
fn directory_reader_skips_damaged_chunks_and_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = ChunkWriter::new(dir.path(), "actor0", 2).unwrap();
    for i in 0..5 {
        writer.push(sample_game(Variant::Minishogi, 10, i)).unwrap();
    }
    let last = writer.flush().unwrap().expect("one game pending");
    assert!(last.ends_with("actor0-00000002.szgr"), "{last:?}");
    // A killed writer's temporary and a chunk cut short by a full disk.
    std::fs::write(dir.path().join("actor0-00000003.szgr.tmp"), b"SZGR partial").unwrap();
    std::fs::write(
        dir.path().join(".actor0-00000004.szgr.tmp-99"),
        b"SZGR partial",
    )
    .unwrap();
    let good = std::fs::read(&last).unwrap();
    std::fs::write(
        dir.path().join("actor1-00000000.szgr"),
        &good[..good.len() - 7],
    )
    .unwrap();
    let (games, skipped) = read_chunk_dir(dir.path()).unwrap();
    assert_eq!(games.len(), 5);
    assert_eq!(skipped.len(), 1);
    assert!(
        skipped[0].to_string().contains("truncated"),
        "{}",
        skipped[0]
    );
    // A new writer continues the numbering instead of overwriting.
    let mut again = ChunkWriter::new(dir.path(), "actor0", 1).unwrap();
    let p = again
        .push(sample_game(Variant::Shogi, 3, 9))
        .unwrap()
        .unwrap();
    assert!(p.ends_with("actor0-00000003.szgr"), "{p:?}");
}

#[test]
fn an_illegal_recorded_move_is_reported_with_its_ply() {
    let mut g = sample_game(Variant::Shogi, 6, 0);
    g.moves[3].mv = g.moves[2].mv; // replaying a move of the other side
    let err = replay(&g).unwrap_err();
    assert!(err.to_string().starts_with("move 4 "), "{err}");
    g.variant = "chess".into();
    assert!(replay(&g).unwrap_err().to_string().contains("chess"));
}

proptest! {
    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_chunk(&bytes, Path::new("fuzz.szgr"));
        let mut framed = b"SZGR\x01\x00\x00\x00".to_vec();
        framed.extend_from_slice(&bytes);
        let _ = decode_chunk(&framed, Path::new("fuzz.szgr"));
    }
}
