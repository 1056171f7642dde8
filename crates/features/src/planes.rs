//! Input planes: AlphaZero's scheme with history length 1 ([`FeatureSet::Pieces`]), the
//! same planes followed by what each side attacks ([`FeatureSet::Attacks`]), and those
//! followed by what each side wins by exchanges ([`FeatureSet::Exchanges`]).
//!
//! Per position, in this order, each plane `width * height` floats on the oriented grid:
//!
//! | planes | content |
//! |---|---|
//! | K | own pieces, one plane per kind in [`piece_kinds`] (1.0 where such a piece stands) |
//! | K | opponent pieces, same kinds |
//! | H | own hand, one constant plane per kind in [`hand_kinds`]: count / maximum count |
//! | H | opponent hand |
//! | 3 | repetitions: constant 1.0 when the position occurred before at least 1, 2, 3 times |
//! | 1 | colour: constant 1.0 when White (後手) is to move |
//! | 1 | move number: constant `ply / MOVE_NUMBER_SCALE`, capped at 1.0 |
//!
//! Shogi: K = 14, H = 7, 47 planes. Minishogi: K = 10, H = 5, 35 planes.
//!
//! [`FeatureSet::Attacks`] appends, as dlshogi's inputs do, what a capture search would
//! otherwise have to find (a hanging piece, a square only one side controls):
//!
//! | planes | content |
//! |---|---|
//! | K | squares the side to move's pieces of each kind attack (利き), own pieces' squares included (a defended piece) |
//! | 3 | squares the side to move attacks with at least 1, 2, 3 pieces |
//! | K | the opponent's, same kinds |
//! | 3 | the opponent's attacker counts |
//! | 1 | check (王手): constant 1.0 when the side to move is in check |
//!
//! Shogi: 47 + 35 = 82 planes. Minishogi: 35 + 27 = 62 planes.
//!
//! [`FeatureSet::Exchanges`] appends to those the static exchange (SEE) on every
//! occupied square, so a piece that hangs or loses a trade is one number on its square,
//! not a sum the network must learn from attacker counts and piece values:
//!
//! | planes | content |
//! |---|---|
//! | 1 | on each opponent piece: what the side to move wins by taking it and the exchange that follows ([`Position::capture_gain`] on [`MOBILITY_VALUE`]), / [`EXCHANGE_SCALE`] |
//! | 1 | on each own piece: what the opponent would win by taking it, same scale (a threat) |
//!
//! Shogi: 84 planes. Minishogi: 64 planes.

use serde::{Deserialize, Serialize};
use shogi_rules::{Color, MOBILITY_VALUE, PieceKind, Position, Variant, piece_attacks};

use crate::{board_size, grid_cell};

/// Which input planes a network reads: a choice per network, recorded in its checkpoint's
/// manifest (a manifest without one was trained on [`FeatureSet::Pieces`]), so every
/// program that loads a network encodes positions the way it was trained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeatureSet {
    /// Pieces, hands, repetitions, colour and move number (AlphaZero's planes).
    #[default]
    Pieces,
    /// [`FeatureSet::Pieces`] plus each side's attacked squares by piece kind, attacker
    /// counts and a check plane (shogi and minishogi; tai shogi has no such set).
    Attacks,
    /// [`FeatureSet::Attacks`] plus, on every piece, what the other side wins by taking
    /// it (static exchange evaluation): hanging pieces and losing trades, both sides
    /// (shogi and minishogi).
    Exchanges,
}

impl FeatureSet {
    /// Every set, in the order of their names in messages.
    pub const ALL: [FeatureSet; 3] = [
        FeatureSet::Pieces,
        FeatureSet::Attacks,
        FeatureSet::Exchanges,
    ];

    /// The set's name in configs and manifests.
    pub fn name(self) -> &'static str {
        match self {
            FeatureSet::Pieces => "pieces",
            FeatureSet::Attacks => "attacks",
            FeatureSet::Exchanges => "exchanges",
        }
    }
}

impl std::fmt::Display for FeatureSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for FeatureSet {
    type Err = String;

