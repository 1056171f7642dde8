//! shogi-model: the AlphaZero-style residual network of shogi-zero, on libtorch via `tch`.
//!
//! * [`parse_device`]: `"auto" | "cpu" | "cuda" | "cuda:N"` to a [`tch::Device`].
//! * [`ModelConfig`], [`Net`], [`Model`]: residual tower with a per-square policy head
//!   (`policy_planes * H * W` logits, plane-major) and a WDL value head (3 logits).
//! * [`save_checkpoint`] / [`load_checkpoint`]: safetensors weights + JSON manifest, sha256
//!   verified, refusing architecture / variant / feature / policy-version mismatches.
//! * [`Inference`]: batched, `no_grad`, eval-mode inference on raw plane buffers.
//! * [`NetOptimizer`]: one optimisation step of policy CE + value CE with SGD-momentum or AdamW.
//!
//! * [`NetEvaluator`] / [`NetBatchModel`]: the network as the search's evaluator for
//!   shogi and minishogi (encoding from `shogi-features`, masked softmax over legal moves).
//! * [`NetService`]: a checkpoint served in batches to many search threads (the one
//!   place that chain is assembled).
//!
//! The tensor-level API takes raw `f32` plane buffers laid out
//! `[batch, input_planes, board_h, board_w]`, row-major.

mod checkpoint;
mod device;
pub mod evaluator;
pub mod faults;
mod frozen;
mod inference;
mod memory;
mod net;
mod optimizer;
mod service;
mod sparse;
mod threads;

pub use checkpoint::{
    CheckpointError, CheckpointMeta, Expected, FORMAT_VERSION, MANIFEST_FILE, Manifest,
    WEIGHTS_FILE, load_checkpoint, load_weights, publish_checkpoint, read_manifest,
    save_checkpoint, save_weights, sha256_hex,
};
pub use device::{
    CudaBackend, DEFAULT_DEVICE, DeviceError, DeviceReport, check_device_syntax, parse_device,
};
pub use evaluator::{
    DEFAULT_BLOCKS, DEFAULT_CHANNELS, InputPlanes, NetBatchModel, NetEvaluator, NetInput,
    encode_input, model_config_for, model_config_for_layout,
};
pub use inference::{
    Inference, InferenceOptions, PendingLegal, PlanesRef, PreparedLegal, SELFPLAY_HALF_INFERENCE,
    cpu_computes_bf16, half_kind, set_num_threads,
};
pub use net::{DEFAULT_STEM_KERNEL, Heads, Model, ModelConfig, Net, valid_stem_kernel};
pub use optimizer::{
    Evaluation, Losses, NetOptimizer, OPPONENT_POLICY_WEIGHT, OPTIMIZER_FILE, OptimizerKind,
    OptimizerSettings, SGD_MOMENTUM, SparsePolicy,
};
pub use service::{NetService, NetServiceError, Serving, checkpoint_layout};
pub use threads::{
    BACKGROUND_NICE, MAX_THREADS, SelfplayThreads, ThreadCount, ThreadCountError, available_cores,
    lower_thread_priority, match_threads, process_cpu_time, selfplay_threads,
};

/// Re-export so dependents use exactly the same tch.
pub use tch;
