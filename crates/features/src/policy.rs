//! Move <-> policy index, AlphaZero's layout (arXiv 1712.01815, "Figure S2"/table S2).
//!
//! Planes, all on the oriented grid of the side to move (row 0 = the far rank):
//!
//! | planes | meaning | indexed by |
//! |---|---|---|
//! | 8 x D | "queen" moves: direction (N, NE, E, SE, S, SW, W, NW) x distance 1..=D | origin |
//! | 2 | knight jumps (up-left, up-right), shogi only | origin |
//! | same again | the same moves with promotion (成) | origin |
//! | H | drops (打), one plane per hand kind in [`crate::hand_kinds`] order | destination |
//!
//! Shogi: D = 8, 66 move planes, 2 x 66 + 7 = 139 planes, 11,259 indices.
//! Minishogi: D = 4, no knights, 32 move planes, 2 x 32 + 5 = 69 planes, 1,725 indices.
//! `index = plane * width * height + row * width + col`, matching a convolutional head's
//! `[planes, height, width]` output flattened.

use shogi_rules::{Color, Move, Variant};

use crate::{board_size, grid_cell, hand_kinds, square_at};

/// Grid steps (row, col) of the eight directions; row -1 is forward for the mover.
const DIRECTIONS: [(i32, i32); 8] = [
    (-1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
];
/// Knight jumps (row, col): up-left, up-right.
const KNIGHT_JUMPS: [(i32, i32); 2] = [(-2, -1), (-2, 1)];
/// Direction index under a left-right mirror.
const MIRROR_DIRECTION: [usize; 8] = [0, 7, 6, 5, 4, 3, 2, 1];

fn max_distance(variant: Variant) -> usize {
    board_size(variant) - 1
}

fn knight_planes(variant: Variant) -> usize {
    match variant {
        Variant::Shogi => 2,
        Variant::Minishogi => 0,
    }
}

/// Planes for board moves without promotion.
fn move_planes(variant: Variant) -> usize {
    8 * max_distance(variant) + knight_planes(variant)
}

/// Number of policy planes for `variant` (139 for shogi, 69 for minishogi).
pub fn policy_planes(variant: Variant) -> usize {
    2 * move_planes(variant) + hand_kinds(variant).len()
}

/// Number of policy logits for `variant` (planes x squares).
pub fn policy_size(variant: Variant) -> usize {
    let n = board_size(variant);
    policy_planes(variant) * n * n
}

/// The policy index of `mv`, a legal move of `side` (the side to move) in `variant`.
///
/// Moves that no legal move can be (a drop of a kind the variant has no hand plane for, a
/// step that is neither a line nor a knight jump) return `None`.
pub fn policy_index(variant: Variant, side: Color, mv: Move) -> Option<usize> {
    let n = board_size(variant);
    let area = n * n;
    let (to_row, to_col) = grid_cell(variant, side, mv.to());
    let Some(from) = mv.from() else {
        let kind = mv.drop_kind()?;
        let slot = hand_kinds(variant).iter().position(|&(k, _)| k == kind)?;
        let plane = 2 * move_planes(variant) + slot;
        return Some(plane * area + to_row * n + to_col);
    };
    let (from_row, from_col) = grid_cell(variant, side, from);
    let dr = to_row as i32 - from_row as i32;
    let dc = to_col as i32 - from_col as i32;
    let d = max_distance(variant);
    let plane = if let Some(k) = KNIGHT_JUMPS.iter().position(|&j| j == (dr, dc)) {
        if knight_planes(variant) == 0 {
            return None;
        }
        8 * d + k
    } else {
        let dist = dr.abs().max(dc.abs());
        if dist == 0 || (dr != 0 && dc != 0 && dr.abs() != dc.abs()) {
            return None;
        }
        let dir = DIRECTIONS
            .iter()
            .position(|&s| s == (dr.signum(), dc.signum()))?;
        dir * d + (dist as usize - 1)
    };
    let plane = if mv.is_promotion() {
        plane + move_planes(variant)
    } else {
        plane
    };
    Some(plane * area + from_row * n + from_col)
}

/// The move that policy index `index` stands for when `side` is to move, or `None` if it
/// leaves the board or is out of range. The move is not checked for legality: callers
/// look it up among the legal moves.
pub fn move_from_policy_index(variant: Variant, side: Color, index: usize) -> Option<Move> {
    let n = board_size(variant);
    let area = n * n;
    if index >= policy_size(variant) {
        return None;
    }
    let (plane, cell) = (index / area, index % area);
    let (row, col) = (cell / n, cell % n);
    let mp = move_planes(variant);
    if plane >= 2 * mp {
        let (kind, _) = hand_kinds(variant)[plane - 2 * mp];
        return Some(Move::drop(kind, square_at(variant, side, row, col)));
    }
    let promote = plane >= mp;
    let plane = plane % mp;
    let d = max_distance(variant);
    let (dr, dc) = if plane >= 8 * d {
        KNIGHT_JUMPS[plane - 8 * d]
    } else {
        let (sr, sc) = DIRECTIONS[plane / d];
        let dist = (plane % d + 1) as i32;
        (sr * dist, sc * dist)
    };
    let (to_row, to_col) = (row as i32 + dr, col as i32 + dc);
    if !(0..n as i32).contains(&to_row) || !(0..n as i32).contains(&to_col) {
        return None;
    }
    let from = square_at(variant, side, row, col);
    let to = square_at(variant, side, to_row as usize, to_col as usize);
    Some(Move::normal(from, to, promote))
}

/// The index of the same move on the left-right mirrored board (files 1 <-> 9).
/// Shogi's rules are symmetric under this mirror, so it is a training augmentation.
pub fn mirror_policy_index(variant: Variant, index: usize) -> usize {
    let n = board_size(variant);
    let area = n * n;
    let (plane, cell) = (index / area, index % area);
    let (row, col) = (cell / n, cell % n);
    let mp = move_planes(variant);
    let d = max_distance(variant);
    let mirrored_plane = if plane >= 2 * mp {
        plane
    } else {
        let promo = plane / mp;
        let p = plane % mp;
        let q = if p >= 8 * d {
            8 * d + (1 - (p - 8 * d))
        } else {
            MIRROR_DIRECTION[p / d] * d + p % d
        };
        promo * mp + q
    };
    mirrored_plane * area + row * n + (n - 1 - col)
}