    fn from_str(s: &str) -> Result<FeatureSet, String> {
        FeatureSet::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("unknown feature set {s:?} (pieces | attacks | exchanges)"))
    }
}

/// Attacker counts with a plane of their own: at least 1, 2 and 3 attackers.
pub const ATTACK_COUNT_PLANES: usize = 3;

/// Exchange gain that maps to 1.0 on the exchange planes: the largest swing on
/// [`MOBILITY_VALUE`], taking a dragon or horse (20 off the board, 16 into the hand).
pub const EXCHANGE_SCALE: f32 = 36.0;

/// Plies that map to a move-number plane of 1.0 (AlphaZero's game cap).
pub const MOVE_NUMBER_SCALE: f32 = 512.0;

const SHOGI_KINDS: [PieceKind; 14] = PieceKind::ALL;
/// Minishogi's kinds (no lance or knight), in [`PieceKind::ALL`]'s order.
const MINI_KINDS: [PieceKind; 10] = {
    use PieceKind::*;
    [
        Pawn, Silver, Bishop, Rook, Gold, King, ProPawn, ProSilver, Horse, Dragon,
    ]
};
const SHOGI_HAND: [(PieceKind, f32); 7] = [
    (PieceKind::Pawn, 18.0),
    (PieceKind::Lance, 4.0),
    (PieceKind::Knight, 4.0),
    (PieceKind::Silver, 4.0),
    (PieceKind::Gold, 4.0),
    (PieceKind::Bishop, 2.0),
    (PieceKind::Rook, 2.0),
];
const MINI_HAND: [(PieceKind, f32); 5] = [
    (PieceKind::Pawn, 2.0),
    (PieceKind::Silver, 2.0),
    (PieceKind::Gold, 2.0),
    (PieceKind::Bishop, 2.0),
    (PieceKind::Rook, 2.0),
];

/// Piece kinds that can stand on the board in `variant`, in plane order.
pub fn piece_kinds(variant: Variant) -> &'static [PieceKind] {
    match variant {
        Variant::Shogi => &SHOGI_KINDS,
        Variant::Minishogi => &MINI_KINDS,
    }
}

/// Kinds that can be held in hand in `variant` with their maximum counts, in plane
/// (and drop-policy) order.
pub fn hand_kinds(variant: Variant) -> &'static [(PieceKind, f32)] {
    match variant {
        Variant::Shogi => &SHOGI_HAND,
        Variant::Minishogi => &MINI_HAND,
    }
}

/// Number of input planes for `variant` with `features`.
pub fn input_planes(variant: Variant, features: FeatureSet) -> usize {
    let kinds = piece_kinds(variant).len();
    let pieces = 2 * kinds + 2 * hand_kinds(variant).len() + 3 + 1 + 1;
    match features {
        FeatureSet::Pieces => pieces,
        FeatureSet::Attacks => pieces + 2 * (kinds + ATTACK_COUNT_PLANES) + 1,
        FeatureSet::Exchanges => input_planes(variant, FeatureSet::Attacks) + 2,
    }
}

