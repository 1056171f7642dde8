//! What the learner's tests share: self-play records of minishogi played with the
//! uniform evaluator (no network), reproducible from their seed.

use shogi_mcts::{SearchConfig, UniformEvaluator};
use shogi_records::record::GameRecord;
use shogi_rules::{GameRules, Position, ShogiGame, Variant};
use shogi_selfplay::play::{PlayConfig, play_game};

/// A minishogi self-play game of at most `max_plies`, `simulations` per move.
pub fn minishogi_game(seed: u64, max_plies: u32, simulations: u32) -> GameRecord {
    let start = ShogiGame::new(
        Position::startpos(Variant::Minishogi),
        GameRules {
            max_plies,
            ..GameRules::default()
        },
    );
    let search = SearchConfig {
        simulations,
        tree_batch: 4,
        ..SearchConfig::alphazero()
    };
    play_game(
        start,
        &search,
        &PlayConfig::default(),
        &UniformEvaluator::default(),
        seed,
    )
    .unwrap()
    .record
}
