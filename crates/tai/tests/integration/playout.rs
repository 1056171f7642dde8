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

/// The end test of a search's expansion (`outcome_after`, `outcomes_after`) is the game
/// played on a copy and asked, for every legal move of every position of random games:
/// from the setup up to a ply cap, and with a few pieces a side, where royals fall,
/// positions repeat and an emperor may be missing, under both repetition rules.
#[test]
fn the_end_after_a_move_is_the_game_played_and_asked() {
    use shogi_tai::{Catalogue, Piece, Repetition, Square};
    let kind = |abbr| Catalogue::get().by_abbr(abbr).unwrap();
    let mut rng = StdRng::seed_from_u64(79);
    let mut ends = std::collections::BTreeMap::new();
    let mut check = |game: &TaiGame, rng: &mut StdRng, all: bool| {
        let mut moves = Vec::new();
        game.legal_moves(&mut moves);
        let mut fast = vec![None; moves.len()];
        game.outcomes_after(&moves, |k, o| fast[k] = Some(o));
        for (k, &mv) in moves.iter().enumerate() {
            // Every capture, and a sample of the rest (an emperor has 600 moves).
            if game.capture_gain(mv).0 == 0
                && game.capture_gain(mv).1 == 0
                && !all
                && !rng.random_bool(0.1)
            {
                continue;
            }
            let mut next = game.clone();
            next.play_unchecked(mv);
            assert_eq!(fast[k], next.outcome(), "{mv} at ply {}", game.ply());
            assert_eq!(game.outcome_after(mv), next.outcome(), "{mv}");
            if let Some(o) = next.outcome() {
                *ends.entry(format!("{:?}", o.reason)).or_insert(0) += 1;
            }
        }
        moves
    };
    let mut game = TaiGame::startpos(TaiRules {
        max_plies: 30,
        ..TaiRules::default()
    });
    while game.outcome().is_none() {
        let moves = check(&game, &mut rng, false);
        game.play_unchecked(moves[rng.random_range(0..moves.len())]);
    }
    let few = ["CP", "E", "Ln", "LD", "HM", "G", "P", "K"];
    for (i, repetition) in [Repetition::FourfoldDraw, Repetition::Forbidden]
        .into_iter()
        .cycle()
        .take(6)
        .enumerate()
    {
        let mut pos = Position::empty();
        for color in Color::ALL {
            for &abbr in &few[..3 + i % 5] {
                if abbr == "E" && i % 3 == 0 {
                    continue;
                }
                let sq = loop {
                    let sq = Square::new(rng.random_range(9..16), rng.random_range(9..16)).unwrap();
                    if pos.piece(sq).is_none() {
                        break sq;
                    }
                };
                pos.set(sq, Some(Piece::new(kind(abbr), color)));
            }
        }
        let rules = TaiRules {
            max_plies: 0,
            repetition,
            ..TaiRules::default()
        };
        let mut game = TaiGame::new(pos, rules);
        for _ in 0..60 {
            if game.outcome().is_some() {
                break;
            }
            let moves = check(&game, &mut rng, false);
            game.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
    }
    // Two golds stepping out and back: the start comes round a fourth time.
    let mut pos = Position::empty();
    for (abbr, sq, color) in [
        ("CP", "25y", Color::Black),
        ("G", "13m", Color::Black),
        ("CP", "1a", Color::White),
        ("G", "5e", Color::White),
    ] {
        pos.set(
            Square::parse(sq).unwrap(),
            Some(Piece::new(kind(abbr), color)),
        );
    }
    let mut game = TaiGame::new(pos, TaiRules::default());
    for text in ["13m13l", "5e5f", "13l13m", "5f5e"].iter().cycle().take(12) {
        check(&game, &mut rng, true);
        let mv = game.parse_move(text).unwrap();
        game.play_unchecked(mv);
    }
    for reason in ["MaxPlies", "RoyalsCaptured", "Repetition"] {
        assert!(ends.contains_key(reason), "no {reason} seen: {ends:?}");
    }
}
