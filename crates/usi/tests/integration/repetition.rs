//! `TwoFoldDraws`: the engine's search scores a position's second occurrence as a draw,
//! so the side its evaluation calls ahead avoids repeating and the side behind seeks it
//! (what a runner that draws at the second occurrence, like shogiarena, will rule).

use shogi_game::{Color, Game, GameKind};
use shogi_mcts::{FnEvaluator, Search, SearchConfig, SearchLimits, SearchResult, Wdl};
use shogi_registry::GameSpec;
use shogi_rules::{Move, ShogiGame};
use shogi_usi::game::UsiGame;

/// Two kings (few moves, so every one is searched); the evaluator below says Black is
/// ahead.
const SFEN: [&str; 5] = ["sfen", "4k4/9/9/9/9/9/9/9/4K4", "b", "-", "1"];
/// Both kings step out and back: the start position again, Black to move.
const CYCLE: [&str; 4] = ["5i5h", "5a5b", "5h5i", "5b5a"];

fn game_after(moves: &[&str], twofold: bool) -> ShogiGame {
    let spec = GameSpec::standard(GameKind::Shogi, 0);
    let (mut game, _, _) = ShogiGame::parse_position(&spec, &SFEN, moves).unwrap();
    if twofold {
        game.twofold_in_search();
    }
    game
}

/// Uniform priors; every position is worth 0.8 to Black and 0.2 to White.
fn black_is_ahead(game: &ShogiGame, moves: &[Move]) -> (Vec<f32>, Wdl) {
    let n = moves.len();
    let black = if game.side_to_move() == Color::Black {
        0.8
    } else {
        0.2
    };
    (
        vec![1.0 / n as f32; n],
        Wdl {
            win: black,
            draw: 0.0,
            loss: 1.0 - black,
        },
    )
}

/// The engine's search (terminal checks on, no root mate search) for `simulations`.
fn searcher(simulations: u32) -> Search<ShogiGame> {
    let config = SearchConfig {
        simulations,
        root_mate_nodes: 0,
        ..SearchConfig::for_play()
    };
    Search::new(config, 1)
}

fn search(game: &ShogiGame) -> SearchResult<Move> {
    let evaluator = FnEvaluator::new(black_is_ahead);
    searcher(400)
        .search(game, &evaluator, &SearchLimits::default())
        .unwrap()
}

/// The chosen move and the searched value of `mv` for the side to move.
fn choice_and_q(game: &ShogiGame, mv: &str) -> (String, Option<f32>) {
    let r = search(game);
    let i = r.moves.iter().position(|m| m.to_string() == mv).unwrap();
    (r.best_move.unwrap().to_string(), r.q[i])
}

#[test]
fn the_side_ahead_avoids_a_repetition_and_the_side_behind_seeks_it() {
    // Black to move in the start position's second occurrence: 5i5h would repeat the
    // position after the first 5i5h, a draw, worth less than the 0.8 of anything else.
    let game = game_after(&CYCLE, true);
    assert!(
        game.outcome().is_none(),
        "the root itself keeps the fourfold rule"
    );
    let (best, q) = choice_and_q(&game, "5i5h");
    assert_ne!(best, "5i5h");
    assert_eq!(q, Some(0.5), "the repetition is scored as a draw");
    // White to move, three plies in: 5b5a brings the start position back (its second
    // occurrence), a draw, better for White than 0.2.
    let game = game_after(&CYCLE[..3], true);
    let (best, q) = choice_and_q(&game, "5b5a");
    assert_eq!(best, "5b5a");
    assert_eq!(q, Some(0.5));
}

