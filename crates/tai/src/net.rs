//! What a network sees and says for tai shogi: input planes per piece kind and a policy
//! index that scales to 625 squares (from-square x move type, plus to-square planes for
//! the emperor and the hook movers), with no libtorch.
//!
//! Everything is seen from the side to move: for White the board is turned 180 degrees,
//! so "forward" is always towards row 0 and the mover's pieces come first. A grid cell is
//! `row * 25 + col` in that orientation, for input and policy planes alike.
//!
//! # Policy planes (306 x 625)
//!
//! | planes | move | cell |
//! |---|---|---|
//! | 0..192 | no capture on the way, to a square in line: direction (8) x distance (24) | from |
//! | 192..200 | no capture on the way, a knight-shaped jump (8) | from |
//! | 200..264 | two king steps, capturing on the first (lion, igui, lion dog's first two squares): first x second direction | from |
//! | 264..296 | lion dog's other multi-captures, per direction (8): capture 1 then to 3; capture 2 then to 3; capture 2 then back to 1; capture 1 and 2 then to 3 | from |
//! | 296 | pass | from |
//! | 297 | the emperor's move (it is unique on its side) | to |
//! | 298..306 | a hook move (a slide and a 90° turn) not in line with its start: the direction of its last leg | to |
//!
//! Two hook movers reaching the same square with the same last direction share a policy
//! entry (the only collision; [`policy_index`]'s test counts them).

use shogi_game::{Color, Game};

use crate::betza::{KING_DIRECTIONS, KNIGHT_LEAPS};
use crate::game::TaiGame;
use crate::movegen::{TaiMove, is_emperor, spec};
use crate::pieces::Catalogue;
use crate::position::{SIZE, SQUARES, Square};

/// Layout version of the input planes.
pub const FEATURE_VERSION: u32 = 1;
/// Layout version of the policy index.
pub const POLICY_VERSION: u32 = 1;

/// Planes per piece kind and colour, then: own promoted, enemy promoted, ones, move
/// number, repetition count (the pieces feature set).
pub fn input_planes() -> usize {
    2 * Catalogue::get().len() + 5
}

/// Planes the exchanges feature set adds after [`input_planes`]: on each opponent piece,
/// what the side to move wins by the exchange there; on each own piece, what the
/// opponent would win (a threat); both from [`crate::exchange::exchanges`], over
/// [`EXCHANGE_SCALE`] and capped at 1.
pub const EXCHANGE_PLANES: usize = 2;

/// Points of exchange that fill an exchange plane's cell (a lion is 24, a hook mover
/// 80; a royal, 1000, fills it).
pub const EXCHANGE_SCALE: f32 = 40.0;

/// The input planes of a network reading the pieces, and with `exchanges` the
/// [`EXCHANGE_PLANES`] after them.
pub fn planes_for(exchanges: bool) -> usize {
    input_planes() + if exchanges { EXCHANGE_PLANES } else { 0 }
}

/// Policy planes (each 25x25).
pub const POLICY_PLANES: usize = 306;
/// Policy entries.
pub const POLICY_SIZE: usize = POLICY_PLANES * SQUARES;

const ALIGNED: usize = 0;
const KNIGHT: usize = 192;
const LION: usize = 200;
const LINE: usize = 264;
const PASS: usize = 296;
const EMPEROR: usize = 297;
const HOOK: usize = 298;

/// Plies a move-number plane is divided by.
pub const MOVE_NUMBER_SCALE: f32 = 1000.0;

fn oriented(side: Color, sq: Square) -> (i32, i32) {
    let s = match side {
        Color::Black => sq,
        Color::White => sq.rotate(),
    };
    (s.row(), s.col())
}

