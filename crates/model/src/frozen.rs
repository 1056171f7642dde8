//! The network as inference runs it: the same function as [`Net::forward_t`] in eval
//! mode, computed with less work.
//!
//! - Every batch norm is folded into the convolution before it (eval-mode batch norm is
//!   an affine map per channel), so a block is two convolutions with biases.
//! - The policy's last 1x1 convolution is evaluated only at the legal moves' entries:
//!   each entry is one dot product of a square's policy features with a plane's
//!   weights. Tai shogi's policy has 191,250 entries a position and a few hundred legal
//!   moves; the full map was megabytes a batch, allocated and copied for nothing.
//! - On the CPU, a large input (tai shogi's 207 planes of 25x25, [`SPARSE_STEM_MIN_INPUT`])
//!   goes through the stem sparsely: a one-hot piece plane has one non-zero a piece, so
//!   the stem is the sum of a few hundred kernel columns added onto the squares each
//!   reaches, and a plane filled with one value adds that value times its kernel on
//!   every square the kernel reaches from the board. The dense convolution read 129,375
//!   inputs a position, most zero. The game writes its planes sparsely where it can
//!   ([`shogi_registry::NetGame::encode_sparse`]); dense planes are scanned. The stem
//!   writes its output channels last, the layout the tower's convolutions run in
//!   without reordering.
//! - On the CPU the legal entries' dot products run here, over the policy features read
//!   out once (`[cells][C]`), not as tensor gathers: tai's few thousand entries a batch
//!   were two index selects, a product and a sum (an index select of 128-byte rows is a
//!   `memmove` a row). The policy's 3x3 convolution stays dense: a tai batch's legal
//!   moves read about 70% of its cells (about 430 of 625 a position in self-play), where
//!   gathering each cell's neighbourhood cost more than the convolution.
//!
//! The weights are read once, when the frozen net is built: it does not follow later
//! changes to the [`Net`] (an [`crate::Inference`] owns its model and never trains it).

use shogi_features::SparsePlanes;
use tch::{Device, Kind, Tensor, nn};

use crate::net::{BN_EPS, ConvBn, Net, SqueezeExcite, value_features};
use crate::sparse::{PlanesRef, SPARSE_STEM_MIN_INPUT, for_each_tap, scan};

/// A convolution with its batch norm folded in.
#[derive(Debug)]
struct FoldedConv {
    weight: Tensor,
    bias: Tensor,
    padding: i64,
}

impl FoldedConv {
    /// `bn(conv(x))` in eval mode as one convolution: scale `gamma / sqrt(var + eps)`
    /// multiplies the kernel, the shift becomes its bias. Computed in f32 (from the
    /// trained parameters, before any rounding) and stored in `kind`.
    fn fold(conv_bn: &ConvBn, kind: Kind) -> Self {
        let ConvBn { conv, bn } = conv_bn;
        let w = conv.ws.to_kind(Kind::Float);
        let channels = w.size()[0];
        let float = |t: &Option<Tensor>, fill: f64| match t {
            Some(t) => t.to_kind(Kind::Float),
            None => Tensor::full([channels], fill, (Kind::Float, w.device())),
        };
        let gamma = float(&bn.ws, 1.0);
        let beta = float(&bn.bs, 0.0);
        let conv_bias = float(&conv.bs, 0.0);
        let mean = bn.running_mean.to_kind(Kind::Float);
        let scale = gamma * (bn.running_var.to_kind(Kind::Float) + BN_EPS).rsqrt();
        let weight = &w * scale.view([-1, 1, 1, 1]);
        let bias = beta + (conv_bias - mean) * &scale;
        FoldedConv {
            padding: w.size()[2] / 2,
            weight: weight.to_kind(kind),
            bias: bias.to_kind(kind),
        }
    }

    fn forward(&self, xs: &Tensor) -> Tensor {
        xs.conv2d(
            &self.weight,
            Some(&self.bias),
            [1, 1],
            [self.padding, self.padding],
            [1, 1],
            1,
        )
    }
}

