//! [`NetGame`]: what the network side needs from a game, so the evaluator and
//! self-play serve every variant (shogi, minishogi, tai shogi) through one seam.

use shogi_game::{Game, GameKind};
use shogi_rules::{ShogiGame, Variant};
use shogi_tai::TaiGame;

use crate::{FeatureSet, input_planes, policy_index, policy_planes};

/// The tensor shapes of a variant's network and the input planes it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetLayout {
    /// Variant name (`shogi`, `minishogi`, `tai`).
    pub variant: &'static str,
    /// Which input planes.
    pub features: FeatureSet,
    /// Input planes.
    pub input_planes: usize,
    /// Board height and width.
    pub board: usize,
    /// Policy planes over the board.
    pub policy_planes: usize,
}

impl NetLayout {
    /// The layout of a shogi or minishogi network reading [`FeatureSet::Pieces`].
    pub fn shogi(variant: Variant) -> NetLayout {
        NetLayout::shogi_with(variant, FeatureSet::Pieces)
    }

    /// The layout of a shogi or minishogi network reading `features`.
    pub fn shogi_with(variant: Variant, features: FeatureSet) -> NetLayout {
        NetLayout {
            variant: variant.name(),
            features,
            input_planes: input_planes(variant, features),
            board: variant.size() as usize,
            policy_planes: policy_planes(variant),
        }
    }

    /// The layout of a tai shogi network.
    pub fn tai() -> NetLayout {
        NetLayout {
            variant: GameKind::Tai.name(),
            features: FeatureSet::Pieces,
            input_planes: shogi_tai::net::input_planes(),
            board: shogi_tai::SIZE,
            policy_planes: shogi_tai::net::POLICY_PLANES,
        }
    }

    /// The layout of a game's network reading [`FeatureSet::Pieces`] (every game has it).
    pub fn of(kind: GameKind) -> NetLayout {
        match Variant::of(kind) {
            Some(variant) => NetLayout::shogi(variant),
            None => NetLayout::tai(),
        }
    }

    /// The layout of a game's network reading `features`, or why the game has no such
    /// set: tai shogi reads [`FeatureSet::Pieces`] only (its 207 planes of 25x25 are
    /// already the network's largest cost).
    pub fn with_features(kind: GameKind, features: FeatureSet) -> Result<NetLayout, String> {
        match (Variant::of(kind), features) {
            (Some(variant), _) => Ok(NetLayout::shogi_with(variant, features)),
            (None, FeatureSet::Pieces) => Ok(NetLayout::tai()),
            (None, _) => Err(format!(
                "{kind} has no {features} feature set (it reads {} only)",
                FeatureSet::Pieces
            )),
        }
    }

    /// This layout's game reading `features` instead ([`NetLayout::with_features`]).
    pub fn reading(&self, features: FeatureSet) -> Result<NetLayout, String> {
        let kind: GameKind = self
            .variant
            .parse()
            .map_err(|_| format!("unknown variant {:?}", self.variant))?;
        NetLayout::with_features(kind, features)
    }

    /// The layout of a game by name.
    pub fn by_name(name: &str) -> Option<NetLayout> {
        name.parse().ok().map(NetLayout::of)
    }

    /// Floats in one position's input.
    pub fn input_size(&self) -> usize {
        self.input_planes * self.board * self.board
    }

    /// Entries in the policy.
    pub fn policy_size(&self) -> usize {
        self.policy_planes * self.board * self.board
    }
}

/// A position's input planes as their non-zero entries, for inputs that are mostly
/// zero (tai shogi's 207 planes of 25x25 hold about 400 non-zero floats and three filled
/// planes): what a sparse stem reads without the dense planes ever being written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparsePlanes {
    /// `(plane * H * W + cell, value)` of every non-zero entry outside `fills`.
    pub entries: Vec<(u32, f32)>,
    /// `(plane, value)` of each plane that holds one value on every square.
    pub fills: Vec<(u32, f32)>,
}

impl SparsePlanes {
    /// Writes the dense planes into `out` (`input_planes * squares` floats, `squares`
    /// floats a plane): zero, then the entries and the fills.
    pub fn write_dense(&self, squares: usize, out: &mut [f32]) {
        out.fill(0.0);
        for &(index, value) in &self.entries {
            out[index as usize] = value;
        }
        for &(plane, value) in &self.fills {
            let plane = plane as usize;
            out[plane * squares..(plane + 1) * squares].fill(value);
        }
    }
}

/// A game the network can play: its layout, its input planes and the policy index of
/// each legal move.
pub trait NetGame: Game {
    /// The layout of this game's variant with [`FeatureSet::Pieces`].
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

impl NetGame for ShogiGame {
    fn layout(&self) -> NetLayout {
        NetLayout::shogi(self.position().variant())
    }

    fn encode_planes(&self, layout: &NetLayout, out: &mut [f32]) {
        let features = layout.features;
        crate::encode(
            self.position(),
            features,
            self.repetitions(),
            self.ply(),
            out,
        );
    }

    fn move_index(&self, mv: Self::Move) -> Option<usize> {
        let pos = self.position();
        policy_index(pos.variant(), pos.side_to_move(), mv)
    }
}

impl NetGame for TaiGame {
    fn layout(&self) -> NetLayout {
        NetLayout::tai()
    }

    fn encode_planes(&self, layout: &NetLayout, out: &mut [f32]) {
        debug_assert_eq!(layout.features, FeatureSet::Pieces, "tai reads pieces only");
        shogi_tai::net::encode(self, self.repetitions(), out);
    }

    fn encode_sparse(&self, layout: &NetLayout, out: &mut SparsePlanes) -> bool {
        debug_assert_eq!(layout.features, FeatureSet::Pieces, "tai reads pieces only");
        shogi_tai::net::encode_sparse(self, self.repetitions(), &mut out.entries, &mut out.fills);
        true
    }

    fn move_index(&self, mv: Self::Move) -> Option<usize> {
        shogi_tai::net::policy_index(self, mv)
    }
}
