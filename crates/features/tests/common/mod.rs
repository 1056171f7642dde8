//! What the feature tests share: positions from random playouts.

use rand::prelude::*;
use rand_chacha::ChaCha8Rng;
use shogi_rules::{Move, Position};

/// Positions from random playouts that take a capture with probability `capture_prob`
/// when one exists (so hands fill, pieces promote and hang): `games` playouts of `plies`
/// plies from each start, every position kept.
pub fn capture_biased_playouts(
    starts: &[Position],
    games: usize,
    plies: usize,
    capture_prob: f64,
    seed: u64,
) -> Vec<Position> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for start in starts {
        for _ in 0..games {
            let mut pos = start.clone();
            for _ in 0..plies {
                out.push(pos.clone());
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let captures: Vec<Move> = moves
                    .iter()
                    .copied()
                    .filter(|mv| !mv.is_drop() && pos.piece_at(mv.to()).is_some())
                    .collect();
                let mv = if !captures.is_empty() && rng.random_bool(capture_prob) {
                    captures[rng.random_range(0..captures.len())]
                } else {
                    moves.as_slice()[rng.random_range(0..moves.len())]
                };
                pos.play_unchecked(mv);
            }
        }
    }
    out
}
