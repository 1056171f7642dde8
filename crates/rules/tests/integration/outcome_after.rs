//! `Game::outcome_after` (a search's check of each child it expands, on a copy of the
//! position only) against its definition: play the move on a clone of the whole game
//! and ask `outcome`. Random games from positions where each end rule fires, under each
//! rule set, every child of every position compared, one by one and as a whole
//! expansion (`Game::outcomes_after`).

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shogi_game::{EndReason, Game};
use shogi_rules::{GameRules, ImpasseRule, Position, ShogiGame, Variant};

/// Compares every child of `game`; counts each end reason met.
fn check_children(game: &ShogiGame, seen: &mut BTreeMap<String, usize>) {
    let mut moves = Vec::new();
    game.legal_moves(&mut moves);
    // The whole expansion at once (the position's part of the test done once) says the
    // same as each move alone.
    let mut batch = vec![None; moves.len()];
    game.outcomes_after(&moves, |k, o| batch[k] = Some(o));
    // Two free steps of the other side: every quiet move leaves it a legal move.
    if game.position().other_side_has_two_free_steps() {
        for &mv in &moves {
            if !game.position().gives_check(mv) {
                let after = game.position().after(mv);
                assert!(
                    !after.legal_moves().is_empty(),
                    "{mv} in {}",
                    game.position()
                );
            }
        }
    }
    for (k, mv) in moves.into_iter().enumerate() {
        assert_eq!(
            batch[k],
            game.outcome_after(mv),
            "batch: {mv} in {}",
            game.position()
        );
        let mut next = game.clone();
        next.play_unchecked(mv);
        let want = next.outcome();
        // The early-exit test the end rules use, against the full list.
        let pos = next.position();
        assert_eq!(
            pos.has_legal_move(),
            !pos.legal_moves().is_empty(),
            "has_legal_move after {mv} in {}",
            game.position()
        );
        assert_eq!(
            game.outcome_after(mv),
            want,
            "{mv} after {} (moves {:?})",
            game.start_position(),
            game.moves()
        );
        if let Some(o) = want {
            *seen.entry(format!("{:?}", o.reason)).or_default() += 1;
        }
    }
}

/// Random games from `sfen` under `rules`, each position's children compared.
fn random_games(
    variant: Variant,
    sfen: &str,
    rules: GameRules,
    twofold: bool,
    games: usize,
    seen: &mut BTreeMap<String, usize>,
) {
    let mut rng = StdRng::seed_from_u64(7);
    let start = Position::from_sfen(variant, sfen).unwrap();
    // A search's spare game: copied into with `clone_from`, holding the storage of the
    // games before (longer histories) each time.
    let mut spare = ShogiGame::new(start.clone(), rules);
    for _ in 0..games {
        let mut game = ShogiGame::new(start.clone(), rules);
        if twofold {
            game.set_twofold_after(0);
        }
        let mut moves = Vec::new();
        while game.outcome().is_none() {
            check_children(&game, seen);
            spare.clone_from(&game);
            assert_eq!(
                (spare.moves(), spare.key(), spare.ply(), spare.outcome()),
                (game.moves(), game.key(), game.ply(), game.outcome())
            );
            let mut children = Vec::new();
            game.legal_moves(&mut children);
            for &mv in &children {
                assert_eq!(
                    spare.outcome_after(mv),
                    game.outcome_after(mv),
                    "clone_from: {mv}"
                );
            }
            moves.clear();
            game.legal_moves(&mut moves);
            game.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
    }
}

#[test]
fn outcome_after_a_move_is_the_outcome_of_the_game_that_played_it() {
    let mut seen = BTreeMap::new();
    let plain = GameRules::default();
    let capped = GameRules {
        max_plies: 40,
        impasse: ImpasseRule::None,
    };
    let declaration = GameRules {
        max_plies: 60,
        impasse: ImpasseRule::Declaration27,
    };
    let points24 = GameRules {
        max_plies: 60,
        impasse: ImpasseRule::Points24,
    };
    let start = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
    random_games(Variant::Shogi, start, capped, false, 3, &mut seen);
    // Minishogi from its start, and kings with a rook in hand: checks, perpetual checks
    // and repetitions, fourfold and (after set_twofold_after) twofold.
    let mini = "rbsgk/4p/5/P4/KGSBR b - 1";
    let rook_shogi = "4k4/9/9/9/9/9/9/9/4K4 b R 1";
    let rook_mini = "4k/5/5/5/K4 b r 1";
    for twofold in [false, true] {
        random_games(Variant::Minishogi, mini, plain, twofold, 20, &mut seen);
        random_games(Variant::Shogi, rook_shogi, capped, twofold, 20, &mut seen);
        random_games(
            Variant::Minishogi,
            rook_mini,
            capped,
            twofold,
            20,
            &mut seen,
        );
    }
    // One move from a 27-point declaration (White moves, then Black may declare) and
    // from both kings in the camps (24-point rule).
    let near_27 = "GGGGSSSBR/PPP6/4K4/9/9/9/9/9/4k4 w 8Prbs4n4l7p 1";
    random_games(Variant::Shogi, near_27, declaration, false, 3, &mut seen);
    let near_24 = "4K4/9/9/9/9/4k4/9/9/9 w 2R2B4G4S4N4L17Pp 1";
    random_games(Variant::Shogi, near_24, points24, false, 3, &mut seen);

    for reason in [
        EndReason::Checkmate,
        EndReason::Repetition,
        EndReason::PerpetualCheck,
        EndReason::MaxPlies,
        EndReason::ImpasseDeclaration,
        EndReason::Impasse24,
    ] {
        assert!(
            seen.contains_key(&format!("{reason:?}")),
            "no child ended by {reason:?}: {seen:?}"
        );
    }
}
