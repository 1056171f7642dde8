//! A network leaf's static exchange (駒の取り合い): what the side to move wins at once by
//! its best capture and the recaptures on that square, added to the network's value. A
//! one-step quiescence: the network need not see that a piece hangs for the search to.

use shogi_game::{Color, Game, MaterialScale};

/// How a material swing becomes an expected score: `tanh(LEAF_EXCHANGE_GAIN * swing /
/// material)`, `material` both sides' pieces on the mobility scale, board and hands. In
/// shogi's 150 mobility points a pawn won (a swing of 2) is 0.16, a silver (10) 0.66 and
/// a rook (32) 0.99: the usual engine mapping, `tanh(cp / 1200)`, and the learner's
/// material target at `learner.material_gain = 12`.
pub const LEAF_EXCHANGE_GAIN: f32 = 12.0;

/// The side to move's expected `score` at a network leaf, raised toward 1 by `weight`
/// times what it wins by static exchange ([`Game::exchange_gain`] on the mobility
/// values): `score + weight * tanh(12 * gain / material) * (1 - score)`. A leaf where
/// no capture wins anything, or a variant without an exchange count (tai shogi), keeps
/// its score.
pub fn raise_by_exchange<G: Game>(game: &G, score: f32, weight: f32) -> f32 {
    let scale = MaterialScale::Mobility;
    let (Some(gain), Some(black), Some(white)) = (
        game.exchange_gain(scale),
        game.material_on(Color::Black, scale),
        game.material_on(Color::White, scale),
    ) else {
        return score;
    };
    if gain == 0 {
        return score;
    }
    let material = (black + white).max(1) as f32;
    let won = (LEAF_EXCHANGE_GAIN * gain as f32 / material).tanh();
    score + weight * won * (1.0 - score)
}
