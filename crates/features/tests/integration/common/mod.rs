//! What the feature tests share: positions from random playouts, the encoder's grid cell.

use rand::prelude::*;
use rand_chacha::ChaCha8Rng;
use shogi_rules::{Color, Move, Position, Square};

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

/// The oriented grid cell of `sq` for the side to move (the encoder's convention: White
/// sees the board turned 180 degrees).
pub fn cell(pos: &Position, sq: Square) -> usize {
    let n = pos.variant().size() as usize;
    let (file, rank) = (sq.file() as usize, sq.rank() as usize);
    match pos.side_to_move() {
        Color::Black => rank * n + file,
        Color::White => (n - 1 - rank) * n + (n - 1 - file),
    }
}
