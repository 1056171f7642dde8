//! [`GameSpec`]: what is played, fully (the game and its rule options), and
//! [`FromSpec`]: each game type's start from one, so code that starts games needs no
//! fork of its own beyond [`with_game_type!`](crate::with_game_type). Each game's
//! `FromSpec` is in its module ([`crate::shogi`], [`crate::tai`]).

use shogi_game::{Game, GameKind};
use shogi_rules::{GameRules, ImpasseRule};
use shogi_tai::TaiRules;

/// The ply cap of training games unless a config says otherwise: long enough for the
/// games of small networks to end by mate or resignation, short enough that a drawn game
/// does not cost a CPU run minutes.
pub const TRAINING_MAX_PLIES: u32 = 200;
/// The ply cap of matches and the gate unless told otherwise: 320 plies (160 moves a
/// side), longer than training games so that an evaluation game is decided by play
/// more often than by the cap.
pub const TOURNAMENT_MAX_PLIES: u32 = 320;

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

impl GameSpec {
    /// `kind` as tournaments play it, with a ply cap of `max_plies`: standard shogi with
    /// the 27-point impasse declaration (入玉宣言, the CSA/USI rule), minishogi without an
    /// impasse rule, tai shogi with its default rule options.
    pub fn standard(kind: GameKind, max_plies: u32) -> GameSpec {
        let impasse = if kind == GameKind::Shogi {
            ImpasseRule::Declaration27
        } else {
            ImpasseRule::None
        };
        GameSpec {
            impasse,
            ..GameSpec::new(kind, max_plies)
        }
    }
}

/// A game type that starts from a [`GameSpec`] of its kind.
pub trait FromSpec: Game {
    /// The start position under the spec's rules. Reached through
    /// [`with_game_type!`](crate::with_game_type), which pairs each kind with its type.
    fn from_spec(spec: &GameSpec) -> Self;
}

#[cfg(test)]
mod tests {
    use shogi_game::Game;

    use shogi_rules::{ShogiGame, Variant};
    use shogi_tai::TaiGame;

    use super::*;
    use crate::NetGame;

    #[test]
    fn every_kind_starts_its_game_under_the_specs_rules() {
        for kind in GameKind::ALL {
            let spec = GameSpec::new(kind, 77);
            let layout = crate::with_game_type!(kind, G => {
                let game = G::from_spec(&spec);
                assert!(game.outcome().is_none(), "{kind}");
                game.layout()
            });
            assert_eq!(layout, crate::layout(kind));
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

    #[test]
    fn standard_rules_declare_impasse_in_standard_shogi_only() {
        let impasse = |kind| GameSpec::standard(kind, 10).impasse;
        assert_eq!(impasse(GameKind::Shogi), ImpasseRule::Declaration27);
        assert_eq!(impasse(GameKind::Minishogi), ImpasseRule::None);
        assert_eq!(impasse(GameKind::Tai), ImpasseRule::None);
        assert_eq!(GameSpec::standard(GameKind::Tai, 10).max_plies, 10);
    }

    /// Checked play (`Game::play`) plays a legal move and refuses another one
    /// (here a legal move of the position before) without touching the game, for every
    /// game; a finished tai game (whose legal moves do not stop at the end) takes none.
    #[test]
    fn checked_play_refuses_illegal_moves_for_every_game() {
        fn check<G: Game>(mut game: G) {
            let mut legal = Vec::new();
            game.legal_moves(&mut legal);
            let first = legal[0];
            game.play(first).unwrap();
            let (ply, key) = (game.ply(), game.key());
            let mut now = Vec::new();
            game.legal_moves(&mut now);
            if let Some(&stale) = legal.iter().find(|mv| !now.contains(mv)) {
                assert!(game.play(stale).is_err(), "{stale} played");
                assert_eq!((game.ply(), game.key()), (ply, key));
            }
        }
        for kind in GameKind::ALL {
            let spec = GameSpec::new(kind, 4);
            crate::with_game_type!(kind, G => check(G::from_spec(&spec)));
        }
        let mut tai = TaiGame::from_spec(&GameSpec::new(GameKind::Tai, 1));
        let mut legal = Vec::new();
        tai.legal_moves(&mut legal);
        tai.play(legal[0]).unwrap();
        assert!(tai.outcome().is_some());
        let mut after = Vec::new();
        tai.legal_moves(&mut after);
        if let Some(&mv) = after.first() {
            assert!(tai.play(mv).unwrap_err().contains("over"));
        }
    }
}
