//! Board geometry per variant and the Zobrist keys: tables built at compile time.

use super::*;

/// Board geometry of a variant, as masks over the 9x9 index space.
#[derive(Debug)]
pub(crate) struct Geometry {
    pub(crate) variant: Variant,
    pub(crate) size: u8,
    /// Squares on the board.
    pub(crate) mask: u128,
    /// Promotion zone (敵陣) per colour.
    pub(crate) zone: [u128; 2],
    /// Last rank per colour (pawn and lance are dead there).
    pub(crate) last1: [u128; 2],
    /// Last two ranks per colour (knight is dead there).
    pub(crate) last2: [u128; 2],
    /// Maximum count of each unpromoted kind (index by `PieceKind`, 0..8) in a position.
    pub(crate) max_count: [u8; 8],
}

const fn ranks_mask(size: u8, lo: u8, hi: u8) -> u128 {
    let mut m = 0u128;
    let mut f = 0;
    while f < size {
        let mut r = lo;
        while r < hi {
            m |= 1u128 << (f as u32 * 9 + r as u32);
            r += 1;
        }
        f += 1;
    }
    m
}

const fn geometry(variant: Variant) -> Geometry {
    let n = match variant {
        Variant::Shogi => 9,
        Variant::Minishogi => 5,
    };
    let z = if n == 9 { 3 } else { 1 };
    Geometry {
        variant,
        size: n,
        mask: ranks_mask(n, 0, n),
        zone: [ranks_mask(n, 0, z), ranks_mask(n, n - z, n)],
        last1: [ranks_mask(n, 0, 1), ranks_mask(n, n - 1, n)],
        last2: [ranks_mask(n, 0, 2), ranks_mask(n, n - 2, n)],
        max_count: if n == 9 {
            [18, 4, 4, 4, 2, 2, 4, 2]
        } else {
            [2, 0, 0, 2, 2, 2, 2, 2]
        },
    }
}

pub(super) static SHOGI_GEO: Geometry = geometry(Variant::Shogi);
pub(super) static MINI_GEO: Geometry = geometry(Variant::Minishogi);

const fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub(super) struct Zobrist {
    pub(super) psq: [[u64; 81]; 29],
    /// hand[color][kind][count]: XOR-ed in for the current count (count 0 maps to 0).
    pub(super) hand: [[[u64; 19]; 7]; 2],
    pub(super) side: u64,
}

const fn build_zobrist() -> Zobrist {
    let mut s = 0x5348_4F47_495F_5A45u64;
    let mut psq = [[0u64; 81]; 29];
    let mut p = 1;
    while p < 29 {
        let mut sq = 0;
        while sq < 81 {
            psq[p][sq] = splitmix(&mut s);
            sq += 1;
        }
        p += 1;
    }
    let mut hand = [[[0u64; 19]; 7]; 2];
    let mut c = 0;
    while c < 2 {
        let mut k = 0;
        while k < 7 {
            let mut n = 1;
            while n < 19 {
                hand[c][k][n] = splitmix(&mut s);
                n += 1;
            }
            k += 1;
        }
        c += 1;
    }
    Zobrist {
        psq,
        hand,
        side: splitmix(&mut s),
    }
}

pub(super) static ZOBRIST: Zobrist = build_zobrist();