/// The input planes of `game`'s position as their non-zero entries, cleared first:
/// `entries` gets `(plane * 625 + cell, value)` of each piece and promotion mark,
/// `fills` `(plane, value)` of each plane that holds one value on every square (the
/// ones, move-number and repetition planes). 207 planes of 625 hold about 400 non-zero
/// entries and three fills, so a network's stem can read these instead of 129,375 floats.
/// With `exchanges`, the exchange planes' non-zero cells follow ([`EXCHANGE_PLANES`]).
pub fn encode_sparse(
    game: &TaiGame,
    repetitions: u32,
    exchanges: bool,
    entries: &mut Vec<(u32, f32)>,
    fills: &mut Vec<(u32, f32)>,
) {
    entries.clear();
    fills.clear();
    let kinds = Catalogue::get().len();
    let pos = game.position();
    let side = pos.side_to_move();
    for (sq, p) in pos.pieces() {
        let (r, c) = oriented(side, sq);
        let cell = (r * SIZE as i32 + c) as usize;
        let own = p.color == side;
        let plane = usize::from(p.kind.0) + if own { 0 } else { kinds };
        entries.push(((plane * SQUARES + cell) as u32, 1.0));
        if p.promoted {
            entries.push((
                ((2 * kinds + usize::from(!own)) * SQUARES + cell) as u32,
                1.0,
            ));
        }
    }
    let plane = |k: usize| (2 * kinds + k) as u32;
    fills.push((plane(2), 1.0));
    let move_number = game.ply() as f32 / MOVE_NUMBER_SCALE;
    if move_number != 0.0 {
        fills.push((plane(3), move_number));
    }
    if repetitions != 0 {
        fills.push((plane(4), repetitions as f32 / 3.0));
    }
    if exchanges {
        let first = input_planes();
        crate::exchange::exchanges(game, None, |sq, winner, gain| {
            let (r, c) = oriented(side, sq);
            let cell = (r * SIZE as i32 + c) as usize;
            let plane = first + usize::from(winner != side);
            let value = (gain as f32 / EXCHANGE_SCALE).min(1.0);
            entries.push(((plane * SQUARES + cell) as u32, value));
        });
    }
}

/// Writes the input planes of `game`'s position into `out` (`planes_for(exchanges) *
/// 625`): [`encode_sparse`]'s entries and fills, every other float zero.
pub fn encode(game: &TaiGame, repetitions: u32, exchanges: bool, out: &mut [f32]) {
    assert_eq!(out.len(), planes_for(exchanges) * SQUARES, "tai input size");
    let (mut entries, mut fills) = (Vec::new(), Vec::new());
    encode_sparse(game, repetitions, exchanges, &mut entries, &mut fills);
    out.fill(0.0);
    for (index, value) in entries {
        out[index as usize] = value;
    }
    for (plane, value) in fills {
        let plane = plane as usize;
        out[plane * SQUARES..(plane + 1) * SQUARES].fill(value);
    }
}

fn direction_index(d: (i32, i32)) -> usize {
    KING_DIRECTIONS
        .iter()
        .position(|&(r, c)| (i32::from(r), i32::from(c)) == d)
        .expect("a unit direction")
}

fn unit(dr: i32, dc: i32) -> Option<((i32, i32), i32)> {
    let n = dr.abs().max(dc.abs());
    (n > 0 && (dr == 0 || dc == 0 || dr.abs() == dc.abs())).then(|| ((dr / n, dc / n), n))
}

