//! Which network layout each game has: the one fork from a game (and a feature set) to
//! the tensor shapes of its network. The shapes are each game's own
//! ([`NetGame::layout_for`], in its module of this crate).

use shogi_features::{FeatureSet, NetLayout};
use shogi_game::GameKind;

use crate::NetGame;

/// The layout of `kind`'s network reading [`FeatureSet::Pieces`] (every game has it).
pub fn layout(kind: GameKind) -> NetLayout {
    layout_with(kind, FeatureSet::Pieces).expect("every game's network reads its pieces")
}

/// The layout of `kind`'s network reading `features`, or why the game has no such set
/// (tai shogi has no [`FeatureSet::Attacks`]).
pub fn layout_with(kind: GameKind, features: FeatureSet) -> Result<NetLayout, String> {
    crate::with_game_type!(kind, G => <G as NetGame>::layout_for(kind, features))
}

/// The game of `layout` reading `features` instead (a checkpoint's layout with the
/// feature set its manifest names).
pub fn relayout(layout: &NetLayout, features: FeatureSet) -> Result<NetLayout, String> {
    let kind: GameKind = layout
        .variant
        .parse()
        .map_err(|_| format!("unknown variant {:?}", layout.variant))?;
    layout_with(kind, features)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_game_has_its_own_layout_and_names_its_variant() {
        for kind in GameKind::ALL {
            let pieces = layout(kind);
            assert_eq!(pieces.variant, kind.name());
            assert_eq!(pieces.features, FeatureSet::Pieces);
            assert_eq!(relayout(&pieces, FeatureSet::Pieces), Ok(pieces));
        }
        assert_eq!(layout(GameKind::Tai).board, shogi_tai::SIZE);
        assert_eq!(layout(GameKind::Shogi).board, 9);
        assert_eq!(layout(GameKind::Minishogi).board, 5);
    }

    #[test]
    fn a_feature_set_a_game_lacks_is_refused_by_name() {
        for features in FeatureSet::ALL {
            let tai = layout_with(GameKind::Tai, features);
            if features != FeatureSet::Attacks {
                assert_eq!(tai.unwrap().features, features);
            } else {
                let why = tai.unwrap_err();
                assert!(
                    why.contains("tai") && why.contains(&features.to_string()),
                    "{why}"
                );
            }
            for kind in [GameKind::Shogi, GameKind::Minishogi] {
                assert_eq!(layout_with(kind, features).unwrap().features, features);
            }
        }
    }
}
