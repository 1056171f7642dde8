//! The network as the search's [`Evaluator`] for every [`NetGame`] (shogi, minishogi,
//! tai shogi): encode a batch of positions, run it in one forward pass, and turn the
//! policy logits at each legal move's index into priors (a softmax masked to the legal
//! moves) and the value head into a WDL.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use shogi_features::{NetLayout, SparsePlanes};

use shogi_mcts::batch::{BatchModel, EvalOutput, Launch};
use shogi_mcts::{EvalError, EvalRequest, Evaluator, Wdl};
use shogi_registry::NetGame;
use shogi_rules::Variant;

use crate::inference::{Inference, PlanesRef};
use crate::net::{DEFAULT_STEM_KERNEL, ModelConfig};

/// The architecture for `variant` with the given tower size: input planes, board size and
/// policy planes come from the feature and policy layouts.
pub fn model_config_for(variant: Variant, blocks: usize, channels: usize) -> ModelConfig {
    model_config_for_layout(&NetLayout::shogi(variant), blocks, channels)
}

/// Residual blocks of a fresh network unless a config or flag says otherwise.
pub const DEFAULT_BLOCKS: usize = 4;
/// Channels per convolution of a fresh network unless a config or flag says otherwise
/// (4x32: small enough for a 2-core CPU; minishogi's config widens it to 48).
pub const DEFAULT_CHANNELS: usize = 32;

/// The architecture for a [`NetLayout`] (any variant, tai shogi included).
pub fn model_config_for_layout(layout: &NetLayout, blocks: usize, channels: usize) -> ModelConfig {
    let n = layout.board;
    let (input, policy) = (layout.input_planes, layout.policy_planes);
    ModelConfig {
        value_channels: 32,
        value_hidden: 128.max(channels),
        se: false,
        stem_kernel: DEFAULT_STEM_KERNEL,
        ..ModelConfig::small(blocks, channels, input, (n, n), policy)
    }
}

/// Why a network cannot serve a variant.
#[derive(Debug, thiserror::Error)]
pub enum NetEvaluatorError {
    /// The network's input or policy shape is not the variant's layout.
    #[error("network shape does not fit {variant}: {detail}")]
    Shape {
        /// Variant name.
        variant: &'static str,
        /// What differs.
        detail: String,
    },
}

fn check_shape(cfg: &ModelConfig, layout: &NetLayout) -> Result<(), NetEvaluatorError> {
    let n = layout.board;
    let expected = model_config_for_layout(layout, cfg.blocks, cfg.channels);
    let mut detail = Vec::new();
    if cfg.input_planes != expected.input_planes {
        detail.push(format!(
            "input planes {} vs {}",
            cfg.input_planes, expected.input_planes
        ));
    }
    if cfg.policy_planes != expected.policy_planes {
        detail.push(format!(
            "policy planes {} vs {}",
            cfg.policy_planes, expected.policy_planes
        ));
    }
    if (cfg.board_h, cfg.board_w) != (n, n) {
        detail.push(format!("board {}x{} vs {n}x{n}", cfg.board_h, cfg.board_w));
    }
    if detail.is_empty() {
        Ok(())
    } else {
        Err(NetEvaluatorError::Shape {
            variant: layout.variant,
            detail: detail.join(", "),
        })
    }
}

/// Time and batch statistics of a [`NetEvaluator`].
#[derive(Debug, Default, Clone, Copy)]
pub struct NetStats {
    /// Batches evaluated.
    pub batches: u64,
    /// Positions evaluated.
    pub positions: u64,
    /// Nanoseconds inside the network call (forward pass, copies, masked softmax).
    pub forward_nanos: u64,
    /// Nanoseconds encoding inputs.
    pub encode_nanos: u64,
}

/// An [`Evaluator`] backed by a network, for one searching thread (the USI engine, a
/// test). `evaluate` blocks for one forward pass; calls from several threads are
/// serialised by a mutex. Self-play puts a [`shogi_mcts::batch::BatchService`] running a
/// [`NetBatchModel`] in front instead, so many actors share one batch.
#[derive(Debug)]
pub struct NetEvaluator {
    model: Mutex<NetBatchModel>,
    layout: NetLayout,
    batches: AtomicU64,
    positions: AtomicU64,
    forward_nanos: AtomicU64,
    encode_nanos: AtomicU64,
}

