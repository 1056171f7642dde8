//! The stem convolution of mostly-zero inputs, for training: tai shogi's 207 planes of
//! 25x25 hold about 400 non-zero floats and three filled planes a position, and a dense
//! 3x3 convolution over them cost the learner more than its whole residual tower. Here
//! every non-zero entry adds its kernel column onto the squares the kernel reaches from
//! it (a gather of kernel rows and an `index_add`), and the filled planes go through a
//! dense convolution of just those planes: the same function as `conv2d`, with
//! gradients for the kernel and the bias (inputs never need one).
//!
//! The inference path has its own CPU-only version over plain floats
//! ([`crate::frozen`]); both read a dense batch through [`scan`].

use shogi_features::SparsePlanes;
use tch::Tensor;

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

/// `conv2d(x, weight, bias, stride 1, padding k / 2)` of the batch whose positions are
/// `rows` (planes of `h x w`), as `[B, C, H, W]`, differentiable in `weight` (`[C,
/// planes, k, k]`, k odd) and `bias`; computed on `weight`'s device and dtype.
///
/// # Panics
/// If an entry or fill lies beyond `weight`'s planes.
pub(crate) fn sparse_conv2d(
    weight: &Tensor,
    bias: Option<&Tensor>,
    rows: &[SparsePlanes],
    h: usize,
    w: usize,
) -> Tensor {
    let size = weight.size();
    let (c, planes, k) = (size[0], size[1] as usize, size[2] as usize);
    let hw = h * w;
    let (device, kind) = (weight.device(), weight.kind());
    let batch = rows.len();
    // One (kernel row, output cell, value) triple per entry and tap that lands on the
    // board.
    let mut kernel_rows: Vec<i64> = Vec::new();
    let mut cells: Vec<i64> = Vec::new();
    let mut values: Vec<f32> = Vec::new();
    for (b, row) in rows.iter().enumerate() {
        for &(index, v) in &row.entries {
            let index = index as usize;
            assert!(
                index / hw < planes,
                "input entry {index} beyond {planes} planes"
            );
            for_each_tap(index, h, w, k, |kernel_row, cell| {
                kernel_rows.push(kernel_row as i64);
                cells.push((b * hw + cell) as i64);
                values.push(v);
            });
        }
    }
    // The kernel as rows `[planes * k * k, C]`: row `p * k * k + ky * k + kx` is the
    // column every output channel gets from plane p through tap (ky, kx).
    let columns = weight.permute([1, 2, 3, 0]).reshape([-1, c]);
    let mut out = Tensor::zeros([(batch * hw) as i64, c], (kind, device));
    if !values.is_empty() {
        let at = |v: &[i64]| Tensor::from_slice(v).to_device(device);
        let scale = Tensor::from_slice(&values)
            .to_device(device)
            .to_kind(kind)
            .unsqueeze(1);
        let added = columns.index_select(0, &at(&kernel_rows)) * scale;
        out = out.index_add(0, &at(&cells), &added);
    }
    let out = out
        .view([batch as i64, h as i64, w as i64, c])
        .permute([0, 3, 1, 2]);
    let out = match filled_planes_conv(weight, rows, h, w) {
        Some(filled) => out + filled,
        None => out,
    };
    match bias {
        Some(bias) => out + bias.view([1, c, 1, 1]),
        None => out,
    }
}

