//! [`GameSpec`]: what is played, fully (the game and its rule options), and
//! [`FromSpec`]: each game type's start from one, so code that starts games needs no
//! fork of its own beyond [`with_game_type!`](crate::with_game_type).

use shogi_game::{Game, GameKind};
use shogi_rules::{GameRules, ImpasseRule, Position, ShogiGame, Variant};
use shogi_tai::{TaiGame, TaiRules};

/// A game and its rule options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameSpec {
    /// Which game.
    pub kind: GameKind,
    /// Draw after this many plies (0 = no cap).
    pub max_plies: u32,
    /// Shogi's and minishogi's impasse rule (入玉); tai shogi has none.
    pub impasse: ImpasseRule,
    /// Tai shogi's rule options (its `max_plies` is replaced by the spec's).
    pub tai: TaiRules,
}

impl GameSpec {
    /// `kind` with the default rules of its engine and `max_plies`.
    pub fn new(kind: GameKind, max_plies: u32) -> GameSpec {
        GameSpec {
            kind,
            max_plies,
            impasse: GameRules::default().impasse,
            tai: TaiRules::default(),
        }
    }
}

/// A game type that starts from a [`GameSpec`] of its kind.
pub trait FromSpec: Game {
    /// The start position under the spec's rules. Reached through
    /// [`with_game_type!`](crate::with_game_type), which pairs each kind with its type.
    fn from_spec(spec: &GameSpec) -> Self;
}

impl FromSpec for ShogiGame {
    /// The variant's start position. A tai spec never reaches this type through the
    /// dispatch; called directly with one, it starts standard shogi.
    fn from_spec(spec: &GameSpec) -> ShogiGame {
        let variant = Variant::of(spec.kind).unwrap_or(Variant::Shogi);
        ShogiGame::new(
            Position::startpos(variant),
            GameRules {
                max_plies: spec.max_plies,
                impasse: spec.impasse,
            },
        )
    }
}

impl FromSpec for TaiGame {
    fn from_spec(spec: &GameSpec) -> TaiGame {
        TaiGame::startpos(TaiRules {
            max_plies: spec.max_plies,
            ..spec.tai
        })
    }
}

#[cfg(test)]
mod tests {
    use shogi_game::Game;

    use super::*;
    use crate::{NetGame, NetLayout};

    #[test]
    fn every_kind_starts_its_game_under_the_specs_rules() {
        for kind in GameKind::ALL {
            let spec = GameSpec::new(kind, 77);
            let layout = crate::with_game_type!(kind, G => {
                let game = G::from_spec(&spec);
                assert!(game.outcome().is_none(), "{kind}");
                game.layout()
            });
            assert_eq!(layout, NetLayout::of(kind));
        }
        let spec = GameSpec {
            impasse: ImpasseRule::Points24,
            ..GameSpec::new(GameKind::Minishogi, 40)
        };
        let game = ShogiGame::from_spec(&spec);
        assert_eq!(game.position().variant(), Variant::Minishogi);
        assert_eq!(game.rules().max_plies, 40);
        assert_eq!(game.rules().impasse, ImpasseRule::Points24);
        let tai = TaiGame::from_spec(&GameSpec::new(GameKind::Tai, 99));
        assert_eq!(tai.rules().max_plies, 99);
    }
}