impl NetEvaluator {
    /// Wraps `inference` for `variant`, checking the network's shape against the layouts.
    pub fn new(inference: Inference, variant: Variant) -> Result<Self, NetEvaluatorError> {
        NetEvaluator::for_layout(inference, NetLayout::shogi(variant))
    }

    /// Wraps `inference` for any variant's layout (tai shogi included).
    pub fn for_layout(inference: Inference, layout: NetLayout) -> Result<Self, NetEvaluatorError> {
        Ok(NetEvaluator {
            model: Mutex::new(NetBatchModel::for_layout(inference, layout)?),
            layout,
            batches: AtomicU64::new(0),
            positions: AtomicU64::new(0),
            forward_nanos: AtomicU64::new(0),
            encode_nanos: AtomicU64::new(0),
        })
    }

    /// The layout served.
    pub fn layout(&self) -> NetLayout {
        self.layout
    }

    /// Statistics so far.
    pub fn stats(&self) -> NetStats {
        NetStats {
            batches: self.batches.load(Ordering::Relaxed),
            positions: self.positions.load(Ordering::Relaxed),
            forward_nanos: self.forward_nanos.load(Ordering::Relaxed),
            encode_nanos: self.encode_nanos.load(Ordering::Relaxed),
        }
    }
}

impl<G: NetGame> Evaluator<G> for NetEvaluator {
    fn evaluate(&self, requests: &mut [EvalRequest<'_, G>]) -> Result<(), EvalError> {
        if requests.is_empty() {
            return Ok(());
        }
        let start = Instant::now();
        let mut inputs = Vec::with_capacity(requests.len());
        for req in requests.iter() {
            let variant = req.game.layout().variant;
            if variant != self.layout.variant {
                return Err(EvalError::ModelFailed(format!(
                    "a {variant} position sent to a {} network",
                    self.layout.variant
                )));
            }
            inputs.push(encode_input(req.game, &self.layout, req.moves));
        }
        let encoded = Instant::now();
        let outputs = {
            let mut model = self
                .model
                .lock()
                .map_err(|_| EvalError::ModelFailed("network lock poisoned".into()))?;
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| model.run(&inputs)))
                .map_err(|_| EvalError::ModelFailed("forward pass panicked".into()))?
        };
        for (req, out) in requests.iter_mut().zip(outputs) {
            req.priors = out.priors;
            req.wdl = out.wdl;
        }
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.positions
            .fetch_add(requests.len() as u64, Ordering::Relaxed);
        self.encode_nanos
            .fetch_add((encoded - start).as_nanos() as u64, Ordering::Relaxed);
        self.forward_nanos
            .fetch_add(encoded.elapsed().as_nanos() as u64, Ordering::Relaxed);
        shogi_mcts::check_finite(requests)
    }
}

/// One position prepared on an actor thread for the batched service: its input planes
/// and the policy index of each legal move, in the order of the moves.
#[derive(Clone, Debug)]
pub struct NetInput {
    /// The input planes, as the game wrote them.
    pub planes: InputPlanes,
    /// Policy index of each legal move.
    pub policy_indices: Vec<u32>,
}

/// A position's input planes: dense, or sparse where the game writes them so (tai
/// shogi: about 400 non-zero floats of 129,375; [`NetGame::encode_sparse`]).
#[derive(Clone, Debug)]
pub enum InputPlanes {
    /// `input_planes * H * W` floats.
    Dense(Vec<f32>),
    /// The non-zero entries and filled planes.
    Sparse(SparsePlanes),
}

impl InputPlanes {
    /// A view for [`Inference::infer_legal_planes`].
    pub fn as_planes(&self) -> PlanesRef<'_> {
        match self {
            InputPlanes::Dense(planes) => PlanesRef::Dense(planes),
            InputPlanes::Sparse(planes) => PlanesRef::Sparse(planes),
        }
    }
}