/// The filled planes' part of the convolution, `[B, C, H, W]` (`None` when no position
/// fills a plane): a dense convolution of only the planes some position fills, each
/// holding that position's value on every square.
fn filled_planes_conv(
    weight: &Tensor,
    rows: &[SparsePlanes],
    h: usize,
    w: usize,
) -> Option<Tensor> {
    let size = weight.size();
    let (planes, pad) = (size[1] as usize, size[2] / 2);
    let (device, kind) = (weight.device(), weight.kind());
    let (batch, hw) = (rows.len(), h * w);
    let mut filled: Vec<u32> = rows
        .iter()
        .flat_map(|row| row.fills.iter().map(|&(p, _)| p))
        .collect();
    filled.sort_unstable();
    filled.dedup();
    if filled.is_empty() {
        return None;
    }
    let f = filled.len();
    let mut dense = vec![0.0f32; batch * f * hw];
    for (b, row) in rows.iter().enumerate() {
        for &(p, v) in &row.fills {
            assert!((p as usize) < planes, "filled plane {p} of {planes}");
            let j = filled.binary_search(&p).expect("collected above");
            dense[(b * f + j) * hw..(b * f + j + 1) * hw].fill(v);
        }
    }
    let planes_used: Vec<i64> = filled.iter().map(|&p| i64::from(p)).collect();
    let kernel = weight.index_select(1, &Tensor::from_slice(&planes_used).to_device(device));
    let x = Tensor::from_slice(&dense)
        .view([batch as i64, f as i64, h as i64, w as i64])
        .to_device(device)
        .to_kind(kind);
    Some(x.conv2d(&kernel, None::<Tensor>, [1, 1], [pad, pad], [1, 1], 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind};

    /// A batch of tai-like inputs: a few non-zero entries a plane (corners and edges among
    /// them, values other than 1), every fourth plane filled with a per-position value.
    fn batch(planes: usize, h: usize, w: usize, n: usize) -> Vec<f32> {
        let hw = h * w;
        let mut dense = vec![0.0f32; n * planes * hw];
        for b in 0..n {
            let row = &mut dense[b * planes * hw..(b + 1) * planes * hw];
            for p in 0..planes {
                let plane = &mut row[p * hw..(p + 1) * hw];
                if p % 4 == 3 {
                    plane.fill(if b % 2 == 0 { 0.5 } else { 1.0 });
                    continue;
                }
                for (j, cell) in [0, w - 1, hw - w, hw - 1].into_iter().enumerate() {
                    if (p + j + b) % 3 == 0 {
                        plane[cell] = 1.0;
                    }
                }
                for j in 0..3 {
                    plane[(p * 7 + b * 3 + j * 11) % hw] = 0.1 + ((p + j + b) % 5) as f32 * 0.4;
                }
            }
        }
        dense
    }

    fn rows(dense: &[f32], planes: usize, hw: usize) -> Vec<SparsePlanes> {
        dense
            .chunks_exact(planes * hw)
            .map(|row| {
                let mut out = SparsePlanes::default();
                scan(row, hw, &mut out);
                out
            })
            .collect()
    }

    /// Output, kernel gradient and bias gradient equal the dense convolution's (a loss
    /// that weighs every output differently), for kernels 1, 3 and 5.
    #[test]
    fn the_sparse_convolution_and_its_gradients_equal_the_dense_ones() {
        let (planes, h, w, n) = (9, 7, 6, 3);
        for k in [1i64, 3, 5] {
            let dense = batch(planes, h, w, n);
            tch::manual_seed(k);
            let opts = (Kind::Float, Device::Cpu);
            let weight = Tensor::randn([4, planes as i64, k, k], opts).set_requires_grad(true);
            let bias = Tensor::randn([4], opts).set_requires_grad(true);
            let probe = Tensor::randn([n as i64, 4, h as i64, w as i64], opts);
            let x = Tensor::from_slice(&dense).view([n as i64, planes as i64, h as i64, w as i64]);
            let reference = x.conv2d(&weight, Some(&bias), [1, 1], [k / 2, k / 2], [1, 1], 1);
            (&reference * &probe).sum(Kind::Float).backward();
            let (gw, gb) = (weight.grad().copy(), bias.grad().copy());
            let _ = weight.grad().zero_();
            let _ = bias.grad().zero_();
            let out = sparse_conv2d(&weight, Some(&bias), &rows(&dense, planes, h * w), h, w);
            (&out * &probe).sum(Kind::Float).backward();
            let close = |a: &Tensor, b: &Tensor| {
                let diff = f64::try_from((a - b).abs().max()).unwrap();
                assert!(diff < 1e-4, "kernel {k}: differs by {diff}");
            };
            assert_eq!(out.size(), reference.size());
            close(&out, &reference);
            close(&weight.grad(), &gw);
            close(&bias.grad(), &gb);
        }
    }

    /// The whole training graph with the sparse stem: the same policy and value (train
    /// mode: batch-norm statistics of the batch) and the same stem gradient as the dense
    /// input's.
    #[test]
    fn a_net_on_sparse_rows_trains_as_on_dense_planes() {
        let (planes, board, n) = (9, 7, 3);
        let cfg = crate::net::ModelConfig {
            value_hidden: 16,
            value_pool: true,
            ..crate::net::ModelConfig::small(2, 8, planes, (board, board), 5)
        };
        tch::manual_seed(5);
        let model = crate::net::Model::new(&cfg, Device::Cpu);
        let dense = batch(planes, board, board, n);
        let xs = Tensor::from_slice(&dense).view([n as i64, -1]);
        let run = |sparse: bool| {
            for mut t in model.vs.trainable_variables() {
                t.zero_grad();
            }
            let (p, v, _) = if sparse {
                let rows = rows(&dense, planes, board * board);
                model.net.forward_sparse_with_material(&rows, true)
            } else {
                model.net.forward_with_material(&xs, true)
            };
            (p.sum(Kind::Float) * 0.01 + v.square().sum(Kind::Float)).backward();
            (p, v, model.net.stem.conv.ws.grad().copy())
        };
        let dense_run = run(false);
        let sparse_run = run(true);
        for (a, b) in [
            (&sparse_run.0, &dense_run.0),
            (&sparse_run.1, &dense_run.1),
            (&sparse_run.2, &dense_run.2),
        ] {
            let diff = f64::try_from((a - b).abs().max()).unwrap();
            assert!(diff < 1e-4, "differs by {diff}");
        }
    }

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
}
