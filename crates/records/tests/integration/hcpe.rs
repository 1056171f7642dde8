//! The hcpe and hcpe3 readers against files an independent writer made: cshogi
//! (dlshogi's board library, from the venv) writes an hcpe file of random games'
//! positions, and every entry must decode to cshogi's position, move, evaluation and
//! result; this project's hcpe3 writer's games read back move for move; truncated and
//! corrupt files are errors naming the entry, never a panic.

use std::io::Cursor;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shogi_game::{Color, EndReason, Outcome};
use shogi_records::hcpe::{HCPE_SIZE, Hcpe3Reader, HcpeError, HcpeReader};
use shogi_records::import::{ReadRecord, RecordFormat, read_records};
use shogi_records::{GameRecord, MoveRecord, SearchedMove, hcpe3};
use shogi_rules::{Move, Position, Square, Variant};
use shogi_testkit::{python, repo_root, run_ok};

fn cshogi_hcpe(games: usize, seed: u64) -> (Vec<u8>, Vec<serde_json::Value>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("positions.hcpe");
    let json = dir.path().join("expected.json");
    let writer = repo_root().join("scripts/oracle/hcpe_write.py");
    let (games, seed) = (games.to_string(), seed.to_string());
    run_ok(
        python(),
        &[
            writer.as_os_str(),
            file.as_os_str(),
            json.as_os_str(),
            games.as_ref(),
            seed.as_ref(),
        ],
    );
    let expected: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (std::fs::read(&file).unwrap(), expected)
}

fn board_side_hands(p: &Position) -> String {
    p.to_sfen().split(' ').take(3).collect::<Vec<_>>().join(" ")
}

#[test]
fn hcpe_written_by_cshogi_reads_entry_for_entry() {
    let (bytes, expected) = cshogi_hcpe(6, 11);
    assert_eq!(bytes.len(), expected.len() * HCPE_SIZE);
    let read: Vec<_> = HcpeReader::new(Cursor::new(&bytes))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(read.len(), expected.len());
    let mut with_hands = 0;
    for (i, (got, want)) in read.iter().zip(&expected).enumerate() {
        assert_eq!(board_side_hands(&got.position), want["sfen"], "entry {i}");
        assert_eq!(got.best_move.to_string(), want["move"], "entry {i}");
        assert!(got.position.is_legal(got.best_move), "entry {i}");
        assert_eq!(i64::from(got.eval), want["eval"].as_i64().unwrap());
        let winner = match want["result"].as_u64().unwrap() {
            1 => Some(Color::Black),
            2 => Some(Color::White),
            _ => None,
        };
        assert_eq!(got.winner, winner, "entry {i}");
        with_hands += usize::from(!want["sfen"].as_str().unwrap().ends_with(" -"));
    }
    assert!(
        with_hands > 50,
        "random games reach positions with pieces in hand"
    );
}

#[test]
fn a_corrupt_hcpe_entry_is_skipped_and_a_truncated_one_ends_the_stream() {
    let (mut bytes, expected) = cshogi_hcpe(1, 5);
    assert!(expected.len() > 3);
    // Entry 1: both kings on one square; entry 2: a move code off the board.
    bytes[HCPE_SIZE + 1] = 0;
    bytes[HCPE_SIZE + 2] = 0;
    bytes[HCPE_SIZE] &= 0b0000_0001;
    bytes[2 * HCPE_SIZE + 34] = 0x7f;
    bytes.truncate(bytes.len() - 5);
    let read: Vec<_> = HcpeReader::new(Cursor::new(&bytes)).collect();
    assert_eq!(read.len(), expected.len());
    assert!(read[0].is_ok());
    assert!(
        matches!(read[1], Err(HcpeError::Position { index: 1, .. })),
        "{:?}",
        read[1]
    );
    assert!(matches!(read[2], Err(HcpeError::Move { index: 2, .. })));
    assert!(read[3].is_ok());
    let last = read.last().unwrap().as_ref().unwrap_err().to_string();
    assert!(last.contains("ends inside it (33 of 38 bytes)"), "{last}");
}