#[test]
fn without_twofold_draws_a_second_occurrence_is_an_ordinary_position() {
    // Only the fourth occurrence ends the game: the repeating moves are worth what the
    // evaluator says (0.8 to Black, 0.2 to White, a little less where deeper lines
    // reach a fourth occurrence).
    let game = game_after(&CYCLE, false);
    let (_, q) = choice_and_q(&game, "5i5h");
    assert!(q.is_some_and(|q| q > 0.7), "{q:?}");
    let game = game_after(&CYCLE[..3], false);
    let (_, q) = choice_and_q(&game, "5b5a");
    assert!(q.is_some_and(|q| q < 0.3), "{q:?}");
}

/// The engine keeps its tree between moves. After White repeats (a draw inside the last
/// search), the game goes on under the fourfold rule: the kept node, a finished line, must
/// not become the root, or the engine would have no move.
#[test]
fn a_repetition_played_on_the_board_is_searched_afresh() {
    let mut search = searcher(200);
    let evaluator = FnEvaluator::new(black_is_ahead);
    let white = game_after(&CYCLE[..3], true);
    let r = search
        .search(&white, &evaluator, &SearchLimits::default())
        .unwrap();
    let repeat = r.best_move.unwrap();
    assert_eq!(repeat.to_string(), "5b5a");
    search.advance(repeat);
    let black = game_after(&CYCLE, true);
    let r = search
        .search(&black, &evaluator, &SearchLimits::default())
        .unwrap();
    assert!(r.best_move.is_some(), "{:?}", r.stop_reason);
    assert!(r.simulations > 0);
}

/// `Contempt` (`SearchConfig::draw_value`): with every position even, a draw is what the
/// root's side makes of it: below 0.5 it plays on, above it repeats.
#[test]
fn contempt_decides_an_even_position_for_or_against_the_repetition() {
    let even = shogi_mcts::UniformEvaluator::default();
    for (moves, repeat) in [(&CYCLE[..], "5i5h"), (&CYCLE[..3], "5b5a")] {
        let game = game_after(moves, true);
        for (draw_value, wanted) in [(0.3, false), (0.7, true)] {
            let mut search = searcher(400);
            search.config_mut().draw_value = draw_value;
            let r = search
                .search(&game, &even, &SearchLimits::default())
                .unwrap();
            let i = r
                .moves
                .iter()
                .position(|m| m.to_string() == repeat)
                .unwrap();
            assert_eq!(
                r.q[i],
                Some(draw_value),
                "{repeat} at draw value {draw_value}"
            );
            let best = r.best_move.unwrap().to_string();
            assert_eq!(
                best == repeat,
                wanted,
                "{repeat}: best {best} at {draw_value}"
            );
        }
    }
}

/// At a few dozen simulations a strong prior gives the repeating move the most visits;
/// its value is known exactly (a draw), so the searched moves worth more are played.
#[test]
fn a_known_draw_is_not_played_for_its_visits_when_a_searched_move_is_worth_more() {
    let game = game_after(&CYCLE, true);
    let mut legal = Vec::new();
    game.legal_moves(&mut legal);
    let repeat = legal.iter().position(|m| m.to_string() == "5i5h").unwrap();
    // 70% of the prior on the repeating move, Black ahead as before.
    let skewed = FnEvaluator::new(move |g: &ShogiGame, moves: &[Move]| {
        let (mut priors, wdl) = black_is_ahead(g, moves);
        if g.ply() == 4 {
            priors = vec![0.3 / (moves.len() - 1) as f32; moves.len()];
            priors[repeat] = 0.7;
        }
        (priors, wdl)
    });
    let r = searcher(32)
        .search(&game, &skewed, &SearchLimits::default())
        .unwrap();
    let most = (0..r.moves.len())
        .max_by_key(|&i| (r.visits[i], usize::MAX - i))
        .unwrap();
    assert_eq!(
        r.moves[most].to_string(),
        "5i5h",
        "the prior makes the draw the most visited: {:?}",
        r.visits
    );
    assert_ne!(
        r.best_move.unwrap().to_string(),
        "5i5h",
        "{:?} {:?}",
        r.visits,
        r.q
    );
}
