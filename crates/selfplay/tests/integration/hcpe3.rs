//! The hcpe3 export read back by cshogi (dlshogi's board library, from the venv): every
//! start position's HuffmanCodedPos equals cshogi's own encoding byte for byte, and every
//! move16, evaluation, result and visit count decodes to what the record holds.

use shogi_testkit::{python, repo_root};
use std::process::Command;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use shogi_game::Outcome;
use shogi_mcts::{SearchConfig, UniformEvaluator};
use shogi_records::hcpe3::{self, eval_from_score};
use shogi_records::record::GameRecord;
use shogi_rules::{GameRules, Move, Position, ShogiGame, Variant};
use shogi_selfplay::play::{PlayConfig, play_game};

/// A position after `plies` uniformly random legal plies from the start (captures,
/// promotions and pieces in hand appear after a few dozen).
fn random_position(plies: u32, rng: &mut ChaCha8Rng) -> Position {
    let mut game = ShogiGame::new(
        Position::startpos(Variant::Shogi),
        GameRules {
            max_plies: 0,
            ..GameRules::default()
        },
    );
    shogi_game::play_picked_moves(&mut game, plies as usize, |n| rng.random_range(0..n));
    game.position().clone()
}

fn usi(code: u32) -> String {
    Move::from_u16(code as u16).unwrap().to_string()
}

fn expectation(record: &GameRecord) -> serde_json::Value {
    let winner = match record.outcome.winner {
        None => 0,
        Some(shogi_game::Color::Black) => 1,
        Some(shogi_game::Color::White) => 2,
    };
    let flags = match record.outcome.reason {
        shogi_game::EndReason::MaxPlies => 16,
        shogi_game::EndReason::Repetition | shogi_game::EndReason::PerpetualCheck => 4,
        shogi_game::EndReason::ImpasseDeclaration | shogi_game::EndReason::Impasse24 => 8,
        _ => 0,
    };
    json!({
        "start": record.start_sfen,
        "moves": record.moves.iter().map(|m| usi(m.mv)).collect::<Vec<_>>(),
        "result": winner | flags,
        "evals": record.moves.iter().map(|m| eval_from_score(m.root_value)).collect::<Vec<_>>(),
        "candidates": record.moves.iter().map(|m| {
            if m.full_search {
                m.searched.iter().filter(|s| s.visits > 0).map(|s| json!([usi(s.mv), s.visits])).collect::<Vec<_>>()
            } else {
                Vec::new()
            }
        }).collect::<Vec<_>>(),
    })
}

#[test]
fn hcpe3_export_is_read_back_exactly_by_cshogi() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let search = SearchConfig {
        simulations: 12,
        tree_batch: 4,
        ..SearchConfig::alphazero()
    };
    let mut records = Vec::new();
    for k in 0..24u32 {
        let start = random_position(k * 9, &mut rng);
        let rules = GameRules {
            max_plies: start.move_number().saturating_sub(1) + 10,
            ..GameRules::default()
        };
        let play = PlayConfig {
            // Some games start with unsearched plies: they must carry no candidates.
            random_opening_plies: k % 3,
            ..PlayConfig::default()
        };
        let played = play_game(
            ShogiGame::new(start, rules),
            &search,
            &play,
            &UniformEvaluator::default(),
            u64::from(k),
        )
        .unwrap();
        records.push(played.record);
    }
    // The start positions cover hands and promoted pieces.
    assert!(records.iter().any(|r| !r.start_sfen.contains(" - ")));
    assert!(
        records
            .iter()
            .any(|r| r.start_sfen.split(' ').next().unwrap().contains('+'))
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("games.hcpe3");
    let mut bytes = Vec::new();
    for r in &records {
        hcpe3::write_game(r, &mut bytes).unwrap();
    }
    std::fs::write(&file, &bytes).unwrap();
    let expected: Vec<_> = records.iter().map(expectation).collect();
    let json_path = dir.path().join("expected.json");
    std::fs::write(&json_path, serde_json::to_string(&expected).unwrap()).unwrap();
    let out = Command::new(python())
        .arg(repo_root().join("scripts/oracle/hcpe3_check.py"))
        .arg(&file)
        .arg(&json_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let moves: usize = records.iter().map(|r| r.moves.len()).sum();
    assert_eq!(stdout.trim(), format!("ok {} {moves}", records.len()));
}

#[test]
fn hcpe3_refuses_what_it_cannot_hold() {
    let mini = play_game(
        ShogiGame::new(
            Position::startpos(Variant::Minishogi),
            GameRules {
                max_plies: 4,
                ..GameRules::default()
            },
        ),
        &SearchConfig {
            simulations: 4,
            ..SearchConfig::alphazero()
        },
        &PlayConfig::default(),
        &UniformEvaluator::default(),
        1,
    )
    .unwrap()
    .record;
    let err = hcpe3::write_game(&mini, &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("minishogi"), "{err}");
    // A position without a White king cannot be Huffman-coded.
    let mut no_king = mini.clone();
    no_king.variant = "shogi".into();
    no_king.moves.clear();
    no_king.outcome = Outcome::draw(shogi_game::EndReason::MaxPlies);
    no_king.start_sfen = "9/9/9/9/9/9/9/9/4K4 b - 1".into();
    let err = hcpe3::write_game(&no_king, &mut Vec::new()).unwrap_err();
    assert!(
        err.to_string().contains("king") || err.to_string().contains("start position"),
        "{err}"
    );
    // Handicap starts lack pieces, which a HuffmanCodedPos cannot express.
    let mut handicap = no_king.clone();
    handicap.start_sfen = Position::handicap("lance").unwrap().to_sfen();
    let err = hcpe3::write_game(&handicap, &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("39"), "{err}");
    // Evaluations follow dlshogi's logistic scale and saturate.
    assert_eq!(eval_from_score(0.5), 0);
    assert!(eval_from_score(0.75) > 800 && eval_from_score(0.75) < 850);
    assert_eq!(eval_from_score(0.25), -eval_from_score(0.75));
    assert!(
        eval_from_score(1.0) > 10_000,
        "a certain win saturates high"
    );
    assert_eq!(eval_from_score(0.0), -eval_from_score(1.0));
}
