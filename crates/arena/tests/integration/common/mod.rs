//! What the arena's test files share.

use shogi_arena::{MatchConfig, Openings, PlayerSettings};
use shogi_game::GameKind;
use shogi_registry::GameSpec;

/// A minishogi match on the CPU: `games` games of at most 120 plies from random
/// 4-ply openings, `simulations` per move, two at a time, seed 11.
pub fn minishogi(games: u32, simulations: u32) -> MatchConfig {
    MatchConfig {
        games,
        game: GameSpec::standard(GameKind::Minishogi, 120),
        adjudicate_margin: 0,
        openings: Openings::Random { plies: 4 },
        parallel: 2,
        sprt: None,
        players: PlayerSettings {
            simulations,
            device: "cpu".into(),
            ..PlayerSettings::default()
        },
        seed: 11,
        games_dir: None,
        resume: false,
    }
}