/// Encodes a position for a network of `layout` (runs on the calling thread, so encoding
/// is spread over the actors instead of serialised on the inference thread): sparse
/// where the game offers it, else dense.
pub fn encode_input<G: NetGame>(game: &G, layout: &NetLayout, moves: &[G::Move]) -> NetInput {
    let mut sparse = SparsePlanes::default();
    let planes = if game.encode_sparse(layout, &mut sparse) {
        InputPlanes::Sparse(sparse)
    } else {
        let mut planes = vec![0.0; layout.input_size()];
        game.encode_planes(layout, &mut planes);
        InputPlanes::Dense(planes)
    };
    let policy_indices = moves
        .iter()
        .map(|&mv| game.move_index(mv).map_or(u32::MAX, |i| i as u32))
        .collect();
    NetInput {
        planes,
        policy_indices,
    }
}

/// The network as the inner function of a [`shogi_mcts::batch::BatchService`]: it lives
/// on the service thread (libtorch modules are not `Sync`) and answers whole batches.
#[derive(Debug)]
pub struct NetBatchModel {
    inference: Inference,
    input_size: usize,
    /// Faults asked for by the soak bench ([`crate::faults`]); none otherwise.
    faults: crate::faults::InjectedFaults,
    batches: u64,
}

impl NetBatchModel {
    /// Wraps `inference` for `variant`, checking the network's shape.
    pub fn new(inference: Inference, variant: Variant) -> Result<Self, NetEvaluatorError> {
        NetBatchModel::for_layout(inference, NetLayout::shogi(variant))
    }

    /// Wraps `inference` for any variant's layout, checking the network's shape.
    pub fn for_layout(inference: Inference, layout: NetLayout) -> Result<Self, NetEvaluatorError> {
        check_shape(inference.config(), &layout)?;
        Ok(NetBatchModel {
            input_size: inference.config().input_size(),
            inference,
            faults: crate::faults::InjectedFaults::from_env(),
            batches: 0,
        })
    }
}

impl BatchModel<NetInput, EvalOutput> for NetBatchModel {
    fn run(&mut self, batch: &[NetInput]) -> Vec<EvalOutput> {
        self.prepare(batch)()()
    }

    /// On CUDA the service keeps two batches in flight: the next one is prepared while
    /// the device computes the last one.
    fn pipelined(&self) -> bool {
        self.inference.device().is_cuda()
    }

    fn prepare<'a>(&'a mut self, batch: &[NetInput]) -> Launch<'a, EvalOutput> {
        let inputs: Vec<PlanesRef<'_>> = batch
            .iter()
            .map(|input| {
                if let InputPlanes::Dense(planes) = &input.planes {
                    assert_eq!(
                        planes.len(),
                        self.input_size,
                        "input planes of the wrong variant"
                    );
                }
                input.planes.as_planes()
            })
            .collect();
        let legal: Vec<&[u32]> = batch.iter().map(|i| i.policy_indices.as_slice()).collect();
        let prepared = self.inference.prepare_legal_planes(&inputs, &legal);
        let moves: Vec<usize> = legal.iter().map(|l| l.len()).collect();
        let inference = &self.inference;
        self.batches += 1;
        let fault = self.faults.for_batch(self.batches);
        Box::new(move || {
            let pending = prepared.launch(inference);
            Box::new(move || {
                let (logits, mut wdl) = pending.collect();
                match fault {
                    Some(crate::faults::Fault::Fail) => panic!("injected fault: a failed batch"),
                    Some(crate::faults::Fault::Nan) => wdl[0] = f32::NAN,
                    None => {}
                }
                let mut rest = logits.as_slice();
                moves
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| {
                        let (mine, others) = rest.split_at(n);
                        rest = others;
                        let mut priors = mine.to_vec();
                        softmax_in_place(&mut priors);
                        EvalOutput {
                            priors,
                            wdl: Wdl::new(wdl[3 * i], wdl[3 * i + 1], wdl[3 * i + 2]),
                        }
                    })
                    .collect()
            })
        })
    }
}

/// Numerically stable softmax; all `-inf` (or empty) becomes uniform.
fn softmax_in_place(xs: &mut [f32]) {
    let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !max.is_finite() {
        let u = 1.0 / xs.len().max(1) as f32;
        xs.fill(u);
        return;
    }
    let mut sum = 0.0;
    for x in xs.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    for x in xs.iter_mut() {
        *x /= sum;
    }
}
