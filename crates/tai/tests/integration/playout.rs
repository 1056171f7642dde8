//! Random playouts of whole games never panic and keep the game's invariants; perft from
//! the setup is pinned as a regression figure.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shogi_game::{Color, Game};
use shogi_tai::{Position, TaiGame, TaiMove, TaiRules};

fn check_invariants(game: &TaiGame) {
    let pos = game.position();
    let fresh = TaiGame::new(pos.clone(), *game.rules());
    assert_eq!(
        fresh.key(),
        game.key(),
        "incremental key at ply {}",
        game.ply()
    );
    for c in Color::ALL {
        assert_eq!(
            game.royal_count(c),
            pos.royals(c).count() as u32,
            "royal count of {c:?}"
        );
    }
    let text = pos.to_sfen();
    let back = Position::from_sfen(&text).expect("own SFEN parses");
    assert_eq!(&back, pos);
}

#[test]
fn random_games_keep_their_invariants() {
    let mut rng = StdRng::seed_from_u64(2026);
    let mut plies = 0;
    let mut decisive = 0;
    for game_index in 0..4 {
        let rules = TaiRules {
            max_plies: 2000,
            ..TaiRules::default()
        };
        let mut game = TaiGame::startpos(rules);
        let mut moves = Vec::new();
        let mut last: Option<TaiMove> = None;
        while game.outcome().is_none() {
            moves.clear();
            game.legal_moves(&mut moves);
            assert!(!moves.is_empty(), "no move but no outcome");
            let mut sorted = moves.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(
                sorted.len(),
                moves.len(),
                "duplicate moves at ply {}",
                game.ply()
            );
            let mv = moves[rng.random_range(0..moves.len())];
            if let Some(prev) = last {
                assert!(!(prev.is_pass() && mv.is_pass()), "two passes in a row");
            }
            // The text form names exactly this move.
            assert_eq!(game.parse_move(&mv.to_string()), Some(mv));
            assert_eq!(TaiMove::from_code(mv.to_code()), Some(mv));
            let pieces_before = game.position().pieces().count();
            game.play_unchecked(mv);
            assert!(game.position().pieces().count() <= pieces_before);
            last = Some(mv);
            if game.ply().is_multiple_of(97) {
                check_invariants(&game);
            }
        }
        check_invariants(&game);
        plies += game.ply();
        if game.outcome().unwrap().winner.is_some() {
            decisive += 1;
        }
        eprintln!(
            "game {game_index}: {:?} after {} plies",
            game.outcome().unwrap(),
            game.ply()
        );
    }
    assert!(plies >= 1000, "{plies} plies");
    assert!(
        decisive > 0,
        "random play should capture every royal sometimes"
    );
}

/// Leaf counts from the setup. Regression figures: they come from this generator, not
/// from an outside engine (none plays tai shogi with these rules).
#[test]
fn perft_from_the_setup() {
    let game = TaiGame::startpos(TaiRules::default());
    assert_eq!(game.perft(1, true), PERFT_1);
    assert_eq!(game.perft(2, true), PERFT_2);
}

const PERFT_1: u64 = 479;
const PERFT_2: u64 = 230_777;
/// Three plies: about 3 s in a release build, so behind `--ignored`.
const PERFT_3: u64 = 111_369_418;

#[test]
#[ignore = "3 s in release, longer in debug"]
fn perft_3_from_the_setup() {
    let game = TaiGame::startpos(TaiRules::default());
    assert_eq!(game.perft(3, true), PERFT_3);
}