/// `t` in `kind`: its own storage when it is in `kind` already (a shallow copy).
fn in_kind(t: &Tensor, kind: Kind) -> Tensor {
    if t.kind() == kind {
        t.shallow_clone()
    } else {
        t.to_kind(kind)
    }
}

/// A linear layer in `kind`, sharing `l`'s storage when it is in `kind` already.
fn linear_in(l: &nn::Linear, kind: Kind) -> nn::Linear {
    nn::Linear {
        ws: in_kind(&l.ws, kind),
        bs: l.bs.as_ref().map(|b| in_kind(b, kind)),
    }
}

/// Squeeze-and-excitation in `kind`: it has no batch norm to fold.
fn se_in(se: &SqueezeExcite, kind: Kind) -> SqueezeExcite {
    SqueezeExcite {
        fc1: linear_in(&se.fc1, kind),
        fc2: linear_in(&se.fc2, kind),
    }
}

#[derive(Debug)]
struct FrozenBlock {
    conv1: FoldedConv,
    conv2: FoldedConv,
    se: Option<SqueezeExcite>,
}

/// The stem as kernel columns added onto squares (see the module docs), in f32 on the
/// CPU.
#[derive(Debug)]
struct SparseStem {
    /// The folded kernel as `[planes][k * k][C]`: the column a tap of a plane adds.
    taps: Vec<f32>,
    /// The folded bias `[C]`.
    bias: Vec<f32>,
    planes: usize,
    kernel: usize,
}

/// The inference network (see the module docs).
#[derive(Debug)]
pub(crate) struct FrozenNet {
    height: usize,
    width: usize,
    channels: usize,
    stem: FoldedConv,
    sparse_stem: Option<SparseStem>,
    tower: Vec<FrozenBlock>,
    policy_conv: FoldedConv,
    /// `[policy_planes, C]`: the last policy convolution's 1x1 kernel.
    policy_weight: Tensor,
    /// `[policy_planes]`.
    policy_bias: Tensor,
    /// On the CPU, `policy_weight` and `policy_bias` as f32 (the legal entries' dot
    /// products run in Rust there).
    policy_rows: Option<(Vec<f32>, Vec<f32>)>,
    value_conv: FoldedConv,
    value_pool: bool,
    value_fc1: nn::Linear,
    value_fc2: nn::Linear,
}

impl FrozenNet {
    /// Freezes `net` (its parameters on `device`, in the dtype the net computes in). The
    /// sparse stem is used on the CPU for inputs of [`SPARSE_STEM_MIN_INPUT`] or more (it
    /// adds in f32 and hands the tower its output in the net's dtype).
    pub(crate) fn new(net: &Net, device: Device, kind: Kind) -> Self {
        let sparse = !device.is_cuda() && net.config().input_size() >= SPARSE_STEM_MIN_INPUT;
        if sparse {
            crate::memory::keep_freed_memory();
        }
        FrozenNet::build(net, sparse, !device.is_cuda(), kind)
    }

    /// `sparse`: the sparse stem; `cpu_policy`: the legal entries' dot products in Rust.
    /// `kind`: the dtype the frozen net computes in, whatever `net`'s parameters are in
    /// (folded and read out in f32 first, then stored in `kind`).
    fn build(net: &Net, sparse: bool, cpu_policy: bool, kind: Kind) -> Self {
        tch::no_grad(|| {
            let cfg = net.config();
            // The sparse stem adds in f32: its columns from the f32 fold.
            let sparse_stem =
                sparse.then(|| sparse_stem(&FoldedConv::fold(&net.stem, Kind::Float)));
            let stem = FoldedConv::fold(&net.stem, kind);
            let tower = net
                .tower
                .iter()
                .map(|block| FrozenBlock {
                    conv1: FoldedConv::fold(&block.conv1, kind),
                    conv2: FoldedConv::fold(&block.conv2, kind),
                    se: block.se.as_ref().map(|se| se_in(se, kind)),
                })
                .collect();
            let out = &net.policy_out;
            let policy_planes = out.ws.size()[0];
            // Copies (`to_kind` of a tensor already in f32 would share its storage).
            let policy_weight = out.ws.view([policy_planes, -1]).to_kind(Kind::Float).copy();
            let policy_bias = out
                .bs
                .as_ref()
                .expect("the policy's last convolution has a bias")
                .to_kind(Kind::Float)
                .copy();
            let policy_rows = cpu_policy.then(|| (f32_vec(&policy_weight), f32_vec(&policy_bias)));
            let (policy_weight, policy_bias) =
                (policy_weight.to_kind(kind), policy_bias.to_kind(kind));
            FrozenNet {
                height: cfg.board_h,
                width: cfg.board_w,
                channels: cfg.channels,
                stem,
                sparse_stem,
                tower,
                policy_conv: FoldedConv::fold(&net.policy_conv, kind),
                policy_weight,
                policy_bias,
                policy_rows,
                value_conv: FoldedConv::fold(&net.value_conv, kind),
                value_pool: cfg.value_pool,
                value_fc1: linear_in(&net.value_fc1, kind),
                value_fc2: linear_in(&net.value_fc2, kind),
            }
        })
    }