/// A self-play-like record: random legal moves, some with searched candidates.
fn random_record(seed: u64) -> GameRecord {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let start = Position::startpos(Variant::Shogi);
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for ply in 0..60 {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = legal[rng.random_range(0..legal.len())];
        let searched = if ply % 3 == 0 {
            legal
                .iter()
                .take(4)
                .map(|m| SearchedMove {
                    mv: u32::from(m.to_u16()),
                    visits: rng.random_range(1..50),
                    target: 0.25,
                })
                .collect()
        } else {
            Vec::new()
        };
        moves.push(MoveRecord {
            mv: u32::from(mv.to_u16()),
            root_value: rng.random_range(0.05..0.95),
            full_search: !searched.is_empty(),
            searched,
        });
        pos.play_unchecked(mv);
    }
    GameRecord {
        variant: "shogi".into(),
        start_sfen: start.to_sfen(),
        max_plies: 0,
        impasse: 0,
        outcome: Outcome::win(Color::White, EndReason::Resignation),
        resignation_disabled: false,
        moves,
    }
}

/// `records` as this project's hcpe3 writer writes them, one after another.
fn hcpe3_bytes(records: &[GameRecord]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for r in records {
        hcpe3::write_game(r, &mut bytes).unwrap();
    }
    bytes
}

#[test]
fn hcpe3_games_read_back_as_written() {
    let records: Vec<GameRecord> = (1..6).map(random_record).collect();
    let bytes = hcpe3_bytes(&records);
    let games: Vec<_> = Hcpe3Reader::new(Cursor::new(&bytes))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(games.len(), records.len());
    for (g, r) in games.iter().zip(&records) {
        assert_eq!(g.start.to_sfen(), r.start_sfen);
        assert_eq!(g.result & 3, 2, "White won");
        assert_eq!(g.moves.len(), r.moves.len());
        for (m, want) in g.moves.iter().zip(&r.moves) {
            assert_eq!(u32::from(m.mv.to_u16()), want.mv);
            assert_eq!(m.eval, hcpe3::eval_from_score(want.root_value));
            let visits: Vec<u32> = m.candidates.iter().map(|c| u32::from(c.1)).collect();
            let want_visits: Vec<u32> = want.searched.iter().map(|s| s.visits).collect();
            assert_eq!(visits, want_visits);
        }
    }
    // Cut inside the last game: the games before it read, then its error.
    let cut = &bytes[..bytes.len() - 3];
    let read: Vec<_> = Hcpe3Reader::new(Cursor::new(cut)).collect();
    assert_eq!(read.len(), records.len());
    assert!(read[..records.len() - 1].iter().all(Result::is_ok));
    let err = read.last().unwrap().as_ref().unwrap_err().to_string();
    assert!(
        err.contains("entry 5") && err.contains("ends inside it"),
        "{err}"
    );
}

/// What the import and `view` read through: every move is checked where it is played,
/// and a game with an illegal move is an error in its place, named by its index, while
/// the games after it still read.
#[test]
fn read_records_checks_every_move_and_reads_past_a_bad_game() {
    let mut records: Vec<GameRecord> = (1..4).map(random_record).collect();
    // Game 1 (0-based): Black moves White's king at its 11th ply.
    let square = |usi: &str| Square::from_usi(usi, Variant::Shogi).unwrap();
    let bad = Move::normal(square("5a"), square("5b"), false);
    let mut pos = Position::startpos(Variant::Shogi);
    for m in &records[1].moves[..10] {
        pos.play_unchecked(Move::from_u16(m.mv as u16).unwrap());
    }
    assert!(!pos.is_legal(bad));
    records[1].moves[10].mv = u32::from(bad.to_u16());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.hcpe3");
    std::fs::write(&path, hcpe3_bytes(&records)).unwrap();
    let read: Vec<_> = read_records(
        &path,
        RecordFormat::Hcpe3,
        &[Variant::Shogi],
        Default::default(),
    )
    .unwrap()
    .collect();
    assert_eq!(read.len(), 3);
    let err = read[1].as_ref().unwrap_err();
    assert!(
        err.starts_with("game 2: move 11 (5a5b) is illegal"),
        "{err}"
    );
    for (got, want) in [&read[0], &read[2]]
        .into_iter()
        .zip([&records[0], &records[2]])
    {
        let Ok(ReadRecord::Game { record, evals }) = got else {
            panic!("{got:?}")
        };
        assert_eq!(record.moves.len(), want.moves.len());
        assert_eq!(evals.as_ref().map(Vec::len), Some(want.moves.len()));
        assert_eq!(record.outcome().and_then(|o| o.winner), Some(Color::White));
    }
}
