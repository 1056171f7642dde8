//! Mostly-zero inputs: tai shogi's 207 planes of 25x25 hold about 400 non-zero floats
//! and three filled planes a position. The frozen inference network's CPU stem
//! (`frozen.rs`) reads them as entries and fills ([`scan`]) and adds kernel columns
//! at the cells each entry reaches ([`for_each_tap`]).

use shogi_features::SparsePlanes;

/// Inputs a position at or above which the stem runs sparsely, on the CPU (floats:
/// `input_planes * H * W`). Tai shogi's 129,375 are above it; standard shogi's 3,807 to
/// 6,804 are far below, where the dense convolution is a few microseconds and the
/// scatter's fixed costs would dominate.
pub const SPARSE_STEM_MIN_INPUT: usize = 65_536;

/// `dense`'s planes (`squares` floats each) as sparse entries and fills: a plane that
/// holds one non-zero value on every square is a fill.
pub(crate) fn scan(dense: &[f32], squares: usize, out: &mut SparsePlanes) {
    out.entries.clear();
    out.fills.clear();
    for (p, plane) in dense.chunks_exact(squares).enumerate() {
        let first = plane[0];
        if first != 0.0 && plane.iter().all(|&x| x == first) {
            out.fills.push((p as u32, first));
            continue;
        }
        for (cell, &x) in plane.iter().enumerate() {
            if x != 0.0 {
                out.entries.push(((p * squares + cell) as u32, x));
            }
        }
    }
}

/// Calls `f(kernel_row, cell)` for every tap of a `k x k` kernel (k odd, padding k / 2)
/// through which the input entry at `index` (plane-major planes of `h x w`) reaches an
/// output cell on the board: `kernel_row = plane * k * k + ky * k + kx`, `cell` the
/// output's `row * w + col`. Input (r, x) reaches output (r + pad - ky, x + pad - kx)
/// through tap (ky, kx) of the cross-correlation.
pub(crate) fn for_each_tap(
    index: usize,
    h: usize,
    w: usize,
    k: usize,
    mut f: impl FnMut(usize, usize),
) {
    let (hw, pad) = (h * w, k / 2);
    let (plane, cell) = (index / hw, index % hw);
    let (r, x) = (cell / w, cell % w);
    for ky in 0..k {
        let Some(tr) = (r + pad).checked_sub(ky).filter(|&tr| tr < h) else {
            continue;
        };
        for kx in 0..k {
            let Some(tx) = (x + pad).checked_sub(kx).filter(|&tx| tx < w) else {
                continue;
            };
            f(plane * k * k + ky * k + kx, tr * w + tx);
        }
    }
}

/// One position's input planes as [`crate::Inference::infer_legal_planes`] reads them: written
/// out (`input_planes * H * W` floats), or as their non-zero entries.
#[derive(Clone, Copy, Debug)]
pub enum PlanesRef<'a> {
    /// Every float of every plane.
    Dense(&'a [f32]),
    /// The non-zero entries and the filled planes.
    Sparse(&'a SparsePlanes),
}

impl PlanesRef<'_> {
    /// Writes the dense planes into `out` (`squares` floats a plane).
    pub fn write_dense(&self, squares: usize, out: &mut [f32]) {
        match self {
            PlanesRef::Dense(planes) => out.copy_from_slice(planes),
            PlanesRef::Sparse(planes) => planes.write_dense(squares, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_splits_entries_from_filled_planes() {
        let dense = [0.0, 2.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        let mut out = SparsePlanes::default();
        scan(&dense, 4, &mut out);
        assert_eq!(out.entries, vec![(1, 2.0)]);
        assert_eq!(out.fills, vec![(1, 1.0)]);
        let mut back = vec![9.0; 12];
        out.write_dense(4, &mut back);
        assert_eq!(back, dense);
    }

    /// A 3x3 kernel on a 3x4 board: a corner entry reaches 4 cells, an edge entry 6, an
    /// inner one 9, each through the tap that mirrors its offset.
    #[test]
    fn taps_reach_the_cells_around_an_entry_on_the_board() {
        let (h, w, k) = (3, 4, 3);
        let taps = |index| {
            let mut out = Vec::new();
            for_each_tap(index, h, w, k, |row, cell| out.push((row, cell)));
            out
        };
        // Plane 1, cell (0, 0): output (0, 0) through the centre tap (1, 1), output
        // (0, 1) through (1, 0), (1, 0) through (0, 1), (1, 1) through (0, 0).
        assert_eq!(taps(12), vec![(9, 5), (9 + 1, 4), (9 + 3, 1), (9 + 4, 0)]);
        assert_eq!(taps(1).len(), 6);
        assert_eq!(taps(5).len(), 9);
    }
}
