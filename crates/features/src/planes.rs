//! Input planes, AlphaZero's scheme with history length 1.
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

use shogi_rules::{Color, PieceKind, Position, Variant};

use crate::{board_size, grid_cell};

/// Plies that map to a move-number plane of 1.0 (AlphaZero's game cap).
pub const MOVE_NUMBER_SCALE: f32 = 512.0;

const SHOGI_KINDS: [PieceKind; 14] = PieceKind::ALL;
const MINI_KINDS: [PieceKind; 10] = [
    PieceKind::Pawn,
    PieceKind::Silver,
    PieceKind::Bishop,
    PieceKind::Rook,
    PieceKind::Gold,
    PieceKind::King,
    PieceKind::ProPawn,
    PieceKind::ProSilver,
    PieceKind::Horse,
    PieceKind::Dragon,
];
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

/// Number of input planes for `variant`.
pub fn input_planes(variant: Variant) -> usize {
    2 * piece_kinds(variant).len() + 2 * hand_kinds(variant).len() + 3 + 1 + 1
}

/// Writes the planes of `pos` into `out` (length `input_planes * width * height`).
///
/// `repetitions` is how many times this position (board, hands, side to move) occurred
/// earlier in the game; `ply` the plies played since the start.
///
/// # Panics
/// If `out` has the wrong length (a caller bug, not an input error).
pub fn encode(pos: &Position, repetitions: u32, ply: u32, out: &mut [f32]) {
    let variant = pos.variant();
    let n = board_size(variant);
    let area = n * n;
    assert_eq!(
        out.len(),
        input_planes(variant) * area,
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
}

fn fill_plane(out: &mut [f32], plane: usize, area: usize, value: f32) {
    if value != 0.0 {
        out[plane * area..(plane + 1) * area].fill(value);
    }
}
