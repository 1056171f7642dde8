//! What the network sees and says, for standard shogi and minishogi, with no libtorch:
//! input planes ([`encode`]) and the bijection between legal moves and policy indices
//! ([`policy_index`], [`move_from_policy_index`]), and the [`NetLayout`] type every game's
//! network is described by; tai shogi's planes live in `shogi_tai::net`. The `NetGame`
//! seam that puts these behind one trait, and which layout each game has, are in
//! `shogi-registry`, with each game's other adapters.
//!
//! Everything is seen from the side to move: when White (後手) is to move the board is
//! turned 180 degrees and the colours swap, so "forward" is always towards row 0 and
//! "own" pieces are always the first planes. A square is addressed on the network's grid
//! as `row * width + col`, where `row` is the oriented rank (0 = the far rank) and `col`
//! the oriented file (0 = file 1 for Black). Input planes and policy planes share that
//! grid, so a convolution sees a move's origin where the piece stands.
//!
//! Versions: bump [`FEATURE_VERSION`] or [`POLICY_VERSION`] whenever a layout changes;
//! checkpoints record them and refuse to load under another layout. Which input planes a
//! network reads ([`FeatureSet`]) is a choice per network, also recorded in its
//! checkpoint, not a version: each set keeps its own layout.

mod game;
mod planes;
mod policy;

pub use game::{NetLayout, SparsePlanes};

pub use planes::{
    ATTACK_COUNT_PLANES, EXCHANGE_SCALE, FeatureSet, MOVE_NUMBER_SCALE, encode, hand_kinds,
    input_planes, piece_kinds,
};
pub use policy::{
    mirror_policy_index, move_from_policy_index, policy_index, policy_planes, policy_size,
};

use shogi_rules::{Color, Square, Variant};

/// Layout version of the input planes.
pub const FEATURE_VERSION: u32 = 1;
/// Layout version of the policy index.
pub const POLICY_VERSION: u32 = 1;

/// Board width/height of a variant.
#[inline]
pub fn board_size(variant: Variant) -> usize {
    variant.size() as usize
}

/// The grid cell of `sq` as seen by `side` (`row * width + col`).
#[inline]
pub(crate) fn grid_cell(variant: Variant, side: Color, sq: Square) -> (usize, usize) {
    let n = board_size(variant);
    let (file, rank) = (sq.file() as usize, sq.rank() as usize);
    match side {
        Color::Black => (rank, file),
        Color::White => (n - 1 - rank, n - 1 - file),
    }
}

/// The square at grid cell (`row`, `col`) as seen by `side`; inverse of [`grid_cell`].
#[inline]
pub(crate) fn square_at(variant: Variant, side: Color, row: usize, col: usize) -> Square {
    let n = board_size(variant);
    let (rank, file) = match side {
        Color::Black => (row, col),
        Color::White => (n - 1 - row, n - 1 - col),
    };
    Square::new(file as u8, rank as u8)
}
