//! [`NetGame`]: what the network side needs from a game, so the evaluator and self-play
//! serve every game through one seam. The planes and policy indices themselves are
//! `shogi-features` (shogi, minishogi) and `shogi_tai::net` (tai shogi).

use shogi_features::{FeatureSet, NetLayout, SparsePlanes};
use shogi_game::{Game, GameKind};

/// A game the network can play: its layout, its input planes and the policy index of
/// each legal move.
pub trait NetGame: Game {
    /// The layout of the network of `kind` (a game this type plays) reading `features`,
    /// or why the game has no such feature set. [`crate::layout_with`] is the fork from a
    /// [`GameKind`] to this.
    fn layout_for(kind: GameKind, features: FeatureSet) -> Result<NetLayout, String>
    where
        Self: Sized;

    /// The layout of this game's variant with
    /// [`FeatureSet::Pieces`](shogi_features::FeatureSet::Pieces).
    fn layout(&self) -> NetLayout;

    /// Writes the input planes of `layout` (a layout of this game's variant, any feature
    /// set it offers) into `out` (`layout.input_size()` floats).
    fn encode_planes(&self, layout: &NetLayout, out: &mut [f32]);

    /// Writes the input planes of `layout` as [`SparsePlanes`] into `out` and returns
    /// true, or returns false where this game's planes are dense enough that writing
    /// them whole is cheaper (the default; standard shogi and minishogi). Both encodings
    /// must describe the same planes.
    fn encode_sparse(&self, _layout: &NetLayout, _out: &mut SparsePlanes) -> bool {
        false
    }

    /// The policy index of a legal move (`None` only for a move of another game).
    fn move_index(&self, mv: Self::Move) -> Option<usize>;
}
