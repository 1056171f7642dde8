//! The mate search of a game (`ShogiGame::search_mate`, `Game::find_mate`) never claims a
//! mate whose line passes through a position the game has already had: the game's
//! repetition rule could end it there (a draw, or the attacker's loss for perpetual
//! check) before the mate.

use shogi_game::{Color, EndReason, Game, Outcome};
use shogi_rules::mate::{MateLimits, MateResult, is_mating_line, search_mate};
use shogi_rules::{GameRules, Move, Position, ShogiGame, Variant};

/// Black to move mates in 3 only by 3e4d (the bishop checks from 4d; 1a1b; 3a2b+),
/// a quiet bishop move that can be taken back.
const ONLY_MATE: &str = "6B1k/9/9/9/3+R2B2/9/9/9/4K4 b N 1";

fn pos(sfen: &str) -> Position {
    Position::from_sfen(Variant::Shogi, sfen).unwrap()
}

fn play(g: &mut ShogiGame, moves: &[&str]) {
    for m in moves {
        let mv = g.position().parse_usi_move(m).unwrap();
        g.play_unchecked(mv);
    }
}

/// The game that checked with 3e4d once, then took it back: the position after 3e4d is
/// already in its history, and the root is the start position again.
fn after_a_taken_back_check() -> ShogiGame {
    let mut g = ShogiGame::new(pos(ONLY_MATE), GameRules::default());
    play(&mut g, &["3e4d", "1a1b", "4d3e", "1b1a"]);
    assert_eq!(g.position().key(), pos(ONLY_MATE).key());
    g
}

/// Plays `line` on `g` and returns the outcome at its end, or the first outcome
/// reached before it.
fn outcome_of(mut g: ShogiGame, line: &[Move]) -> Option<Outcome> {
    for &mv in line {
        if let Some(o) = g.outcome() {
            return Some(o);
        }
        g.play_unchecked(mv);
    }
    g.outcome()
}

#[test]
fn the_mate_exists_without_history() {
    let p = pos(ONLY_MATE);
    let MateResult::Mate(line) = search_mate(&p, &MateLimits::default()).0 else {
        panic!("no mate found")
    };
    assert!(is_mating_line(&p, &line), "{line:?}");
    assert_eq!(line[0].to_string(), "3e4d", "{line:?}");
    let g = ShogiGame::new(p, GameRules::default());
    let found = g.find_mate(20_000, 31).expect("the game finds it too");
    assert_eq!(found[0].to_string(), "3e4d");
}

#[test]
fn a_mate_through_a_position_of_the_game_is_not_claimed() {
    let g = after_a_taken_back_check();
    // Where a second occurrence ends the game (TwoFoldDraws; what a search assumes past
    // its root), the mating line's first move already draws: it is no mate.
    let mut twofold = g.clone();
    twofold.set_twofold_after(twofold.ply());
    let mut old_line = twofold.clone();
    play(&mut old_line, &["3e4d"]);
    assert_eq!(
        old_line.outcome().map(|o| (o.reason, o.winner)),
        Some((EndReason::Repetition, None))
    );
    for game in [g, twofold] {
        // The only mate passes through the repeated position: none is claimed (the
        // search runs out of nodes among the checks that lead nowhere, or proves that).
        assert_eq!(game.find_mate(20_000, 31), None);
        let limits = MateLimits {
            max_nodes: 200_000,
            max_plies: 31,
            ..MateLimits::default()
        };
        let (result, _) = game.search_mate(&limits);
        assert!(!matches!(result, MateResult::Mate(_)), "{result:?}");
    }
}

#[test]
fn another_mate_is_still_found_and_wins_under_the_games_rule() {
    // With a gold in hand as well, Black has mates that avoid the repeated position
    // (G*2b, G*1b, ...): one of them is claimed, and played out where a second
    // occurrence ends the game it is a checkmate with no earlier end.
    let sfen = "6B1k/9/9/9/3+R2B2/9/9/9/4K4 b GN 1";
    let mut g = ShogiGame::new(pos(sfen), GameRules::default());
    play(&mut g, &["3e4d", "1a1b", "4d3e", "1b1a"]);
    g.set_twofold_after(g.ply());
    let line = g
        .find_mate(20_000, 31)
        .expect("a mate avoiding the repetition");
    assert_ne!(line[0].to_string(), "3e4d", "{line:?}");
    assert_eq!(
        outcome_of(g.clone(), &line),
        Some(Outcome::win(Color::Black, EndReason::Checkmate)),
        "{line:?}"
    );
}
