//! [`NetLayout`]: the tensor shapes of each game's network, and [`SparsePlanes`], the
//! sparse form of a position's input. The seam a game implements for the network
//! (`NetGame`) is each game's, in `shogi-registry`.

use shogi_game::GameKind;
use shogi_rules::Variant;

use crate::{FeatureSet, input_planes, policy_planes};

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
