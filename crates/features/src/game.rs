//! [`NetGame`]: what the network side needs from a game, so the evaluator and
//! self-play serve every variant (shogi, minishogi, tai shogi) through one seam.

use shogi_game::{Game, GameKind};
use shogi_rules::{ShogiGame, Variant};
use shogi_tai::TaiGame;

use crate::{input_planes, policy_index, policy_planes};

/// The tensor shapes of a variant's network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetLayout {
    /// Variant name (`shogi`, `minishogi`, `tai`).
    pub variant: &'static str,
    /// Input planes.
    pub input_planes: usize,
    /// Board height and width.
    pub board: usize,
    /// Policy planes over the board.
    pub policy_planes: usize,
}

impl NetLayout {
    /// The layout of a shogi or minishogi network.
    pub fn shogi(variant: Variant) -> NetLayout {
        NetLayout {
            variant: variant.name(),
            input_planes: input_planes(variant),
            board: variant.size() as usize,
            policy_planes: policy_planes(variant),
        }
    }

    /// The layout of a tai shogi network.
    pub fn tai() -> NetLayout {
        NetLayout {
            variant: GameKind::Tai.name(),
            input_planes: shogi_tai::net::input_planes(),
            board: shogi_tai::SIZE,
            policy_planes: shogi_tai::net::POLICY_PLANES,
        }
    }

    /// The layout of a game's network.
    pub fn of(kind: GameKind) -> NetLayout {
        match Variant::of(kind) {
            Some(variant) => NetLayout::shogi(variant),
            None => NetLayout::tai(),
        }
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

/// A game the network can play: its layout, its input planes and the policy index of
/// each legal move.
pub trait NetGame: Game {
    /// The layout of this game's variant.
    fn layout(&self) -> NetLayout;

    /// Writes the input planes into `out` (`layout().input_size()` floats).
    fn encode_planes(&self, out: &mut [f32]);

    /// The policy index of a legal move (`None` only for a move of another game).
    fn move_index(&self, mv: Self::Move) -> Option<usize>;
}

impl NetGame for ShogiGame {
    fn layout(&self) -> NetLayout {
        NetLayout::shogi(self.position().variant())
    }

    fn encode_planes(&self, out: &mut [f32]) {
        crate::encode(self.position(), self.repetitions(), self.ply(), out);
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

    fn encode_planes(&self, out: &mut [f32]) {
        shogi_tai::net::encode(self, self.repetitions(), out);
    }

    fn move_index(&self, mv: Self::Move) -> Option<usize> {
        shogi_tai::net::policy_index(self, mv)
    }
}
