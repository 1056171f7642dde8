//! Batched inference on raw input-plane buffers.

use std::cell::RefCell;
use std::path::Path;

use tch::{Device, Kind, Tensor};

use crate::checkpoint::{CheckpointError, Expected, Manifest, load_checkpoint};
use crate::frozen::FrozenNet;
use crate::net::{Model, ModelConfig};
pub use crate::sparse::PlanesRef;

/// Sets libtorch's intra-op CPU thread count (process-wide).
pub fn set_num_threads(n: usize) {
    tch::set_num_threads(n.max(1) as i32);
}

/// Whether self-play runs its network in f16 on CUDA unless told otherwise: about twice
/// the throughput of f32 on tensor cores, priors and values within about 1e-3 of f32.
/// Matches and the gate measure networks in f32, as they were trained.
pub const SELFPLAY_HALF_INFERENCE: bool = true;

/// Options for [`Inference`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InferenceOptions {
    /// Run the net in f16 (CUDA only; ignored on CPU, see [`Inference::is_half`]).
    pub half: bool,
    /// Initial capacity, in positions, of the pinned staging buffer used on CUDA (it grows
    /// on demand).
    pub max_batch: usize,
    /// If set, calls [`set_num_threads`] (process-wide) on construction.
    pub num_threads: Option<usize>,
}

impl Default for InferenceOptions {
    fn default() -> Self {
        Self {
            half: false,
            max_batch: 256,
            num_threads: None,
        }
    }
}

/// A network in eval mode on a device, answering batches of positions.
///
/// `Send` but not `Sync` (libtorch tensors are not `Sync`): own it from one inference
/// thread and feed it batches.
#[derive(Debug)]
pub struct Inference {
    model: Model,
    /// The model as [`Inference::infer_legal`] runs it (batch norms folded, the policy
    /// only at legal moves), frozen when the inference was built.
    frozen: FrozenNet,
    device: Device,
    half: bool,
    /// Pinned host buffer `[capacity, input_size]` for host-to-device copies (CUDA only).
    staging: RefCell<Option<Tensor>>,
    capacity: RefCell<usize>,
}

impl Inference {
    /// Wraps `model` (moved to `device`). Half precision is used only when requested and
    /// `device` is CUDA.
    pub fn new(mut model: Model, device: Device, options: &InferenceOptions) -> Self {
        if let Some(n) = options.num_threads {
            set_num_threads(n);
        }
        if model.vs.device() != device {
            model.vs.set_device(device);
        }
        let half = options.half && device.is_cuda();
        if half {
            model.vs.half();
        }
        let frozen = FrozenNet::new(&model.net, device, half);
        let me = Self {
            model,
            frozen,
            device,
            half,
            staging: RefCell::new(None),
            capacity: RefCell::new(0),
        };
        if device.is_cuda() {
            me.ensure_staging(options.max_batch.max(1));
        }
        me
    }

    /// Loads a checkpoint (see [`load_checkpoint`]) straight onto `device`.
    pub fn from_checkpoint(
        dir: impl AsRef<Path>,
        expected: &Expected,
        device: Device,
        options: &InferenceOptions,
    ) -> Result<(Self, Manifest), CheckpointError> {
        let (model, manifest) = load_checkpoint(dir, expected, device)?;
        Ok((Self::new(model, device, options), manifest))
    }

    /// The architecture.
    pub fn config(&self) -> &ModelConfig {
        self.model.config()
    }

    /// The device the net runs on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Whether the net runs in f16.
    pub fn is_half(&self) -> bool {
        self.half
    }

    /// The wrapped model (e.g. to save it).
    pub fn model(&self) -> &Model {
        &self.model
    }

    fn ensure_staging(&self, batch: usize) {
        let mut cap = self.capacity.borrow_mut();
        if *cap >= batch {
            return;
        }
        let n = self.config().input_size() as i64;
        let t = Tensor::zeros([batch as i64, n], (Kind::Float, Device::Cpu));
        let t = if t.f_is_pinned(self.device).unwrap_or(false) {
            t
        } else {
            t.f_pin_memory(self.device).unwrap_or(t)
        };
        *self.staging.borrow_mut() = Some(t);
        *cap = batch;
    }