/// Writes the `features` planes of `pos` into `out` (length `input_planes * width *
/// height`).
///
/// `repetitions` is how many times this position (board, hands, side to move) occurred
/// earlier in the game; `ply` the plies played since the start.
///
/// # Panics
/// If `out` has the wrong length (a caller bug, not an input error).
pub fn encode(pos: &Position, features: FeatureSet, repetitions: u32, ply: u32, out: &mut [f32]) {
    let variant = pos.variant();
    let n = board_size(variant);
    let area = n * n;
    assert_eq!(
        out.len(),
        input_planes(variant, features) * area,
        "feature buffer length"
    );
    out.fill(0.0);
    let us = pos.side_to_move();
    let kinds = piece_kinds(variant);
    let mut kind_plane = [usize::MAX; PieceKind::NUM];
    for (i, k) in kinds.iter().enumerate() {
        kind_plane[k.index()] = i;
    }
    for side in Color::ALL {
        let base = if side == us { 0 } else { kinds.len() };
        for sq in pos.pieces(side) {
            let Some(piece) = pos.piece_at(sq) else {
                continue;
            };
            let plane = base + kind_plane[piece.kind.index()];
            debug_assert!(
                plane < 2 * kinds.len(),
                "{:?} has no plane in {variant:?}",
                piece.kind
            );
            let (row, col) = grid_cell(variant, us, sq);
            out[plane * area + row * n + col] = 1.0;
        }
    }
    let mut plane = 2 * kinds.len();
    for side in [us, us.flip()] {
        let hand = pos.hand(side);
        for &(kind, max) in hand_kinds(variant) {
            let value = (f32::from(hand[kind.index()]) / max).min(1.0);
            fill_plane(out, plane, area, value);
            plane += 1;
        }
    }
    for threshold in 1..=3 {
        fill_plane(
            out,
            plane,
            area,
            if repetitions >= threshold { 1.0 } else { 0.0 },
        );
        plane += 1;
    }
    fill_plane(out, plane, area, if us == Color::White { 1.0 } else { 0.0 });
    plane += 1;
    fill_plane(out, plane, area, (ply as f32 / MOVE_NUMBER_SCALE).min(1.0));
    plane += 1;
    if features != FeatureSet::Pieces {
        encode_attacks(pos, &kind_plane, plane, out);
    }
    if features == FeatureSet::Exchanges {
        encode_exchanges(pos, input_planes(variant, FeatureSet::Attacks), out);
    }
}

/// The two planes of [`FeatureSet::Exchanges`], from plane `first` on: the side to
/// move's gain on each opponent piece, then the opponent's on each own piece.
fn encode_exchanges(pos: &Position, first: usize, out: &mut [f32]) {
    let variant = pos.variant();
    let n = board_size(variant);
    let area = n * n;
    let us = pos.side_to_move();
    for (plane, victims) in [(first, us.flip()), (first + 1, us)] {
        for sq in pos.pieces(victims) {
            let gain = pos.capture_gain(sq, victims.flip(), &MOBILITY_VALUE);
            if gain > 0 {
                let (row, col) = grid_cell(variant, us, sq);
                out[plane * area + row * n + col] = (gain as f32 / EXCHANGE_SCALE).min(1.0);
            }
        }
    }
}

/// The attack planes of [`FeatureSet::Attacks`], from plane `first` on.
fn encode_attacks(
    pos: &Position,
    kind_plane: &[usize; PieceKind::NUM],
    first: usize,
    out: &mut [f32],
) {
    let variant = pos.variant();
    let n = board_size(variant);
    let area = n * n;
    let kinds = piece_kinds(variant).len();
    let us = pos.side_to_move();
    let occupied = pos.occupied();
    let board = pos.board_mask();
    let mut plane = first;
    for side in [us, us.flip()] {
        // Attackers per grid cell; 81 covers the largest board.
        let mut count = [0u8; 81];
        for sq in pos.pieces(side) {
            let Some(piece) = pos.piece_at(sq) else {
                continue;
            };
            let kind_base = (plane + kind_plane[piece.kind.index()]) * area;
            for target in piece_attacks(side, piece.kind, sq, occupied) & board {
                let (row, col) = grid_cell(variant, us, target);
                let cell = row * n + col;
                out[kind_base + cell] = 1.0;
                count[cell] += 1;
            }
        }
        plane += kinds;
        for (cell, &c) in count[..area].iter().enumerate() {
            for threshold in 0..ATTACK_COUNT_PLANES.min(usize::from(c)) {
                out[(plane + threshold) * area + cell] = 1.0;
            }
        }
        plane += ATTACK_COUNT_PLANES;
    }
    fill_plane(out, plane, area, if pos.in_check() { 1.0 } else { 0.0 });
}

fn fill_plane(out: &mut [f32], plane: usize, area: usize, value: f32) {
    if value != 0.0 {
        out[plane * area..(plane + 1) * area].fill(value);
    }
}