    /// The stem's output `[B, C, H, W]` (before its ReLU) by adding kernel columns onto
    /// squares; f32 on the CPU, channels last in memory (`[B][H][W][C]`): every addition
    /// is a run of C contiguous floats, and the tower's convolutions take that layout
    /// without reordering it.
    ///
    /// # Panics
    /// If a sparse entry or fill lies outside the planes.
    fn sparse_stem_forward(&self, stem: &SparseStem, inputs: &[PlanesRef<'_>]) -> Tensor {
        let (h, w, k, c) = (self.height, self.width, stem.kernel, self.channels);
        let (hw, taps, pad) = (h * w, k * k, k / 2);
        let mut out = vec![0.0f32; inputs.len() * c * hw];
        let mut scanned = SparsePlanes::default();
        let mut filled = vec![0.0f32; taps * c];
        let add = |into: &mut [f32], from: &[f32], scale: f32| {
            for (x, &y) in into.iter_mut().zip(from) {
                *x += scale * y;
            }
        };
        // One position a chunk, square-major (`[H * W][C]`).
        for (input, acc) in inputs.iter().zip(out.chunks_exact_mut(c * hw)) {
            let planes = match *input {
                PlanesRef::Sparse(planes) => planes,
                PlanesRef::Dense(dense) => {
                    scan(dense, hw, &mut scanned);
                    &scanned
                }
            };
            for square in acc.chunks_exact_mut(c) {
                square.copy_from_slice(&stem.bias);
            }
            if !planes.fills.is_empty() {
                // The filled planes' kernels summed per tap; tap (ky, kx) reaches the
                // output squares whose input square (r + ky - pad, x + kx - pad) is on
                // the board.
                filled.fill(0.0);
                for &(p, v) in &planes.fills {
                    let p = p as usize;
                    assert!(p < stem.planes, "filled plane {p} of {}", stem.planes);
                    add(&mut filled, &stem.taps[p * taps * c..(p + 1) * taps * c], v);
                }
                for ky in 0..k {
                    let rows = pad.saturating_sub(ky)..(h + pad - ky).min(h);
                    for kx in 0..k {
                        let cols = pad.saturating_sub(kx)..(w + pad - kx).min(w);
                        let column = &filled[(ky * k + kx) * c..(ky * k + kx + 1) * c];
                        for r in rows.clone() {
                            let run = &mut acc[(r * w + cols.start) * c..(r * w + cols.end) * c];
                            for square in run.chunks_exact_mut(c) {
                                add(square, column, 1.0);
                            }
                        }
                    }
                }
            }
            for &(index, v) in &planes.entries {
                let index = index as usize;
                assert!(
                    index / hw < stem.planes,
                    "input entry {index} beyond {} planes",
                    stem.planes
                );
                for_each_tap(index, h, w, k, |kernel_row, cell| {
                    let (at, target) = (kernel_row * c, cell * c);
                    add(&mut acc[target..target + c], &stem.taps[at..at + c], v);
                });
            }
        }
        Tensor::from_slice(&out)
            .view([inputs.len() as i64, h as i64, w as i64, c as i64])
            .permute([0, 3, 1, 2])
    }

    /// The policy logits at `legal` (`(position, policy index)` pairs, each index below
    /// the policy's size), one a pair, and the value logits `[B, 3]`, for `inputs` (one a
    /// position). `upload(inputs, extras)` turns the inputs into the dense input `[B,
    /// planes, H, W]` on the net's device and dtype when the stem is dense, and `extras`
    /// into a flat f32 tensor on the device: the gather indices travel with the inputs.
    pub(crate) fn forward_legal(
        &self,
        inputs: &[PlanesRef<'_>],
        legal: &[(usize, usize)],
        upload: impl FnOnce(&[PlanesRef<'_>], &[f32]) -> (Tensor, Tensor),
    ) -> (LegalLogits, Tensor) {
        crate::threads::apply_num_threads();
        let gather = self.gather_indices(legal);
        match &self.sparse_stem {
            Some(sparse) => {
                let out = self.sparse_stem_forward(sparse, inputs);
                let out = match self.stem.weight.kind() {
                    Kind::Float => out,
                    kind => out.to_kind(kind), // the strides (channels last) are kept
                };
                self.forward_from_stem(out, legal, Tensor::from_slice(&gather))
            }
            None => {
                let (xs, gather) = upload(inputs, &gather);
                self.forward_dense(&xs, legal, gather)
            }
        }
    }

    /// Whether the stem reads its inputs sparsely on the host (no dense upload).
    pub(crate) fn has_sparse_stem(&self) -> bool {
        self.sparse_stem.is_some()
    }

    /// Where the device gathers the legal entries: each pair's cell (position, square),
    /// then each pair's policy plane, as f32 (exact below 2^24, so that they travel in
    /// the inputs' upload); empty where the host computes the entries.
    pub(crate) fn gather_indices(&self, legal: &[(usize, usize)]) -> Vec<f32> {
        if self.policy_rows.is_some() {
            return Vec::new();
        }
        let hw = self.height * self.width;
        let cells = legal.iter().map(|&(b, index)| b * hw + index % hw);
        let planes = legal.iter().map(|&(_, index)| index / hw);
        cells
            .chain(planes)
            .map(|i| {
                assert!(i < 1 << 24, "gather index {i} is not exact in f32");
                i as f32
            })
            .collect()
    }

    /// [`FrozenNet::forward_legal`] from the dense input `xs` already on the device and
    /// the [`FrozenNet::gather_indices`] of `legal` as a tensor there.
    pub(crate) fn forward_dense(
        &self,
        xs: &Tensor,
        legal: &[(usize, usize)],
        gather: Tensor,
    ) -> (LegalLogits, Tensor) {
        crate::threads::apply_num_threads();
        self.forward_from_stem(self.stem.forward(xs), legal, gather)
    }

    fn forward_from_stem(
        &self,
        stem: Tensor,
        legal: &[(usize, usize)],
        gather: Tensor,
    ) -> (LegalLogits, Tensor) {
        let hw = self.height * self.width;
        // ReLUs and the residual sums in place: no new activation tensor each (callers
        // run this under `no_grad`).
        let mut t = stem;
        let _ = t.relu_();
        for block in &self.tower {
            let mut h = block.conv1.forward(&t);
            let _ = h.relu_();
            let mut h = block.conv2.forward(&h);
            if let Some(se) = &block.se {
                h = se.forward(&h);
            }
            h += &t;
            let _ = h.relu_();
            t = h;
        }
        let mut features = self.policy_conv.forward(&t);
        let _ = features.relu_();
        // One row of C policy features a cell (position, square): a view of the
        // channels-last output the CPU convolutions produce.
        let c = self.channels;
        let features = features
            .permute([0, 2, 3, 1])
            .reshape([-1, c as i64])
            .contiguous();
        let logits = match &self.policy_rows {
            Some((weight, bias)) => {
                let features = f32_vec(&features);
                LegalLogits::Host(
                    legal
                        .iter()
                        .map(|&(b, index)| {
                            let (cell, plane) = (b * hw + index % hw, index / hw);
                            let x = &features[cell * c..(cell + 1) * c];
                            let w = &weight[plane * c..(plane + 1) * c];
                            bias[plane] + dot(x, w)
                        })
                        .collect(),
                )
            }
            None => {
                let n = legal.len() as i64;
                let gather = gather.to_kind(Kind::Int64);
                let (cells, planes) = (gather.narrow(0, 0, n), gather.narrow(0, n, n));
                LegalLogits::Device(
                    (features.index_select(0, &cells)
                        * self.policy_weight.index_select(0, &planes))
                    .sum_dim_intlist([1i64].as_slice(), false, None::<Kind>)
                        + self.policy_bias.index_select(0, &planes),
                )
            }
        };
        let value_map = self.value_conv.forward(&t).relu();
        let value = value_features(&value_map, self.value_pool)
            .apply(&self.value_fc1)
            .relu()
            .apply(&self.value_fc2);
        (logits, value)
    }
}

/// The legal entries' logits as [`FrozenNet::forward_legal`] leaves them: computed on
/// the host (the CPU's dot products), or a tensor still on the device (its gathers).
#[derive(Debug)]
pub(crate) enum LegalLogits {
    Host(Vec<f32>),
    Device(Tensor),
}

impl LegalLogits {
    /// The logits on the host (waits for the device).
    #[cfg(test)]
    fn into_vec(self) -> Vec<f32> {
        match self {
            LegalLogits::Host(v) => v,
            LegalLogits::Device(t) => f32_vec(&t),
        }
    }
}

/// `x . y` in eight independent partial sums (the compiler keeps a plain float sum in
/// order, one dependent addition a term; these vectorise).
fn dot(x: &[f32], y: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut partial = [0.0f32; LANES];
    let (xs, ys) = (x.chunks_exact(LANES), y.chunks_exact(LANES));
    let tail: f32 = xs
        .remainder()
        .iter()
        .zip(ys.remainder())
        .map(|(a, b)| a * b)
        .sum();
    for (a, b) in xs.zip(ys) {
        for lane in 0..LANES {
            partial[lane] += a[lane] * b[lane];
        }
    }
    partial.iter().sum::<f32>() + tail
}

/// `t`'s elements in order as f32 on the CPU.
pub(crate) fn f32_vec(t: &Tensor) -> Vec<f32> {
    let t = t.to_kind(Kind::Float).to_device(Device::Cpu).contiguous();
    Vec::<f32>::try_from(&t.view([-1])).expect("a float tensor to Vec<f32>")
}

/// The folded stem as kernel columns (f32, CPU).
fn sparse_stem(stem: &FoldedConv) -> SparseStem {
    let size = stem.weight.size();
    SparseStem {
        taps: f32_vec(&stem.weight.permute([1, 2, 3, 0])),
        bias: f32_vec(&stem.bias),
        planes: size[1] as usize,
        kernel: size[2] as usize,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Model, ModelConfig};

    fn config(
        input_planes: usize,
        board: usize,
        stem_kernel: usize,
        se: bool,
        pool: bool,
    ) -> ModelConfig {
        ModelConfig {
            value_channels: 3,
            value_hidden: 16,
            se,
            value_pool: pool,
            stem_kernel,
            ..ModelConfig::small(2, 8, input_planes, (board, board), 5)
        }
    }

    /// A model whose batch norms hold statistics and scales far from their initial ones,
    /// so a wrong fold cannot pass.
    fn trained_looking(cfg: &ModelConfig, seed: i64) -> Model {
        tch::manual_seed(seed);
        let model = Model::new(cfg, Device::Cpu);
        tch::no_grad(|| {
            for (name, mut t) in model.vs.variables() {
                let shape = t.size();
                let r = Tensor::rand(shape.as_slice(), (Kind::Float, Device::Cpu));
                if name.ends_with("running_var") {
                    t.copy_(&(r * 2.0 + 0.3));
                } else if name.contains("bn") && name.ends_with("weight") {
                    t.copy_(&(r + 0.5));
                } else if name.ends_with("running_mean") || name.contains("bn") {
                    t.copy_(&(r - 0.5));
                }
            }
        });
        model
    }

    /// Sparse-looking rows: one-hot planes with a few entries, a plane of ones, a plane
    /// filled with a fraction, some fractional and negative entries.
    fn rows(cfg: &ModelConfig, batch: usize) -> Vec<Vec<f32>> {
        let hw = cfg.squares();
        (0..batch)
            .map(|b| {
                let mut row = vec![0.0; cfg.input_size()];
                for p in 0..cfg.input_planes {
                    let plane = &mut row[p * hw..(p + 1) * hw];
                    match p % 5 {
                        0 => plane.fill(1.0),
                        1 => plane.fill(0.25 * (b as f32 + 1.0)),
                        2 => {}
                        _ => {
                            for (i, x) in plane.iter_mut().enumerate() {
                                if (i * 7 + p * 3 + b) % 11 == 0 {
                                    *x = if i % 3 == 0 { -0.5 } else { 1.0 };
                                }
                            }
                        }
                    }
                }
                // A plane that is all equal but zero is empty, not filled; one that is
                // all equal except a cell is not filled either.
                row[3 * hw..4 * hw].fill(2.0);
                row[3 * hw + hw - 1] = 0.0;
                row
            })
            .collect()
    }

    fn reference(model: &Model, rows: &[Vec<f32>]) -> (Tensor, Tensor) {
        tch::no_grad(|| {
            let flat: Vec<f32> = rows.concat();
            let xs = Tensor::from_slice(&flat).view([rows.len() as i64, -1]);
            model.forward_t(&xs, false)
        })
    }

    /// Both ways of computing the legal entries (in Rust, the CPU's; tensor gathers, a
    /// GPU's) against the eval forward.
    fn check(cfg: &ModelConfig, sparse: bool) {
        for cpu_policy in [true, false] {
            check_frozen(cfg, sparse, cpu_policy, Kind::Float);
        }
    }

    /// The frozen net computing in `kind` against the f32 eval forward of its model.
    fn check_frozen(cfg: &ModelConfig, sparse: bool, cpu_policy: bool, kind: Kind) {
        let model = trained_looking(cfg, 7);
        let frozen = FrozenNet::build(&model.net, sparse, cpu_policy, kind);
        assert_eq!(frozen.has_sparse_stem(), sparse);
        let rows = rows(cfg, 3);
        let (policy, value) = reference(&model, &rows);
        let policy_size = cfg.policy_size();
        let legal: Vec<(usize, usize)> = (0..3)
            .flat_map(|b| {
                (0..policy_size)
                    .filter(move |i| (i + b) % 3 == 0)
                    .map(move |i| (b, i))
            })
            .collect();
        // Each stem reads dense planes and sparse ones (the scan's, which the
        // scan-free path must agree with) alike.
        let sparse_planes: Vec<SparsePlanes> = rows
            .iter()
            .map(|row| {
                let mut planes = SparsePlanes::default();
                scan(row, cfg.squares(), &mut planes);
                planes
            })
            .collect();
        assert!(
            sparse_planes
                .iter()
                .all(|p| !p.fills.is_empty() && !p.entries.is_empty())
        );
        let dense: Vec<PlanesRef<'_>> = rows.iter().map(|r| PlanesRef::Dense(r)).collect();
        let sparse: Vec<PlanesRef<'_>> = sparse_planes.iter().map(PlanesRef::Sparse).collect();
        for inputs in [dense, sparse] {
            check_inputs(cfg, &frozen, kind, &inputs, &legal, &policy, &value);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn check_inputs(
        cfg: &ModelConfig,
        frozen: &FrozenNet,
        kind: Kind,
        inputs: &[PlanesRef<'_>],
        legal: &[(usize, usize)],
        policy: &Tensor,
        value: &Tensor,
    ) {
        let policy_size = cfg.policy_size();
        let (logits, frozen_value) = tch::no_grad(|| {
            frozen.forward_legal(inputs, legal, |inputs, extras| {
                let mut flat = vec![0.0; inputs.len() * cfg.input_size()];
                for (input, out) in inputs.iter().zip(flat.chunks_exact_mut(cfg.input_size())) {
                    input.write_dense(cfg.squares(), out);
                }
                let xs = Tensor::from_slice(&flat)
                    .view([
                        inputs.len() as i64,
                        cfg.input_planes as i64,
                        cfg.board_h as i64,
                        cfg.board_w as i64,
                    ])
                    .to_kind(kind);
                (xs, Tensor::from_slice(extras))
            })
        });
        let logits = logits.into_vec();
        // bf16 keeps 8 significant bits: a relative 2^-9 a rounding, compounded through
        // a tower of these random-looking batch norms (up to 2.5% of the largest logit
        // seen); a wrong layout or a missed conversion is off by the logits' own size.
        let tolerance = if kind == Kind::Float { 1e-4 } else { 0.1 };
        let policy = Vec::<f32>::try_from(&policy.view([-1])).unwrap();
        assert_eq!(logits.len(), legal.len());
        let scale = policy.iter().fold(1.0f32, |m, x| m.max(x.abs()));
        for (&(b, i), got) in legal.iter().zip(&logits) {
            let want = policy[b * policy_size + i];
            assert!(
                (got - want).abs() <= tolerance * scale,
                "logit {i} of position {b}: {got} vs {want}"
            );
        }
        let diff = (frozen_value.to_kind(Kind::Float) - value)
            .abs()
            .max()
            .double_value(&[]);
        let scale = value.abs().max().double_value(&[]).max(1.0);
        assert!(
            diff < f64::from(tolerance) * scale,
            "value logits differ by {diff} (largest {scale})"
        );
    }

    #[test]
    fn the_dense_frozen_net_computes_the_eval_forward() {
        check(&config(6, 5, 3, false, false), false);
        check(&config(6, 5, 3, true, true), false);
        check(&config(6, 5, 1, false, false), false);
    }

    /// The sparse stem against the eval forward (every third policy entry of each
    /// position is legal here: edge and corner squares among them).
    #[test]
    fn the_sparse_path_computes_the_eval_forward() {
        check(&config(11, 7, 3, false, false), true);
        check(&config(11, 7, 5, true, true), true);
        check(&config(11, 7, 1, false, false), true);
    }

    /// A CPU's half precision (bf16): the dense stem and the sparse one (which adds in
    /// f32 and hands the tower bf16), both ways of computing the legal entries.
    #[test]
    fn the_bf16_frozen_net_computes_the_eval_forward_to_bf16_rounding() {
        for (cfg, sparse) in [
            (config(6, 5, 3, true, true), false),
            (config(11, 7, 3, false, false), true),
        ] {
            for cpu_policy in [true, false] {
                check_frozen(&cfg, sparse, cpu_policy, Kind::BFloat16);
            }
        }
    }

    #[test]
    fn dot_sums_every_term_in_and_past_the_lanes() {
        for len in [0, 3, 8, 19, 32] {
            let x: Vec<f32> = (0..len).map(|i| i as f32 * 0.5 - 3.0).collect();
            let y: Vec<f32> = (0..len).map(|i| 1.0 + (i % 5) as f32).collect();
            let want: f32 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            assert!(
                (dot(&x, &y) - want).abs() <= 1e-4 * want.abs().max(1.0),
                "{len}"
            );
        }
    }

    #[test]
    fn only_large_inputs_on_the_cpu_get_the_sparse_stem() {
        let small = Model::new(&config(6, 5, 3, false, false), Device::Cpu);
        assert!(!FrozenNet::new(&small.net, Device::Cpu, Kind::Float).has_sparse_stem());
        let tai_sized = Model::new(&config(207, 25, 1, false, false), Device::Cpu);
        assert!(FrozenNet::new(&tai_sized.net, Device::Cpu, Kind::Float).has_sparse_stem());
    }
}
