//! Batched inference on raw input-plane buffers.

use std::cell::{Cell, RefCell};
use std::path::Path;

use tch::{Cuda, Device, Kind, Tensor};

use crate::checkpoint::{CheckpointError, Expected, Manifest, load_checkpoint};
use crate::frozen::{FrozenNet, LegalLogits, f32_vec};
use crate::net::{Model, ModelConfig};
pub use crate::sparse::PlanesRef;

/// Sets libtorch's intra-op CPU thread count (process-wide).
pub fn set_num_threads(n: usize) {
    tch::set_num_threads(n.max(1) as i32);
}

/// Whether self-play runs its network in half precision unless told otherwise (see
/// [`half_kind`]): f16 on CUDA, about twice f32's throughput on tensor cores with priors
/// and values within about 1e-3 of f32; bf16 on a CPU that computes it natively, about
/// twice f32's convolutions (docs/PERFORMANCE.md). Matches and the gate measure networks
/// in f32, as they were trained.
pub const SELFPLAY_HALF_INFERENCE: bool = true;

/// The half precision a network runs in on `device` when asked for one: f16 on CUDA,
/// bf16 on a CPU with AVX-512 BF16 instructions (oneDNN's bf16 convolutions run natively
/// there; elsewhere they are emulated, slower than f32), and f32 on any other CPU.
pub fn half_kind(device: Device) -> Kind {
    if device.is_cuda() {
        Kind::Half
    } else if cpu_computes_bf16() {
        Kind::BFloat16
    } else {
        Kind::Float
    }
}

