//! Precomputed attack tables (built at compile time) and slider attacks by ray scans.
//!
//! Directions 0..8 as (file delta, rank delta): N (0,-1), S (0,1), (1,0), (-1,0),
//! (1,-1), (1,1), (-1,-1), (-1,1). Index deltas -1, +1, +9, -9, +8, +10, -10, -8: the
//! "positive" directions (1, 2, 4, 5) find their first blocker with trailing zeros, the
//! others with leading zeros.

use crate::types::{Bitboard, Color, PieceKind, Square};

const DIRS: [(i8, i8); 8] = [
    (0, -1),
    (0, 1),
    (1, 0),
    (-1, 0),
    (1, -1),
    (1, 1),
    (-1, -1),
    (-1, 1),
];

/// Direction indices.
pub(crate) const N: usize = 0;
pub(crate) const S: usize = 1;

const fn bit(f: i8, r: i8) -> u128 {
    if f < 0 || f >= 9 || r < 0 || r >= 9 {
        0
    } else {
        1u128 << (f as u32 * 9 + r as u32)
    }
}

const fn build_rays() -> [[u128; 81]; 8] {
    let mut t = [[0u128; 81]; 8];
    let mut d = 0;
    while d < 8 {
        let mut sq = 0;
        while sq < 81 {
            let (mut f, mut r) = ((sq / 9) as i8, (sq % 9) as i8);
            let mut m = 0u128;
            loop {
                f += DIRS[d].0;
                r += DIRS[d].1;
                let b = bit(f, r);
                if b == 0 {
                    break;
                }
                m |= b;
            }
            t[d][sq] = m;
            sq += 1;
        }
        d += 1;
    }
    t
}

/// RAYS[dir][sq]: squares from `sq` (exclusive) to the edge.
pub(crate) static RAYS: [[u128; 81]; 8] = build_rays();

const fn steps_for(kind: usize) -> &'static [(i8, i8)] {
    // Black's view (forward = rank - 1).
    match kind {
        0 => &[(0, -1)],
        2 => &[(1, -2), (-1, -2)],
        3 => &[(0, -1), (1, -1), (-1, -1), (1, 1), (-1, 1)],
        6 | 8 | 9 | 10 | 11 => &[(0, -1), (1, -1), (-1, -1), (1, 0), (-1, 0), (0, 1)],
        // King, horse and dragon: one step in every direction.
        7 | 12 | 13 => &DIRS,
        _ => &[],
    }
}

const fn build_steps() -> [[[u128; 81]; 14]; 2] {
    let mut t = [[[0u128; 81]; 14]; 2];
    let mut c = 0;
    while c < 2 {
        let mut k = 0;
        while k < 14 {
            let st = steps_for(k);
            let mut sq = 0;
            while sq < 81 {
                let (f, r) = ((sq / 9) as i8, (sq % 9) as i8);
                let mut m = 0u128;
                let mut i = 0;
                while i < st.len() {
                    let dr = if c == 0 { st[i].1 } else { -st[i].1 };
                    m |= bit(f + st[i].0, r + dr);
                    i += 1;
                }
                t[c][k][sq] = m;
                sq += 1;
            }
            k += 1;
        }
        c += 1;
    }
    t
}

/// STEPS[color][kind][sq]: non-sliding attacks (the king steps of horse/dragon included).
pub(crate) static STEPS: [[[u128; 81]; 14]; 2] = build_steps();

const fn build_lines() -> ([[u128; 81]; 81], [[u128; 81]; 81]) {
    let rays = build_rays();
    let mut between = [[0u128; 81]; 81];
    let mut line = [[0u128; 81]; 81];
    let mut a = 0;
    while a < 81 {
        let mut d = 0;
        while d < 8 {
            let opp = [1, 0, 3, 2, 7, 6, 5, 4][d];
            let mut b = 0;
            while b < 81 {
                if rays[d][a] >> b & 1 != 0 {
                    between[a][b] = rays[d][a] & !rays[d][b] & !(1u128 << b);
                    line[a][b] = rays[d][a] | rays[opp][a] | (1u128 << a);
                }
                b += 1;
            }
            d += 1;
        }
        a += 1;
    }
    (between, line)
}

