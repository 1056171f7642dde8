//! Batched inference on raw input-plane buffers.

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tch::{Cuda, Device, Kind, Tensor};

use crate::checkpoint::{CheckpointError, Expected, Manifest, load_checkpoint};
use crate::frozen::{FrozenNet, LegalLogits, f32_vec};
use crate::net::{Model, ModelConfig};
pub use crate::sparse::PlanesRef;
pub use crate::threads::set_num_threads;

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
    /// Two pinned host buffers for host-to-device copies, used in turn (CUDA only): a
    /// batch's asynchronous copy may still be reading one while the next batch fills the
    /// other. A buffer whose last copy is not known to have finished is refilled only
    /// after waiting for the device (`clock`).
    staging: RefCell<[Staging; 2]>,
    /// The buffer the next batch fills.
    turn: Cell<usize>,
    /// Copies issued and waited for, shared with the batches in flight.
    clock: Arc<DeviceClock>,
}

/// One pinned staging buffer (f32, flat) and its use.
#[derive(Debug, Default)]
struct Staging {
    buffer: Option<Tensor>,
    /// The copy (a [`DeviceClock::issued`] number) that last read it; 0 for none.
    read_by: u64,
    /// Times it was filled: a prepared batch checks its fill is still the one there.
    fills: u64,
}

/// Host-to-device copies issued, and how many of them a device-wide wait has seen
/// finish: a staging buffer read by copy `n` may be refilled once `finished >= n`.
#[derive(Debug, Default)]
struct DeviceClock {
    issued: AtomicU64,
    finished: AtomicU64,
}

impl DeviceClock {
    /// Waits for everything queued on `device` (`Cuda::synchronize`): every copy issued
    /// so far has finished.
    fn wait(&self, device: Device) {
        let issued = self.issued.load(Ordering::SeqCst);
        if let Device::Cuda(index) = device {
            Cuda::synchronize(index as i64);
        }
        self.finished.fetch_max(issued, Ordering::SeqCst);
    }
}

/// Batch inputs (and gather indices) written into a staging buffer, not yet copied.
#[derive(Debug)]
struct Staged {
    /// The filled part of the buffer: the dense inputs, then the extras.
    host: Tensor,
    turn: usize,
    fill: u64,
    planes: usize,
    extras: usize,
    batch: usize,
}

impl Inference {
    /// Wraps `model` (moved to `device`), in [`half_kind`] of `device` when `options.half`
    /// asks for half precision.
    pub fn new(model: Model, device: Device, options: &InferenceOptions) -> Self {
        let kind = if options.half {
            half_kind(device)
        } else {
            Kind::Float
        };
        Self::with_kind(model, device, kind, options)
    }