/// Whether this CPU has native bf16 arithmetic (AVX-512 BF16).
pub fn cpu_computes_bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Options for [`Inference`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InferenceOptions {
    /// Run the net in the device's half precision, [`half_kind`] (f32 on a CPU without
    /// native bf16; see [`Inference::kind`]).
    pub half: bool,
    /// Initial capacity, in positions, of the pinned staging buffers used on CUDA (they
    /// grow on demand).
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
    /// The dtype the net computes in: f32, or [`half_kind`] of the device.
    kind: Kind,
    /// Two pinned host buffers (f32, flat) for host-to-device copies, used in turn (CUDA
    /// only): a batch's copy may still be reading one while the next batch fills the
    /// other. A buffer is reused two launches later, when the batch that used it has been
    /// collected ([`PendingLegal::collect`] waits for the device).
    staging: RefCell<[Option<Tensor>; 2]>,
    /// The buffer the next upload fills.
    turn: Cell<usize>,
}

impl Inference {
    /// Wraps `model` (moved to `device`), in [`half_kind`] of `device` when `options.half`
    /// asks for half precision.
    pub fn new(mut model: Model, device: Device, options: &InferenceOptions) -> Self {
        if let Some(n) = options.num_threads {
            set_num_threads(n);
        }
        if model.vs.device() != device {
            model.vs.set_device(device);
        }
        let kind = if options.half {
            half_kind(device)
        } else {
            Kind::Float
        };
        if kind != Kind::Float {
            model.vs.set_kind(kind);
        }
        let frozen = FrozenNet::new(&model.net, device);
        let me = Self {
            model,
            frozen,
            device,
            kind,
            staging: RefCell::new([None, None]),
            turn: Cell::new(0),
        };
        if device.is_cuda() {
            let floats = options.max_batch.max(1) * me.config().input_size();
            for turn in 0..2 {
                let _ = me.staging_buffer(turn, floats);
            }
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

    /// Whether the net runs in a half precision (f16 or bf16).
    pub fn is_half(&self) -> bool {
        self.kind != Kind::Float
    }

    /// The dtype the net computes in.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The wrapped model (e.g. to save it).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Staging buffer `turn`, grown to at least `floats` (pinned where the device allows).
    fn staging_buffer(&self, turn: usize, floats: usize) -> Tensor {
        let mut buffers = self.staging.borrow_mut();
        if let Some(t) = &buffers[turn]
            && t.numel() >= floats
        {
            return t.shallow_clone();
        }
        let t = Tensor::zeros([floats as i64], (Kind::Float, Device::Cpu));
        let t = if t.f_is_pinned(self.device).unwrap_or(false) {
            t
        } else {
            t.f_pin_memory(self.device).unwrap_or(t)
        };
        buffers[turn] = Some(t.shallow_clone());
        t
    }

    /// Uploads `inputs` (one a position) to the device as `[batch, planes, H, W]` in the
    /// net's dtype, written once into the tensor's memory, and `extras` (the frozen net's
    /// gather indices, as f32) as a flat f32 tensor: on CUDA both travel in one
    /// asynchronous copy from a pinned buffer.
    fn upload(&self, inputs: &[PlanesRef<'_>], extras: &[f32]) -> (Tensor, Tensor) {
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
        let planes = batch * input_size;
        let fill = |host: &Tensor| {
            // SAFETY: `host` is a contiguous CPU f32 tensor of at least `planes +
            // extras.len()` elements that nothing else references: a fresh tensor, or a
            // staging buffer, private to `self` (not `Sync`), whose last copy to the
            // device was waited for when its batch was collected.
            let dst = unsafe {
                std::slice::from_raw_parts_mut(host.data_ptr() as *mut f32, planes + extras.len())
            };
            let (dense, tail) = dst.split_at_mut(planes);
            for (chunk, input) in dense.chunks_exact_mut(input_size).zip(inputs) {
                input.write_dense(squares, chunk);
            }
            tail.copy_from_slice(extras);
        };
        let in_kind = |x: Tensor| {
            if self.kind == Kind::Float {
                x
            } else {
                x.to_kind(self.kind)
            }
        };
        if !self.device.is_cuda() {
            let host = Tensor::empty([(planes + extras.len()) as i64], (Kind::Float, Device::Cpu));
            fill(&host);
            let x = host.narrow(0, 0, planes as i64).view(shape);
            let extras = host.narrow(0, planes as i64, extras.len() as i64);
            return (in_kind(x), extras);
        }
        let turn = self.turn.get();
        self.turn.set(1 - turn);
        let total = (planes + extras.len()) as i64;
        let host = self
            .staging_buffer(turn, total as usize)
            .narrow(0, 0, total);
        fill(&host);
        let on_device = host.to_device_(self.device, Kind::Float, true, false);
        let x = on_device.narrow(0, 0, planes as i64).view(shape);
        let extras = on_device.narrow(0, planes as i64, extras.len() as i64);
        (in_kind(x), extras)
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
            let (xs, _) = self.upload(&rows, &[]);
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
        self.launch_legal_planes(inputs, legal).collect()
    }

    /// Starts [`Inference::infer_legal_planes`] and returns before the device has
    /// finished: on CUDA the inputs and gather indices go up in one asynchronous copy,
    /// the network runs, and its legal logits and win/draw/loss probabilities come back
    /// in one asynchronous copy, which [`PendingLegal::collect`] waits for. Meanwhile
    /// the caller can form (and launch) the next batch. On the CPU the work is done when
    /// this returns.
    ///
    /// # Panics
    /// As [`Inference::infer_legal_planes`].
    pub fn launch_legal_planes(&self, inputs: &[PlanesRef<'_>], legal: &[&[u32]]) -> PendingLegal {
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
            return PendingLegal::Ready(Vec::new(), Vec::new());
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
            let (logits, value) = self
                .frozen
                .forward_legal(inputs, &pairs, |inputs, extras| self.upload(inputs, extras));
            let wdl = value.to_kind(Kind::Float).softmax(1, Kind::Float);
            match logits {
                LegalLogits::Host(mut picked) => {
                    for k in outside {
                        picked[k] = f32::NEG_INFINITY;
                    }
                    PendingLegal::Ready(picked, f32_vec(&wdl))
                }
                LegalLogits::Device(picked) => {
                    // One transfer back: the logits, then the probabilities.
                    let both = Tensor::cat(&[picked.to_kind(Kind::Float), wdl.view([-1])], 0);
                    let cuda = self.device.is_cuda();
                    PendingLegal::OnDevice {
                        host: both.to_device_(Device::Cpu, Kind::Float, cuda, false),
                        device: self.device,
                        logits: pairs.len(),
                        outside,
                    }
                }
            }
        })
    }
}

/// A batch started by [`Inference::launch_legal_planes`]: [`PendingLegal::collect`]
/// yields its `(legal logits, win/draw/loss probabilities)`.
#[derive(Debug)]
pub enum PendingLegal {
    /// Computed on the host already.
    Ready(Vec<f32>, Vec<f32>),
    /// Coming back from the device into `host` (pinned; the copy is asynchronous on
    /// CUDA): `logits` legal logits, then the probabilities; the entries at `outside`
    /// were outside the policy and read `-inf`.
    OnDevice {
        host: Tensor,
        device: Device,
        logits: usize,
        outside: Vec<usize>,
    },
}

impl PendingLegal {
    /// Waits for the batch (and, on CUDA, everything queued on the device before its
    /// copy back) and returns its `(legal logits, win/draw/loss probabilities)`.
    pub fn collect(self) -> (Vec<f32>, Vec<f32>) {
        match self {
            PendingLegal::Ready(logits, wdl) => (logits, wdl),
            PendingLegal::OnDevice {
                host,
                device,
                logits,
                outside,
            } => {
                if let Device::Cuda(index) = device {
                    Cuda::synchronize(index as i64);
                }
                let mut all = f32_vec(&host);
                let wdl = all.split_off(logits);
                for k in outside {
                    all[k] = f32::NEG_INFINITY;
                }
                (all, wdl)
            }
        }
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
    f32_vec(&value.to_kind(Kind::Float).softmax(1, Kind::Float))
}