    /// Uploads `inputs` (one a position) to the device as `[batch, planes, H, W]` in the
    /// net's dtype, written once into the tensor's memory.
    fn upload(&self, inputs: &[PlanesRef<'_>]) -> Tensor {
        let cfg = self.config();
        let batch = inputs.len();
        let input_size = cfg.input_size();
        let squares = cfg.squares();
        let shape = [
            batch as i64,
            cfg.input_planes as i64,
            cfg.board_h as i64,
            cfg.board_w as i64,
        ];
        let fill = |host: &Tensor| {
            // SAFETY: `host` is a contiguous CPU f32 tensor of at least `batch *
            // input_size` elements that nothing else references: a fresh tensor, or the
            // staging buffer, private to `self` (not `Sync`) and borrowed until the
            // synchronous copy to the device has finished.
            let dst = unsafe {
                std::slice::from_raw_parts_mut(host.data_ptr() as *mut f32, batch * input_size)
            };
            for (chunk, input) in dst.chunks_exact_mut(input_size).zip(inputs) {
                input.write_dense(squares, chunk);
            }
        };
        if !self.device.is_cuda() {
            let host = Tensor::empty(
                [batch as i64, input_size as i64],
                (Kind::Float, Device::Cpu),
            );
            fill(&host);
            return host.view(shape);
        }
        let kind = if self.half { Kind::Half } else { Kind::Float };
        self.ensure_staging(batch);
        let staging = self.staging.borrow();
        let staging = staging.as_ref().expect("staging buffer allocated");
        let host = staging.narrow(0, 0, batch as i64);
        fill(&host);
        host.to_device_(self.device, kind, false, false).view(shape)
    }

    /// Runs `batch` positions. `inputs` holds `batch * input_planes * H * W` floats laid out
    /// `[batch, input_planes, H, W]`. Returns `(policy_logits, wdl_probs)`: `batch *
    /// policy_size` raw logits (plane-major per position) and `batch * 3` softmaxed
    /// win/draw/loss probabilities.
    ///
    /// # Panics
    /// If `inputs.len() != batch * input_size`.
    pub fn infer(&self, inputs: &[f32], batch: usize) -> (Vec<f32>, Vec<f32>) {
        let cfg = self.config();
        check_input_len(inputs, batch, cfg.input_size());
        if batch == 0 {
            return (Vec::new(), Vec::new());
        }
        let rows: Vec<PlanesRef<'_>> = inputs
            .chunks_exact(cfg.input_size())
            .map(PlanesRef::Dense)
            .collect();
        tch::no_grad(|| {
            let xs = self.upload(&rows);
            let (policy, value) = self.model.forward_t(&xs, false);
            let policy = policy
                .to_kind(Kind::Float)
                .to_device(Device::Cpu)
                .contiguous()
                .view([-1]);
            let policy = Vec::<f32>::try_from(&policy).expect("policy logits to Vec<f32>");
            (policy, wdl_probabilities(&value))
        })
    }

    /// Runs `batch` positions like [`Inference::infer`], but returns only the policy
    /// logits at each position's `legal[i]` indices, concatenated in that order (an index
    /// outside the policy gives `-inf`), and the `batch * 3` win/draw/loss probabilities.
    /// The network runs frozen (see `frozen.rs`: batch norms folded into the
    /// convolutions, the policy's last layer evaluated only at those indices, a sparse
    /// stem for tai shogi's inputs on the CPU), so a few dozen logits a position are
    /// computed and cross to the host instead of `policy_size`; they equal the full
    /// forward pass's to float rounding.
    ///
    /// # Panics
    /// If `inputs.len() != batch * input_size` or `legal.len() != batch`.
    pub fn infer_legal(
        &self,
        inputs: &[f32],
        batch: usize,
        legal: &[&[u32]],
    ) -> (Vec<f32>, Vec<f32>) {
        let input_size = self.config().input_size();
        check_input_len(inputs, batch, input_size);
        let rows: Vec<PlanesRef<'_>> = inputs
            .chunks_exact(input_size)
            .map(PlanesRef::Dense)
            .collect();
        self.infer_legal_planes(&rows, legal)
    }

    /// [`Inference::infer_legal`] on each position's planes as they were encoded (dense
    /// or sparse), so a batch is never gathered into one buffer on the host.
    ///
    /// # Panics
    /// If dense planes are not `input_size` floats, a sparse entry lies outside the
    /// planes, or `legal.len() != inputs.len()`.
    pub fn infer_legal_planes(
        &self,
        inputs: &[PlanesRef<'_>],
        legal: &[&[u32]],
    ) -> (Vec<f32>, Vec<f32>) {
        let cfg = self.config();
        let input_size = cfg.input_size();
        for input in inputs {
            if let PlanesRef::Dense(planes) = input {
                check_input_len(planes, 1, input_size);
            }
        }
        assert_eq!(
            legal.len(),
            inputs.len(),
            "one legal-index list per position"
        );
        if inputs.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let policy_size = cfg.policy_size();
        let mut pairs = Vec::with_capacity(legal.iter().map(|l| l.len()).sum());
        let mut outside = Vec::new();
        for (row, indices) in legal.iter().enumerate() {
            for &index in indices.iter() {
                if (index as usize) < policy_size {
                    pairs.push((row, index as usize));
                } else {
                    outside.push(pairs.len());
                    pairs.push((row, 0));
                }
            }
        }
        tch::no_grad(|| {
            let (mut picked, value) = self
                .frozen
                .forward_legal(inputs, &pairs, |inputs| self.upload(inputs));
            for k in outside {
                picked[k] = f32::NEG_INFINITY;
            }
            (picked, wdl_probabilities(&value))
        })
    }
}

/// Panics unless `inputs` holds `batch` positions of `input_size` floats.
fn check_input_len(inputs: &[f32], batch: usize, input_size: usize) {
    assert_eq!(
        inputs.len(),
        batch * input_size,
        "inference input has {} floats, expected batch {batch} x {input_size}",
        inputs.len(),
    );
}

/// The value head's logits `[B, 3]` as win/draw/loss probabilities, `B * 3` floats.
fn wdl_probabilities(value: &Tensor) -> Vec<f32> {
    let wdl = value
        .to_kind(Kind::Float)
        .softmax(1, Kind::Float)
        .to_device(Device::Cpu)
        .contiguous()
        .view([-1]);
    Vec::<f32>::try_from(&wdl).expect("wdl probs to Vec<f32>")
}