    /// Wraps `model` (moved to `device`) computing in `kind` (f32, f16 or bf16) whatever
    /// the device does fastest: `options.half` is not read. libtorch computes bf16 on any
    /// x86 CPU, natively only with AVX-512 BF16.
    pub fn with_kind(
        mut model: Model,
        device: Device,
        kind: Kind,
        options: &InferenceOptions,
    ) -> Self {
        if let Some(n) = options.num_threads {
            set_num_threads(n);
        }
        if model.vs.device() != device {
            model.vs.set_device(device);
        }
        // Frozen from the f32 parameters (folded, then rounded once); the model itself
        // (`infer`) runs in `kind` too.
        let frozen = FrozenNet::new(&model.net, device, kind);
        if kind != Kind::Float {
            model.vs.set_kind(kind);
        }
        let me = Self {
            model,
            frozen,
            device,
            kind,
            staging: RefCell::new(Default::default()),
            turn: Cell::new(0),
            clock: Arc::default(),
        };
        if device.is_cuda() {
            // Room for the gather indices too: two floats a legal move, about 80 a
            // middlegame position (a buffer grows when a batch needs more).
            let floats = options.max_batch.max(1) * (me.config().input_size() + 2 * 160);
            let mut staging = me.staging.borrow_mut();
            for slot in staging.iter_mut() {
                slot.buffer = Some(pinned_buffer(floats, device));
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

    /// Writes `inputs` (dense, `[batch][input_size]`) and then `extras` into the next
    /// staging buffer, first waiting for the device if the copy that last read that
    /// buffer may still be running (CUDA only).
    fn stage(&self, inputs: &[PlanesRef<'_>], extras: &[f32]) -> Staged {
        let cfg = self.config();
        let (input_size, squares) = (cfg.input_size(), cfg.squares());
        let planes = inputs.len() * input_size;
        let total = planes + extras.len();
        let turn = self.turn.get();
        self.turn.set(1 - turn);
        let mut staging = self.staging.borrow_mut();
        let slot = &mut staging[turn];
        if slot.read_by > self.clock.finished.load(Ordering::SeqCst) {
            self.clock.wait(self.device);
        }
        let buffer = match &slot.buffer {
            Some(t) if t.numel() >= total => t.shallow_clone(),
            _ => {
                let t = pinned_buffer(total, self.device);
                slot.buffer = Some(t.shallow_clone());
                t
            }
        };
        slot.fills += 1;
        // The buffer is private to `self` (not `Sync`), and the last copy from it has
        // finished (waited for above): nothing else reads or writes it now.
        write_batch(&buffer, inputs, extras, input_size, squares);
        Staged {
            host: buffer.narrow(0, 0, total as i64),
            turn,
            fill: slot.fills,
            planes,
            extras: extras.len(),
            batch: inputs.len(),
        }
    }

    /// Copies a staged batch to the device, asynchronously from pinned memory on CUDA:
    /// `(inputs as [batch, planes, H, W] in the net's dtype, extras as flat f32)`.
    ///
    /// # Panics
    /// If its staging buffer was refilled since it was staged.
    fn send(&self, staged: Staged) -> (Tensor, Tensor) {
        let Staged {
            host,
            turn,
            fill,
            planes,
            extras,
            batch,
        } = staged;
        let on_device = if self.device.is_cuda() {
            let mut staging = self.staging.borrow_mut();
            let slot = &mut staging[turn];
            assert_eq!(
                slot.fills, fill,
                "a staged batch's buffer was refilled before it was sent: send each \
                 prepared batch before preparing the one after it"
            );
            slot.read_by = self.clock.issued.fetch_add(1, Ordering::SeqCst) + 1;
            host.to_device_(self.device, Kind::Float, true, false)
        } else {
            host
        };
        let cfg = self.config();
        let shape = [
            batch as i64,
            cfg.input_planes as i64,
            cfg.board_h as i64,
            cfg.board_w as i64,
        ];
        let xs = on_device.narrow(0, 0, planes as i64).view(shape);
        let xs = if self.kind == Kind::Float {
            xs
        } else {
            xs.to_kind(self.kind)
        };
        (xs, on_device.narrow(0, planes as i64, extras as i64))
    }

    /// Uploads `inputs` (one a position) to the device as `[batch, planes, H, W]` in the
    /// net's dtype, written once into the tensor's memory, and `extras` (the frozen net's
    /// gather indices, as f32) as a flat f32 tensor: on CUDA both travel in one
    /// asynchronous copy from a pinned buffer, on the CPU they are a fresh tensor.
    fn upload(&self, inputs: &[PlanesRef<'_>], extras: &[f32]) -> (Tensor, Tensor) {
        if self.device.is_cuda() {
            return self.send(self.stage(inputs, extras));
        }
        let cfg = self.config();
        let planes = inputs.len() * cfg.input_size();
        let host = Tensor::empty([(planes + extras.len()) as i64], (Kind::Float, Device::Cpu));
        write_batch(&host, inputs, extras, cfg.input_size(), cfg.squares());
        self.send(Staged {
            host,
            turn: 0,
            fill: 0,
            planes,
            extras: extras.len(),
            batch: inputs.len(),
        })
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

    /// Starts [`Inference::infer_legal_planes`]: [`Inference::prepare_legal_planes`]
    /// and its launch at once.
    ///
    /// # Panics
    /// As [`Inference::infer_legal_planes`].
    pub fn launch_legal_planes(&self, inputs: &[PlanesRef<'_>], legal: &[&[u32]]) -> PendingLegal {
        self.prepare_legal_planes(inputs, legal).launch(self)
    }

    /// Prepares [`Inference::infer_legal_planes`] on the host: on CUDA the inputs and
    /// the gather indices are written into a pinned staging buffer, and
    /// [`PreparedLegal::launch`] copies them up in one asynchronous copy, queues the
    /// network and the copy of its legal logits and win/draw/loss probabilities back in
    /// one transfer, and returns before the device has finished;
    /// [`PendingLegal::collect`] waits for it. A batch can be prepared while the last
    /// one computes; launch each prepared batch before preparing the one after it (the
    /// two staging buffers alternate). On the CPU the work is done here.
    ///
    /// # Panics
    /// As [`Inference::infer_legal_planes`].
    pub fn prepare_legal_planes(
        &self,
        inputs: &[PlanesRef<'_>],
        legal: &[&[u32]],
    ) -> PreparedLegal {
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
            return PreparedLegal(Prepared::Done(PendingLegal(Pending::Ready(
                Vec::new(),
                Vec::new(),
            ))));
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
        if self.device.is_cuda() && !self.frozen.has_sparse_stem() {
            let staged = self.stage(inputs, &self.frozen.gather_indices(&pairs));
            return PreparedLegal(Prepared::Staged {
                staged,
                pairs,
                outside,
            });
        }
        let (logits, value) = tch::no_grad(|| {
            self.frozen
                .forward_legal(inputs, &pairs, |inputs, extras| self.upload(inputs, extras))
        });
        PreparedLegal(Prepared::Done(self.pending(
            logits,
            &value,
            pairs.len(),
            outside,
        )))
    }

    /// The legal logits and value logits of a batch as a [`PendingLegal`]: on the device,
    /// the probabilities computed there and both sent back in one copy (asynchronous on
    /// CUDA).
    fn pending(
        &self,
        logits: LegalLogits,
        value: &Tensor,
        count: usize,
        outside: Vec<usize>,
    ) -> PendingLegal {
        tch::no_grad(|| {
            let wdl = value.to_kind(Kind::Float).softmax(1, Kind::Float);
            match logits {
                LegalLogits::Host(mut picked) => {
                    for k in outside {
                        picked[k] = f32::NEG_INFINITY;
                    }
                    PendingLegal(Pending::Ready(picked, f32_vec(&wdl)))
                }
                LegalLogits::Device(picked) => {
                    let both = Tensor::cat(&[picked.to_kind(Kind::Float), wdl.view([-1])], 0);
                    let cuda = self.device.is_cuda();
                    PendingLegal(Pending::OnDevice {
                        host: both.to_device_(Device::Cpu, Kind::Float, cuda, false),
                        device: self.device,
                        clock: self.clock.clone(),
                        logits: count,
                        outside,
                    })
                }
            }
        })
    }
}

/// A batch prepared by [`Inference::prepare_legal_planes`], not yet launched.
#[derive(Debug)]
pub struct PreparedLegal(Prepared);

#[derive(Debug)]
enum Prepared {
    /// Computed already (the CPU).
    Done(PendingLegal),
    /// Inputs and gather indices in a staging buffer (CUDA).
    Staged {
        staged: Staged,
        pairs: Vec<(usize, usize)>,
        outside: Vec<usize>,
    },
}

impl PreparedLegal {
    /// Launches the batch on `inference`, the one that prepared it.
    ///
    /// # Panics
    /// If a batch prepared after this one reused its staging buffer first (see
    /// [`Inference::prepare_legal_planes`]).
    pub fn launch(self, inference: &Inference) -> PendingLegal {
        match self.0 {
            Prepared::Done(pending) => pending,
            Prepared::Staged {
                staged,
                pairs,
                outside,
            } => {
                let (xs, gather) = inference.send(staged);
                let (logits, value) =
                    tch::no_grad(|| inference.frozen.forward_dense(&xs, &pairs, gather));
                inference.pending(logits, &value, pairs.len(), outside)
            }
        }
    }
}

/// A batch started by [`Inference::launch_legal_planes`]: [`PendingLegal::collect`]
/// yields its `(legal logits, win/draw/loss probabilities)`.
#[derive(Debug)]
pub struct PendingLegal(Pending);

#[derive(Debug)]
enum Pending {
    /// Computed on the host already.
    Ready(Vec<f32>, Vec<f32>),
    /// Coming back from the device into `host` (pinned; the copy is asynchronous on
    /// CUDA): `logits` legal logits, then the probabilities; the entries at `outside`
    /// were outside the policy and read `-inf`.
    OnDevice {
        host: Tensor,
        device: Device,
        clock: Arc<DeviceClock>,
        logits: usize,
        outside: Vec<usize>,
    },
}

impl PendingLegal {
    /// Waits for the batch (on CUDA, for everything queued on the device: tch has no
    /// per-copy event) and returns its `(legal logits, win/draw/loss probabilities)`.
    pub fn collect(self) -> (Vec<f32>, Vec<f32>) {
        match self.0 {
            Pending::Ready(logits, wdl) => (logits, wdl),
            Pending::OnDevice {
                host,
                device,
                clock,
                logits,
                outside,
            } => {
                clock.wait(device);
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

/// Writes `inputs` dense (`input_size` floats each) into the front of `host` and
/// `extras` after them. `host` is a contiguous CPU f32 tensor of at least that many
/// elements that nothing else reads or writes while this runs (a fresh tensor, or a
/// staging buffer whose last copy has finished).
fn write_batch(
    host: &Tensor,
    inputs: &[PlanesRef<'_>],
    extras: &[f32],
    input_size: usize,
    squares: usize,
) {
    let planes = inputs.len() * input_size;
    let total = planes + extras.len();
    assert!(
        host.kind() == Kind::Float && host.device() == Device::Cpu && host.numel() >= total,
        "a batch of {total} floats written into a {:?} tensor of {} on {:?}",
        host.kind(),
        host.numel(),
        host.device()
    );
    // SAFETY: checked above: a CPU f32 tensor of at least `total` elements (contiguous:
    // a fresh tensor or a flat buffer); the caller guarantees no one else uses it now.
    let dst = unsafe { std::slice::from_raw_parts_mut(host.data_ptr() as *mut f32, total) };
    let (dense, tail) = dst.split_at_mut(planes);
    for (chunk, input) in dense.chunks_exact_mut(input_size).zip(inputs) {
        input.write_dense(squares, chunk);
    }
    tail.copy_from_slice(extras);
}

/// A pinned CPU f32 buffer of `floats` elements for copies to `device` (pageable where
/// pinning is refused).
fn pinned_buffer(floats: usize, device: Device) -> Tensor {
    let t = Tensor::zeros([floats as i64], (Kind::Float, Device::Cpu));
    if t.f_is_pinned(device).unwrap_or(false) {
        t
    } else {
        t.f_pin_memory(device).unwrap_or(t)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The threads of this process named `name` (a thread's OpenMP workers take the name
    /// of the thread that started them).
    #[cfg(target_os = "linux")]
    fn threads_named(name: &str) -> usize {
        std::fs::read_dir("/proc/self/task")
            .expect("/proc/self/task")
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|comm| comm.trim_end() == name)
            .count()
    }

    /// One intra-op thread asked for before a thread starts holds in that thread: its
    /// network runs without OpenMP workers (on a machine with one core there would be none
    /// anyway).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_started_later_runs_the_network_with_the_threads_set() {
        set_num_threads(1);
        let cfg = ModelConfig::small(2, 32, 8, (9, 9), 10);
        let started_later = std::thread::Builder::new()
            .name("threads-check".into())
            .spawn(move || {
                let model = Model::new(&cfg, Device::Cpu);
                let inference = Inference::new(model, Device::Cpu, &InferenceOptions::default());
                let xs = vec![0.5f32; 64 * cfg.input_size()];
                for _ in 0..3 {
                    inference.infer(&xs, 64);
                }
                threads_named("threads-check")
            })
            .expect("spawn");
        assert_eq!(started_later.join().expect("the thread ran"), 1);
    }
}
