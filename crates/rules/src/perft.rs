//! Perft: counting the leaves of the legal-move tree, for validating move generation.

use crate::position::Position;
use crate::types::{Move, MoveList};

/// Number of leaf nodes `depth` plies below `pos`. With `bulk`, the last ply is counted
/// from the move list length instead of making each move.
pub fn perft(pos: &Position, depth: u32, bulk: bool) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut list = MoveList::new();
    pos.generate(&mut list);
    if depth == 1 && bulk {
        return list.len() as u64;
    }
    let mut n = 0;
    for &mv in list.iter() {
        let mut p = pos.clone();
        p.play_unchecked(mv);
        n += perft(&p, depth - 1, bulk);
    }
    n
}

/// Per-move leaf counts at `depth` (each move's subtree at `depth - 1`), bulk-counted.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .into_iter()
        .map(|mv| (mv, perft(&pos.after(mv), depth - 1, true)))
        .collect()
}
