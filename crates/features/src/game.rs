//! [`NetLayout`]: the tensor shapes of a game's network, and [`SparsePlanes`], the
//! sparse form of a position's input. Which layout each game has (shogi's and
//! minishogi's from this crate, tai shogi's from `shogi_tai::net`) is decided in one
//! place, `shogi-registry` (`layout`, beside the `NetGame` seam each game implements).

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
    /// The version of the game's input planes: a checkpoint records it, and a network
    /// written under another is refused.
    pub feature_version: u32,
    /// The version of the game's policy index, likewise.
    pub policy_version: u32,
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
            feature_version: crate::FEATURE_VERSION,
            policy_version: crate::POLICY_VERSION,
        }
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
