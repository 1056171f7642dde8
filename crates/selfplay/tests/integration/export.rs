//! CSA / KIF / USI export of self-play records: CSA round trips through the rules' CSA
//! reader, a game directory gets its three files, and minishogi is refused clearly.

use shogi_mcts::{SearchConfig, UniformEvaluator};
use shogi_registry::export::{
    ExportError, replay, to_csa_text, to_kif_text, to_usi_position, write_game_dir,
};
use shogi_rules::kifu::from_csa;
use shogi_rules::{GameRules, Position, ShogiGame, Variant};
use shogi_selfplay::play::{PlayConfig, play_game};

fn played(variant: Variant, max_plies: u32, seed: u64) -> shogi_records::GameRecord {
    let game = ShogiGame::new(
        Position::startpos(variant),
        GameRules {
            max_plies,
            ..GameRules::default()
        },
    );
    let search = SearchConfig {
        simulations: 16,
        tree_batch: 4,
        ..SearchConfig::alphazero()
    };
    let play = PlayConfig {
        random_opening_plies: 4,
        ..PlayConfig::default()
    };
    play_game(game, &search, &play, &UniformEvaluator::default(), seed)
        .unwrap()
        .record
}

#[test]
fn csa_export_round_trips_through_the_rules_reader() {
    for seed in 0..3 {
        let rec = played(Variant::Shogi, 40, seed);
        let csa = to_csa_text(&rec).unwrap();
        assert!(csa.starts_with("V2.2"));
        let back = from_csa(&csa).unwrap();
        let game = replay(&rec).unwrap();
        assert_eq!(back.moves, game.moves());
        assert_eq!(back.start.to_sfen(), rec.start_sfen);
        assert!(back.end.is_some());
    }
}

#[test]
fn kif_export_numbers_every_move() {
    let rec = played(Variant::Shogi, 30, 7);
    let kif = to_kif_text(&rec).unwrap();
    assert!(kif.contains("手数----指手"));
    let n = rec.moves.len();
    assert!(
        kif.lines()
            .any(|l| l.trim_start().starts_with(&format!("{n} "))),
        "{kif}"
    );
}

#[test]
fn game_dir_gets_usi_csa_and_kif() {
    let rec = played(Variant::Shogi, 20, 3);
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("games");
    let written = write_game_dir(&rec, &sub, "g000001").unwrap();
    assert_eq!(written.len(), 3);
    let usi = std::fs::read_to_string(sub.join("g000001.usi")).unwrap();
    assert_eq!(usi.trim_end(), to_usi_position(&rec).unwrap());
    let csa = std::fs::read_to_string(sub.join("g000001.csa")).unwrap();
    assert_eq!(from_csa(&csa).unwrap().moves.len(), rec.moves.len());
    // KIF in Shift_JIS, as the format defines; it reads back move for move.
    let kif =
        shogi_records::text::decode_record_text(&std::fs::read(sub.join("g000001.kif")).unwrap())
            .unwrap();
    assert_eq!(kif.encoding, "Shift_JIS");
    let back = shogi_rules::kifu::from_kif(&kif.text).unwrap();
    assert_eq!(back.moves, replay(&rec).unwrap().moves());
    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(&sub)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with(".tmp") && !shogi_rundir::is_temporary_name(n)),
        "{names:?}"
    );
}

#[test]
fn minishogi_has_usi_but_no_csa_or_kif() {
    let rec = played(Variant::Minishogi, 20, 1);
    assert!(matches!(
        to_csa_text(&rec),
        Err(ExportError::Variant { format: "CSA", .. })
    ));
    assert!(matches!(
        to_kif_text(&rec),
        Err(ExportError::Variant { format: "KIF", .. })
    ));
    let dir = tempfile::tempdir().unwrap();
    let written = write_game_dir(&rec, dir.path(), "mini").unwrap();
    assert_eq!(written.len(), 1);
    assert!(dir.path().join("mini.usi").exists());
}

/// The export path the import reads back (a record's outcome, its ending, the CSA and
/// KIF texts, the rules' readers): every outcome a record can hold gives the same result
/// again, a time-up as a time-up and a forfeit as a forfeit. A win by adjudication has
/// no marker in either format and reads back without a result.
#[test]
fn every_outcome_exports_and_reads_back_with_its_result() {
    use shogi_game::{Color, EndReason, Outcome};
    use shogi_rules::kifu::from_kif;
    let base = played(Variant::Shogi, 20, 3);
    let to_move = replay(&base).unwrap().position().side_to_move();
    let outcomes = [
        Outcome::win(to_move.flip(), EndReason::Resignation),
        Outcome::win(to_move.flip(), EndReason::TimeUp),
        Outcome::win(to_move, EndReason::ImpasseDeclaration),
        Outcome::win(Color::Black, EndReason::Forfeit),
        Outcome::win(Color::White, EndReason::Forfeit),
        Outcome::draw(EndReason::Repetition),
        Outcome::draw(EndReason::MaxPlies),
    ];
    for outcome in outcomes {
        let rec = shogi_records::GameRecord {
            outcome,
            ..base.clone()
        };
        let csa = from_csa(&to_csa_text(&rec).unwrap()).unwrap();
        assert_eq!(csa.outcome(), Some(outcome), "CSA {outcome:?}");
        let kif = from_kif(&to_kif_text(&rec).unwrap()).unwrap();
        assert_eq!(kif.outcome(), Some(outcome), "KIF {outcome:?}");
    }
    let adjudicated = shogi_records::GameRecord {
        outcome: Outcome::win(Color::Black, EndReason::Adjudication),
        ..base
    };
    let csa = from_csa(&to_csa_text(&adjudicated).unwrap()).unwrap();
    assert_eq!(csa.outcome(), None);
}