/// The policy index of a legal move in `game` (None only for moves not of this game).
pub fn policy_index(game: &TaiGame, mv: TaiMove) -> Option<usize> {
    let pos = game.position();
    let side = pos.side_to_move();
    let (fr, fc) = oriented(side, mv.from());
    let (tr, tc) = oriented(side, mv.to());
    let from_cell = (fr * SIZE as i32 + fc) as usize;
    let to_cell = (tr * SIZE as i32 + tc) as usize;
    let at = |plane: usize, cell: usize| Some(plane * SQUARES + cell);
    let vias: Vec<(i32, i32)> = mv.vias().map(|v| oriented(side, v)).collect();
    let (dr, dc) = (tr - fr, tc - fc);
    match vias.as_slice() {
        [] => {
            if mv.is_pass() {
                return at(PASS, from_cell);
            }
            let mover = pos.piece(mv.from())?;
            if is_emperor(mover.kind) {
                return at(EMPEROR, to_cell);
            }
            if let Some((d, n)) = unit(dr, dc) {
                return at(
                    ALIGNED + direction_index(d) * 24 + n as usize - 1,
                    from_cell,
                );
            }
            if let Some(k) = KNIGHT_LEAPS
                .iter()
                .position(|&(r, c)| (i32::from(r), i32::from(c)) == (dr, dc))
            {
                return at(KNIGHT + k, from_cell);
            }
            let diagonal = spec(mover.kind, game.rules())
                .hooks
                .first()
                .is_some_and(|&(r, c)| r != 0 && c != 0);
            at(
                HOOK + hook_arrival(game, side, diagonal, (fr, fc), (tr, tc)),
                to_cell,
            )
        }
        [(vr, vc)] => {
            let d1 = (vr - fr, vc - fc);
            let d2 = (tr - vr, tc - vc);
            if d1.0.abs().max(d1.1.abs()) == 1 && d2.0.abs().max(d2.1.abs()) <= 1 {
                return at(
                    LION + direction_index(d1) * 8 + direction_index(d2),
                    from_cell,
                );
            }
            let (d, n_via) = unit(d1.0, d1.1)?;
            let (_, n_to) = unit(dr, dc)?;
            let kind = match (n_via, n_to) {
                (1, 3) => 0,
                (2, 3) => 1,
                (2, 1) => 2,
                _ => return None,
            };
            at(LINE + direction_index(d) * 4 + kind, from_cell)
        }
        [(vr, vc), _] => {
            let (d, _) = unit(vr - fr, vc - fc)?;
            at(LINE + direction_index(d) * 4 + 3, from_cell)
        }
        _ => None,
    }
}

/// A hook path: first direction and length, second direction and length.
type HookPath = ((i32, i32), i32, (i32, i32), i32);

/// The last leg's direction of a hook move (in the mover's orientation), choosing the
/// first open path of the two that reach the target.
fn hook_arrival(
    game: &TaiGame,
    side: Color,
    diagonal: bool,
    from: (i32, i32),
    to: (i32, i32),
) -> usize {
    let pos = game.position();
    let free = |(r, c): (i32, i32)| {
        // A corner off the board closes that path.
        Square::new(r, c).is_some_and(|sq| {
            let sq = if side == Color::White {
                sq.rotate()
            } else {
                sq
            };
            pos.piece(sq).is_none()
        })
    };
    let (dr, dc) = (to.0 - from.0, to.1 - from.1);
    // Two decompositions into (first leg, second leg), each a multiple of a unit vector.
    let legs: [HookPath; 2] = if diagonal {
        let a = (dr + dc) / 2; // along (1, 1)
        let b = (dr - dc) / 2; // along (1, -1)
        let da = (a.signum(), a.signum());
        let db = (b.signum(), -b.signum());
        [(da, a.abs(), db, b.abs()), (db, b.abs(), da, a.abs())]
    } else {
        let dv = (dr.signum(), 0);
        let dh = (0, dc.signum());
        [(dv, dr.abs(), dh, dc.abs()), (dh, dc.abs(), dv, dr.abs())]
    };
    let open = |&(d1, n1, d2, n2): &HookPath| {
        let corner = (from.0 + d1.0 * n1, from.1 + d1.1 * n1);
        (1..=n1).all(|k| free((from.0 + d1.0 * k, from.1 + d1.1 * k)))
            && (1..n2).all(|k| free((corner.0 + d2.0 * k, corner.1 + d2.1 * k)))
    };
    let (_, _, arrival, _) = legs.iter().find(|l| open(l)).copied().unwrap_or(legs[0]);
    direction_index(arrival)
}

/// Repetitions of the current position before now (for the input plane).
pub fn repetitions(game: &TaiGame) -> u32 {
    game.repetitions()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(input_planes(), 207);
        assert_eq!(POLICY_SIZE, 306 * 625);
    }
}