const LINES: ([[u128; 81]; 81], [[u128; 81]; 81]) = build_lines();
/// BETWEEN[a][b]: squares strictly between two aligned squares.
pub(crate) static BETWEEN: [[u128; 81]; 81] = LINES.0;
/// LINE[a][b]: the whole line through two aligned squares (edge to edge).
pub(crate) static LINE: [[u128; 81]; 81] = LINES.1;

const fn build_files() -> [u128; 9] {
    let mut t = [0u128; 9];
    let mut f = 0;
    while f < 9 {
        t[f] = 0x1ffu128 << (f * 9);
        f += 1;
    }
    t
}

/// FILES[file]: the nine squares of a file.
pub(crate) static FILES: [u128; 9] = build_files();

/// The squares a slider on `sq` reaches along direction `d` on `occ`: the ray up to and
/// including its first blocker, the square `first` picks from the blockers (the lowest
/// for a direction of rising square numbers, the highest for a falling one).
#[inline(always)]
fn ray_to_blocker(d: usize, sq: usize, occ: u128, first: impl Fn(u128) -> usize) -> u128 {
    let r = RAYS[d][sq];
    let b = r & occ;
    if b == 0 { r } else { r ^ RAYS[d][first(b)] }
}

#[inline(always)]
pub(crate) fn ray_pos(d: usize, sq: usize, occ: u128) -> u128 {
    ray_to_blocker(d, sq, occ, |b| b.trailing_zeros() as usize)
}

#[inline(always)]
pub(crate) fn ray_neg(d: usize, sq: usize, occ: u128) -> u128 {
    ray_to_blocker(d, sq, occ, |b| 127 - b.leading_zeros() as usize)
}

/// Lance attacks for `color` from `sq`.
#[inline(always)]
pub(crate) fn lance_attacks(color: Color, sq: usize, occ: u128) -> u128 {
    match color {
        Color::Black => ray_neg(N, sq, occ),
        Color::White => ray_pos(S, sq, occ),
    }
}

/// Bishop attacks from `sq`.
#[inline(always)]
pub(crate) fn bishop_attacks(sq: usize, occ: u128) -> u128 {
    ray_pos(4, sq, occ) | ray_pos(5, sq, occ) | ray_neg(6, sq, occ) | ray_neg(7, sq, occ)
}

/// Rook attacks from `sq`.
#[inline(always)]
pub(crate) fn rook_attacks(sq: usize, occ: u128) -> u128 {
    ray_neg(0, sq, occ) | ray_pos(1, sq, occ) | ray_pos(2, sq, occ) | ray_neg(3, sq, occ)
}

/// Attacks of a piece of `kind` and `color` on `sq` given occupancy `occ`.
#[inline(always)]
pub(crate) fn attacks(color: Color, kind: PieceKind, sq: usize, occ: u128) -> u128 {
    match kind {
        PieceKind::Lance => lance_attacks(color, sq, occ),
        PieceKind::Bishop => bishop_attacks(sq, occ),
        PieceKind::Rook => rook_attacks(sq, occ),
        PieceKind::Horse => bishop_attacks(sq, occ) | STEPS[0][7][sq],
        PieceKind::Dragon => rook_attacks(sq, occ) | STEPS[0][7][sq],
        _ => STEPS[color as usize][kind as usize][sq],
    }
}

/// Public wrapper: attacks of a piece on `sq` with occupancy `occ` (9x9 index space).
pub fn piece_attacks(color: Color, kind: PieceKind, sq: Square, occ: Bitboard) -> Bitboard {
    Bitboard(attacks(color, kind, sq.index(), occ.0))
}
